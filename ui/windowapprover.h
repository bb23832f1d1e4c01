#pragma once

#include "runapprover.h"

// The window's own approvals (runs of its HTTP endpoint): questions go to AppController, which
// shows them beside those of headless instances; answers come back through deliver().
class WindowApprover : public RunApprover
{
    Q_OBJECT
public:
    using RunApprover::RunApprover;

    bool isAvailable() const override;
    void ask(const ApprovalRequest &request) override;
    void withdraw(const QString &id, const QString &why) override;
    void deliver(const QString &id, Answer answer, const QString &reason);

Q_SIGNALS:
    void asked(const ApprovalRequest &request);
    void withdrawn(const QString &id, const QString &why);
};
