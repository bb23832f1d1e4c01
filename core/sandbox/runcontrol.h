#pragma once

#include <QHash>
#include <QObject>
#include <QPointer>

class Execution;
class SandboxService;

// Finds a run of this process by its id to stop it: the window's Stop, for its own runs and, over
// the monitor socket, for a headless instance's.
class RunControl : public QObject
{
    Q_OBJECT
public:
    explicit RunControl(SandboxService *sandbox, QObject *parent = nullptr);

    // The run ends as cancelled, its result saying `reason` as given (the words are the
    // caller's: the tools room's RunStopReason for the window's Stop); false when no such run is
    // in flight here (unknown, or finished already): nothing happens then.
    bool stop(const QString &runId, const QString &reason);
    int inFlight() const { return int(m_runs.size()); }

private:
    QHash<QString, QPointer<Execution>> m_runs;
};
