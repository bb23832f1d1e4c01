#pragma once

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
    ToolCall(const QString &tool, const QJsonObject &arguments, const QJsonValue &progressToken,
             QObject *parent = nullptr);

    const QString &tool() const { return m_tool; }
    const QJsonObject &arguments() const { return m_arguments; }
    bool wantsProgress() const
    {
        return !m_progressToken.isUndefined() && !m_progressToken.isNull();
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
    QJsonObject clientCapabilities() const { return m_clientCapabilities; }
    // Set by the session that carries the call.
    void setRequester(const std::function<void(const QString &, const QJsonObject &,
                                               const ResponseHandler &)> &requester)
    {
        m_requester = requester;
    }
    void setClientCapabilities(const QJsonObject &caps) { m_clientCapabilities = caps; }
    // The client's name from its clientInfo ("" when it gave none): the run's source.
    QString clientName() const { return m_clientName; }
    void setClientName(const QString &name) { m_clientName = name; }
    // The MCP session the call came through: sandbox sessions belong to it.
    QString owner() const { return m_owner; }
    void setOwner(const QString &owner) { m_owner = owner; }

    // The request's params beyond name and arguments: 2026-07-28's inputResponses and
    // requestState (multi round-trip requests) and its _meta.
    const QJsonObject &requestParams() const { return m_requestParams; }
    void setRequestParams(const QJsonObject &params) { m_requestParams = params; }
    // The call speaks revision 2026-07-28 (it may answer with resultType "input_required").
    bool isModern() const { return m_modern; }
    void setModern(bool modern) { m_modern = modern; }

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
    QJsonValue m_progressToken;
    QJsonObject m_clientCapabilities;
    QString m_clientName;
    QString m_owner;
    QJsonObject m_requestParams;
    bool m_modern = false;
    std::function<void(const QString &, const QJsonObject &, const ResponseHandler &)> m_requester;
    double m_progress = 0;
    bool m_finished = false;
    bool m_cancelled = false;
};
