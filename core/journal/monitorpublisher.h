#pragma once

#include "journalevent.h"

#include <QJsonObject>
#include <QObject>
#include <QTimer>
#include <functional>
#include <memory>

class LineFramer;
class QLocalSocket;

// The headless side of the monitor: sends this instance's execution events to the desktop app's
// socket when the app runs. Without the app nothing waits or fails: events are dropped, and a
// connection is tried again every few seconds. A window that stops reading loses output chunks
// (never a run's start or end) rather than making this process buffer without bound.
//
// The window talks back on the same connection: it stops a run of this instance, and answers the
// approvals this instance asks it for (MonitorApprover). Only this user can reach the socket (see
// MonitorSocket), and what it says is still checked: an unknown run or answer is ignored.
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
    // A message that is not an event (an approval asked or withdrawn); false when no window is
    // connected, and nothing was sent.
    bool sendControl(const QJsonObject &message);
    bool isConnected() const;
    qint64 droppedChunks() const { return m_dropped; }

    static constexpr int kRetryMs = 3000;
    // Output chunks are dropped above this much unsent data; the connection is given up above
    // four times as much.
    static constexpr qint64 kBacklogLimit = 8 * 1024 * 1024;

    // The window's messages are short; a longer line is not one of them.
    static constexpr qsizetype kMaxIncomingLine = 64 * 1024;

Q_SIGNALS:
    void connectedChanged(bool connected);
    // The window asks to stop a run of this instance.
    void stopRequested(const QString &runId);
    // The window answers an approval: `answer` is "allow", "always" or "deny".
    void approvalAnswered(const QString &id, const QString &answer, const QString &reason);

private:
    void tryConnect();
    void onConnected();
    void write(const QJsonObject &json);
    void onReadyRead();

    QString m_path;
    QString m_instanceId;
    QString m_mode;
    QLocalSocket *m_socket;
    QTimer m_retry;
    std::function<QList<RunRecord>()> m_greeting;
    qint64 m_dropped = 0;
    std::unique_ptr<LineFramer> m_framer;
};
