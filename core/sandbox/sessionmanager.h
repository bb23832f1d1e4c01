#pragma once

#include "executionrequest.h"
#include "keptsessions.h"
#include "runnetwork.h"
#include "sessionadmission.h"
#include "sessionblueprint.h"
#include "snapshotstore.h"
#include "workspace.h"

#include <QHash>
#include <QObject>
#include <QTimer>
#include <functional>
#include <memory>

class Execution;
struct Language;
class SandboxService;
class SandboxSession;

// The stateful sessions of this server: created on request, each with its own container, used
// only by the MCP session that created it, ended on close, after being idle too long, when its
// MCP session goes, and at shutdown (the service removes every container it made).
class SessionManager : public QObject
{
    Q_OBJECT
public:
    struct Limits
    {
        int idleSec = 600;   // an idle session ends after this long
        int maxSessions = 8; // open at once, all clients together
        // Where snapshots are kept (SnapshotStore); empty: no snapshots are taken.
        QString snapshotFolder = QString();
        SnapshotStore::Limits snapshots = {};
    };

    SessionManager(SandboxService *sandbox, const Limits &limits, QObject *parent = nullptr);
    ~SessionManager() override;

    const Limits &limits() const { return m_limits; }
    SandboxService *sandbox() const { return m_sandbox; }

    using Created = std::function<void(SandboxSession *session, const QString &error)>;
    // Starts a session; `done` gets it once its container is ready, or an error. `timeoutSec`
    // (0: the server's default) applies to each call that does not give its own. `network`: its
    // sandbox's, decided once for all its runs (RunNetwork::decide). `workspaces`: names of the
    // server's, copied into its sandbox before it is ready (WorkspaceTransfer::Kind::Session);
    // every call in it sees them, and no others.
    void create(const QString &owner, const QString &language, const QStringList &libraries,
                int timeoutSec, const RunNetwork &network,
                const std::function<void(const QString &)> &progress, const Created &done,
                const QStringList &workspaces = {});
    // The same from a blueprint (its owner, assistant and keep too); `id`: the session's, when it
    // comes back (a kept one), else a new one.
    void create(const SessionBlueprint &blueprint,
                const std::function<void(const QString &)> &progress, const Created &done,
                const QString &id = QString());
    // The owner's live session, or why there is none (unknown, ended, another instance's).
    SessionAdmission lookup(const QString &id, const QString &owner) const;
    // Whether a call in `language` (null: not checked), with libraries or not, may run in the
    // session now: the session, or the typed refusal. The one place these checks are made.
    SessionAdmission admit(const QString &id, const QString &owner, const Language *language,
                           bool withLibraries) const;
    // Runs the program in the request's session (admitted: see admit()), with the session's
    // workspaces whatever the request names.
    Execution *execute(ExecutionRequest request);
    // Ends the owner's session; the lookup says whether there was one.
    SessionAdmission close(const QString &id, const QString &owner);
    QList<SandboxSession *> sessionsOf(const QString &owner) const;
    int count() const { return int(m_sessions.size()); }
    // The MCP session `owner` went away: its sessions end.
    void closeOwnedBy(const QString &owner);
    void closeAll(const QString &reason);
    // Ends sessions idle for longer than the limit (also done every few seconds).
    void expireIdle();

    // The first 8 letters and digits of the instance's id: what session ids begin with.
    QString instanceTag() const;

    // Snapshots: one after every call of a session, taken while it is idle (null: none taken).
    SnapshotStore *snapshots() const { return m_snapshots.get(); }
    // A kept session of an earlier server (or of a client that went), not running: it comes
    // back with revive(). Its blueprint, or null.
    const SessionBlueprint *dormant(const QString &id) const;
    // The dormant sessions kept for `assistant`.
    QStringList dormantOf(const QString &assistant) const;
    // Brings the kept session `id` back for `owner` (a call of `assistant`'s that names it): a
    // sandbox like its own, with its last snapshot. `done` gets the error, or empty once it is
    // live.
    void revive(const QString &id, const QString &owner, const QString &assistant,
                const std::function<void(const QString &)> &progress,
                const std::function<void(const QString &error)> &done);
    // A person's export of a snapshot: its .csnap file (SnapshotStore's format) at `path`.
    QString exportSnapshot(const QString &id, const QString &path) const;
    // A person's import of a .csnap file: checked (its hash and manifest, a language this server
    // has, the cap) and kept as `import-<hash>.1`, which any assistant may start a session from
    // (create_session's from_snapshot) since a person chose to give it. The error, or empty with
    // *id set.
    QString importSnapshot(const QString &path, QString *id);
    // Who owns a session (live or remembered): its MCP session; "" when unknown.
    QString ownerOf(const QString &sessionId) const { return m_blueprints.value(sessionId).owner; }
    // The snapshot taken after a run (a call of a session), or null.
    const SessionSnapshot *snapshotAfterRun(const QString &runId) const;
    // A person deletes a snapshot (the window): gone from the store, and from a kept session's
    // session.json.
    void removeSnapshot(const QString &id);
    // The kept session `id` (dormant) is kept no more: it and its snapshots go.
    void dropKept(const QString &id);
    // Whether `id` is (or was, and is remembered) a session of `owner`'s.
    bool ownedBy(const QString &id, const QString &owner) const
    {
        return m_blueprints.contains(id) && m_blueprints.value(id).owner == owner;
    }
    // The snapshot `id` when `owner` may use it (its session is, or was, theirs), else null.
    const SessionSnapshot *snapshotOf(const QString &id, const QString &owner) const;
    // `session` once it is a restored snapshot's, with the loader's record (restored,
    // not_restored); null with the error when it could not be.
    using Restored = std::function<void(SandboxSession *session, const QJsonObject &record,
                                        const QString &error)>;
    // The session's state becomes the snapshot's (one of its own), in a fresh sandbox; its later
    // snapshots stay, as a branch. The session must be idle (admit()).
    void rewind(SandboxSession *session, const QString &snapshotId,
                const std::function<void(const QString &)> &progress, const Restored &done);
    // A new session of `owner` from a snapshot of one of theirs (live or ended): the same
    // language, libraries, network, timeout and workspaces; kept when `keep` says.
    void fork(const QString &owner, const QString &snapshotId, bool keep,
              const std::function<void(const QString &)> &progress, const Restored &done);

Q_SIGNALS:
    void sessionCreated(SandboxSession *session);
    void sessionEnded(const QString &id, const QString &reason);
    void snapshotTaken(SandboxSession *session, const SessionSnapshot &snapshot);
    // Snapshots of the session went without anyone asking (the caps), or were deleted.
    void snapshotsRemoved(const QString &sessionId);

private:
    // What is kept of a kept session: its blueprint, the snapshot it is at, its snapshots.
    KeptSessions::Kept keptOf(const SandboxSession *session) const;
    // A kept session's session.json, after each of its snapshots; what was written (no id when
    // the session is not kept).
    KeptSessions::Kept saveKept(SandboxSession *session);
    // The snapshot after a call, while the session is idle.
    void takeSnapshot(SandboxSession *session, const QString &runId);
    // Puts a kept snapshot into the session's sandbox (ready and idle); calls wait meanwhile.
    void restoreInto(SandboxSession *session, const QString &snapshotId,
                     const std::function<void(const QString &)> &progress, const Restored &done);
    // What create() checks first: the blueprint's language (null, with the refusal, when it or
    // anything else is refused: too many sessions, libraries, workspaces), and its folders.
    const Language *admitBlueprint(const SessionBlueprint &b, QList<Workspace> *folders,
                                   QString *refusal) const;
    // create()'s second half: its libraries installed (or found), then its sandbox started.
    void launch(SandboxSession *session, const QStringList &libraries, const RunNetwork &network,
                const std::function<void(const QString &)> &progress);
    void forget(SandboxSession *session, const QString &reason);

    SandboxService *m_sandbox;
    Limits m_limits;
    QHash<QString, SandboxSession *> m_sessions; // live ones
    QHash<QString, QString> m_ended;             // id → why, so later calls hear why
    QStringList m_endedOrder;
    QHash<QString, SessionBlueprint> m_blueprints; // live and remembered ended sessions
    QTimer m_expiry;
    std::unique_ptr<SnapshotStore> m_snapshots;
    std::unique_ptr<KeptSessions> m_kept;
    QHash<QString, KeptSessions::Kept> m_dormant;
    bool m_stopping = false; // kept sessions that end now stay kept
};
