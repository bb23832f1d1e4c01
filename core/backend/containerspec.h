#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

struct SandboxSpec;

// A SandboxSpec as the engine's create-container body: the spec's command, environment, user,
// labels, limits and mounts, with the hardening of the design notes every sandbox gets (read-only
// root, size-capped tmpfs for /tmp and the workdir, no capabilities, no new privileges, an init,
// private IPC, a low open-files limit) and stdin attached for the supervisor.
class ContainerSpec
{
public:
    // An allow-list spec renders without network (as `None`): it gets its way out only from
    // joinEgress, so a sandbox whose gateway is missing has no network, never an open one.
    static QJsonObject render(const SandboxSpec &spec);

    // Where an allow-list sandbox reaches its egress gateway, and what it proves itself with.
    struct Egress
    {
        QString network;   // the internal network it joins (none on Kubernetes: a policy confines)
        QString proxyHost; // the gateway's address on it
        int proxyPort = 0;
        QString credential; // this sandbox's own, valid while it lives
        // NAME=value entries after the proxy variables: the secrets' placeholders, and the
        // authority's certificate for the supervisor to add to the trust store (CS_EXTRA_CA).
        QStringList env;
    };
    // `body` (render() of an allow-list spec) on the gateway's internal network, with the proxy
    // variables last (they win over passed-through ones) and a name server that answers nothing:
    // names are the gateway's to resolve.
    static QJsonObject joinEgress(const QJsonObject &body, const Egress &egress);
    // HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (both cases), npm's, NO_PROXY for loopback, then the
    // Egress's own entries.
    static QStringList proxyEnv(const Egress &egress);
    // A documentation address (RFC 5737): on a network without a route out nothing answers it.
    static constexpr const char *kNoNameServer = "192.0.2.1";

private:
    static QJsonObject hostConfig(const SandboxSpec &spec, const QJsonObject &labels);
};
