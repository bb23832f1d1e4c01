#pragma once

#include "jsonrpcmessage.h"
#include "mcpcaller.h"
#include "mcpcallreplies.h"
#include "mcpmessage.h"
#include "taskmethods.h"
#include "toolcalldispatcher.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <functional>

class McpCatalog;
class McpTransport;

// One client's conversation: lifecycle, negotiated version, log level, calls in flight.
// Every request gets exactly one answer (unless cancelled), whatever it contained. tools/call
// (ToolCallDispatcher) and tasks/* (TaskMethods) answer through the McpCallReplies this
// implements, not through the session.
class McpSession : public QObject, public McpCallReplies
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
    // Who is behind it, as its transport knows (a credential, a launcher): set before the first
    // message.
    void setIdentity(const CallerIdentity &identity) { m_identity = identity; }
    const CallerIdentity &identity() const { return m_identity; }
    int callsInFlight() const { return m_toolCalls.size(); }
    bool isClosed() const { return m_closed; }

    // A message from the client, as its transport parsed and classified it.
    void handle(const McpMessage &m);
    QJsonObject clientCapabilities() const { return m_clientCapabilities; }
    // Sends a request to the client; `done` gets the result or the error object. Unanswered
    // requests fail when the session closes.
    void request(const QString &method, const QJsonObject &params, const QJsonValue &relatedId,
                 const ResponseHandler &done) override;
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
        bool declaresUi = false;    // ... and io.modelcontextprotocol/ui (MCP Apps views)
    };
    using Handler = void (McpSession::*)(const McpMessage &, const QJsonObject &);

    // Answers the client's request `id` (a 2026-07-28 answer is decorated as its revision
    // says). For the method handlers: this session's, TaskMethods' and ToolCallDispatcher's.
    void reply(const QJsonValue &id, const QJsonValue &result) override;
    void replyError(const QJsonValue &id, int code, const QString &message,
                    const QJsonValue &data = QJsonValue::Undefined) override;
    void notify(const QJsonObject &message, const QJsonValue &relatedId) override;
    void logRelated(const QString &level, const QString &logger, const QJsonValue &data,
                    const QJsonValue &relatedId) override;
    void forget(const QJsonValue &id) override;
    // The request `id` in flight speaks revision 2026-07-28.
    bool isModernRequest(const QJsonValue &id) const;
    // It does, and its client declares the tasks extension.
    bool declaresTasks(const QJsonValue &id) const;

    // Who asks, as the request's era says: the one place the eras differ in this.
    McpCaller callerOf(const McpMessage &m) const;
    // Every method of both eras, in one table; the era's rules before its handler.
    void dispatch(const McpMessage &m);
    // A 2026-07-28 request: its id is free, and what its answer needs is kept. False when it
    // was answered (an id in use).
    bool admitModern(const McpMessage &m);
    QJsonObject decorateModern(const QJsonObject &message, const ModernRequest &request) const;
    void respond(const QJsonValue &id, const QJsonObject &message);
    void methodNotFound(const McpMessage &m);
    // One per method (see dispatch's table).
    void onInitialize(const McpMessage &m, const QJsonObject &params);
    void onDiscover(const McpMessage &m, const QJsonObject &params);
    void onPing(const McpMessage &m, const QJsonObject &params);
    void onToolsList(const McpMessage &m, const QJsonObject &params);
    void onToolsCall(const McpMessage &m, const QJsonObject &params);
    void onResourcesList(const McpMessage &m, const QJsonObject &params);
    void onResourceTemplatesList(const McpMessage &m, const QJsonObject &params);
    void onResourcesRead(const McpMessage &m, const QJsonObject &params);
    void onResourcesSubscribe(const McpMessage &m, const QJsonObject &params);
    void onPromptsList(const McpMessage &m, const QJsonObject &params);
    void onPromptsGet(const McpMessage &m, const QJsonObject &params);
    void onComplete(const McpMessage &m, const QJsonObject &params);
    void onSetLevel(const McpMessage &m, const QJsonObject &params);
    void onTasks(const McpMessage &m, const QJsonObject &params);
    void handleNotification(const McpMessage &m);
    void handleResponse(const McpMessage &m);
    void onTransportClosed();
    void failOutgoing();

    const McpCatalog *m_catalog;
    QPointer<McpTransport> m_transport;
    TaskMethods m_tasks;
    bool m_initialized = false;
    QString m_protocolVersion;
    QJsonObject m_clientInfo;
    QString m_id;
    QString m_owner;
    CallerIdentity m_identity;
    QHash<QString, ModernRequest> m_modern;
    int m_logThreshold = 99; // nothing until logging/setLevel
    QJsonObject m_clientCapabilities;
    QSet<QString> m_subscriptions;
    QHash<QString, ResponseHandler> m_outgoing;
    qint64 m_nextRequestId = 1;
    bool m_closed = false;
    // Last, so it goes first: the calls it still holds are cancelled (the destructor) and
    // deleted while what they answer through (the above) still exists.
    ToolCallDispatcher m_toolCalls;
};
