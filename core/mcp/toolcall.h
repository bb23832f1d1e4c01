#pragma once

#include "calleridentity.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QObject>
#include <functional>

// One tools/call in flight. The tool's handler keeps it and finishes it (now or later); progress
// and log messages sent through it reach the calling client, and a client's cancellation arrives
// as cancelRequested().
class ToolCall : public QObject
{
    Q_OBJECT
public:
    // Where the call comes from, as the session that carries it knows it.
    struct Context
    {
        // The request's progress token (undefined or null: the client wants no progress).
        QJsonValue progressToken;
        QJsonObject clientCapabilities;
        // The client's name from its clientInfo ("" when it gave none): the run's source.
        QString clientName;
        // Who is behind the call as the transport knows it (a credential, a launcher).
        CallerIdentity identity;
        // The MCP session the call came through: sandbox sessions belong to it.
        QString owner;
        // The request's params beyond name and arguments: 2026-07-28's inputResponses and
        // requestState (multi round-trip requests) and its _meta.
        QJsonObject requestParams;
        // The call speaks revision 2026-07-28 (it may answer with resultType "input_required").
        bool modern = false;
    };

    ToolCall(const QString &tool, const QJsonObject &arguments, const Context &context,
             QObject *parent = nullptr);

    const QString &tool() const { return m_tool; }
    const QJsonObject &arguments() const { return m_arguments; }
    bool wantsProgress() const
    {
        return !m_context.progressToken.isUndefined() && !m_context.progressToken.isNull();
    }
    bool isFinished() const { return m_finished; }
    bool isCancelled() const { return m_cancelled; }

    // Sends notifications/progress (only if the client asked with a progress token).
    void progress(const QString &message, double total = 0);
    // Sends notifications/message when the client's log level lets it through.
    void log(const QString &level, const QString &logger, const QJsonValue &data);

    // Asks the client something while the call runs (sampling/createMessage, elicitation/create).
    // `done` receives the result, or the error object when the client refused or failed.
    using ResponseHandler =
        std::function<void(const QJsonObject &result, const QJsonObject &error)>;
    void request(const QString &method, const QJsonObject &params, const ResponseHandler &done);
    QJsonObject clientCapabilities() const { return m_context.clientCapabilities; }
    // Set by the session that carries the call.
    void setRequester(const std::function<void(const QString &, const QJsonObject &,
                                               const ResponseHandler &)> &requester)
    {
        m_requester = requester;
    }
    // The name the client claims (clientInfo): shown, never trusted.
    QString clientName() const { return m_context.clientName; }
    // The name the call runs as: its credential's, else the claimed one.
    QString assistant() const { return m_context.identity.assistant(m_context.clientName); }
    const CallerIdentity &identity() const { return m_context.identity; }
    QString owner() const { return m_context.owner; }
    const QJsonObject &requestParams() const { return m_context.requestParams; }
    bool isModern() const { return m_context.modern; }

    void finish(const QJsonObject &result);
    // A failure of the work itself: a result with isError, text a model can act on.
    void finishWithError(const QString &message);
    // A protocol error instead of a result (e.g. -32021, a capability the client lacks).
    void fail(int code, const QString &message, const QJsonValue &data = QJsonValue::Undefined);
    void cancel();

    static QJsonObject textContent(const QString &text);
    static QJsonObject errorResult(const QString &message);

Q_SIGNALS:
    void progressReady(const QJsonObject &params);
    void logReady(const QString &level, const QString &logger, const QJsonValue &data);
    void finished(const QJsonObject &result);
    void failed(const QJsonObject &error);
    void cancelRequested();

private:
    QString m_tool;
    QJsonObject m_arguments;
    Context m_context;
    std::function<void(const QString &, const QJsonObject &, const ResponseHandler &)> m_requester;
    double m_progress = 0;
    bool m_finished = false;
    bool m_cancelled = false;
};
