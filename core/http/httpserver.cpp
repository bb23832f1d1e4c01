#include "httpserver.h"

#include "httplog.h"
#include "httpresponder.h"

#include <QMetaMethod>
#include <QTcpSocket>

namespace {
// Connections the kernel completes before the event loop accepts them; beyond this a burst of
// connects waits for SYN retransmissions (a second or more).
constexpr int kListenBacklog = 256;
} // namespace

HttpServer::HttpServer(QObject *parent) : QObject(parent)
{
    connect(&m_server, &QTcpServer::newConnection, this, &HttpServer::onNewConnection);
}

HttpServer::~HttpServer()
{
    // The connections are children: closing them tells pending responders (closed()) before
    // the listening socket goes.
    m_server.close();
    const auto connections = findChildren<HttpConnection *>(Qt::FindDirectChildrenOnly);
    for (HttpConnection *c : connections)
        c->disconnect(this);
    m_connections.clear();
    qDeleteAll(connections);
}

bool HttpServer::listen(const QHostAddress &address, quint16 port)
{
    m_server.setListenBacklogSize(kListenBacklog);
    if (!m_server.listen(address, port))
        return false;
    qCDebug(lcHttp) << "HTTP server listening on" << m_server.serverAddress()
                    << m_server.serverPort();
    return true;
}

quint16 HttpServer::port() const
{
    return m_server.serverPort();
}

QString HttpServer::errorString() const
{
    return m_server.errorString();
}

QByteArray HttpServer::peerKey(const QHostAddress &address)
{
    bool v4 = false;
    const quint32 ip4 = address.toIPv4Address(&v4);
    if (v4)
        return QHostAddress(ip4).toString().toLatin1();
    Q_IPV6ADDR ip6 = address.toIPv6Address();
    for (int i = 8; i < 16; ++i)
        ip6[i] = 0;
    return QHostAddress(ip6).toString().toLatin1() + "/64";
}

bool HttpServer::makeRoomFor(const QByteArray &peer)
{
    int ofPeer = 0;
    int unadmitted = 0;
    HttpConnection *oldestOfPeer = nullptr;
    HttpConnection *oldest = nullptr;
    quint64 oldestOfPeerSerial = 0;
    quint64 oldestSerial = 0;
    for (auto it = m_connections.cbegin(); it != m_connections.cend(); ++it) {
        if (it->admitted)
            continue;
        ++unadmitted;
        if (!oldest || it->serial < oldestSerial) {
            oldest = it.key();
            oldestSerial = it->serial;
        }
        if (it->peer != peer)
            continue;
        ++ofPeer;
        if (!oldestOfPeer || it->serial < oldestOfPeerSerial) {
            oldestOfPeer = it.key();
            oldestOfPeerSerial = it->serial;
        }
    }
    HttpConnection *victim = nullptr;
    if (ofPeer >= m_connectionLimits.maxUnadmittedPerPeer)
        victim = oldestOfPeer;
    else if (unadmitted >= m_connectionLimits.maxUnadmitted)
        victim = oldest;
    if (!victim)
        return true;
    if (m_clock.elapsed() - m_connections.value(victim).acceptedMs < kMinAgeMs) {
        qCDebug(lcHttp).noquote() << "HTTP: refusing a connection from" << peer
                                  << "- the oldest waiting one is too young to close";
        return false;
    }
    qCDebug(lcHttp).noquote() << "HTTP:" << unadmitted
                              << "connections without a request let in yet," << ofPeer << "from"
                              << peer << "- closing the oldest";
    victim->drop(); // gone() takes it off the list
    return true;
}

void HttpServer::onNewConnection()
{
    while (QTcpSocket *socket = m_server.nextPendingConnection()) {
        const QByteArray peer = peerKey(socket->peerAddress());
        if (!makeRoomFor(peer)) {
            socket->abort();
            socket->deleteLater();
            continue;
        }
        if (!m_clock.isValid())
            m_clock.start();
        auto *connection = new HttpConnection(socket, m_limits, {}, this);
        m_connections.insert(connection, {peer, ++m_serial, m_clock.elapsed(), false});
        connect(connection, &HttpConnection::requestReceived, this, &HttpServer::onRequest);
        connect(connection, &HttpConnection::gone, this, [this, connection] {
            const auto it = m_connections.find(connection);
            if (it == m_connections.end())
                return;
            if (it->admitted)
                --m_admitted;
            m_connections.erase(it);
        });
        // Set after construction so the check can find the entry; the head is checked from the
        // event loop at the earliest.
        connection->setHeadCheck(
            [this, connection](const HttpRequest &head) { return checkHead(connection, head); });
    }
}

HttpConnection::Verdict HttpServer::checkHead(HttpConnection *connection, const HttpRequest &head)
{
    if (m_check) {
        HttpConnection::Verdict verdict = m_check(head);
        if (verdict.status != 0 || verdict.unadmitted)
            return verdict;
    }
    const auto it = m_connections.find(connection);
    if (it == m_connections.end() || it->admitted)
        return {};
    if (m_admitted >= m_connectionLimits.maxAdmitted) {
        qCWarning(lcHttp) << "HTTP: refusing a connection from" << head.peer << "- already"
                          << m_admitted << "open";
        return {503,
                {{"Content-Type", "text/plain; charset=utf-8"}, {"Retry-After", "5"}},
                "too many connections (" + QByteArray::number(m_connectionLimits.maxAdmitted) +
                    " with requests let in); close some and retry\n"};
    }
    it->admitted = true;
    ++m_admitted;
    return {};
}

void HttpServer::onRequest(const HttpRequest &request, HttpResponder *responder)
{
    static const QMetaMethod signal = QMetaMethod::fromSignal(&HttpServer::requestReceived);
    if (!isSignalConnected(signal)) {
        responder->respond(503, {{"Content-Type", "text/plain; charset=utf-8"}},
                           "no handler for HTTP requests\n");
        return;
    }
    Q_EMIT requestReceived(request, responder);
}
