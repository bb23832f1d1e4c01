#include "httpconnection.h"

#include "httplog.h"
#include "httpresponder.h"

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

HttpConnection::HttpConnection(QTcpSocket *socket, const Limits &limits, const HeadCheck &check,
                               QObject *parent)
    : QObject(parent), m_socket(socket), m_peer(socket->peerAddress()), m_limits(limits),
      m_check(check)
{
    m_socket->setParent(this);
    m_socket->setReadBufferSize(kReadBufferBytes);
    m_parser.setMaxBodyBytes(limits.maxBodyBytes);
    m_parser.setMaxHeaderBytes(limits.maxHeaderBytes);
    m_parser.setPauseAfterHeaders(true);

    m_idleTimer.setSingleShot(true);
    m_idleTimer.setInterval(qMax(0, limits.idleTimeoutMs));
    connect(&m_idleTimer, &QTimer::timeout, this, [this] {
        qCDebug(lcHttp) << "HTTP connection from" << m_peer << "idle, closing";
        closeGracefully();
    });
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, &HttpConnection::onDeadline);
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
    // A new connection is there to send a request: its head is due from now on.
    startHead();
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
    m_phase = Phase::Idle;
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

void HttpConnection::drop()
{
    qCDebug(lcHttp) << "HTTP connection from" << m_peer << "dropped";
    m_socket->abort();
    onGone();
}

void HttpConnection::startHead()
{
    m_phase = Phase::Head;
    m_idleTimer.stop();
    if (m_limits.headTimeoutMs > 0)
        m_deadline.start(m_limits.headTimeoutMs);
}

void HttpConnection::onDeadline()
{
    if (m_gone || m_closing || m_current)
        return;
    const bool head = m_phase == Phase::Head;
    const int ms = head ? m_limits.headTimeoutMs : m_limits.bodyTimeoutMs;
    qCDebug(lcHttp) << "HTTP connection from" << m_peer << "too slow with the request"
                    << (head ? "head" : "body");
    reject(408, QByteArray("request ") + (head ? "head" : "body") + " not complete within " +
                    QByteArray::number(ms / 1000.0) + " s");
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
        // The first byte of the next request: its head is due from now on. (Bytes that arrive
        // later do not move the deadline.)
        if (m_phase == Phase::Idle)
            startHead();
        const qsizetype used = m_parser.feed(m_pending);
        m_pending.remove(0, used);
        switch (m_parser.state()) {
        case HttpRequestParser::State::Incomplete:
            if (m_parser.isPausedAtHeaders()) {
                if (!checkHead())
                    return;
                continue;
            }
            if (!m_pending.isEmpty()) { // the parser takes everything until a request ends
                reject(400, "unparsable request");
                return;
            }
            if (m_continuePending) {
                m_continuePending = false;
                if (m_parser.request().body.isEmpty())
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

bool HttpConnection::checkHead()
{
    m_deadline.stop();
    if (m_check) {
        HttpRequest head = m_parser.request();
        head.peer = m_peer;
        const Verdict verdict = m_check(head);
        if (verdict.status != 0) {
            qCDebug(lcHttp) << "HTTP" << head.method << head.path << "from" << m_peer
                            << "refused with" << verdict.status << "before its body";
            rejectWith(verdict);
            return false;
        }
    }
    m_parser.resume();
    m_phase = Phase::Body;
    if (m_limits.bodyTimeoutMs > 0)
        m_deadline.start(m_limits.bodyTimeoutMs);
    // Only for a request that is let in, and only once what came with the head is parsed: a
    // client that sent its body without waiting gets no interim response.
    m_continuePending = m_parser.expectsContinue();
    return true;
}

void HttpConnection::dispatch()
{
    HttpRequest request = m_parser.takeRequest();
    request.peer = m_peer;
    auto *responder = new HttpResponder(this, request.method == "HEAD", m_parser.isHttp11(),
                                        m_parser.keepAlive(), this);
    m_parser.reset();
    m_continuePending = false;
    m_current = responder;
    m_phase = Phase::Handling;
    m_deadline.stop();
    m_idleTimer.stop(); // however long the handler or its stream takes
    qCDebug(lcHttp) << "HTTP" << request.method << request.path << "from" << request.peer;
    Q_EMIT requestReceived(request, responder);
}

void HttpConnection::reject(int status, const QByteArray &why)
{
    qCDebug(lcHttp) << "HTTP request from" << m_peer << "refused with" << status << why;
    rejectWith({status, {{"Content-Type", "text/plain; charset=utf-8"}}, why + '\n'});
}

void HttpConnection::rejectWith(const Verdict &verdict)
{
    // Answered like any other request, then closed: the input cannot be trusted any more (or
    // the body that follows is not wanted).
    m_deadline.stop();
    m_idleTimer.stop();
    m_phase = Phase::Handling;
    // Nothing more of this connection's input is read: what already came is let go now.
    m_pending.clear();
    m_pending.squeeze();
    auto *responder = new HttpResponder(this, false, true, false, this);
    m_current = responder;
    responder->respond(verdict.status, verdict.headers, verdict.body);
}

void HttpConnection::closeGracefully()
{
    if (m_closing || m_gone)
        return;
    m_closing = true;
    m_idleTimer.stop();
    m_deadline.stop();
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
    m_deadline.stop();
    m_lingerTimer.stop();
    qCDebug(lcHttp) << "HTTP connection closed";
    if (HttpResponder *responder = m_current) {
        m_current = nullptr;
        responder->connectionLost();
    }
    Q_EMIT gone();
    deleteLater();
}
