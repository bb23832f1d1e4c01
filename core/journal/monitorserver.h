#pragma once

#include "approvalrequest.h"
#include "journalevent.h"
#include "monitorprotocol.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>

class QLocalServer;
class QLocalSocket;

// The window's side of the monitor: a per-user local socket where headless instances send the
// events of their runs (the lines of MonitorProtocol), and where a second launch of the app asks
// this one to show its window.
class MonitorServer : public QObject
{
    Q_OBJECT
public:
    explicit MonitorServer(QObject *parent = nullptr);
    ~MonitorServer() override;

    // Listens on `path`, replacing a stale socket file: call it only when no other window answers
    // there. False with a message.
    bool listen(const QString &path, QString *error = nullptr);
    QString path() const;
    int instanceCount() const { return int(m_instances.size()); }
    bool hasInstance(const QString &instanceId) const { return m_instances.contains(instanceId); }
    // Sends a message to one connected instance (a stop request, an approval's answer); false
    // when that instance is not connected.
    bool send(const QString &instanceId, const MonitorProtocol::Message &message);
    // The two messages the window sends.
    bool requestStop(const QString &instanceId, const QString &runId);
    bool answerApproval(const QString &instanceId, const QString &id, const QString &answer,
                        const QString &reason);
    bool answerSignIn(const QString &instanceId, const QString &id, bool allow,
                      const QString &assistant);
    // Each connection may hold a large message in its buffer: their number is bounded.
    static constexpr int kMaxPeers = 64;

Q_SIGNALS:
    void eventReceived(const JournalEvent &event);
    // `hello`: instance, pid, mode ("stdio", "http"), version.
    void instanceConnected(const QString &instanceId, const QJsonObject &hello);
    void instanceDisconnected(const QString &instanceId);
    void showRequested();
    // A headless instance asks a person to approve a run; it stays open until answered or
    // withdrawn (or the instance goes: instanceDisconnected).
    void approvalRequested(const ApprovalRequest &request);
    void approvalWithdrawn(const QString &instanceId, const QString &id, const QString &why);
    // A headless instance's endpoint has an assistant signing in, waiting for a person; its
    // Withdraw (approvalWithdrawn) or the instance going ends it.
    void signInRequested(const QString &instanceId, const MonitorProtocol::SignIn &signIn);

private:
    struct Peer;
    void onNewConnection();
    void onReadyRead(QLocalSocket *socket);
    void onLine(QLocalSocket *socket, const QByteArray &line);
    void onHello(QLocalSocket *socket, const MonitorProtocol::Hello &hello);

    QLocalServer *m_server;
    QHash<QLocalSocket *, Peer *> m_peers;
    QHash<QString, QJsonObject> m_instances;
};
