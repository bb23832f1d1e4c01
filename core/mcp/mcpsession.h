#pragma once

#include "jsonrpcmessage.h"
#include "protocolera.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <functional>

class McpCatalog;
class McpTransport;
class ToolCall;

// One client's conversation: lifecycle, negotiated version, log level, calls in flight.
// Every request gets exactly one answer (unless cancelled), whatever it contained.
class McpSession : public QObject
{
    Q_OBJECT
public:
    // `catalog`: what the server offers; it outlives the session (the server owns both).
    McpSession(const McpCatalog *catalog, McpTransport *transport, QObject *parent = nullptr);
    ~McpSession() override;

    bool isInitialized() const { return m_initialized; }
    QString protocolVersion() const { return m_protocolVersion; }
    QJsonObject clientInfo() const { return m_clientInfo; }
    // Unique per session.
    QString id() const { return m_id; }
    // What the session's sandbox sessions belong to: its id, unless set (a 2026-07-28 HTTP
    // request has no session; its calls belong to the credential it came with).
    QString owner() const { return m_owner.isEmpty() ? m_id : m_owner; }
    void setOwner(const QString &owner) { m_owner = owner; }
    int callsInFlight() const { return int(m_calls.size()); }
    bool isClosed() const { return m_closed; }

    void handle(const QByteArray &bytes);
    QJsonObject clientCapabilities() const { return m_clientCapabilities; }
    // Sends a request to the client; `done` gets the result or the error object. Unanswered
    // requests fail when the session closes.
    void request(const QString &method, const QJsonObject &params, const QJsonValue &relatedId,
                 const std::function<void(const QJsonObject &, const QJsonObject &)> &done);
    // notifications/resources/updated, if this client subscribed to the URI.
    void resourceUpdated(const QString &uri);
    // notifications/message, if the client's level lets it through.
    void log(const QString &level, const QString &logger, const QJsonValue &data);
    static int levelRank(const QString &level); // -1 for an unknown level

    // Cancels every call in flight; their requests get no response.
    void cancelAll();

Q_SIGNALS:
    // The client closed its side. Calls in flight go on (their answers are still written) unless
    // cancelAll() is called; callFinished() tells when each one ends.
    void closed();
    void callFinished();

private:
    // A request of revision 2026-07-28 in flight: what its response is decorated with.
    struct ModernRequest
    {
        QString method;
        int logThreshold = 99;      // from _meta logLevel; none without it
        bool declaresTasks = false; // the client lists io.modelcontextprotocol/tasks
    };

    void handleRequest(const JsonRpcMessage &m);
    void handleModernRequest(const JsonRpcMessage &m, const ProtocolEra::Verdict &era);
    QJsonObject decorateModern(const QJsonObject &message, const ModernRequest &request) const;
    void onDiscover(const JsonRpcMessage &m, const QJsonObject &params);
    void onTasksGet(const JsonRpcMessage &m, const QJsonObject &params);
    void onTasksResult(const JsonRpcMessage &m, const QJsonObject &params);
    void onTasksCancel(const JsonRpcMessage &m, const QJsonObject &params);
    void onTasksList(const JsonRpcMessage &m, const QJsonObject &params);
    void onTasksUpdate(const JsonRpcMessage &m, const QJsonObject &params);
    bool isModernId(const QJsonValue &id) const;
    // tasks/* under 2026-07-28 need the client to declare the tasks extension; false (and the
    // request answered with -32021) when it did not.
    bool modernTasksAllowed(const JsonRpcMessage &m);
    // One per method (see handleRequest's table).
    void methodNotFound(const JsonRpcMessage &m);
    void onInitialize(const JsonRpcMessage &m, const QJsonObject &params);
    void onPing(const JsonRpcMessage &m, const QJsonObject &params);
    void onToolsList(const JsonRpcMessage &m, const QJsonObject &params);
    void onToolsCall(const JsonRpcMessage &m, const QJsonObject &params);
    void onResourcesList(const JsonRpcMessage &m, const QJsonObject &params);
    void onResourceTemplatesList(const JsonRpcMessage &m, const QJsonObject &params);
    void onResourcesRead(const JsonRpcMessage &m, const QJsonObject &params);
    void onResourcesSubscribe(const JsonRpcMessage &m, const QJsonObject &params);
    void onPromptsList(const JsonRpcMessage &m, const QJsonObject &params);
    void onPromptsGet(const JsonRpcMessage &m, const QJsonObject &params);
    void onComplete(const JsonRpcMessage &m, const QJsonObject &params);
    void onSetLevel(const JsonRpcMessage &m, const QJsonObject &params);
    void handleNotification(const JsonRpcMessage &m);
    void callTool(const JsonRpcMessage &m, const ProtocolEra::Verdict *modern = nullptr);
    void send(const QJsonObject &message, const QJsonValue &relatedId = QJsonValue::Undefined);
    void handleResponse(const JsonRpcMessage &m);
    void logRelated(const QString &level, const QString &logger, const QJsonValue &data,
                    const QJsonValue &relatedId);
    void replyError(const QJsonValue &id, int code, const QString &message);
    void replyErrorData(const QJsonValue &id, int code, const QString &message,
                        const QJsonValue &data);
    void onTransportClosed();
    void failOutgoing();

    const McpCatalog *m_catalog;
    QPointer<McpTransport> m_transport;
    bool m_initialized = false;
    QString m_protocolVersion;
    QJsonObject m_clientInfo;
    QString m_id;
    QString m_owner;
    QHash<QString, ModernRequest> m_modern;
    int m_logThreshold = 99; // nothing until logging/setLevel
    QHash<QString, ToolCall *> m_calls;
    QJsonObject m_clientCapabilities;
    QSet<QString> m_subscriptions;
    QHash<QString, std::function<void(const QJsonObject &, const QJsonObject &)>> m_outgoing;
    qint64 m_nextRequestId = 1;
    bool m_closed = false;
};
