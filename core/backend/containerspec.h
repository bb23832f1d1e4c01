#pragma once

#include <QJsonObject>

struct SandboxSpec;

// A SandboxSpec as the engine's create-container body: the spec's command, environment, user,
// labels, limits and mounts, with the hardening of the design notes every sandbox gets (read-only
// root, size-capped tmpfs for /tmp and the workdir, no capabilities, no new privileges, an init,
// private IPC, a low open-files limit) and stdin attached for the supervisor.
class ContainerSpec
{
public:
    static QJsonObject render(const SandboxSpec &spec);

private:
    static QJsonObject hostConfig(const SandboxSpec &spec, const QJsonObject &labels);
};
