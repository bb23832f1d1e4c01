#pragma once

#include "sandboxcontainer.h"

#include <functional>

class EgressLease;

// What the backends' sandboxes share beyond the sandbox room's interface: an allow-list
// sandbox's lease on its backend's egress gateway (EgressLease), and the answers to what
// SandboxContainer asks of its network (a person's verdict on a held connection, its pending
// events, its end), given the same way on every backend. DockerContainer and KubernetesContainer
// differ only where their engines do: how the lease's endpoint enters their bodies, and the
// address its credential is bound to.
class BackendContainer : public SandboxContainer
{
    Q_OBJECT
public:
    using SandboxContainer::SandboxContainer;

    // An allow-list sandbox's lease (null: none, nothing to do): the sandbox owns it, and its
    // gateway's events about the sandbox's connections come out as networkEvent(). Before
    // prepare(); the subclass takes its endpoint before it creates anything.
    void useEgress(EgressLease *lease);

    void answerConnection(quint64 connection, bool allow, const QString &widenTo) override;
    void settleNetwork(QObject *context, const std::function<void()> &done) override;
    // The lease's credential is revoked: the sandbox has no way out from now on.
    void endNetwork() override;

protected:
    EgressLease *egress() const { return m_egress; }

private:
    EgressLease *m_egress = nullptr;
};
