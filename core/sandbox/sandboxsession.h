#pragma once

#include "language.h"
#include "runnetwork.h"
#include "sandboxcontainer.h"

#include <QDateTime>
#include <QObject>
#include <QPointer>
#include <functional>

class Execution;
class WorkspaceTransfer;

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
    // Its workspaces (a WorkspaceTransfer of Kind::Session, which it takes), chosen when it was
    // created: copied into its sandbox once that is ready, before the session is; each call
    // brings the read-only ones up to date and collects the copy-on-write ones' changes. Null:
    // none.
    void setWorkspaces(WorkspaceTransfer *workspaces);
    WorkspaceTransfer *workspaces() const { return m_workspaces; }
    // Their names, as calls in it may name them.
    QStringList workspaceNames() const;

    // The container to serve the session; the session is Idle once it is ready.
    void attach(SandboxContainer *container);
    // A new container in place of the current one, which is removed (a rewind: the snapshot goes
    // into a fresh sandbox). The session starts again (Starting, its workspaces copied in) and is
    // Idle once the new one is ready.
    void replaceContainer(SandboxContainer *container);
    // It outlives its server and its client (create_session's keep).
    bool kept() const { return m_kept; }
    void setKept(bool kept) { m_kept = kept; }
    // The libraries' volume its sandboxes mount ("" without libraries), for a new container.
    QString librariesVolume() const { return m_librariesVolume; }
    void setLibrariesVolume(const QString &volume) { m_librariesVolume = volume; }

    // Snapshots (SessionManager): one is taken while the session is idle after a call; a call
    // that comes meanwhile waits for it (afterSnapshot).
    bool snapshotting() const { return m_snapshotting; }
    void setSnapshotting(bool on);
    // Calls `then` once no snapshot is being taken (now, if none is), or the session ended.
    void afterSnapshot(const std::function<void()> &then);
    // The snapshot its state is at (the last taken, or the one it was rewound to or forked
    // from): the parent of its next one.
    QString lastSnapshot() const { return m_lastSnapshot; }
    void setLastSnapshot(const QString &id) { m_lastSnapshot = id; }
    // What the last snapshot could not keep ("not kept: `conn` (socket)"), or why none was
    // kept: told with the next call's result, once.
    void setSnapshotNote(const QString &note) { m_snapshotNote = note; }
    QString takeSnapshotNote() { return std::exchange(m_snapshotNote, QString()); }
    // A call starts (Busy) / ended (Idle again, or Ended when the run took the container).
    void begin(Execution *execution);
    // Removes the container; `reason` is what later calls are told.
    void end(const QString &reason);

Q_SIGNALS:
    void ready();
    // What it does while it starts (its workspaces go in), for the caller that waits.
    void progress(const QString &message);
    void stateChanged(State state);
    // The session is over (closed, expired, its container lost); emitted once.
    void ended(const QString &reason);

private:
    void setState(State state);
    // The container is ready: the workspaces go in, then the session is.
    void onContainerReady();

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
    WorkspaceTransfer *m_workspaces = nullptr;
    int m_calls = 0;
    QString m_librariesVolume;
    bool m_kept = false;
    bool m_snapshotting = false;
    QList<std::function<void()>> m_afterSnapshot;
    QString m_lastSnapshot;
    QString m_snapshotNote;
};
