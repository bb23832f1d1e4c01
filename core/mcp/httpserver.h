#pragma once

#include "httpconnection.h"
#include "httprequest.h"

#include <QHostAddress>
#include <QObject>
#include <QTcpServer>

class HttpResponder;

// A small HTTP/1.1 server for the Streamable HTTP transport: keep-alive, in-order pipelining,
// chunked streaming responses, request limits. Every request is handed out through
// requestReceived() together with the responder that answers it.
class HttpServer : public QObject
{
    Q_OBJECT
public:
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
    // Connections without a request in progress are closed after this long without input;
    // a request whose answer or stream takes longer keeps its connection. Default 60 s.
    void setIdleTimeoutMs(int ms) { m_limits.idleTimeoutMs = ms; }

Q_SIGNALS:
    // The handler answers through `responder`, now or later. Unconnected, requests get 503.
    void requestReceived(const HttpRequest &request, HttpResponder *responder);

private:
    void onNewConnection();
    void onRequest(const HttpRequest &request, HttpResponder *responder);

    QTcpServer m_server;
    HttpConnection::Limits m_limits;
};
