#pragma once

#include "jsonrpcmessage.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>

class McpServer;
class McpTransport;
class ToolCall;

// One client's conversation: lifecycle, negotiated version, log level, calls in flight.
// Every request gets exactly one answer (unless cancelled), whatever it contained.
class McpSession : public QObject
{
    Q_OBJECT
public:
    McpSession(McpServer *server, McpTransport *transport, QObject *parent = nullptr);
    ~McpSession() override;

    bool isInitialized() const { return m_initialized; }
    QString protocolVersion() const { return m_protocolVersion; }
    QJsonObject clientInfo() const { return m_clientInfo; }
    int callsInFlight() const { return int(m_calls.size()); }
    bool isClosed() const { return m_closed; }

    void handle(const QByteArray &bytes);
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
    void handleRequest(const JsonRpcMessage &m);
    void handleNotification(const JsonRpcMessage &m);
    void callTool(const JsonRpcMessage &m);
    void send(const QJsonObject &message);
    void replyError(const QJsonValue &id, int code, const QString &message);
    void onTransportClosed();
    static QString idKey(const QJsonValue &id);

    McpServer *m_server;
    QPointer<McpTransport> m_transport;
    bool m_initialized = false;
    QString m_protocolVersion;
    QJsonObject m_clientInfo;
    int m_logThreshold = 99; // nothing until logging/setLevel
    QHash<QString, ToolCall *> m_calls;
    bool m_closed = false;
};
