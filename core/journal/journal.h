#pragma once

#include "journalevent.h"

#include <QHash>
#include <QObject>

class Execution;
struct ExecutionResult;
class HistoryStore;
class MonitorPublisher;
class SandboxService;
class SandboxSession;
class SessionManager;

// Watches every execution the sandbox service is asked for and tells what happens to it as
// JournalEvents: to the window (event()), to the history (the finished run), and to the desktop
// app's monitor socket when this is a headless instance. None of these can hold up a run.
// Usage samples go to the window and the socket only: they are for watching, not for keeping.
class Journal : public QObject
{
    Q_OBJECT
public:
    explicit Journal(SandboxService *sandbox, QObject *parent = nullptr);

    // Finished runs are saved here (not owned; may be null: no history).
    void setHistory(HistoryStore *history) { m_history = history; }
    // Events are also sent here (not owned; may be null).
    void setPublisher(MonitorPublisher *publisher);

    // Sessions' states (idle, busy, ended) are told as Session events.
    void watchSessions(SessionManager *sessions);

    // Runs created and not finished yet, as they stand now.
    QList<RunRecord> inFlight() const;

Q_SIGNALS:
    void recorded(const JournalEvent &event);

private:
    void track(Execution *execution);
    // The run as it is created, before it is queued: what the request and configuration say.
    RunRecord queuedRecord(const Execution *execution) const;
    // What track() does as the execution goes on, each for the run `id` while it is in flight.
    void runStarted(const QString &id, const Execution *execution);
    void runOutput(const QString &id, int stream, const QByteArray &bytes);
    void runSampled(const QString &id, const UsageSample &sample);
    void runConnected(const QString &id, const NetworkAttempt &attempt);
    void runFinished(const QString &id, const ExecutionResult &result);
    void publish(const JournalEvent &event);

    SandboxService *m_sandbox;
    HistoryStore *m_history = nullptr;
    MonitorPublisher *m_publisher = nullptr;
    QHash<QString, RunRecord> m_inFlight;
};
