#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

struct EgressEndpoint;
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

    // `body` (render() of an allow-list spec) on the gateway's internal network, with the proxy
    // variables last (they win over passed-through ones) and a name server that answers nothing
    // (EgressEndpoint::kNoNameServer): names are the gateway's to resolve.
    static QJsonObject joinEgress(const QJsonObject &body, const EgressEndpoint &egress);

private:
    static QJsonObject hostConfig(const SandboxSpec &spec, const QJsonObject &labels);
};
