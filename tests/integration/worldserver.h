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
            const qsizetype headEnd = in.indexOf("\r\n\r\n");
            if (headEnd < 0)
                return;
            // The whole request, body included, before the answer (a server that closed on an
            // unread body would reset the connection, and its answer with it).
            const QByteArray lowerHead = in.left(headEnd).toLower();
            if (lowerHead.contains("\r\ntransfer-encoding: chunked") && !in.endsWith("0\r\n\r\n"))
                return;
            const qsizetype length = lowerHead.indexOf("\r\ncontent-length:");
            if (length >= 0 &&
                in.size() - headEnd - 4 <
                    lowerHead.mid(length + 17, lowerHead.indexOf('\r', length + 2) - length - 17)
                        .trimmed()
                        .toLongLong())
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
