#include "monitorserver.h"

#include "journallog.h"
#include "lineframer.h"
#include "monitorsocket.h"

#include <QLocalServer>
#include <QLocalSocket>
#include <unistd.h>

struct MonitorServer::Peer
{
    // A finished run with its files can be large; anything beyond this is not an event of ours.
    LineFramer framer{MonitorProtocol::kMaxLineToWindow};
    QString instanceId;
};

MonitorServer::MonitorServer(QObject *parent) : QObject(parent), m_server(new QLocalServer(this))
{
    qRegisterMetaType<JournalEvent>();
    // Events carry code, output and pass-through values: only this user may connect.
    m_server->setSocketOptions(QLocalServer::UserAccessOption);
    connect(m_server, &QLocalServer::newConnection, this, &MonitorServer::onNewConnection);
}

MonitorServer::~MonitorServer()
{
    qDeleteAll(m_peers);
}

bool MonitorServer::listen(const QString &path, QString *error)
{
    // Only a stale socket file is replaced: a window that is still there (busy, say, so that a
    // second launch's request to show it went unanswered) keeps its socket.
    if (MonitorSocket::isServed(path)) {
        if (error)
            *error = QStringLiteral("another Code Sandbox window listens on %1").arg(path);
        return false;
    }
    QLocalServer::removeServer(path);
    if (!m_server->listen(path)) {
        if (error)
            *error = QStringLiteral("cannot listen on %1: %2").arg(path, m_server->errorString());
        return false;
    }
    qCInfo(lcJournal).noquote() << "monitor: listening on" << path;
    return true;
}

QString MonitorServer::path() const
{
    return m_server->fullServerName();
}

bool MonitorServer::send(const QString &instanceId, const MonitorProtocol::Message &message)
{
    for (auto it = m_peers.cbegin(); it != m_peers.cend(); ++it) {
        if (it.value()->instanceId != instanceId)
            continue;
        it.key()->write(MonitorProtocol::encode(message));
        it.key()->flush();
        return true;
    }
    return false;
}

bool MonitorServer::requestStop(const QString &instanceId, const QString &runId)
{
    return send(instanceId, MonitorProtocol::Stop{runId});
}

bool MonitorServer::answerApproval(const QString &instanceId, const QString &id,
                                   const QString &answer, const QString &reason)
{
    return send(instanceId, MonitorProtocol::Answer{id, answer, reason});
}

bool MonitorServer::answerSignIn(const QString &instanceId, const QString &id, bool allow,
                                 const QString &assistant)
{
    return send(instanceId, MonitorProtocol::SignInAnswer{id, allow, assistant});
}

void MonitorServer::onNewConnection()
{
    while (QLocalSocket *socket = m_server->nextPendingConnection()) {
        if (m_peers.size() >= kMaxPeers) {
            qCWarning(lcJournal) << "monitor: too many instances connected; refused one";
            socket->abort();
            socket->deleteLater();
            continue;
        }
        // The socket's folder and mode keep other users out; the kernel's word on who connected
        // makes sure of it, before anything the peer says is read.
        const qint64 uid = MonitorSocket::peerUid(socket->socketDescriptor());
        if (uid != qint64(::geteuid())) {
            qCWarning(lcJournal) << "monitor: refused a connection of user" << uid
                                 << "(only this user's instances may connect)";
            socket->abort();
            socket->deleteLater();
            continue;
        }
        m_peers.insert(socket, new Peer);
        connect(socket, &QLocalSocket::readyRead, this, [this, socket] { onReadyRead(socket); });
        connect(socket, &QLocalSocket::disconnected, this, [this, socket] {
            // What the peer wrote just before it went (a second launch's "show") may not have
            // been read yet.
            if (socket->bytesAvailable() > 0)
                onReadyRead(socket);
            Peer *peer = m_peers.take(socket);
            if (peer && !peer->instanceId.isEmpty()) {
                m_instances.remove(peer->instanceId);
                Q_EMIT instanceDisconnected(peer->instanceId);
            }
            delete peer;
            socket->deleteLater();
        });
    }
}

void MonitorServer::onReadyRead(QLocalSocket *socket)
{
    Peer *peer = m_peers.value(socket);
    if (!peer)
        return;
    const LineFramer::Output out = peer->framer.feed(socket->readAll());
    if (out.oversized)
        qCWarning(lcJournal) << "monitor: dropped" << out.oversized << "oversized message(s)";
    for (const QByteArray &line : out.lines) {
        onLine(socket, line);
        // A handler may have closed the window's side; nothing more to read then.
        if (!m_peers.contains(socket))
            return;
    }
}

void MonitorServer::onLine(QLocalSocket *socket, const QByteArray &line)
{
    using P = MonitorProtocol;
    const P::Decoded decoded = P::decode(line, P::Direction::ToWindow);
    if (!decoded.message) {
        qCWarning(lcJournal).noquote() << "monitor: ignored" << decoded.error << decoded.type;
        return;
    }
    const P::Message &message = *decoded.message;
    if (const auto *hello = std::get_if<P::Hello>(&message)) {
        onHello(socket, *hello);
    } else if (std::holds_alternative<P::Show>(message)) {
        Q_EMIT showRequested();
    } else if (const auto *event = std::get_if<JournalEvent>(&message)) {
        Q_EMIT eventReceived(*event);
    } else {
        // Only an instance that said who it is may ask, and only in its own name.
        const Peer *peer = m_peers.value(socket);
        if (!peer || peer->instanceId.isEmpty())
            return;
        if (const auto *withdraw = std::get_if<P::Withdraw>(&message)) {
            Q_EMIT approvalWithdrawn(peer->instanceId, withdraw->id, withdraw->why);
        } else if (const auto *signIn = std::get_if<P::SignIn>(&message)) {
            Q_EMIT signInRequested(peer->instanceId, *signIn);
        } else if (const auto *approve = std::get_if<P::Approve>(&message)) {
            ApprovalRequest request = approve->request;
            request.instanceId = peer->instanceId;
            Q_EMIT approvalRequested(request);
        }
    }
}

void MonitorServer::onHello(QLocalSocket *socket, const MonitorProtocol::Hello &hello)
{
    Peer *peer = m_peers.value(socket);
    if (!peer)
        return;
    if (!peer->instanceId.isEmpty() && peer->instanceId != hello.instance) {
        m_instances.remove(peer->instanceId);
        Q_EMIT instanceDisconnected(peer->instanceId);
    }
    peer->instanceId = hello.instance;
    const QJsonObject json = hello.toJson();
    m_instances.insert(hello.instance, json);
    Q_EMIT instanceConnected(hello.instance, json);
}
