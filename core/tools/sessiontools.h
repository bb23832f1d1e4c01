#pragma once

#include <QString>
#include <functional>

class McpServer;
class RunGate;
class SessionManager;
struct SessionAdmission;
class ToolCall;

// create_session, list_sessions and close_session: stateful sessions whose variables, files and
// installed packages persist between calls (the run tools take their session_id). A session
// belongs to the MCP session that created it and ends with it.
class SessionTools
{
public:
    // With `gate`, create_session passes the assistant's policy (its rules; a refusing policy);
    // one with libraries is asked about like a run, as installing them starts a container with
    // network at once.
    static void registerAll(McpServer &server, SessionManager &sessions, RunGate *gate = nullptr);
    // A refused admission (SessionManager::admit, lookup) as the caller reads it: one sentence.
    static QString refusalText(const SessionAdmission &verdict, const QString &id);
    // A kept session of an earlier server (dormant) comes back first, for its own assistant
    // only, and then `then` goes on with the call; false, with nothing done, when `id` is not
    // such a session.
    static bool reviveFirst(SessionManager *sm, ToolCall *call, const QString &id,
                            const std::function<void(ToolCall *call)> &then);
};
