#pragma once

#include "sandboxspec.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

struct AssistantPolicy;
struct SandboxConfig;

// How one run, or one session's sandbox, reaches the network: decided once, where the server's
// settings, the caller's policy and the call meet (decide(): RunGate for a call, the session's
// own when it is created), then carried as it is: ExecutionRequest::network to the service, into
// the sandbox (SandboxSpec::forRun), the run's record and the question a person answers. Nothing
// on the way decides it again, so what the record and the question say is what the sandbox got.
struct RunNetwork
{
    SandboxSpec::Network mode = SandboxSpec::Network::None;
    // Allowlist: the host patterns listed for it (the call's, its policy's or the server's),
    // normalised as EgressList writes them. The bound secrets' hosts come on top
    // (reachableHosts()).
    QStringList hosts;
    // Allowlist: the server's bound secrets (--secret) it gets, as its caller's policy chose;
    // none otherwise (a secret needs the gateway, and an open network has none).
    QList<SandboxSpec::Secret> secrets;
    // Allowlist with listed hosts: a connection beyond them is held while a person decides (its
    // caller's policy asks for other hosts), instead of refused at once.
    bool askOtherHosts = false;
    // What its runtime must be (SandboxSpec::isolation): its caller's policy's; "" any.
    QString isolation;

    // The one decision. `asked`: the call's own list (its `network`), already checked against
    // the server's (SandboxTools::parseNetwork) and narrowed to the policy's
    // (AssistantPolicy::check): nothing, it did not say (the server's mode); empty, no network
    // and no secret. An allow-list narrows --network. `policy`: the caller's (null: none, as for
    // a run from the window).
    static RunNetwork decide(const SandboxConfig &server,
                             const std::optional<QStringList> &asked = std::nullopt,
                             const AssistantPolicy *policy = nullptr);

    bool reachesNetwork() const { return mode != SandboxSpec::Network::None; }
    bool bindsSecrets() const { return !secrets.isEmpty(); }
    // Allowlist: the listed hosts, then the bound secrets' hosts not among them; else empty.
    QStringList reachableHosts() const;

    bool operator==(const RunNetwork &other) const
    {
        return mode == other.mode && hosts == other.hosts && secrets == other.secrets &&
               askOtherHosts == other.askOtherHosts && isolation == other.isolation;
    }
    bool operator!=(const RunNetwork &other) const { return !(*this == other); }
};
