#pragma once

#include "assistantpolicy.h"

#include <QJsonObject>
#include <QList>

// Every assistant's policy, the default for the others, and how approvals are asked for. Kept in
// the settings file (the window's Settings → Assistants), read by headless instances too.
struct AssistantPolicies
{
    AssistantPolicy fallback; // assistants not listed (client empty)
    QList<AssistantPolicy> assistants;
    // An approval not answered within this long denies the run.
    int approvalTimeoutSec = 120;
    static constexpr int kMinApprovalTimeoutSec = 5;
    static constexpr int kMaxApprovalTimeoutSec = 3600;
    // A headless instance whose policy says "ask" when no window is open to ask: refuse (the
    // default: nothing runs unseen when the user asked to see it) or run.
    bool runWhenNoWindow = false;
    // At most this many assistants are listed (a settings file is not a database).
    static constexpr int kMaxAssistants = 256;

    // The assistant's own policy, else the default one.
    const AssistantPolicy &forClient(const QString &client) const;
    // What the server knows of a caller besides the name it runs as.
    struct Caller
    {
        QString name;            // its credential's name, else the one it claims
        bool credential = false; // `name` is its credential's, not a claim
        bool nameHeld = false;   // a credential is made for `name`, and this caller has none
        QString launcher;        // a stdio instance: the program that launched it
    };
    // The policy this caller gets: its name's, when the name is its credential's, or when it
    // is a claim that nothing contradicts; else the default, and `demoted` says why ("claims
    // 'x', a name a credential holds", "launched by /bin/sh, not /usr/bin/claude").
    const AssistantPolicy &forCaller(const Caller &caller, QString *demoted = nullptr) const;
    // "Always allow this assistant": its policy (added from the default when it has none) runs
    // without asking from now on; its limits stay. False, and nothing changes, for a client that
    // gave no name: the only policy matching it is the default, and making that "run" would let
    // every assistant without a policy of its own run unasked.
    bool allowAlways(const QString &client);
    // "Allow for this assistant" on a host its run was refused: the host pattern joins its
    // policy's Hosts (a policy of its own, from the default, when it has none).
    enum class HostAdded
    {
        Added,
        AlreadyListed,
        NoName,        // a client without a name: only the default policy matches it (everyone's)
        ServerDecides, // its policy has no list of its own: the server's (or the call's) refused it
        NotAPattern
    };
    // `seed`: for a policy without a list of its own (the server's decides), the list it gets
    // before `pattern` joins (the hosts the run had); without one that is ServerDecides.
    HostAdded allowHost(const QString &client, const QString &pattern,
                        const QStringList &seed = {});
    // Everything is the default (every assistant runs, no limits): no reason to look further.
    bool isOpen() const;

    QJsonObject toJson() const;
    // Entries that are not policies are dropped (and named in `warnings`), never the whole set.
    static AssistantPolicies fromJson(const QJsonObject &json, QStringList *warnings = nullptr);

    bool operator==(const AssistantPolicies &other) const;
    bool operator!=(const AssistantPolicies &other) const { return !(*this == other); }
};
