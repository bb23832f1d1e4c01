#pragma once

#include "journalevent.h"

#include <QHash>
#include <QObject>

class Execution;
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
    void publish(const JournalEvent &event);

    SandboxService *m_sandbox;
    HistoryStore *m_history = nullptr;
    MonitorPublisher *m_publisher = nullptr;
    QHash<QString, RunRecord> m_inFlight;
};
