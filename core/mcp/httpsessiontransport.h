#pragma once

#include "mcptransport.h"

#include <QHash>
#include <QList>
#include <QPointer>

class HttpResponder;

// The transport side of one Streamable HTTP session. Each message goes on exactly one stream:
// what belongs to a client request goes on that request's POST (an event stream, or a single
// JSON answer); everything else on the GET stream, queued until the client opens one.
class HttpSessionTransport : public McpTransport
{
    Q_OBJECT
public:
    explicit HttpSessionTransport(QObject *parent = nullptr);
    ~HttpSessionTransport() override;

    void respond(const QJsonValue &id, const QJsonObject &response) override;
    void notify(const QJsonObject &message,
                const QJsonValue &relatedRequestId = QJsonValue::Undefined) override;

    // A POST carrying request `id` will be answered on `responder`: as an event stream when
    // `stream` is true (begun here, with a priming event), else as one JSON body.
    void expectAnswer(const QJsonValue &id, HttpResponder *responder, bool stream,
                      const QList<QPair<QByteArray, QByteArray>> &headers = {});
    void openEventStream(HttpResponder *responder);
    // A message the server parsed and classified (with the request's headers) for this session.
    void deliver(const McpMessage &message) { Q_EMIT messageReceived(message); }
    void close();
    bool hasOpenRequests() const { return !m_posts.isEmpty(); }
    // A POST with request `id` is still waiting for its answer on an open connection.
    bool isAwaiting(const QJsonValue &id) const;
    // The client holds the session's GET stream open.
    bool hasEventStream() const;
    // Revision 2026-07-28 (one request, no session): events carry no ids and no priming event
    // (streams are not resumable there), and an error answered as JSON gets the HTTP status the
    // revision gives it (400 for -32020/-32021/-32022, 404 for -32601).
    void setModern(bool modern) { m_modern = modern; }

Q_SIGNALS:
    // The last open request was answered.
    void idle();

private:
    struct Post
    {
        QPointer<HttpResponder> responder;
        bool stream = false;
        bool started = false; // 2026-07-28: the stream begins with the first notification
        QList<QPair<QByteArray, QByteArray>> headers;
    };

    QByteArray sseEvent(const QJsonObject &message);
    QByteArray primingEvent();
    void writeToGet(const QJsonObject &message);
    // The request's answer went out: its POST is done.
    void answered(QHash<QString, Post>::iterator post);

    QHash<QString, Post> m_posts;
    QPointer<HttpResponder> m_get;
    QList<QJsonObject> m_queued;
    quint64 m_eventId = 0;
    bool m_closed = false;
    bool m_modern = false;
};
