#pragma once

#include "runapprover.h"

#include <QSet>

class MonitorPublisher;

// A headless instance's approvals go to the window over the monitor socket; the window's answers
// come back on it. No window connected: not available (the gate falls back to the policies'
// setting); the window going away loses every open question.
class MonitorApprover : public RunApprover
{
    Q_OBJECT
public:
    explicit MonitorApprover(MonitorPublisher *publisher, QObject *parent = nullptr);

    bool isAvailable() const override;
    void ask(const ApprovalRequest &request) override;
    void withdraw(const QString &id, const QString &why) override;

private:
    MonitorPublisher *m_publisher;
    QSet<QString> m_open; // asked, not answered nor withdrawn
};
