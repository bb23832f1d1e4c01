#pragma once

#include "enginetransport.h"

#include <QByteArray>
#include <QString>

// What the transports over one socket share (LocalTransport: QLocalSocket; TcpTransport:
// QSslSocket): reading and writing it while open, whether an idle connection can be reused, its
// teardown, and how its end is told (closed(), or failed() with what broke it while open). The
// subclasses connect the socket's own signals for opening and errors.
template <typename Socket> class SocketTransport : public EngineTransport
{
public:
    ~SocketTransport() override
    {
        // Closing the socket emits signals; none may reach this half-destroyed object.
        m_socket.disconnect(this);
        m_socket.abort();
    }

    void write(const QByteArray &bytes) override
    {
        if (state() == State::Open)
            m_socket.write(bytes);
    }
    QByteArray readAll() override { return m_socket.readAll(); }
    qint64 bytesAvailable() const override { return m_socket.bytesAvailable(); }
    // Over TLS, a record the engine sent unasked (a close alert, most likely) also counts as not
    // quiet: the connection is then replaced, which costs a handshake and is always safe.
    bool isReusable() const override
    {
        return state() == State::Open && m_socket.state() == Socket::ConnectedState &&
               m_socket.bytesAvailable() == 0 && descriptorIsQuiet(m_socket.socketDescriptor());
    }

protected:
    SocketTransport(const EngineAddress &address, QObject *parent)
        : EngineTransport(address, parent)
    {
        QObject::connect(&m_socket, &Socket::readyRead, this, [this] {
            if (state() == State::Open)
                Q_EMIT readyRead();
        });
    }

    void doAbort() override { m_socket.abort(); }
    // The socket was disconnected: while open, that is the stream's end.
    void reportEnd()
    {
        if (state() != State::Open)
            return;
        if (m_brokenReason.isEmpty())
            reportClosed();
        else
            reportFailed(m_brokenReason);
    }

    Socket m_socket;
    QString m_brokenReason; // an error while open, reported with the close that follows
};
