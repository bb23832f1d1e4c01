#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <optional>

struct SandboxConfig;

// What one assistant (an MCP client, matched by the name in its clientInfo) may do: whether its
// runs go ahead, wait for a person's approval in the window, or are refused; and what they may
// use. A policy only narrows what the server allows, never widens it.
struct AssistantPolicy
{
    enum class Action
    {
        Run,
        Ask,
        Refuse
    };

    // The assistant's name, compared without case; empty: the default policy. A name that a
    // credential is made for (CredentialStore) matches requests with that credential only;
    // other names match what clients claim in clientInfo (see AssistantPolicies::forCaller).
    QString client;
    // A stdio instance matches this policy only when this program launched it (its parent
    // process's executable, e.g. /usr/bin/claude); empty: whoever launched it.
    QString launcher;
    Action action = Action::Run;
    QStringList languages; // canonical names it may run; empty: every language
    bool network = true;   // may run where sandboxes have network (--network) and install
    // The hosts its runs may reach (host patterns, as --egress takes them); empty: those the
    // server allows. Within the server's: on an --egress server, only the entries the server's
    // list covers count.
    QStringList egress;
    // A connection of its runs to a host beyond their list: refused at once, or held while the
    // window asks a person (and a call that names such hosts runs with the listed ones, the
    // others asked when the program reaches for them).
    enum class OtherHosts
    {
        Refuse,
        Ask
    };
    OtherHosts otherHosts = OtherHosts::Refuse;
    bool libraries = true; // may ask for libraries to be installed
    // Its sessions are kept across restarts of the server (as create_session's keep: true)
    // unless a call says keep: false.
    bool keepSessions = false;
    int maxTimeoutSec = 0; // its calls' largest timeout; 0: the server's
    // The most memory its sandboxes may have; 0: the server's. A call cannot ask for memory, so
    // a server whose sandboxes get more refuses this assistant's runs (the rule says why).
    int maxMemoryMiB = 0;
    static constexpr int kMaxMemoryMiB = 1024 * 1024;
    // The runtime its runs and sessions must have: "" any (a plain container), "gvisor" a gVisor
    // one, else a runtime (Kubernetes: RuntimeClass) of that name. Placement sends them only to
    // engines that have it; with none, they are refused naming the rule (SandboxSpec::isolation).
    QString isolation;
    static constexpr const char *kIsolationContainer = "container";
    // The server's bound secrets (--secret) its runs get, by name; nothing: all of them, an
    // empty list: none. Names the server does not bind are ignored.
    std::optional<QStringList> secrets;
    // The server's workspaces (--workspace) its runs may ask for, by name; nothing: all of them
    // (the server's list is the opt-in: a server that names none has none to give), an empty
    // list: none.
    std::optional<QStringList> workspaces;
    // The most this policy's limits are: the server's largest timeout is 300 s (AppSettings).
    static constexpr int kMaxTimeoutSec = 300;

    bool isDefault() const { return client.isEmpty(); }
    // "the policy for assistant 'claude-code'", "the default policy (assistants not listed)".
    QString describe() const;

    // Why a call with these properties breaks the policy on a server with `config`; empty when
    // it does not. A call that gave no timeout (0) gets the server's default, capped to the
    // policy's largest: `timeoutSec` is set to what the run should use. `egress` is the hosts
    // the call asked for (its `network`; nothing: it did not say), already within the server's:
    // set to what the run gets under this policy (its own list, or no network).
    QString check(const QString &language, int *timeoutSec, const QStringList &libraries,
                  const SandboxConfig &config, std::optional<QStringList> *egress = nullptr) const;

    // Why a call asking for these workspaces (known to the server) breaks the policy; empty when
    // it does not. Under Ask, a name beyond the list is for the person asked (the approval shows
    // the workspaces), not refused.
    QString checkWorkspaces(const QStringList &asked) const;

    // Whether a run of this policy with an allow-list asks for other hosts.
    bool asksOtherHosts() const { return network && otherHosts == OtherHosts::Ask; }

    static QString actionName(Action action); // "run", "ask", "refuse"
    static std::optional<Action> actionFromName(const QString &name);

    QJsonObject toJson() const;
    // A hand-edited settings file must not keep the app from starting: unknown keys are ignored;
    // nothing when the object is not a policy (`error` says why).
    static std::optional<AssistantPolicy> fromJson(const QJsonObject &json,
                                                   QString *error = nullptr);

    bool operator==(const AssistantPolicy &other) const;
    bool operator!=(const AssistantPolicy &other) const { return !(*this == other); }

private:
    QString checkEgress(std::optional<QStringList> *egress, const SandboxConfig &config) const;
};
