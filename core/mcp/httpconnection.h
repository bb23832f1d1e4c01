#pragma once

#include "httprequest.h"
#include "httprequestparser.h"

#include <QObject>
#include <QPointer>
#include <QTimer>

class HttpResponder;
class QTcpSocket;

// One accepted client connection of HttpServer. Parses requests as the bytes arrive and serves
// them strictly one at a time in order: pipelined requests stay unread until the current
// response (which may be a long stream) has ended. Answers malformed or oversized requests
// itself and closes. Deletes itself once the socket is gone.
class HttpConnection : public QObject
{
    Q_OBJECT
public:
    struct Limits
    {
        qint64 maxBodyBytes = HttpRequestParser::kDefaultMaxBodyBytes;
        qint64 maxHeaderBytes = HttpRequestParser::kDefaultMaxHeaderBytes;
        int idleTimeoutMs = 60 * 1000; // 0 or less: never
    };

    // Takes ownership of `socket`.
    HttpConnection(QTcpSocket *socket, const Limits &limits, QObject *parent = nullptr);
    ~HttpConnection() override;

Q_SIGNALS:
    void requestReceived(const HttpRequest &request, HttpResponder *responder);

private:
    friend class HttpResponder;
    // For the current responder.
    void write(const QByteArray &bytes);
    void responseFinished(HttpResponder *responder, bool keepAlive);
    void abandon(HttpResponder *responder);

    void onReadyRead();
    void scheduleProcessing();
    void processInput();
    void dispatch();
    void reject(int status, const QByteArray &why);
    void closeGracefully();
    void onBytesWritten();
    void shutdownWriting();
    void onGone();

    QTcpSocket *m_socket;
    Limits m_limits;
    HttpRequestParser m_parser;
    QByteArray m_pending; // read from the socket, not yet consumed by the parser
    QPointer<HttpResponder> m_current;
    QTimer m_idleTimer;
    QTimer m_lingerTimer;
    bool m_continueSent = false;
    bool m_processQueued = false;
    bool m_closing = false;
    bool m_writeShut = false;
    bool m_gone = false;
};
