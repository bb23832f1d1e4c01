#pragma once

#include "approvalrequest.h"
#include "assistantpolicies.h"
#include "runapprover.h"

#include <QList>
#include <QObject>
#include <QPointer>

class MonitorServer;
class RunGate;
class WindowApprover;

// The runs that wait for a person's approval, this process's (through its gate's
// WindowApprover) and headless instances' (over the monitor socket), and the answers back to
// whoever asked. An "always" answer changes the assistants' policies and saves them.
class ApprovalQueue : public QObject
{
    Q_OBJECT
public:
    // `instanceId`: this process's, whose questions come from its own gate. `monitor` may be
    // null (no headless instances).
    ApprovalQueue(const QString &instanceId, MonitorServer *monitor, QObject *parent = nullptr);

    // This window approves its own HTTP runs through `gate` (from the composition root).
    void setRunGate(RunGate *gate);
    // The policies this window applies and saves (Settings → Assistants, "always allow").
    void setPolicies(const AssistantPolicies &policies);
    // "Allow for this assistant" on a refused host: its policy's Hosts gain `pattern` (saved,
    // and this window's gate uses them at once; headless instances read the file).
    AssistantPolicies::HostAdded allowHost(const QString &client, const QString &pattern);

    // Oldest first.
    QList<ApprovalRequest> pending() const { return m_approvals; }
    // Answers one; false when it is no longer waiting (answered, withdrawn, its instance gone).
    bool answer(const QString &id, RunApprover::Answer choice, const QString &reason);
    // A headless instance went: its questions went with it (it denies them itself).
    void instanceGone(const QString &instanceId);

    // Approvals waiting at once, at most (more are denied at once).
    static constexpr int kMaxApprovals = 64;

Q_SIGNALS:
    // A run waits for a person's approval, and one no longer does (answered, withdrawn: `why`).
    void approvalRequested(const ApprovalRequest &request);
    void approvalClosed(const QString &id, const QString &why);
    // "Always allow" changed the policies (already saved).
    void policiesChanged(const AssistantPolicies &policies);

private:
    bool isOwn(const QString &instanceId) const { return instanceId == m_instanceId; }
    qsizetype indexOf(const QString &id) const; // -1: not waiting
    // The answer to whoever asked: this window's gate, or the instance over the monitor socket.
    bool deliver(const ApprovalRequest &request, RunApprover::Answer answer, const QString &reason);
    void add(const ApprovalRequest &request);
    void close(const QString &id, const QString &why);

    QString m_instanceId;
    MonitorServer *m_monitor;
    QPointer<RunGate> m_gate;
    WindowApprover *m_approver = nullptr;
    QList<ApprovalRequest> m_approvals;
};
