#include "localtransport.h"

LocalTransport::LocalTransport(const EngineAddress &address, QObject *parent)
    : EngineTransport(address, parent)
{
    connect(&m_socket, &QLocalSocket::connected, this, [this] { reportOpened(); });
    connect(&m_socket, &QLocalSocket::readyRead, this, [this] {
        if (state() == State::Open)
            Q_EMIT readyRead();
    });
    connect(&m_socket, &QLocalSocket::disconnected, this, [this] {
        if (state() != State::Open)
            return;
        if (m_brokenReason.isEmpty())
            reportClosed();
        else
            reportFailed(m_brokenReason);
    });
    connect(&m_socket, &QLocalSocket::errorOccurred, this, &LocalTransport::onError);
}

LocalTransport::~LocalTransport()
{
    // Closing the socket emits signals; none may reach this half-destroyed object.
    m_socket.disconnect(this);
    m_socket.abort();
}

void LocalTransport::write(const QByteArray &bytes)
{
    if (state() == State::Open)
        m_socket.write(bytes);
}

bool LocalTransport::isReusable() const
{
    return state() == State::Open && m_socket.state() == QLocalSocket::ConnectedState &&
           m_socket.bytesAvailable() == 0 && descriptorIsQuiet(m_socket.socketDescriptor());
}

void LocalTransport::doOpen()
{
    m_brokenReason.clear();
    m_socket.connectToServer(address().socketPath);
}

void LocalTransport::doAbort()
{
    m_socket.abort();
}

void LocalTransport::onError(QLocalSocket::LocalSocketError error)
{
    if (error == QLocalSocket::PeerClosedError)
        return; // the end of a connection is reported by disconnected()
    if (state() == State::Open) {
        m_brokenReason = describe(error);
        return;
    }
    // A failed connect is reported while the socket still says "connecting", and no
    // disconnected() follows.
    if (state() == State::Opening)
        reportFailed(describe(error));
}

QString LocalTransport::describe(QLocalSocket::LocalSocketError error) const
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
