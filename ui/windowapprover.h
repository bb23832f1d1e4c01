#pragma once

#include "runapprover.h"

// The window's own approvals (runs of its HTTP endpoint): questions go to AppController, which
// shows them beside those of headless instances; answers come back through deliver().
class WindowApprover : public RunApprover
{
    Q_OBJECT
public:
    using RunApprover::RunApprover;

    // A window process always has its window (shown, or in the tray).
    bool isAvailable() const override { return true; }
    void ask(const ApprovalRequest &request) override { Q_EMIT asked(request); }
    void withdraw(const QString &id, const QString &why) override { Q_EMIT withdrawn(id, why); }
    void deliver(const QString &id, Answer answer, const QString &reason)
    {
        Q_EMIT answered(id, answer, reason);
    }

Q_SIGNALS:
    void asked(const ApprovalRequest &request);
    void withdrawn(const QString &id, const QString &why);
};
