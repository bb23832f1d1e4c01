#include "gatewaykeeper.h"

#include "egressgateway.h"
#include "egresslease.h"
#include "sandboxspec.h"

#include <utility>

GatewayKeeper::GatewayKeeper(Make make) : m_make(std::move(make)) {}

EgressLease *GatewayKeeper::leaseFor(const SandboxSpec &spec, QObject *sandbox)
{
    if (spec.network != SandboxSpec::Network::Allowlist)
        return nullptr;
    if (!m_gateway) {
        m_gateway = m_make();
        if (!m_image.isEmpty())
            m_gateway->setImage(m_image);
        m_gateway->setUpstream(m_upstream);
        m_gateway->setInterception(m_authorityCertificate, m_authorityKey, m_trust);
    }
    auto *lease = new EgressLease(m_gateway, spec.egress, spec.askOtherHosts, spec.labels, sandbox);
    lease->setSecrets(spec.secrets);
    return lease;
}

void GatewayKeeper::setUpstream(const UpstreamProxy &proxy)
{
    m_upstream = proxy;
    if (m_gateway)
        m_gateway->setUpstream(proxy);
}

void GatewayKeeper::setInterception(const QByteArray &certificatePem, const QByteArray &keyPem,
                                    const QByteArray &trustPem)
{
    m_authorityCertificate = certificatePem;
    m_authorityKey = keyPem;
    m_trust = trustPem;
    if (m_gateway)
        m_gateway->setInterception(certificatePem, keyPem, trustPem);
}

void GatewayKeeper::shutdown(QObject *context, const std::function<void()> &done)
{
    if (!m_gateway) {
        done();
        return;
    }
    m_gateway->shutdown(context, done);
}
