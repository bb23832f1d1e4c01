#pragma once

#include "workspacerun.h"

#include <QList>
#include <QObject>
#include <QPointer>
#include <functional>
#include <memory>

class SandboxContainer;
class WorkspaceScanner;

// A run's workspaces into its sandbox and, for the copy-on-write ones, their changes back.
//
// In: each folder is scanned (exclusions, links, devices, the size cap: WorkspaceScanner) and
// packed off the event loop (a big folder takes a while to hash the first time, and the window
// must not freeze), then unpacked by the engine's archive endpoint into the workdir volume at
// SandboxLayout::kWorkspaceDir/NAME, which the image's /workspace points to. The same on every
// backend: the archive API is the one way in that works for local and remote engines and pods,
// keeps excluded files absent rather than hidden, and makes no link the program could follow
// out of the folder. A read-only workspace's files belong to root with no write bits, so the
// sandbox's user, without capabilities, cannot change them.
//
// Back: after the program's end line, each copy-on-write workspace is fetched as one archive
// (capped) and compared with its scan on the host side (WorkspaceChangeSet); apply "always"
// writes the changes into the folder at once (WorkspaceApplier).
//
// A session's (Kind::Session) serves every call of the session, sending and collecting once per
// call, one call at a time (a send asked for while a collection is under way waits for it):
// - Its workspaces go in when the session starts (send() the first time).
// - Before each call (send() again), a read-only workspace is scanned again, which costs a walk
//   of the folder when nothing changed (the scanner remembers the digests); when its content hash
//   differs from the version in the sandbox, the new content goes in as a new version. Nothing in
//   the sandbox can be deleted by the server (the archive endpoint only adds, and the sandbox's
//   user cannot delete root's files), so each version has its own folder,
//   kWorkspaceDir/.v/NAME-<12 hex of the hash>, and kWorkspaceDir/NAME is a symbolic link to the
//   current one, replaced by the last entry of the same archive: the engine unpacks in order, so
//   the link moves only once the version is complete, and a call sees one version throughout.
//   Old versions stay until the session ends.
// - A copy-on-write workspace goes in once, as a folder: the session's copy, which its calls
//   change. After each call it is fetched and compared with the session's *baseline* (the folder
//   as the session started, or as last applied): the change set is cumulative. Apply "always"
//   moves the baseline to what was applied, so that the next call reports only newer changes.
class WorkspaceTransfer : public QObject
{
    Q_OBJECT

public:
    enum class Kind
    {
        Run,     // one run: each workspace a folder at kWorkspaceDir/NAME, sent once
        Session, // a session's calls: see above
        // The sandbox that fills a cached volume (WorkspaceCache): one workspace, its scan given
        // (setFill), sent as it is into the volume's staging folder, with the list of what the
        // earlier content has that this one does not.
        Fill
    };

    // The one worker the scans, packing and comparisons run on, one at a time: the scanner's
    // memory of file hashes is not shared between threads, and two big folders hashed at once
    // would only compete for the disk.
    WorkspaceTransfer(const QList<Workspace> &workspaces, std::shared_ptr<WorkspaceScanner> scanner,
                      qint64 maxBytes, QObject *parent = nullptr, Kind kind = Kind::Run);

    using Done = std::function<void(const QString &error)>;
    // Scans every workspace (off the event loop) ahead of the sandbox, so that it can be made
    // with room for them (scratchBytes); `done` gets why one cannot go in (over the cap, gone).
    void scan(const Done &done);
    // The space the sandbox's SandboxLayout::kWorkspaceDir needs for the scanned workspaces that
    // are copied in (0: none is, every one is in its cached volume).
    qint64 scratchBytes() const;
    // The room a copy-on-write workspace's copy needs: its files, and room to grow up to the cap.
    qint64 copyBytes(int index) const;
    // A session's sandbox was replaced (a rewind): the new one holds none of its workspaces, so
    // the next send() copies them whole, a copy-on-write one from the folder again.
    void forgetHeld();
    // Scans (unless scan() did, for a one-shot run) and copies every workspace into
    // `container`; `done` gets why one could not go in (nothing runs then). A session's: what
    // its sandbox lacks or holds in an older version (see above); the outcomes of the previous
    // call are cleared first.
    void send(SandboxContainer *container, const Done &done);
    bool hasCopyOnWrite() const;
    // A workspace whose content is in the engine's `volume` (WorkspaceCache), which the sandbox
    // mounts: send() skips it (a copy-on-write one's copy is made by the sandbox itself).
    // `sentBytes`: what filling that volume sent for this run.
    void setCached(int index, const QString &volume, qint64 sentBytes);
    // A Fill's one workspace: what to send (the entries of `changed` only; it is not scanned
    // again) and the paths to delete from the earlier content (WorkspaceCache::fillScript).
    void setFill(const std::shared_ptr<const WorkspaceScan> &changed, const QStringList &deleted);
    // Fetches, compares and (apply "always") applies the copy-on-write workspaces; the outcome
    // is in runs(). What one workspace holds when it comes back is capped as it was going in
    // (--workspace-max): a run may write big results there rather than through JSON.
    void collect(SandboxContainer *container, const std::function<void()> &done);
    const QList<WorkspaceRun> &runs() const { return m_runs; }
    Kind kind() const { return m_kind; }

    // Limits of what a change set keeps: one file, and the entries of a workspace.
    static constexpr qint64 kMaxChangedFileBytes = 256LL * 1024 * 1024;
    static constexpr int kMaxChangedEntries = 200000;
    // The most one workspace's archive may hold when it comes back (it is held in memory).
    static constexpr qint64 kMaxReturnBytes = 1024LL * 1024 * 1024;

    // A session's version of a read-only workspace: "NAME-<first 12 hex of contentHash>", its
    // folder under kWorkspaceDir/.v.
    static QString versionName(const QString &name, const QByteArray &contentHash);
    // Whether the engine's archive of kWorkspaceDir/NAME, fetched after a version was sent, shows
    // the link to `version` in place: empty when it does, or when the engine resolved the link
    // (Podman answers with the folder it leads to, which only the whole content could tell
    // apart); else what it shows instead.
    static QString linkProblem(const QByteArray &tar, const QString &name, const QString &version);
    // The baseline after `changes` were applied to the folder (`applied`): `before` with the
    // entries of the files applied taken from `now`, the folder scanned since (their new times
    // and digests, so that they are no conflict later), and those deleted gone. Every other
    // entry stays as it was, so that a file changed in the folder meanwhile is neither reported
    // as the session's change nor overwritten later (it is a conflict, as it is).
    static WorkspaceScan rebase(const WorkspaceScan &before, const WorkspaceChangeSet &changes,
                                const WorkspaceApplyResult &applied, const WorkspaceScan &now);

private:
    void scanNext(int index, const Done &done);
    void sendNext(int index, const Done &done);
    void collectNext(int index, const std::function<void()> &done);
    // The fetched archive against the workspace's scan (a session's: its baseline), off the
    // event loop; then applied ("always") and, in a session, the baseline moved.
    void compare(int index, const QByteArray &tar, qint64 maxBytes,
                 const std::function<void()> &done);
    // A version of a session's read-only workspace went in: the engine's link is checked.
    void checkLink(int index, const std::shared_ptr<const WorkspaceScan> &scan, const Done &done);
    // A session's send or collection is over: the one that waited, if any, starts.
    void settle();

    QList<WorkspaceRun> m_runs;
    std::shared_ptr<WorkspaceScanner> m_scanner;
    qint64 m_maxBytes;
    Kind m_kind;
    QPointer<SandboxContainer> m_container;
    // A session's: what its sandbox holds of each workspace (the scan of the read-only version
    // linked, the copy-on-write baseline); null until sent.
    QList<std::shared_ptr<const WorkspaceScan>> m_held;
    QStringList m_fillDeleted; // a Fill's
    bool m_busy = false;
    std::function<void()> m_waiting;
};
