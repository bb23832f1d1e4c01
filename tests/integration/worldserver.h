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
    bool echo = false;

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
            in.clear();
            requests.append(path);
            authorizations.append(authorization);
            const QByteArray body =
                "hello " + host + ' ' + path + (echo ? " auth=" + authorization : QByteArray());
            socket->write("HTTP/1.1 200 OK\r\nContent-Length: " + QByteArray::number(body.size()) +
                          "\r\nConnection: close\r\n\r\n" + body);
            socket->disconnectFromHost();
        });
        QObject::connect(socket, &QTcpSocket::disconnected, socket, [this, socket] {
            m_buffers.remove(socket);
            socket->deleteLater();
        });
    }
    QHash<QTcpSocket *, QByteArray> m_buffers;
};
