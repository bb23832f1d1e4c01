#pragma once

#include <QByteArrayList>
#include <QHash>
#include <QHostAddress>
#include <QNetworkInterface>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>

// This machine's first IPv4 address that is not loopback nor, if it can help it, an engine's
// bridge (172.x): where a test's servers listen for containers to reach them.
inline QString outwardAddress()
{
    for (const QHostAddress &a : QNetworkInterface::allAddresses())
        if (a.protocol() == QAbstractSocket::IPv4Protocol && !a.isLoopback() &&
            !a.toString().startsWith(QStringLiteral("172.")))
            return a.toString();
    for (const QHostAddress &a : QNetworkInterface::allAddresses())
        if (a.protocol() == QAbstractSocket::IPv4Protocol && !a.isLoopback())
            return a.toString();
    return {};
}

// A proxy of "the host's network" for tests: takes CONNECT host:port, notes the request line and
// its Proxy-Authorization, opens the connection and pipes both ways. Nothing else (a request in
// absolute form gets 405).
class TunnelProxy : public QTcpServer
{
public:
    TunnelProxy()
    {
        connect(this, &QTcpServer::pendingConnectionAvailable, this, [this] {
            while (QTcpSocket *socket = nextPendingConnection())
                serve(socket);
        });
    }
    QByteArrayList requests;       // the request lines
    QByteArrayList authorizations; // their Proxy-Authorization values ("" for none)

private:
    void serve(QTcpSocket *client)
    {
        connect(client, &QTcpSocket::disconnected, client, &QObject::deleteLater);
        connect(client, &QObject::destroyed, this, [this, client] {
            m_heads.remove(client);
            m_out.remove(client);
        });
        connect(client, &QTcpSocket::readyRead, client, [this, client] {
            QPointer<QTcpSocket> &out = m_out[client];
            if (out) {
                out->write(client->readAll());
                return;
            }
            QByteArray &head = m_heads[client];
            head += client->readAll();
            const qsizetype end = head.indexOf("\r\n\r\n");
            if (end < 0)
                return;
            const QList<QByteArray> lines = head.left(end).split('\n');
            const QByteArray requestLine = lines.first().trimmed();
            QByteArray authorization;
            for (const QByteArray &line : lines)
                if (line.toLower().startsWith("proxy-authorization:"))
                    authorization = line.mid(20).trimmed();
            requests.append(requestLine);
            authorizations.append(authorization);
            const QByteArray rest = head.mid(end + 4);
            m_heads.remove(client);
            const QList<QByteArray> words = requestLine.split(' ');
            if (words.value(0) != "CONNECT") {
                client->write("HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n");
                client->disconnectFromHost();
                return;
            }
            const QByteArray target = words.value(1);
            const qsizetype colon = target.lastIndexOf(':');
            auto *upstream = new QTcpSocket(client);
            out = upstream;
            connect(upstream, &QTcpSocket::connected, client, [client, upstream, rest] {
                client->write("HTTP/1.1 200 Connection established\r\n\r\n");
                if (!rest.isEmpty())
                    upstream->write(rest);
            });
            connect(upstream, &QTcpSocket::readyRead, client,
                    [client, upstream] { client->write(upstream->readAll()); });
            connect(upstream, &QTcpSocket::disconnected, client,
                    [client] { client->disconnectFromHost(); });
            connect(upstream, &QTcpSocket::errorOccurred, client, [client, upstream] {
                if (upstream->state() != QAbstractSocket::ConnectedState) {
                    client->write("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
                    client->disconnectFromHost();
                }
            });
            connect(client, &QTcpSocket::disconnected, upstream,
                    [upstream] { upstream->disconnectFromHost(); });
            upstream->connectToHost(QString::fromLatin1(target.left(colon)),
                                    quint16(target.mid(colon + 1).toUInt()));
        });
    }
    QHash<QTcpSocket *, QByteArray> m_heads;
    QHash<QTcpSocket *, QPointer<QTcpSocket>> m_out;
};
