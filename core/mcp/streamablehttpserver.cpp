#include "streamablehttpserver.h"

#include "credentialstore.h"
#include "httprequest.h"
#include "httpresponder.h"
#include "httpserver.h"
#include "httpsessiontransport.h"
#include "jsonrpcmessage.h"
#include "mcplog.h"
#include "mcpserver.h"
#include "mcpsession.h"
#include "oauthserver.h"
#include "protocolversion.h"
#include "secretcompare.h"
#include "taskstore.h"

#include <QCryptographicHash>
#include <QDateTime>
#include <QJsonDocument>
#include <QPointer>
#include <QRandomGenerator>
#include <QUrl>
#include <functional>

namespace {
const HttpResponder::Headers kJson{{"Content-Type", "application/json"}};

QByteArray rpcError(int code, const QString &message)
{
    return QJsonDocument(JsonRpcMessage::makeError(QJsonValue::Null, code, message))
        .toJson(QJsonDocument::Compact);
}

void refuse(HttpResponder *r, int status, const QString &message,
            const HttpResponder::Headers &extra = {})
{
    r->respond(status, kJson + extra, rpcError(JsonRpcMessage::InvalidRequest, message));
}

// The 2026-07-28 error, which a client of either era can read: it lists what we serve.
QByteArray unsupportedVersion(const QJsonValue &id, const QString &requested)
{
    return QJsonDocument(
               JsonRpcMessage::makeError(
                   id, ProtocolEra::UnsupportedProtocolVersion,
                   QStringLiteral("Bad Request: unsupported MCP-Protocol-Version %1 "
                                  "(supported: %2)")
                       .arg(requested, ProtocolEra::supported().join(QStringLiteral(", "))),
                   ProtocolEra::unsupportedData(requested)))
        .toJson(QJsonDocument::Compact);
}

HttpConnection::Verdict refusal(int status, const QString &message,
                                const HttpResponder::Headers &extra = {})
{
    return {status, kJson + extra, rpcError(JsonRpcMessage::InvalidRequest, message)};
}

QByteArray hostName(QByteArray host)
{
    host = host.trimmed().toLower();
    if (host.startsWith('[')) // [::1]:8080
        return host.mid(1, host.indexOf(']') - 1);
    const qsizetype colon = host.lastIndexOf(':');
    if (colon >= 0 && host.indexOf(':') == colon)
        host.truncate(colon);
    return host;
}
} // namespace

StreamableHttpServer::StreamableHttpServer(McpServer *server, const Config &config, QObject *parent)
    : QObject(parent), m_server(server), m_config(config), m_http(new HttpServer(this))
{
    m_http->setMaxBodyBytes(config.maxBodyBytes);
    m_http->setHeadTimeoutMs(config.headTimeoutMs);
    m_http->setBodyTimeoutMs(config.bodyTimeoutMs);
    m_http->setHeadCheck([this](const HttpRequest &head) { return checkHead(head); });
    connect(m_http, &HttpServer::requestReceived, this, &StreamableHttpServer::onRequest);
    m_expiry.setInterval(qMin(60000, qMax(1000, config.sessionIdleMs / 4)));
    connect(&m_expiry, &QTimer::timeout, this, &StreamableHttpServer::expireIdle);
    m_expiry.start();
}

StreamableHttpServer::~StreamableHttpServer()
{
    closeAll();
}

bool StreamableHttpServer::listen(const QHostAddress &address, quint16 port)
{
    return m_http->listen(address, port);
}

quint16 StreamableHttpServer::port() const
{
    return m_http->port();
}

QString StreamableHttpServer::errorString() const
{
    return m_http->errorString();
}

bool StreamableHttpServer::hostAllowed(const QByteArray &host) const
{
    const QByteArray name = hostName(host);
    if (name == "localhost" || name == "127.0.0.1" || name == "::1")
        return true;
    for (const QString &h : m_config.allowedHosts)
        if (name == h.toLower().toUtf8())
            return true;
    return false;
}

HttpConnection::Verdict StreamableHttpServer::checkHead(const HttpRequest &request) const
{
    const bool oauth = m_config.oauth && OAuthServer::handles(request.path);
    if (request.path != m_config.path && !oauth)
        return refusal(404, QStringLiteral("Not Found: the MCP endpoint is %1")
                                .arg(QString::fromUtf8(m_config.path)));
    // DNS rebinding: a page on evil.example resolving to 127.0.0.1 still sends its own Host and
    // Origin, which is how it is told apart from a local client. The sign-in's URLs are built
    // from Host too, so this check holds for them as well.
    if (!hostAllowed(request.header("Host")))
        return refusal(403, QStringLiteral("Forbidden: Host not allowed (code-sandbox "
                                           "--allow-host NAME accepts another name)"));
    const QByteArray origin = request.header("Origin");
    if (!origin.isEmpty()) {
        const QUrl url(QString::fromUtf8(origin));
        if (!url.isValid() || url.host().isEmpty() || !hostAllowed(url.host().toUtf8()))
            return refusal(403, QStringLiteral("Forbidden: Origin not allowed"));
    }
    // The authorization server's endpoints are for clients without a token yet: they neither
    // take the places of connections that showed one, nor send large bodies.
    if (oauth) {
        if (request.header("Content-Length").toLongLong() > OAuthServer::kMaxBodyBytes ||
            !request.header("Transfer-Encoding").isEmpty())
            return refusal(413, QStringLiteral("Payload Too Large: at most %1 bytes, with a "
                                               "Content-Length")
                                    .arg(OAuthServer::kMaxBodyBytes));
        HttpConnection::Verdict pass;
        pass.unadmitted = true;
        return pass;
    }
    // Before the body: whoever lacks the token cannot make us buffer or wait for one.
    if (!m_config.token.isEmpty() && !authorized(request)) {
        const bool sent = !request.header("Authorization").isEmpty();
        const QByteArray challenge =
            m_config.oauth ? m_config.oauth->challenge(request, sent ? "invalid_token" : "")
                           : QByteArray("Bearer realm=\"code-sandbox\"");
        return refusal(401,
                       QStringLiteral("Unauthorized: sign in (OAuth), or send 'Authorization: "
                                      "Bearer <token>' with the assistant's credential "
                                      "(code-sandbox --new-credential NAME makes one) or the "
                                      "shared token (code-sandbox --print-token shows it)"),
                       {{"WWW-Authenticate", challenge}});
    }
    // A POST's version is checked with its body (the error then carries the request's id, and a
    // header that contradicts a 2026-07-28 body is a HeaderMismatch); other methods here.
    const QByteArray version = request.header("MCP-Protocol-Version");
    if (request.method != "POST" && !version.isEmpty() &&
        !ProtocolEra::supported().contains(QString::fromUtf8(version)))
        return {400, kJson, unsupportedVersion(QJsonValue::Null, QString::fromUtf8(version))};
    return {};
}

std::optional<Credential> StreamableHttpServer::credentialOf(const HttpRequest &request) const
{
    const QByteArray auth = request.header("Authorization");
    if (!auth.startsWith("Bearer ") || m_config.token.isEmpty())
        return std::nullopt;
    const QByteArray secret = auth.mid(7).trimmed();
    if (m_config.oauth && secret.startsWith(AccessTokens::kPrefix))
        return m_config.oauth->authenticate(request, secret);
    if (m_config.credentials)
        return m_config.credentials->match(secret);
    return std::nullopt;
}

bool StreamableHttpServer::authorized(const HttpRequest &request) const
{
    const QByteArray auth = request.header("Authorization");
    if (!auth.startsWith("Bearer "))
        return false;
    return SecretCompare::equal(auth.mid(7).trimmed(), m_config.token) ||
           credentialOf(request).has_value();
}

CallerIdentity StreamableHttpServer::identityOf(const HttpRequest &request) const
{
    CallerIdentity identity;
    identity.transport = QStringLiteral("http");
    if (const auto c = credentialOf(request)) {
        identity.credentialId = c->id;
        identity.credentialName = c->name;
    }
    return identity;
}

void StreamableHttpServer::onRequest(const HttpRequest &request, HttpResponder *responder)
{
    // The head passed checkHead() already.
    if (m_config.oauth && OAuthServer::handles(request.path))
        m_config.oauth->handle(request, responder, m_config.token);
    else if (request.method == "POST")
        handlePost(request, responder);
    else if (request.method == "GET")
        handleGet(request, responder);
    else if (request.method == "DELETE")
        handleDelete(request, responder);
    else
        responder->respond(
            405, kJson + HttpResponder::Headers{{"Allow", "GET, POST, DELETE"}},
            rpcError(JsonRpcMessage::InvalidRequest, QStringLiteral("Method Not Allowed")));
}

StreamableHttpServer::Session *StreamableHttpServer::sessionFor(const HttpRequest &request,
                                                                HttpResponder *responder)
{
    const QByteArray id = request.header("Mcp-Session-Id");
    if (id.isEmpty()) {
        refuse(responder, 400, QStringLiteral("Bad Request: Mcp-Session-Id header is required"));
        return nullptr;
    }
    auto it = m_sessions.find(id);
    if (it == m_sessions.end()) {
        responder->respond(404, kJson,
                           rpcError(-32001, QStringLiteral("Session not found: initialize again")));
        return nullptr;
    }
    // A session is its credential's: another credential (or the shared token) holding its id
    // does not get to speak in it. Answered as for an unknown session, which is what it is to
    // that caller.
    if (identityOf(request).credentialId != it->credentialId) {
        qCWarning(lcMcp) << "HTTP: a request for a session of another credential";
        responder->respond(404, kJson,
                           rpcError(-32001, QStringLiteral("Session not found: initialize again")));
        return nullptr;
    }
    it->lastActive = QDateTime::currentMSecsSinceEpoch();
    return &*it;
}

bool StreamableHttpServer::makeRoomForSession(const QByteArray &client, const QJsonValue &id,
                                              HttpResponder *responder)
{
    const auto refuseWith = [&](int status, const QString &message, const QByteArray &retry) {
        responder->respond(
            status, kJson + HttpResponder::Headers{{"Retry-After", retry}},
            QJsonDocument(JsonRpcMessage::makeError(id, JsonRpcMessage::InvalidRequest, message))
                .toJson(QJsonDocument::Compact));
    };
    // A session can go if nothing of it is under way: no call in flight, no answer owed, no
    // GET stream held open (a live client normally holds one).
    const auto reclaimable = [](const Session &s) {
        return s.mcp->callsInFlight() == 0 && !s.transport->hasOpenRequests() &&
               !s.transport->hasEventStream();
    };
    const auto leastRecent = [&](const std::function<bool(const Session &)> &pick) {
        const Session *found = nullptr;
        for (const Session &s : std::as_const(m_sessions))
            if (pick(s) && reclaimable(s) && (!found || s.lastActive < found->lastActive))
                found = &s;
        return found ? found->id : QByteArray();
    };

    int ofClient = 0;
    for (const Session &s : std::as_const(m_sessions))
        ofClient += s.client == client ? 1 : 0;
    if (ofClient >= m_config.maxSessionsPerClient) {
        const QByteArray victim = leastRecent([&](const Session &s) { return s.client == client; });
        if (victim.isEmpty()) {
            qCWarning(lcMcp) << "HTTP: refusing a new MCP session: the client has" << ofClient
                             << "busy ones";
            refuseWith(429,
                       QStringLiteral("Too many MCP sessions for this client (%1, all busy): end "
                                      "one with DELETE, or let it finish")
                           .arg(m_config.maxSessionsPerClient),
                       "10");
            return false;
        }
        qCInfo(lcMcp) << "HTTP: the client has" << ofClient
                      << "MCP sessions; ending its least recently used idle one";
        endSession(victim);
    }
    if (m_sessions.size() >= m_config.maxSessions) {
        const qint64 minuteAgo = QDateTime::currentMSecsSinceEpoch() - 60 * 1000;
        const QByteArray victim =
            leastRecent([&](const Session &s) { return s.lastActive <= minuteAgo; });
        if (victim.isEmpty()) {
            qCWarning(lcMcp) << "HTTP: refusing a new MCP session:" << m_sessions.size()
                             << "are open and in use";
            refuseWith(503,
                       QStringLiteral("Too many MCP sessions open (%1): end one with DELETE, or "
                                      "retry once idle ones have expired")
                           .arg(m_config.maxSessions),
                       "60");
            return false;
        }
        qCInfo(lcMcp) << "HTTP:" << m_sessions.size()
                      << "MCP sessions open; ending the least recently used idle one";
        endSession(victim);
    }
    return true;
}

StreamableHttpServer::Session *StreamableHttpServer::createSession(const QByteArray &client,
                                                                   const CallerIdentity &identity)
{
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    Session s;
    s.id = QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex();
    s.client = client;
    s.credentialId = identity.credentialId;
    s.transport = new HttpSessionTransport;
    s.mcp = m_server->openSession(s.transport);
    s.mcp->setIdentity(identity);
    s.lastActive = QDateTime::currentMSecsSinceEpoch();
    auto it = m_sessions.insert(s.id, s);
    qCInfo(lcMcp) << "HTTP session started," << m_sessions.size() << "open";
    Q_EMIT sessionStarted(s.mcp);
    return &*it;
}

StreamableHttpServer::Session *StreamableHttpServer::openSession(const HttpRequest &request,
                                                                 const JsonRpcMessage &m,
                                                                 HttpResponder *responder)
{
    const QString name =
        m.params.toObject().value(u"clientInfo").toObject().value(u"name").toString();
    const CallerIdentity identity = identityOf(request);
    // Counted per credential where there is one: what it claims is not who it is.
    const QByteArray client = HttpServer::peerKey(request.peer) + ' ' +
                              (identity.hasCredential() ? identity.credentialId : name).toUtf8();
    if (!makeRoomForSession(client, m.id, responder))
        return nullptr;
    Session *session = createSession(client, identity);
    // The session id travels on the initialize response.
    session->transport->expectAnswer(m.id, responder, false, {{"Mcp-Session-Id", session->id}});
    return session;
}

void StreamableHttpServer::handlePost(const HttpRequest &request, HttpResponder *responder)
{
    const QByteArray accept = request.header("Accept");
    const bool wantsStream = accept.contains("text/event-stream");
    const JsonRpcMessage m = JsonRpcMessage::parse(request.body);
    if (m.type == JsonRpcMessage::Type::Invalid) {
        responder->respond(
            400, kJson,
            QJsonDocument(JsonRpcMessage::makeError(m.id, m.errorCode, m.errorMessage))
                .toJson(QJsonDocument::Compact));
        return;
    }
    const QByteArray versionHeader = request.header("MCP-Protocol-Version");
    bool hasName = false;
    for (const auto &h : request.headers)
        hasName = hasName || h.first.compare("Mcp-Name", Qt::CaseInsensitive) == 0;
    // Parsed and classified once, here: the session gets the message with its era.
    const McpMessage message(m,
                             ProtocolEra::classifyHttp(versionHeader, request.header("Mcp-Method"),
                                                       request.header("Mcp-Name"), hasName, m));
    const ProtocolEra::Verdict &era = message.era;
    if (era.isModern()) {
        handleModernPost(request, responder, message);
        return;
    }
    if (!versionHeader.isEmpty() &&
        !ProtocolEra::supported().contains(QString::fromUtf8(versionHeader))) {
        responder->respond(400, kJson, unsupportedVersion(m.id, QString::fromUtf8(versionHeader)));
        return;
    }
    if (m.type != JsonRpcMessage::Type::Request && request.header("Mcp-Session-Id").isEmpty() &&
        ProtocolEra::isModern(QString::fromUtf8(versionHeader))) {
        // A 2026-07-28 notification: nothing belongs to a session there. Cancellation is the
        // request's stream closing, so there is nothing to act on.
        responder->respond(202, {}, {});
        return;
    }
    Session *session = m.type == JsonRpcMessage::Type::Request && m.method == u"initialize"
                           ? openSession(request, m, responder)
                           : sessionFor(request, responder);
    if (!session)
        return;
    if (m.type != JsonRpcMessage::Type::Request) {
        // Notifications and responses are accepted, not answered.
        responder->respond(202, {}, {});
        session->transport->deliver(message);
        return;
    }
    if (m.method != u"initialize") {
        // The answer to the first request with this id is still owed on its own POST; taking
        // this POST in its place would leave that one without an answer.
        if (session->transport->isAwaiting(m.id)) {
            responder->respond(
                409, kJson,
                QJsonDocument(JsonRpcMessage::makeError(
                                  m.id, JsonRpcMessage::InvalidRequest,
                                  QStringLiteral("request id %1 is already in use by a request "
                                                 "in flight")
                                      .arg(JsonRpcMessage::idText(m.id))))
                    .toJson(QJsonDocument::Compact));
            return;
        }
        // Calls may stream progress, log lines and requests of our own before their answer.
        const bool stream = wantsStream && m.method == u"tools/call";
        session->transport->expectAnswer(m.id, responder, stream);
    }
    session->transport->deliver(message);
}

QString StreamableHttpServer::modernOwner(const HttpRequest &request) const
{
    // Every 2026-07-28 request stands alone, so a sandbox session cannot belong to a protocol
    // session; it belongs to the credential that created it: an assistant's credential (a
    // signed-in client's grant, whose access tokens change every few minutes, included) by its
    // id, the shared token by a digest, so the token itself is never kept as a name.
    if (const auto credential = credentialOf(request))
        return QStringLiteral("http-credential-") + credential->id;
    const QByteArray auth = request.header("Authorization");
    if (auth.isEmpty())
        return QStringLiteral("http");
    return QStringLiteral("http-") +
           QString::fromLatin1(
               QCryptographicHash::hash(auth, QCryptographicHash::Sha256).toHex().left(16));
}

void StreamableHttpServer::handleModernPost(const HttpRequest &request, HttpResponder *responder,
                                            const McpMessage &m)
{
    if (m.era.isError()) {
        // Malformed or unsupported per the revision's rules: 400, whatever the code.
        responder->respond(
            400, kJson,
            QJsonDocument(JsonRpcMessage::makeError(m.id, m.era.errorCode, m.era.errorMessage,
                                                    m.era.errorData))
                .toJson(QJsonDocument::Compact));
        return;
    }
    auto *transport = new HttpSessionTransport;
    transport->setModern(true);
    McpSession *session = m_server->openRequest(transport, modernOwner(request));
    session->setIdentity(identityOf(request));
    const bool stream =
        request.header("Accept").contains("text/event-stream") && m.method == u"tools/call";
    transport->expectAnswer(m.id, responder, stream);
    QPointer<McpSession> guard(session);
    // Answered: the session has done its work (a task goes on in the server's task store).
    connect(transport, &HttpSessionTransport::idle, session, [guard] {
        if (guard)
            guard->deleteLater();
    });
    // Closing the request's stream cancels it: the call's container is removed, as with
    // notifications/cancelled.
    connect(responder, &HttpResponder::closed, session, [guard] {
        if (!guard)
            return;
        if (guard->callsInFlight() > 0)
            qCInfo(lcMcp) << "HTTP: the client closed a request's stream; cancelling it";
        guard->cancelAll();
        guard->deleteLater();
    });
    transport->deliver(m);
}

void StreamableHttpServer::handleGet(const HttpRequest &request, HttpResponder *responder)
{
    if (request.header("Mcp-Session-Id").isEmpty() &&
        ProtocolEra::isModern(QString::fromUtf8(request.header("MCP-Protocol-Version")))) {
        responder->respond(
            405, kJson + HttpResponder::Headers{{"Allow", "POST"}},
            rpcError(JsonRpcMessage::InvalidRequest,
                     QStringLiteral("Method Not Allowed: revision 2026-07-28 has no GET stream")));
        return;
    }
    if (!request.header("Accept").contains("text/event-stream")) {
        responder->respond(406, kJson,
                           rpcError(JsonRpcMessage::InvalidRequest,
                                    QStringLiteral("Not Acceptable: GET opens text/event-stream")));
        return;
    }
    Session *session = sessionFor(request, responder);
    if (session)
        session->transport->openEventStream(responder);
}

void StreamableHttpServer::handleDelete(const HttpRequest &request, HttpResponder *responder)
{
    if (request.header("Mcp-Session-Id").isEmpty() &&
        ProtocolEra::isModern(QString::fromUtf8(request.header("MCP-Protocol-Version")))) {
        responder->respond(
            405, kJson + HttpResponder::Headers{{"Allow", "POST"}},
            rpcError(JsonRpcMessage::InvalidRequest,
                     QStringLiteral("Method Not Allowed: revision 2026-07-28 has no sessions")));
        return;
    }
    Session *session = sessionFor(request, responder);
    if (!session)
        return;
    endSession(session->id);
    responder->respond(200, kJson, "{}");
}

void StreamableHttpServer::endSession(const QByteArray &id)
{
    const auto it = m_sessions.find(id);
    if (it == m_sessions.end())
        return;
    Session s = *it;
    m_sessions.erase(it);
    s.mcp->cancelAll();
    // Its tasks belong to it, and no other session may reach them: they end with it too.
    if (TaskStore *tasks = m_server->tasks())
        tasks->cancelOwnedBy(s.mcp->owner());
    s.transport->close();
    s.mcp->deleteLater();
    qCInfo(lcMcp) << "HTTP session ended," << m_sessions.size() << "open";
}

void StreamableHttpServer::closeAll()
{
    const auto ids = m_sessions.keys();
    for (const QByteArray &id : ids)
        endSession(id);
}

void StreamableHttpServer::expireIdle()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    QList<QByteArray> idle;
    for (const Session &s : std::as_const(m_sessions))
        if (now - s.lastActive > m_config.sessionIdleMs && s.mcp->callsInFlight() == 0)
            idle.append(s.id);
    for (const QByteArray &id : idle) {
        qCInfo(lcMcp) << "HTTP session expired after" << m_config.sessionIdleMs / 1000 << "s idle";
        endSession(id);
    }
}
