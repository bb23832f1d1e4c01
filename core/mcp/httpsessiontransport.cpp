#include "httpsessiontransport.h"

#include "httpresponder.h"
#include "jsonrpcmessage.h"
#include "mcplog.h"
#include "protocolera.h"

#include <QJsonDocument>

namespace {
const HttpResponder::Headers kSseHeaders{{"Content-Type", "text/event-stream"},
                                         {"Cache-Control", "no-cache"}};
const HttpResponder::Headers kJsonHeaders{{"Content-Type", "application/json"}};
constexpr int kMaxQueued = 1000;
} // namespace

HttpSessionTransport::HttpSessionTransport(QObject *parent) : McpTransport(parent) {}

HttpSessionTransport::~HttpSessionTransport()
{
    for (const Post &p : std::as_const(m_posts))
        if (p.responder && p.stream)
            p.responder->endStream();
    if (m_get)
        m_get->endStream();
}

QByteArray HttpSessionTransport::sseEvent(const QJsonObject &message)
{
    if (m_modern)
        return "event: message\ndata: " + QJsonDocument(message).toJson(QJsonDocument::Compact) +
               "\n\n";
    return "id: " + QByteArray::number(++m_eventId) +
           "\nevent: message\ndata: " + QJsonDocument(message).toJson(QJsonDocument::Compact) +
           "\n\n";
}

QByteArray HttpSessionTransport::primingEvent()
{
    // An id with empty data lets a client resume from here; retry tells it how soon to
    // reconnect.
    return "id: " + QByteArray::number(++m_eventId) + "\nretry: 1000\ndata: \n\n";
}

void HttpSessionTransport::expectAnswer(const QJsonValue &id, HttpResponder *responder, bool stream,
                                        const QList<QPair<QByteArray, QByteArray>> &headers)
{
    m_posts.insert(JsonRpcMessage::idKey(id), {responder, stream, !m_modern, headers});
    // 2026-07-28: the stream starts with the first notification, so an answer that comes first
    // (an error above all) goes out as JSON with the status the revision gives it.
    if (stream && !m_modern) {
        responder->beginStream(200, kSseHeaders + headers);
        responder->writeChunk(primingEvent());
    }
}

bool HttpSessionTransport::isAwaiting(const QJsonValue &id) const
{
    const auto it = m_posts.constFind(JsonRpcMessage::idKey(id));
    return it != m_posts.cend() && it->responder && it->responder->isOpen();
}

bool HttpSessionTransport::hasEventStream() const
{
    return m_get && m_get->isOpen();
}

void HttpSessionTransport::openEventStream(HttpResponder *responder)
{
    if (m_get && m_get != responder)
        m_get->endStream(); // one GET stream per session: the newest wins
    m_get = responder;
    responder->beginStream(200, kSseHeaders);
    responder->writeChunk(primingEvent());
    const auto queued = std::exchange(m_queued, {});
    for (const QJsonObject &m : queued)
        writeToGet(m);
}

void HttpSessionTransport::writeToGet(const QJsonObject &message)
{
    // 2026-07-28 has no GET stream: what has no request stream to go on is not delivered.
    if (m_closed || m_modern)
        return;
    if (m_get && m_get->isOpen()) {
        m_get->writeChunk(sseEvent(message));
        return;
    }
    if (m_queued.size() < kMaxQueued)
        m_queued.append(message);
}

void HttpSessionTransport::respond(const QJsonValue &id, const QJsonObject &response)
{
    // An answer without an id (to a message too broken to have one) belongs to no request.
    if (id.isNull() || id.isUndefined()) {
        writeToGet(response);
        return;
    }
    const auto it = m_posts.find(JsonRpcMessage::idKey(id));
    if (it == m_posts.end() || !it->responder || !it->responder->isOpen()) {
        // The request's stream is gone (the client disconnected): an answer cannot go anywhere
        // else.
        if (it != m_posts.end())
            m_posts.erase(it);
        return;
    }
    if (it->stream && it->started) {
        it->responder->writeChunk(sseEvent(response));
        it->responder->endStream();
        answered(it);
        return;
    }
    const int status =
        m_modern && response.contains(u"error")
            ? ProtocolEra::httpStatusFor(response.value(u"error").toObject().value(u"code").toInt())
            : 200;
    it->responder->respond(status, kJsonHeaders + it->headers,
                           QJsonDocument(response).toJson(QJsonDocument::Compact));
    answered(it);
}

void HttpSessionTransport::answered(QHash<QString, Post>::iterator post)
{
    m_posts.erase(post);
    if (m_posts.isEmpty())
        Q_EMIT idle();
}

void HttpSessionTransport::notify(const QJsonObject &message, const QJsonValue &relatedRequestId)
{
    const auto it = relatedRequestId.isUndefined() || relatedRequestId.isNull()
                        ? m_posts.end()
                        : m_posts.find(JsonRpcMessage::idKey(relatedRequestId));
    // Unrelated, or the request's stream is gone (the client disconnected): it may still reach
    // the client on GET. A JSON answer carries nothing but the response: side messages go to
    // GET as well.
    if (it == m_posts.end() || !it->responder || !it->responder->isOpen() || !it->stream) {
        writeToGet(message);
        return;
    }
    if (!it->started) {
        it->started = true;
        it->responder->beginStream(200, kSseHeaders + it->headers +
                                            HttpResponder::Headers{{"X-Accel-Buffering", "no"}});
    }
    it->responder->writeChunk(sseEvent(message));
}

void HttpSessionTransport::close()
{
    if (m_closed)
        return;
    m_closed = true;
    Q_EMIT closed();
}
