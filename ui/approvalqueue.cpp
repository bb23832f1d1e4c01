#include "approvalqueue.h"

#include "appsettings.h"
#include "monitorserver.h"
#include "rungate.h"
#include "uilog.h"
#include "windowapprover.h"

ApprovalQueue::ApprovalQueue(const QString &instanceId, MonitorServer *monitor, QObject *parent)
    : QObject(parent), m_instanceId(instanceId), m_monitor(monitor)
{
    if (!m_monitor)
        return;
    connect(m_monitor, &MonitorServer::approvalRequested, this, &ApprovalQueue::add);
    connect(m_monitor, &MonitorServer::approvalWithdrawn, this,
            [this](const QString &instance, const QString &id, const QString &why) {
                const qsizetype i = indexOf(id);
                if (i >= 0 && m_approvals.at(i).instanceId == instance)
                    close(id, why);
            });
}

void ApprovalQueue::setRunGate(RunGate *gate)
{
    m_gate = gate;
    if (!gate)
        return;
    if (!m_approver) {
        m_approver = new WindowApprover(this);
        connect(m_approver, &WindowApprover::asked, this, &ApprovalQueue::add);
        connect(m_approver, &WindowApprover::withdrawn, this, &ApprovalQueue::close);
    }
    gate->setApprover(m_approver);
    // A local run approved "always": the gate changed its own policies; keep and save them.
    connect(gate, &RunGate::policiesChanged, this, [this](const AssistantPolicies &policies) {
        AppSettings::savePolicies(policies);
        Q_EMIT policiesChanged(policies);
    });
}

void ApprovalQueue::setPolicies(const AssistantPolicies &policies)
{
    if (m_gate)
        m_gate->setPolicies(policies);
}

AssistantPolicies::HostAdded ApprovalQueue::allowHost(const QString &client, const QString &pattern)
{
    AssistantPolicies policies = m_gate ? m_gate->policies() : AppSettings::loadPolicies();
    const AssistantPolicies::HostAdded added = policies.allowHost(client, pattern);
    if (added == AssistantPolicies::HostAdded::Added) {
        qCInfo(lcUi).noquote() << "allowed" << pattern << "for" << client;
        if (m_gate)
            m_gate->setPolicies(policies);
        AppSettings::savePolicies(policies);
        Q_EMIT policiesChanged(policies);
    }
    return added;
}

void ApprovalQueue::instanceGone(const QString &instanceId)
{
    const QList<ApprovalRequest> open = m_approvals;
    for (const ApprovalRequest &r : open) {
        if (r.instanceId == instanceId)
            close(r.id, QStringLiteral("its server ended"));
    }
}

qsizetype ApprovalQueue::indexOf(const QString &id) const
{
    for (qsizetype i = 0; i < m_approvals.size(); ++i) {
        if (m_approvals.at(i).id == id)
            return i;
    }
    return -1;
}

bool ApprovalQueue::deliver(const ApprovalRequest &request, RunApprover::Answer answer,
                            const QString &reason)
{
    if (isOwn(request.instanceId)) {
        if (!m_approver)
            return false;
        m_approver->deliver(request.id, answer, reason);
        return true;
    }
    return m_monitor && m_monitor->answerApproval(request.instanceId, request.id,
                                                  RunApprover::answerName(answer), reason);
}

void ApprovalQueue::add(const ApprovalRequest &request)
{
    if (indexOf(request.id) >= 0)
        return;
    // Bounded like everything a headless instance can send: the oldest stay, as they expire first.
    if (m_approvals.size() >= kMaxApprovals) {
        qCWarning(lcUi) << "too many approvals waiting; one was not shown";
        deliver(request, RunApprover::Answer::Deny,
                QStringLiteral("too many runs are waiting for approval"));
        return;
    }
    m_approvals.append(request);
    Q_EMIT approvalRequested(request);
}

void ApprovalQueue::close(const QString &id, const QString &why)
{
    const qsizetype i = indexOf(id);
    if (i < 0)
        return;
    m_approvals.removeAt(i);
    Q_EMIT approvalClosed(id, why);
}

bool ApprovalQueue::answer(const QString &id, RunApprover::Answer choice, const QString &reason)
{
    const qsizetype i = indexOf(id);
    if (i < 0)
        return false;
    const ApprovalRequest request = m_approvals.at(i);
    if (choice == RunApprover::Answer::AllowAlways && request.client.trimmed().isEmpty()) {
        // A rule for no name would be the default, everyone's: this run only (the dialog does
        // not offer it; the asking gate, ours or a headless one, must not hear "always" either).
        qCWarning(lcUi) << "\"always\" for an assistant without a name is allowed once";
        choice = RunApprover::Answer::AllowOnce;
    }
    qCInfo(lcUi).noquote() << "approval" << id.left(8) << "of" << request.client << ":"
                           << RunApprover::answerName(choice);
    // "Always" for a run of this window: its gate changes its own policies, and policiesChanged
    // saves them. For a headless instance's, this window's policies change here (and the file
    // it reads with them).
    if (choice == RunApprover::Answer::AllowAlways && !isOwn(request.instanceId)) {
        AssistantPolicies policies = m_gate ? m_gate->policies() : AppSettings::loadPolicies();
        // A held connection's "always" lists its host for the assistant; a run's lets its runs
        // go unasked.
        if (request.isConnection())
            policies.allowHost(request.client, request.hostPattern(), request.egress);
        else
            policies.allowAlways(request.client);
        if (m_gate)
            m_gate->setPolicies(policies);
        AppSettings::savePolicies(policies);
        Q_EMIT policiesChanged(policies);
    }
    const bool delivered = deliver(request, choice, reason);
    close(id, QString());
    return delivered;
}
