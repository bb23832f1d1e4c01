#include "windowapprover.h"

bool WindowApprover::isAvailable() const
{
    // A window process always has its window (shown, or in the tray).
    return true;
}

void WindowApprover::ask(const ApprovalRequest &request)
{
    Q_EMIT asked(request);
}

void WindowApprover::withdraw(const QString &id, const QString &why)
{
    Q_EMIT withdrawn(id, why);
}

void WindowApprover::deliver(const QString &id, Answer answer, const QString &reason)
{
    Q_EMIT answered(id, answer, reason);
}
