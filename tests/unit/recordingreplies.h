#pragma once

#include "mcpcallreplies.h"

#include <QJsonObject>
#include <QList>

// What a session would send for TaskMethods and ToolCallDispatcher, recorded: each one a JSON
// object naming what it was ("reply", "error", "notify", "log", "request", "forget"), the
// request it belongs to, and its content. No session, no transport.
class RecordingReplies : public McpCallReplies
{
public:
    void reply(const QJsonValue &id, const QJsonValue &result) override
    {
        m_sent.append({{"kind", "reply"}, {"id", id}, {"result", result}});
    }
    void replyError(const QJsonValue &id, int code, const QString &message,
                    const QJsonValue &data = QJsonValue::Undefined) override
    {
        QJsonObject sent{{"kind", "error"}, {"id", id}, {"code", code}, {"message", message}};
        if (!data.isUndefined())
            sent.insert("data", data);
        m_sent.append(sent);
    }
    void notify(const QJsonObject &notification, const QJsonValue &relatedId) override
    {
        m_sent.append({{"kind", "notify"}, {"id", relatedId}, {"message", notification}});
    }
    void logRelated(const QString &level, const QString &logger, const QJsonValue &data,
                    const QJsonValue &relatedId) override
    {
        m_sent.append({{"kind", "log"},
                       {"id", relatedId},
                       {"level", level},
                       {"logger", logger},
                       {"data", data}});
    }
    void request(const QString &method, const QJsonObject &params, const QJsonValue &relatedId,
                 const ResponseHandler &done) override
    {
        m_sent.append(
            {{"kind", "request"}, {"id", relatedId}, {"method", method}, {"params", params}});
        m_pending.append(done);
    }
    void forget(const QJsonValue &id) override { m_sent.append({{"kind", "forget"}, {"id", id}}); }

    QList<QJsonObject> takeSent()
    {
        QList<QJsonObject> out;
        out.swap(m_sent);
        return out;
    }
    // The requests asked so far, to answer them.
    QList<ResponseHandler> takePending()
    {
        QList<ResponseHandler> out;
        out.swap(m_pending);
        return out;
    }

private:
    QList<QJsonObject> m_sent;
    QList<ResponseHandler> m_pending;
};
