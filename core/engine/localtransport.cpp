#include "localtransport.h"

LocalTransport::LocalTransport(const EngineAddress &address, QObject *parent)
    : SocketTransport(address, parent)
{
    connect(&m_socket, &QLocalSocket::connected, this, [this] { reportOpened(); });
    connect(&m_socket, &QLocalSocket::disconnected, this, [this] { reportEnd(); });
    connect(&m_socket, &QLocalSocket::errorOccurred, this, &LocalTransport::onError);
}

void LocalTransport::doOpen()
{
    m_brokenReason.clear();
    m_socket.connectToServer(address().socketPath);
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
