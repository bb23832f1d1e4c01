#pragma once

#include "journalevent.h"

#include <QObject>
#include <QTimer>
#include <functional>

class QLocalSocket;

// The headless side of the monitor: sends this instance's execution events to the desktop app's
// socket when the app runs. Without the app nothing waits or fails: events are dropped, and a
// connection is tried again every few seconds. A window that stops reading loses output chunks
// (never a run's start or end) rather than making this process buffer without bound.
class MonitorPublisher : public QObject
{
    Q_OBJECT
public:
    // `mode` says how this instance serves ("stdio", "http"), for the window to show.
    MonitorPublisher(const QString &socketPath, const QString &instanceId, const QString &mode,
                     QObject *parent = nullptr);
    ~MonitorPublisher() override;

    // Runs in flight, sent as Created events right after connecting.
    void setGreeting(const std::function<QList<RunRecord>()> &greeting) { m_greeting = greeting; }
    void send(const JournalEvent &event);
    bool isConnected() const;
    qint64 droppedChunks() const { return m_dropped; }

    static constexpr int kRetryMs = 3000;
    // Output chunks are dropped above this much unsent data; the connection is given up above
    // four times as much.
    static constexpr qint64 kBacklogLimit = 8 * 1024 * 1024;

Q_SIGNALS:
    void connectedChanged(bool connected);

private:
    void tryConnect();
    void onConnected();
    void write(const QJsonObject &json);

    QString m_path;
    QString m_instanceId;
    QString m_mode;
    QLocalSocket *m_socket;
    QTimer m_retry;
    std::function<QList<RunRecord>()> m_greeting;
    qint64 m_dropped = 0;
};
