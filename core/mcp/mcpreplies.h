#pragma once

#include <QJsonValue>
#include <QString>

// How a method's handler answers the client's request `id`: a result or an error, and nothing
// else of the session that carries it. The session decorates the answer as the request's
// revision says (2026-07-28) and writes it on the request's transport, so a handler outside the
// session (TaskMethods, ToolCallDispatcher) needs neither the session nor the transport.
class McpReplies
{
public:
    virtual ~McpReplies() = default;

    virtual void reply(const QJsonValue &id, const QJsonValue &result) = 0;
    virtual void replyError(const QJsonValue &id, int code, const QString &message,
                            const QJsonValue &data = QJsonValue::Undefined) = 0;
};
