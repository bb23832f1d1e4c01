#pragma once

#include "httpconnection.h"
#include "httprequest.h"

#include <QElapsedTimer>
#include <QHash>
#include <QHostAddress>
#include <QObject>
#include <QTcpServer>

class HttpResponder;

// A small HTTP/1.1 server for the Streamable HTTP transport: keep-alive, in-order pipelining,
// chunked streaming responses, request limits. Every request is handed out through
// requestReceived() together with the responder that answers it.
//
// Connections are counted in two classes. One is admitted once a request of it has passed the
// head check (for the MCP endpoint: it had the token); until then it is unadmitted. A peer
// (an IPv4 address, or an IPv6 /64) may hold at most maxUnadmittedPerPeer unadmitted
// connections and all peers together maxUnadmitted: a new connection beyond either cap closes
// the oldest unadmitted one of that peer (or of all), so that a flood of connections that never
// send a whole request cannot keep a client with the token out — the newcomer gets its head
// deadline to show its token. A connection is never closed for a newcomer before it had
// kMinAgeMs to send its head (a burst accepted in one pass would otherwise push out a client's
// connection before a byte of it was read): the newcomer is refused instead. Admitted
// connections are capped at maxAdmitted: a request that would admit one more is answered 503.
class HttpServer : public QObject
{
    Q_OBJECT
public:
    struct ConnectionLimits
    {
        int maxUnadmittedPerPeer = 256;
        int maxUnadmitted = 512;
        int maxAdmitted = 256;
    };

    explicit HttpServer(QObject *parent = nullptr);
    ~HttpServer() override;

    bool listen(const QHostAddress &address, quint16 port); // port 0: any free port
    quint16 port() const;
    QString errorString() const;

    // The limits apply to connections accepted afterwards.
    // Bigger bodies are answered 413 by the server itself, without the handler, and the
    // connection is closed. Default 4 MiB.
    void setMaxBodyBytes(qint64 bytes) { m_limits.maxBodyBytes = bytes; }
    // Bigger request heads are answered 431 alike. Default 64 KiB (80 KiB at most).
    void setMaxHeaderBytes(qint64 bytes) { m_limits.maxHeaderBytes = bytes; }
    // A kept connection is closed after this long without the first byte of its next request;
    // a request whose answer or stream takes longer keeps its connection. Default 60 s.
    void setIdleTimeoutMs(int ms) { m_limits.idleTimeoutMs = ms; }
    // A request's head must be complete this long after its first byte (after the accept, for
    // a new connection), its body this long after its head; else 408 and the connection is
    // closed. Bytes arriving do not extend either. Defaults 10 s and 30 s.
    void setHeadTimeoutMs(int ms) { m_limits.headTimeoutMs = ms; }
    void setBodyTimeoutMs(int ms) { m_limits.bodyTimeoutMs = ms; }
    void setConnectionLimits(const ConnectionLimits &limits) { m_connectionLimits = limits; }
    // Sees each request's head before its body is read; a refusal is sent instead and the
    // connection closed. Unset: every head passes.
    void setHeadCheck(const HttpConnection::HeadCheck &check) { m_check = check; }

    int connectionCount() const { return int(m_connections.size()); }
    int admittedCount() const { return m_admitted; }

    // What the per-peer cap counts together: an IPv4 address, or an IPv6 /64 (one host may
    // hold a whole /64); IPv4-mapped IPv6 addresses count as IPv4.
    static QByteArray peerKey(const QHostAddress &address);

Q_SIGNALS:
    // The handler answers through `responder`, now or later. Unconnected, requests get 503.
    void requestReceived(const HttpRequest &request, HttpResponder *responder);

private:
    struct Entry
    {
        QByteArray peer;
        quint64 serial = 0;    // order of acceptance
        qint64 acceptedMs = 0; // on m_clock
        bool admitted = false;
    };
    static constexpr qint64 kMinAgeMs = 1000;

    void onNewConnection();
    void onRequest(const HttpRequest &request, HttpResponder *responder);
    HttpConnection::Verdict checkHead(HttpConnection *connection, const HttpRequest &head);
    // False: no room can be made yet, and the newcomer is refused.
    bool makeRoomFor(const QByteArray &peer);

    QTcpServer m_server;
    HttpConnection::Limits m_limits;
    ConnectionLimits m_connectionLimits;
    HttpConnection::HeadCheck m_check;
    QHash<HttpConnection *, Entry> m_connections;
    quint64 m_serial = 0;
    int m_admitted = 0;
    QElapsedTimer m_clock;
};
