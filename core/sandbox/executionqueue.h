#pragma once

#include "sandboxspec.h"

#include <QHash>
#include <QObject>
#include <QQueue>
#include <QString>
#include <functional>

class Execution;
class SandboxBackend;
class SandboxSite;

// At most maxRunning executions run at once; the next ones wait here, in order, and each
// waiting one is told its place as it moves up; at most maxWaiting wait, and one more is refused
// at once with a clear error. An execution is Waiting or Running here until it finishes.
class ExecutionQueue : public QObject
{
    Q_OBJECT
public:
    struct Job
    {
        Execution *execution;
        // The sandbox it runs in, made for the backend the run is placed on when it leaves the
        // queue, or why that backend cannot run it (see SandboxBackend::runSpec).
        std::function<SandboxSpec::Result(const SandboxBackend &)> spec;
        QString image;
        // Where it must run (its libraries' volume is there); null: wherever placement says.
        SandboxSite *site = nullptr;
    };
    using Launcher = std::function<void(const Job &job)>;

    ExecutionQueue(int maxRunning, int maxWaiting, Launcher launch, QObject *parent = nullptr);

    // Launches the job now, or queues it, or refuses it (the execution fails with the reason).
    void submit(const Job &job);
    // The execution finished, running or waiting: its slot or its place frees up.
    void finished(Execution *execution);
    // Nothing more is launched (shutdown).
    void stop() { m_stopped = true; }

    int running() const { return m_running; }
    int waiting() const { return int(m_waiting.size()); }
    int maxRunning() const { return m_maxRunning; }
    // As engines come and go (placement over several), so does how many may run at once.
    void setMaxRunning(int maxRunning);

Q_SIGNALS:
    // Nothing runs any more: work held back while programs ran (the pool's refill) may go on.
    void idle();

private:
    enum class State
    {
        Waiting,
        Running
    };

    void launchWaiting();

    int m_maxRunning;
    int m_maxWaiting;
    Launcher m_launch;
    QHash<Execution *, State> m_states;
    QQueue<Job> m_waiting;
    int m_running = 0;
    bool m_stopped = false;
};
