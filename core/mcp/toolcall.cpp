#include "toolcall.h"

#include <QJsonArray>

ToolCall::ToolCall(const QString &tool, const QJsonObject &arguments, const Context &context,
                   QObject *parent)
    : QObject(parent), m_tool(tool), m_arguments(arguments), m_context(context)
{}

void ToolCall::progress(const QString &message, double total)
{
    if (m_finished || m_cancelled || !wantsProgress())
        return;
    m_progress += 1; // must increase with every notification
    QJsonObject params{{QStringLiteral("progressToken"), m_context.progressToken},
                       {QStringLiteral("progress"), m_progress}};
    if (total > 0)
        params.insert(QStringLiteral("total"), total);
    if (!message.isEmpty())
        params.insert(QStringLiteral("message"), message);
    Q_EMIT progressReady(params);
}

void ToolCall::log(const QString &level, const QString &logger, const QJsonValue &data)
{
    if (!m_finished && !m_cancelled)
        Q_EMIT logReady(level, logger, data);
}

void ToolCall::request(const QString &method, const QJsonObject &params,
                       const ResponseHandler &done)
{
    if (!m_requester || m_finished || m_cancelled) {
        done({}, QJsonObject{{QStringLiteral("code"), -32603},
                             {QStringLiteral("message"), QStringLiteral("no client to ask")}});
        return;
    }
    m_requester(method, params, done);
}

void ToolCall::finish(const QJsonObject &result)
{
    if (m_finished)
        return;
    m_finished = true;
    if (!m_cancelled) // a cancelled request gets no response
        Q_EMIT finished(result);
}

void ToolCall::fail(int code, const QString &message, const QJsonValue &data)
{
    if (m_finished)
        return;
    m_finished = true;
    QJsonObject error{{QStringLiteral("code"), code}, {QStringLiteral("message"), message}};
    if (!data.isUndefined())
        error.insert(QStringLiteral("data"), data);
    if (!m_cancelled)
        Q_EMIT failed(error);
}

void ToolCall::finishWithError(const QString &message)
{
    finish(errorResult(message));
}

void ToolCall::cancel()
{
    if (m_finished || m_cancelled)
        return;
    m_cancelled = true;
    Q_EMIT cancelRequested();
}

QJsonObject ToolCall::textContent(const QString &text)
{
    return {{QStringLiteral("type"), QStringLiteral("text")}, {QStringLiteral("text"), text}};
}

QJsonObject ToolCall::errorResult(const QString &message)
{
    return {{QStringLiteral("content"), QJsonArray{textContent(message)}},
            {QStringLiteral("isError"), true}};
}
