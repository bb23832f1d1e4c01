#include "engineconnection.h"

#include "enginelog.h"
#include "enginereply.h"

#include <cerrno>
#include <sys/socket.h>

EngineConnection::EngineConnection(const QString &socketPath, QObject *parent)
    : QObject(parent), m_socketPath(socketPath)
{
    connect(&m_socket, &QLocalSocket::connected, this, &EngineConnection::onConnected);
    connect(&m_socket, &QLocalSocket::readyRead, this, &EngineConnection::onReadyRead);
    connect(&m_socket, &QLocalSocket::disconnected, this, &EngineConnection::onDisconnected);
    connect(&m_socket, &QLocalSocket::errorOccurred, this, &EngineConnection::onError);
    m_answerTimer.setSingleShot(true);
    connect(&m_answerTimer, &QTimer::timeout, this, &EngineConnection::onAnswerTimeout);
}

EngineConnection::~EngineConnection()
{
    // Closing the socket emits signals; none may reach this half-destroyed object.
    m_socket.disconnect(this);
    m_socket.abort();
}

void EngineConnection::send(const EngineRequest &request, EngineReply *reply)
{
    m_reply = reply;
    m_busy = true;
    m_gotBytes = false;
    m_parser.reset();
    m_parser.setMaxBodySize(request.maxBodyBytes);
    m_what = request.method + ' ' + request.path;
    if (m_answerTimeoutMs > 0)
        m_answerTimer.start(m_answerTimeoutMs);
    qCDebug(lcEngine) << request.method << request.path;
    const QByteArray bytes = request.serialize();
    if (m_socket.state() == QLocalSocket::ConnectedState) {
        m_socket.write(bytes);
    } else {
        m_pendingWrite = bytes;
        if (m_socket.state() == QLocalSocket::UnconnectedState)
            m_socket.connectToServer(m_socketPath);
    }
}

bool EngineConnection::isReusable() const
{
    if (m_busy || m_raw || m_socket.state() != QLocalSocket::ConnectedState ||
        m_socket.bytesAvailable() > 0)
        return false;
    // Peek without blocking: 0 is the engine's close still queued behind the last answer, data
    // is bytes nobody asked for; only "nothing yet" means the engine still expects a request.
    char byte;
    const auto n = ::recv(int(m_socket.socketDescriptor()), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
}

void EngineConnection::writeRaw(const QByteArray &bytes)
{
    if (m_raw && m_socket.state() == QLocalSocket::ConnectedState)
        m_socket.write(bytes);
}

void EngineConnection::closeRaw()
{
    if (m_socket.state() != QLocalSocket::UnconnectedState)
        m_socket.abort();
}

void EngineConnection::onConnected()
{
    if (!m_pendingWrite.isEmpty()) {
        m_socket.write(m_pendingWrite);
        m_pendingWrite.clear();
    }
}

void EngineConnection::onReadyRead()
{
    if (m_raw) {
        const QByteArray bytes = m_socket.readAll();
        if (!bytes.isEmpty())
            Q_EMIT rawData(bytes);
        return;
    }
    processBuffer();
}

void EngineConnection::processBuffer()
{
    const QByteArray bytes = m_socket.readAll();
    if (bytes.isEmpty())
        return;
    m_gotBytes = true;
    if (m_answerTimer.isActive())
        m_answerTimer.start(); // the engine is answering; the timeout counts from now
    if (!m_busy) {
        // Bytes nobody asked for: the connection can no longer be trusted.
        qCWarning(lcEngine) << "unexpected bytes on an idle engine connection";
        m_socket.abort();
        return;
    }
    const qsizetype used = m_parser.feed(bytes);
    switch (m_parser.state()) {
    case HttpResponseParser::State::Incomplete:
        return;
    case HttpResponseParser::State::Error:
        // The rest of an oversized answer is never read: the connection goes, and the engine
        // stops producing it.
        if (m_parser.bodyTooLarge())
            failCurrent(EngineError::of(
                EngineError::Kind::TooLarge,
                QStringLiteral("the container engine's answer to %1 was cut off: %2")
                    .arg(QString::fromLatin1(m_what),
                         QString::fromLatin1(m_parser.errorString()))));
        else
            failCurrent(
                EngineError::of(EngineError::Kind::Protocol,
                                QStringLiteral("malformed answer from the container engine: %1")
                                    .arg(QString::fromLatin1(m_parser.errorString()))));
        m_socket.abort();
        return;
    case HttpResponseParser::State::Upgraded: {
        m_raw = true;
        m_busy = false;
        m_answerTimer.stop();
        if (m_reply)
            m_reply->complete(m_parser.status(), QByteArray());
        const QByteArray rest = bytes.mid(used);
        if (!rest.isEmpty())
            Q_EMIT rawData(rest);
        return;
    }
    case HttpResponseParser::State::Complete: {
        m_busy = false;
        m_answerTimer.stop();
        const bool keep = m_parser.keepAlive() && used == bytes.size();
        if (m_reply)
            m_reply->complete(m_parser.status(), m_parser.takeBody());
        m_reply.clear();
        if (keep) {
            Q_EMIT idle(this);
        } else {
            m_socket.abort();
        }
        return;
    }
    }
}

void EngineConnection::onDisconnected()
{
    if (m_raw) {
        // Drain what arrived together with the close before reporting the end.
        if (m_socket.bytesAvailable() > 0) {
            const QByteArray bytes = m_socket.readAll();
            Q_EMIT rawData(bytes);
        }
        Q_EMIT rawClosed();
    } else if (m_busy) {
        m_parser.finishOnEof();
        if (m_parser.state() == HttpResponseParser::State::Complete) {
            m_busy = false;
            m_answerTimer.stop();
            if (m_reply)
                m_reply->complete(m_parser.status(), m_parser.takeBody());
        } else {
            failCurrent(EngineError::of(
                EngineError::Kind::Closed,
                QStringLiteral("the container engine closed the connection mid-answer (%1)")
                    .arg(QString::fromLatin1(m_parser.errorString()))));
        }
    }
    Q_EMIT gone(this);
}

QString EngineConnection::describe(QLocalSocket::LocalSocketError error) const
{
    switch (error) {
    case QLocalSocket::ServerNotFoundError:
        return QStringLiteral("no socket there");
    case QLocalSocket::ConnectionRefusedError:
        return QStringLiteral("connection refused");
    case QLocalSocket::SocketAccessError:
        return QStringLiteral("permission denied: is your user in the docker group?");
    case QLocalSocket::SocketTimeoutError:
        return QStringLiteral("timed out");
    default:
        return m_socket.errorString();
    }
}

void EngineConnection::onError(QLocalSocket::LocalSocketError error)
{
    if (error == QLocalSocket::PeerClosedError || m_raw)
        return; // the end of a connection is handled by onDisconnected
    // A failed connect is reported while the socket still says "connecting", and no
    // disconnected() follows: fail the request here.
    if (m_busy && !m_gotBytes && m_socket.state() != QLocalSocket::ConnectedState) {
        failCurrent(EngineError::of(
            EngineError::Kind::Unreachable,
            QStringLiteral("cannot reach the container engine at %1 (%2). Is Docker running? "
                           "Start it (e.g. 'sudo systemctl start docker', or 'dockerd &') or "
                           "point --engine at its socket.")
                .arg(m_socketPath, describe(error))));
        Q_EMIT gone(this);
    }
}

void EngineConnection::onAnswerTimeout()
{
    if (!m_busy || m_raw)
        return;
    failCurrent(EngineError::of(
        EngineError::Kind::Timeout,
        QStringLiteral("the container engine at %1 did not answer %2 within %3 s; it may be "
                       "overloaded or hung (try 'docker info', or restart it)")
            .arg(m_socketPath, QString::fromLatin1(m_what))
            .arg(m_answerTimeoutMs / 1000.0)));
    // A late answer must not be taken for the next request's: the connection goes.
    const bool connected = m_socket.state() == QLocalSocket::ConnectedState;
    m_socket.abort();
    if (!connected) // no disconnected() follows to report it
        Q_EMIT gone(this);
}

void EngineConnection::failCurrent(const EngineError &error)
{
    m_answerTimer.stop();
    m_busy = false;
    if (m_reply)
        m_reply->fail(error);
    m_reply.clear();
}
