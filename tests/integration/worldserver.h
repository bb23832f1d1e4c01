#pragma once

#include <QByteArrayList>
#include <QHash>
#include <QTcpServer>
#include <QTcpSocket>

// Answers every request with "hello <Host> <path>" and counts what it was asked. Over TLS with
// a QSslServer (Qt hands over a connection once its handshake is done). With `echo`, the answer
// ends with " auth=<the Authorization header>", as services that reflect a request do.
template <class Server> class WorldServer : public Server
{
public:
    WorldServer()
    {
        QObject::connect(this, &QTcpServer::pendingConnectionAvailable, this, [this] {
            while (QTcpSocket *socket = this->nextPendingConnection())
                serve(socket);
        });
    }
    QByteArrayList requests;
    QByteArrayList authorizations; // each request's Authorization header ("" without one)
    QByteArrayList heads;          // each request's head, whole
    bool echo = false;
    // With echo: the Authorization's last word in a header's name too (X-Echo-<word>: 1), as an
    // origin that reflects a request in its answer's header names.
    bool echoInHeaderName = false;

private:
    void serve(QTcpSocket *socket)
    {
        QObject::connect(socket, &QTcpSocket::readyRead, socket, [this, socket] {
            QByteArray &in = m_buffers[socket];
            in += socket->readAll();
            if (!in.contains("\r\n\r\n"))
                return;
            const QList<QByteArray> lines = in.split('\n');
            const QByteArray path = lines.first().split(' ').value(1);
            QByteArray host;
            QByteArray authorization;
            for (const QByteArray &line : lines) {
                if (line.toLower().startsWith("host:"))
                    host = line.mid(5).trimmed();
                if (line.toLower().startsWith("authorization:"))
                    authorization = line.mid(14).trimmed();
            }
            heads.append(in.left(in.indexOf("\r\n\r\n") + 4));
            in.clear();
            requests.append(path);
            authorizations.append(authorization);
            const QByteArray body =
                "hello " + host + ' ' + path + (echo ? " auth=" + authorization : QByteArray());
            const QByteArray named = echo && echoInHeaderName && !authorization.isEmpty()
                                         ? "X-Echo-" + authorization.split(' ').last() + ": 1\r\n"
                                         : QByteArray();
            socket->write("HTTP/1.1 200 OK\r\n" + named + "Content-Length: " +
                          QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
            socket->disconnectFromHost();
        });
        QObject::connect(socket, &QTcpSocket::disconnected, socket, [this, socket] {
            m_buffers.remove(socket);
            socket->deleteLater();
        });
    }
    QHash<QTcpSocket *, QByteArray> m_buffers;
};
