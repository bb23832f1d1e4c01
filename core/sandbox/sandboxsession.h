#pragma once

#include "language.h"
#include "runnetwork.h"
#include "sandboxcontainer.h"

#include <QDateTime>
#include <QObject>
#include <QPointer>

class Execution;

// One stateful session: a container that lives across calls, so files in the workdir and
// installed packages persist, and for languages with a live interpreter (Python, JavaScript)
// variables, imports and functions too. Owned by the SessionManager; used by one MCP session.
class SandboxSession : public QObject
{
    Q_OBJECT
public:
    enum class State
    {
        Starting, // the container is being created and started
        Idle,
        Busy, // a call runs
        Ended
    };

    SandboxSession(const QString &id, const QString &owner, const Language &language,
                   int timeoutSec, QObject *parent = nullptr);

    QString id() const { return m_id; }
    QString owner() const { return m_owner; }
    const Language &language() const { return m_language; }
    int timeoutSec() const { return m_timeoutSec; }
    State state() const { return m_state; }
    static QString stateName(State state); // "starting", "idle", "busy", "ended"
    QString endReason() const { return m_endReason; }
    QDateTime createdAt() const { return m_createdAt; }
    QDateTime lastUsedAt() const { return m_lastUsedAt; }
    int calls() const { return m_calls; }
    QStringList libraries() const { return m_libraries; }
    void setLibraries(const QStringList &libraries) { m_libraries = libraries; }
    // Its sandbox's network, decided when it was created (RunNetwork::decide) and the same for
    // all its calls: their requests carry this value, never one decided again.
    const RunNetwork &network() const { return m_network; }
    void setNetwork(const RunNetwork &network) { m_network = network; }
    SandboxContainer *container() const { return m_container; }

    // The container to serve the session; the session is Idle once it is ready.
    void attach(SandboxContainer *container);
    // A call starts (Busy) / ended (Idle again, or Ended when the run took the container).
    void begin(Execution *execution);
    // Removes the container; `reason` is what later calls are told.
    void end(const QString &reason);

Q_SIGNALS:
    void ready();
    void stateChanged(State state);
    // The session is over (closed, expired, its container lost); emitted once.
    void ended(const QString &reason);

private:
    void setState(State state);

    QString m_id;
    QString m_owner;
    Language m_language;
    int m_timeoutSec;
    QPointer<SandboxContainer> m_container;
    State m_state = State::Starting;
    QString m_endReason;
    QDateTime m_createdAt;
    QDateTime m_lastUsedAt;
    QStringList m_libraries;
    RunNetwork m_network;
    int m_calls = 0;
};
