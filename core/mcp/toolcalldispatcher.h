#pragma once

#include "toolcall.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>

class McpCallReplies;
class McpCatalog;
struct McpCaller;
struct McpMessage;
struct ToolDefinition;

// tools/call for one session: the request checked (its id, the tool, task or not, the
// arguments), then the tool's handler run at once or as a task (TaskStore), and the calls run at
// once kept until they end. Progress, logs, questions to the client and the answer go out
// through McpCallReplies; the session says who asks and for whom (McpCaller, owner).
class ToolCallDispatcher : public QObject
{
    Q_OBJECT
public:
    // `replies` answers for the session, which owns this and so outlives it.
    ToolCallDispatcher(const McpCatalog *catalog, McpCallReplies *replies,
                       QObject *parent = nullptr);

    // A tools/call request (its era's rules already applied) from `caller`; what it runs
    // belongs to `owner`.
    void handle(const McpMessage &m, const QJsonObject &params, const McpCaller &caller,
                const QString &owner);
    // A call run at once is in flight under the client's request `id`.
    bool isInFlight(const QJsonValue &id) const;
    int size() const { return int(m_calls.size()); }
    // notifications/cancelled for request `id`: its call, if in flight, is cancelled and gets
    // no answer.
    void cancel(const QJsonValue &id);
    // Cancels every call in flight; their requests get no answer.
    void cancelAll();

Q_SIGNALS:
    // A call run at once has ended: answered, or cancelled.
    void callFinished();

private:
    // Whether the call runs as a task (*asTask); false when the request was answered instead.
    bool decideTask(const McpMessage &m, const ToolDefinition &tool, const McpCaller &caller,
                    bool *asTask);
    void startTask(const McpMessage &m, const ToolDefinition &tool, ToolCall::Context context,
                   const QJsonObject &arguments);
    void startCall(const McpMessage &m, const ToolDefinition &tool,
                   const ToolCall::Context &context, const QJsonObject &arguments);

    const McpCatalog *m_catalog;
    McpCallReplies *m_replies;
    QHash<QString, ToolCall *> m_calls; // by the request's id (JsonRpcMessage::idKey)
};
