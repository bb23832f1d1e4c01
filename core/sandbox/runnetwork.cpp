#include "runnetwork.h"

#include "assistantpolicy.h"
#include "sandboxconfig.h"

RunNetwork RunNetwork::decide(const SandboxConfig &server, const std::optional<QStringList> &asked,
                              const AssistantPolicy *policy)
{
    RunNetwork run;
    if (policy)
        run.isolation = policy->isolation;
    // Only the bound secrets its caller's policy names.
    QList<SandboxSpec::Secret> secrets;
    for (const SandboxSpec::Secret &secret : server.secrets)
        if (!policy || !policy->secrets || policy->secrets->contains(secret.name))
            secrets.append(secret);
    QStringList listed = server.egress;
    bool open = server.network;
    if (asked) {
        listed = *asked;
        // No network at all: no secret either.
        if (asked->isEmpty()) {
            open = false;
            secrets.clear();
        }
    }
    // Bound secrets need the gateway, and their hosts are reachable (what they are for); on an
    // open network without a list they are not bound.
    const bool binds = !secrets.isEmpty() && (!listed.isEmpty() || !open);
    if (listed.isEmpty() && !binds) {
        run.mode = open ? SandboxSpec::Network::Open : SandboxSpec::Network::None;
        return run;
    }
    run.mode = SandboxSpec::Network::Allowlist;
    run.hosts = listed;
    if (binds)
        run.secrets = secrets;
    // Only beyond a list: with none there is nothing a held connection could be added to.
    run.askOtherHosts = policy && policy->asksOtherHosts() && !listed.isEmpty();
    return run;
}

QStringList RunNetwork::reachableHosts() const
{
    QStringList reachable = hosts;
    for (const SandboxSpec::Secret &secret : secrets)
        for (const QString &host : secret.hosts)
            if (!reachable.contains(host))
                reachable.append(host);
    return reachable;
}
