#pragma once

#include "mcpreplies.h"

#include <QJsonObject>
#include <functional>

// What a tools/call in flight sends its client besides the answer: its progress and log
// messages, and questions of the server's (sampling, elicitation), each tied to the request it
// serves so that transports with a stream per request (HTTP) send it there. The session keeps
// the state these depend on (the log levels, the requests it asked), so ToolCallDispatcher goes
// through this rather than through the session.
class McpCallReplies : public McpReplies
{
public:
    using ResponseHandler =
        std::function<void(const QJsonObject &result, const QJsonObject &error)>;

    // A notification tied to the client's request `relatedId`.
    virtual void notify(const QJsonObject &notification, const QJsonValue &relatedId) = 0;
    // notifications/message, when the level set for `relatedId` (or the session's) lets it
    // through.
    virtual void logRelated(const QString &level, const QString &logger, const QJsonValue &data,
                            const QJsonValue &relatedId) = 0;
    // A request of the server's to the client; `done` gets its result or error object.
    virtual void request(const QString &method, const QJsonObject &params,
                         const QJsonValue &relatedId, const ResponseHandler &done) = 0;
    // The client cancelled request `id`: it gets no answer, so nothing is kept for one.
    virtual void forget(const QJsonValue &id) = 0;
};
