#pragma once

#include "calleridentity.h"
#include "httpconnection.h"
#include "mcpmessage.h"

#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QJsonValue>
#include <QObject>
#include <QStringList>
#include <QTimer>
#include <optional>

class HttpResponder;
class HttpServer;
class CredentialStore;
class OAuthServer;
struct Credential;
class HttpSessionTransport;
struct JsonRpcMessage;
class McpServer;
class McpSession;
struct HttpRequest;

// MCP "Streamable HTTP" on one endpoint path, both eras at once. Revision 2025-11-25: POST
// carries one JSON-RPC message, GET opens the server's own event stream, DELETE ends a session.
// Revision 2026-07-28 (a request whose MCP-Protocol-Version header or _meta names it): each POST
// is served on its own with no protocol session, so any instance can answer it. Secure by default:
// foreign Host and Origin headers are refused (DNS rebinding), a bearer token is required unless
// disabled, bodies are size-capped, idle sessions expire.
class StreamableHttpServer : public QObject
{
    Q_OBJECT
public:
    struct Config
    {
        QByteArray path = "/mcp";
        QByteArray token; // the shared token; empty: no authentication
        // Per-assistant credentials, accepted beside the shared token (unless there is no
        // authentication at all); a request that carries one runs as its assistant.
        CredentialStore *credentials = nullptr;
        // The MCP authorization flow (sign-in with approval in the window) on the same server;
        // null: none (the 401 then names no resource metadata).
        OAuthServer *oauth = nullptr;
        QStringList allowedHosts; // besides localhost, 127.0.0.1 and ::1
        qint64 maxBodyBytes = 4 * 1024 * 1024;
        int sessionIdleMs = 30 * 60 * 1000;
        int headTimeoutMs = 10 * 1000; // see HttpServer
        int bodyTimeoutMs = 30 * 1000;
        // MCP sessions open at once, and per client (its address and clientInfo.name). At a
        // client's cap, its least recently used session that has no call in flight and no open
        // GET stream is ended to make room (a client that lost track of its sessions cannot
        // lock itself out); when there is none, initialize is refused with 429. At the overall
        // cap, the least recently used such session idle for a minute or more goes; else 503.
        int maxSessions = 64;
        int maxSessionsPerClient = 16;
    };

    StreamableHttpServer(McpServer *server, const Config &config, QObject *parent = nullptr);
    ~StreamableHttpServer() override;

    bool listen(const QHostAddress &address, quint16 port);
    quint16 port() const;
    QString errorString() const;
    int sessionCount() const { return int(m_sessions.size()); }
    // Ends every session (their calls are cancelled).
    void closeAll();

Q_SIGNALS:
    void sessionStarted(McpSession *session);

private:
    struct Session
    {
        QByteArray id;
        QByteArray client;    // peer and clientInfo.name
        QString credentialId; // the credential that opened it: every request of it must carry it
        HttpSessionTransport *transport = nullptr;
        McpSession *mcp = nullptr;
        qint64 lastActive = 0;
    };

    void onRequest(const HttpRequest &request, HttpResponder *responder);
    // Everything that can be decided from the head, before the body is read.
    HttpConnection::Verdict checkHead(const HttpRequest &head) const;
    bool makeRoomForSession(const QByteArray &client, const QJsonValue &id,
                            HttpResponder *responder);
    void handlePost(const HttpRequest &request, HttpResponder *responder);
    // Revision 2026-07-28: the request is served on its own, by a session that lives for it.
    void handleModernPost(const HttpRequest &request, HttpResponder *responder,
                          const McpMessage &message);
    // Whose sandbox sessions a 2026-07-28 request may use: the credential it came with.
    QString modernOwner(const HttpRequest &request) const;
    void handleGet(const HttpRequest &request, HttpResponder *responder);
    void handleDelete(const HttpRequest &request, HttpResponder *responder);
    Session *sessionFor(const HttpRequest &request, HttpResponder *responder);
    Session *createSession(const QByteArray &client, const CallerIdentity &identity);
    // An initialize: a new session, its answer owed on this POST; null when refused (answered).
    Session *openSession(const HttpRequest &request, const JsonRpcMessage &m,
                         HttpResponder *responder);
    // Who sent the request, as its Authorization header tells (checkHead let it in).
    CallerIdentity identityOf(const HttpRequest &request) const;
    // The request carries the shared token or a credential (an access token of a grant too).
    bool authorized(const HttpRequest &request) const;
    // The credential its bearer token is (an access token: its grant), if any.
    std::optional<Credential> credentialOf(const HttpRequest &request) const;
    void endSession(const QByteArray &id);
    void expireIdle();
    bool hostAllowed(const QByteArray &host) const;

    McpServer *m_server;
    Config m_config;
    HttpServer *m_http;
    QHash<QByteArray, Session> m_sessions;
    QTimer m_expiry;
};
