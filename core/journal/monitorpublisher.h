#pragma once

#include "journalevent.h"
#include "monitorprotocol.h"

#include <QObject>
#include <QTimer>
#include <functional>
#include <memory>

class LineFramer;
class QLocalSocket;

// The headless side of the monitor: sends this instance's execution events to the desktop app's
// socket when the app runs. Without the app nothing waits or fails: events are dropped, and a
// connection is tried again, sooner at first and then every few seconds, for as long as this
// instance lives: a window opened later, or opened again, is found. A window that stops reading
// loses output chunks (never a run's start or end) rather than making this process buffer without
// bound.
//
// Only this user's own window is trusted: before every connection the socket's folder must be
// this user's alone (MonitorSocket::checkFolder), and once connected the listener must run as
// this user (its credentials from the kernel) before a single byte goes to it. Anything else is
// treated as no window: nothing is sent, nothing it says is heard, and it is tried again later.
//
// The window talks back on the same connection: it stops a run of this instance, and answers the
// approvals this instance asks it for (MonitorApprover). What it says is still checked: an unknown
// run or answer is ignored.
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
    bool sendControl(const MonitorProtocol::Message &message);
    bool isConnected() const;
    qint64 droppedChunks() const { return m_dropped; }

    // A failed connection is tried again after kFirstRetryMs, then twice as long each time up
    // to kRetryMs; a window reached starts the count anew.
    static constexpr int kFirstRetryMs = 200;
    static constexpr int kRetryMs = 3000;
    // Output chunks are dropped above this much unsent data; the connection is given up above
    // four times as much.
    static constexpr qint64 kBacklogLimit = 8 * 1024 * 1024;

    // The window's messages are short; a longer line is not one of them.
    static constexpr qsizetype kMaxIncomingLine = MonitorProtocol::kMaxLineToInstance;

Q_SIGNALS:
    void connectedChanged(bool connected);
    // The window asks to stop a run of this instance.
    void stopRequested(const QString &runId);
    // The window answers an approval: `answer` is "allow", "always" or "deny".
    void approvalAnswered(const QString &id, const QString &answer, const QString &reason);
    // The window answers a sign-in of this instance's endpoint.
    void signInAnswered(const QString &id, bool allow, const QString &assistant);
    // A connection was not made, or was dropped unused, because the window's place failed a
    // check (`why`): the folder is not this user's alone, or the listener is another user.
    void refused(const QString &why);

private:
    void tryConnect();
    void scheduleRetry();
    void onStateChanged();
    void onConnected();
    void refuse(const QString &why);
    void write(const MonitorProtocol::Message &message);
    void onReadyRead();

    QString m_path;
    QString m_instanceId;
    QString m_mode;
    QLocalSocket *m_socket;
    QTimer m_retry;
    int m_retryMs = kFirstRetryMs;
    // The listener passed the uid check: only then does anything go out or come in.
    bool m_trusted = false;
    quint64 m_attempt = 0; // which connection a deferred drop is meant for
    QString m_lastRefusal; // warned once, not at every retry
    std::function<QList<RunRecord>()> m_greeting;
    qint64 m_dropped = 0;
    std::unique_ptr<LineFramer> m_framer;
};
