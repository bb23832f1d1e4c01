#pragma once

#include "httprequest.h"
#include "httprequestparser.h"
#include "httpresponsesink.h"

#include <QHostAddress>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <functional>

class HttpResponder;
class QTcpSocket;

// One accepted client connection of HttpServer. Parses requests as the bytes arrive and serves
// them strictly one at a time in order: pipelined requests stay unread until the current
// response (which may be a long stream) has ended. Answers malformed or oversized requests
// itself and closes. Deletes itself once the socket is gone.
//
// Time limits: a request's head must be complete within headTimeoutMs of its first byte (of
// the connection, for a new one), and its body within bodyTimeoutMs of the head; neither
// restarts when a byte arrives, so a client dripping bytes cannot hold the connection. A kept
// connection may wait idleTimeoutMs between requests. Each request's head is shown to the head
// check before a byte of its body is read (or "100 Continue" is sent).
class HttpConnection : public QObject, private HttpResponseSink
{
    Q_OBJECT
public:
    struct Limits
    {
        qint64 maxBodyBytes = HttpRequestParser::kDefaultMaxBodyBytes;
        qint64 maxHeaderBytes = HttpRequestParser::kDefaultMaxHeaderBytes;
        int idleTimeoutMs = 60 * 1000; // between requests; 0 or less: never
        int headTimeoutMs = 10 * 1000; // 0 or less: never
        int bodyTimeoutMs = 30 * 1000; // 0 or less: never
    };

    // The answer to a request's head: status 0 lets it in, anything else is sent (with
    // "Connection: close") instead of reading the body.
    struct Verdict
    {
        int status = 0;
        QList<QPair<QByteArray, QByteArray>> headers;
        QByteArray body;
        // Passed, but the connection is not let in among those that showed a token (HttpServer):
        // a request anyone may make (a sign-in) must not take their places.
        bool unadmitted = false;
    };
    // Gets the request without its body.
    using HeadCheck = std::function<Verdict(const HttpRequest &head)>;

    // Takes ownership of `socket`.
    HttpConnection(QTcpSocket *socket, const Limits &limits, const HeadCheck &check = {},
                   QObject *parent = nullptr);
    ~HttpConnection() override;

    QHostAddress peerAddress() const { return m_peer; }
    void setHeadCheck(const HeadCheck &check) { m_check = check; }
    // Closes at once, without an answer (for connections the server has no room for).
    void drop();

Q_SIGNALS:
    void requestReceived(const HttpRequest &request, HttpResponder *responder);
    // The socket is gone; the object is deleted later.
    void gone();

private:
    // For the current responder.
    void write(const QByteArray &bytes) override;
    void responseFinished(HttpResponder *responder, bool keepAlive) override;
    void abandon(HttpResponder *responder) override;

    void onReadyRead();
    void scheduleProcessing();
    void processInput();
    void dispatch();
    void reject(int status, const QByteArray &why);
    void rejectWith(const Verdict &verdict);
    bool checkHead();
    void startHead();
    void onDeadline();
    void closeGracefully();
    void onBytesWritten();
    void shutdownWriting();
    void onGone();

    enum class Phase
    {
        Idle, // between requests of a kept connection
        Head,
        Body,
        Handling // the request is with the handler, or its answer is under way
    };

    QTcpSocket *m_socket;
    QHostAddress m_peer;
    Limits m_limits;
    HeadCheck m_check;
    HttpRequestParser m_parser;
    QByteArray m_pending; // read from the socket, not yet consumed by the parser
    QPointer<HttpResponder> m_current;
    Phase m_phase = Phase::Head;
    QTimer m_idleTimer;
    QTimer m_deadline; // of the head, then of the body
    QTimer m_lingerTimer;
    bool m_continuePending = false; // "100 Continue" is owed once the head's bytes are parsed
    bool m_processQueued = false;
    bool m_closing = false;
    bool m_writeShut = false;
    bool m_gone = false;
};
