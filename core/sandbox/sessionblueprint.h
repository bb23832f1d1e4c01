#pragma once

#include "runnetwork.h"

#include <QDateTime>
#include <QJsonObject>
#include <QStringList>

struct SandboxConfig;

// What a session is made with: enough to make another like it (a fork) or the same again after
// a restart (a kept session, KeptSessions). Never its secrets' values: those are the server's,
// bound again by name when it is read back.
struct SessionBlueprint
{
    QString owner;     // the MCP session that uses it ("" for a kept one not yet back)
    QString assistant; // the client's name (clientInfo): whom a kept session comes back for
    QString language;
    QStringList libraries;
    int timeoutSec = 0; // 0: the server's default
    RunNetwork network;
    QStringList workspaces;
    bool kept = false; // survives its server and its client (create_session's keep)
    QDateTime createdAt;

    QJsonObject toJson() const;
    // The network's secrets are the server's of those names now (one it no longer has is left
    // out); a workspace it no longer has is left out too (the session would not start).
    static SessionBlueprint fromJson(const QJsonObject &o, const SandboxConfig &config);
};
