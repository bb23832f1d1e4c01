#pragma once

#include "egressgateway.h"
#include "upstreamproxy.h"

#include <QByteArray>
#include <QPointer>
#include <QString>
#include <functional>

class EgressLease;
class QObject;
struct SandboxSpec;

// A backend's part in the allow-list mode, the same on every backend: its one egress gateway,
// made on the first allow-list sandbox (by the backend's `make`: EngineGateway, PodGateway), and
// what the server tells every gateway it makes (the host's proxy, the secrets' authority and the
// trust store, its image), kept until then and passed on at once to one that runs. DockerBackend
// and KubernetesBackend each have one; only where the gateway runs is theirs.
class GatewayKeeper
{
public:
    // Makes the backend's gateway (its QObject parent is the backend's to choose).
    using Make = std::function<EgressGateway *()>;
    explicit GatewayKeeper(Make make);

    // Null until an allow-list sandbox needed it.
    EgressGateway *gateway() const { return m_gateway; }

    // An allow-list spec's lease on the gateway (made now if none was): its hosts, asking and
    // secrets, owned by `sandbox`; null for any other spec.
    EgressLease *leaseFor(const SandboxSpec &spec, QObject *sandbox);

    // Each: for the gateway made from now on, and at once for a running one (not the image:
    // a running gateway keeps its own).
    void setImage(const QString &image) { m_image = image; }
    void setUpstream(const UpstreamProxy &proxy);
    void setInterception(const QByteArray &certificatePem, const QByteArray &keyPem,
                         const QByteArray &trustPem);

    // Removes the gateway and what it needed, if one was made; `done` when the backend answered.
    void shutdown(QObject *context, const std::function<void()> &done);

private:
    Make m_make;
    QPointer<EgressGateway> m_gateway;
    QString m_image; // "" EgressGateway::kImage
    UpstreamProxy m_upstream;
    QByteArray m_authorityCertificate;
    QByteArray m_authorityKey;
    QByteArray m_trust;
};
