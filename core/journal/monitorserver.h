#pragma once

#include "journalevent.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>

class QLocalServer;
class QLocalSocket;

// The window's side of the monitor: a per-user local socket where headless instances send the
// events of their runs (JSON lines, see MonitorPublisher), and where a second launch of the app
// asks this one to show its window.
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
    // Each connection may hold a large message in its buffer: their number is bounded.
    static constexpr int kMaxPeers = 64;

Q_SIGNALS:
    void eventReceived(const JournalEvent &event);
    // `hello`: instance, pid, mode ("stdio", "http"), version.
    void instanceConnected(const QString &instanceId, const QJsonObject &hello);
    void instanceDisconnected(const QString &instanceId);
    void showRequested();

private:
    struct Peer;
    void onNewConnection();
    void onReadyRead(QLocalSocket *socket);
    void onLine(QLocalSocket *socket, const QByteArray &line);

    QLocalServer *m_server;
    QHash<QLocalSocket *, Peer *> m_peers;
    QHash<QString, QJsonObject> m_instances;
};
