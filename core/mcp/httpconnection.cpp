#include "httpconnection.h"

#include "httpresponder.h"
#include "mcplog.h"

#include <QTcpSocket>
#include <sys/socket.h>

namespace {
// Bounds what a client can make us buffer while its earlier request is being answered: beyond
// this Qt stops reading the socket and TCP flow control holds the client back.
constexpr qint64 kReadBufferBytes = 256 * 1024;
// After the last response, how long the client gets to read it and close before its further
// bytes are thrown away. Closing at once with unread input would send a reset, and the reset
// can destroy the response in the client's receive buffer (a 413 among others).
constexpr int kLingerMs = 2000;
} // namespace

HttpConnection::HttpConnection(QTcpSocket *socket, const Limits &limits, QObject *parent)
    : QObject(parent), m_socket(socket), m_limits(limits)
{
    m_socket->setParent(this);
    m_socket->setReadBufferSize(kReadBufferBytes);
    m_parser.setMaxBodyBytes(limits.maxBodyBytes);
    m_parser.setMaxHeaderBytes(limits.maxHeaderBytes);

    m_idleTimer.setSingleShot(true);
    m_idleTimer.setInterval(qMax(0, limits.idleTimeoutMs));
    connect(&m_idleTimer, &QTimer::timeout, this, [this] {
        qCDebug(lcMcp) << "HTTP connection from" << m_socket->peerAddress() << "idle, closing";
        closeGracefully();
    });
    m_lingerTimer.setSingleShot(true);
    m_lingerTimer.setInterval(kLingerMs);
    connect(&m_lingerTimer, &QTimer::timeout, m_socket, &QTcpSocket::abort);

    connect(m_socket, &QTcpSocket::readyRead, this, &HttpConnection::onReadyRead);
    connect(m_socket, &QTcpSocket::bytesWritten, this, &HttpConnection::onBytesWritten);
    connect(m_socket, &QTcpSocket::disconnected, this, &HttpConnection::onGone);
    connect(m_socket, &QTcpSocket::errorOccurred, this, [this] {
        // Fatal errors are normally followed by disconnected(), but not when the socket had
        // already left the connected state.
        if (m_socket->state() == QAbstractSocket::UnconnectedState)
            onGone();
    });

    if (m_socket->state() != QAbstractSocket::ConnectedState) {
        QMetaObject::invokeMethod(this, &HttpConnection::onGone, Qt::QueuedConnection);
        return;
    }
    if (m_limits.idleTimeoutMs > 0)
        m_idleTimer.start();
    // Bytes that arrived before the signals were connected announce themselves no more.
    scheduleProcessing();
}

HttpConnection::~HttpConnection()
{
    // Closing the socket emits signals; none may reach this half-destroyed object.
    m_socket->disconnect(this);
    if (HttpResponder *responder = m_current) {
        m_current = nullptr;
        responder->connectionLost();
    }
    m_socket->abort();
}

void HttpConnection::write(const QByteArray &bytes)
{
    if (m_gone || m_socket->state() != QAbstractSocket::ConnectedState)
        return;
    // Buffered: the socket writes from the event loop, so no error can re-enter the caller.
    m_socket->write(bytes);
}

void HttpConnection::responseFinished(HttpResponder *responder, bool keepAlive)
{
    if (responder != m_current)
        return;
    m_current = nullptr;
    if (m_gone)
        return;
    if (!keepAlive) {
        closeGracefully();
        return;
    }
    if (m_limits.idleTimeoutMs > 0)
        m_idleTimer.start();
    // Not right here: the handler is still inside respond() or endStream().
    scheduleProcessing();
}

void HttpConnection::abandon(HttpResponder *responder)
{
    if (responder != m_current)
        return;
    m_current = nullptr;
    // A chunked body without its end: the client has to learn it is cut off.
    m_socket->abort();
}

void HttpConnection::onReadyRead()
{
    if (m_gone)
        return;
    if (m_closing) {
        m_socket->readAll(); // nothing more is served; keep the window open until the end
        return;
    }
    if (m_current)
        return; // pipelined: waits in the socket until the current response has ended
    if (m_limits.idleTimeoutMs > 0)
        m_idleTimer.start();
    processInput();
}

void HttpConnection::scheduleProcessing()
{
    if (m_processQueued)
        return;
    m_processQueued = true;
    QMetaObject::invokeMethod(this, &HttpConnection::processInput, Qt::QueuedConnection);
}

void HttpConnection::processInput()
{
    m_processQueued = false;
    while (!m_gone && !m_closing && !m_current) {
        if (m_pending.isEmpty()) {
            m_pending = m_socket->readAll();
            if (m_pending.isEmpty())
                return;
        }
        const qsizetype used = m_parser.feed(m_pending);
        m_pending.remove(0, used);
        switch (m_parser.state()) {
        case HttpRequestParser::State::Incomplete:
            if (!m_pending.isEmpty()) { // the parser takes everything until a request ends
                reject(400, "unparsable request");
                return;
            }
            if (m_parser.headersComplete() && m_parser.expectsContinue() && !m_continueSent) {
                // The length passed the limit check already, or this would be an error.
                m_continueSent = true;
                write("HTTP/1.1 100 Continue\r\n\r\n");
            }
            break;
        case HttpRequestParser::State::Complete:
            dispatch();
            return;
        case HttpRequestParser::State::Malformed:
            reject(400, m_parser.errorString());
            return;
        case HttpRequestParser::State::HeadersTooLarge:
            reject(431, m_parser.errorString());
            return;
        case HttpRequestParser::State::BodyTooLarge:
            reject(413, m_parser.errorString());
            return;
        }
    }
}

void HttpConnection::dispatch()
{
    HttpRequest request = m_parser.takeRequest();
    request.peer = m_socket->peerAddress();
    auto *responder = new HttpResponder(this, request.method == "HEAD", m_parser.isHttp11(),
                                        m_parser.keepAlive(), this);
    m_parser.reset();
    m_continueSent = false;
    m_current = responder;
    m_idleTimer.stop(); // however long the handler or its stream takes
    qCDebug(lcMcp) << "HTTP" << request.method << request.path << "from" << request.peer;
    Q_EMIT requestReceived(request, responder);
}

void HttpConnection::reject(int status, const QByteArray &why)
{
    qCDebug(lcMcp) << "HTTP request from" << m_socket->peerAddress() << "refused with" << status
                   << why;
    // Answered like any other request, then closed: the input cannot be trusted any more.
    auto *responder = new HttpResponder(this, false, true, false, this);
    m_current = responder;
    responder->respond(status, {{"Content-Type", "text/plain; charset=utf-8"}}, why + '\n');
}

void HttpConnection::closeGracefully()
{
    if (m_closing || m_gone)
        return;
    m_closing = true;
    m_idleTimer.stop();
    m_pending.clear();
    if (m_socket->state() != QAbstractSocket::ConnectedState)
        return;
    if (m_socket->bytesToWrite() == 0)
        shutdownWriting();
    // else onBytesWritten() does once the response is out
}

void HttpConnection::onBytesWritten()
{
    if (m_closing && !m_writeShut && !m_gone && m_socket->bytesToWrite() == 0)
        shutdownWriting();
}

void HttpConnection::shutdownWriting()
{
    // Half-close: the client sees the end of the response at once, and whatever it still sends
    // is read and dropped until it closes too or the linger time is over.
    m_writeShut = true;
    ::shutdown(int(m_socket->socketDescriptor()), SHUT_WR);
    m_socket->readAll();
    m_lingerTimer.start();
}

void HttpConnection::onGone()
{
    if (m_gone)
        return;
    m_gone = true;
    m_idleTimer.stop();
    m_lingerTimer.stop();
    qCDebug(lcMcp) << "HTTP connection closed";
    if (HttpResponder *responder = m_current) {
        m_current = nullptr;
        responder->connectionLost();
    }
    deleteLater();
}
