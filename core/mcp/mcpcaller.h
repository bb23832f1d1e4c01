#pragma once

#include "calleridentity.h"

#include <QJsonObject>

// Who asks, as the request's era says: a 2025 request speaks for the session's handshake, a
// 2026-07-28 request for itself (its _meta). McpSession::callerOf is the one place the eras
// differ in this; the method handlers read only this.
struct McpCaller
{
    bool modern = false;
    QJsonObject capabilities;
    QJsonObject clientInfo;
    // What the transport knows of it, whatever its clientInfo claims.
    CallerIdentity identity;

    // It lists the tasks extension (io.modelcontextprotocol/tasks).
    bool declaresTasks() const;
    // It renders MCP Apps views (io.modelcontextprotocol/ui).
    bool declaresUi() const;
};
