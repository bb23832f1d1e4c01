#include "backendcontainer.h"

#include "egresslease.h"

void BackendContainer::useEgress(EgressLease *lease)
{
    if (!lease)
        return;
    m_egress = lease;
    lease->setParent(this);
    connect(lease, &EgressLease::networkEvent, this, &SandboxContainer::networkEvent);
}

void BackendContainer::answerConnection(quint64 connection, bool allow, const QString &widenTo)
{
    if (m_egress)
        m_egress->answer(connection, allow, widenTo);
}

void BackendContainer::settleNetwork(QObject *context, const std::function<void()> &done)
{
    if (m_egress)
        m_egress->settle(context, done);
    else
        done();
}

void BackendContainer::endNetwork()
{
    if (m_egress)
        m_egress->revoke();
}
