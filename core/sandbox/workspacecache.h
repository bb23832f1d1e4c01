#pragma once

#include "workspacescanner.h"

#include <QHash>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <functional>
#include <memory>

class Execution;
class SandboxSite;
class WorkspaceTransfer;
struct Language;

// Read-only workspaces kept on the engines between runs, so that a call over a folder the engine
// has seen copies nothing, and one over a changed folder copies only what changed.
//
// Each content (WorkspaceScan::contentHash) has a volume of its own on each engine that ran it,
// named after the hash; a run mounts it read-only at /workspace/NAME instead of receiving the
// folder through the archive endpoint. A volume is filled once, by a sandbox without network
// (SandboxSpec::forWorkspaceFill) that copies the workspace's previous content on that engine
// (its volume, mounted read-only beside) and puts the files that differ (by content digest) in
// place, sent through the archive endpoint; with no previous content, everything is sent. The
// volume is usable only once the fill ended well, so a run never sees half a folder.
//
// Volumes belong to this server (its owner labels, SandboxSpec): an older content of a
// workspace goes as soon as no run mounts it, and the rest when the server ends (Janitor), or
// after, by the next instance, when it died. The engine's own cache of the user's files does
// not outlive the server that made it. Backends that keep no volumes (a Kubernetes cluster's:
// keepsVolumes()) are not asked: their runs receive the folder each time.
class WorkspaceCache : public QObject
{
    Q_OBJECT
public:
    // What the cache needs of the service's executions, and no more.
    struct Fills
    {
        // Makes the volume `volume` on `site` with `labels` (SandboxBackend::createVolume), then
        // runs `script` with sh in a fill sandbox of `language`'s image that mounts it (and
        // `previous`, when not empty), with `transfer` sending its files in first. Null when the
        // service cannot run it (shutting down).
        std::function<Execution *(SandboxSite *site, const Language &language,
                                  const QString &volume, const QString &previous,
                                  const QString &script, WorkspaceTransfer *transfer)>
            run;
        // Removes a volume of `site` (SandboxBackend::removeVolume).
        std::function<void(SandboxSite *site, const QString &volume)> remove;
    };
    // The volume to mount, what filling it sent for this run (0 when it was there), or why it
    // cannot be had (then the run receives the folder through the archive endpoint instead).
    using Done = std::function<void(const QString &volume, qint64 sentBytes, const QString &error)>;

    WorkspaceCache(Fills fills, std::shared_ptr<WorkspaceScanner> scanner,
                   QObject *parent = nullptr);

    // The volume on `site` that holds `scan`'s content of `ws` (a read-only workspace), filled
    // first when there is none; held for the caller until release(). `done` is called once,
    // from the event loop.
    void ensure(SandboxSite *site, const Language &language, const Workspace &ws,
                const std::shared_ptr<const WorkspaceScan> &scan, const Done &done);
    // A run that mounted `volume` on `site` ended.
    void release(SandboxSite *site, const QString &volume);

    // "code-sandbox-workspace-" and the first 32 hex of the content hash.
    static QString volumeName(const QByteArray &contentHash);
    // What a fill sends and deletes to turn the `previous` content (null: none) into `now`'s:
    // `changed` holds the entries of `now` that `previous` lacks or has otherwise (another type,
    // digest, mode or link target) and the folders above them; `deleted` the paths `previous`
    // has that `now` lacks or has as another type, and its links and files that `now` has
    // otherwise, never one inside another deleted one.
    struct Delta
    {
        std::shared_ptr<WorkspaceScan> changed;
        QStringList deleted;
    };
    static Delta delta(const WorkspaceScan *previous, const WorkspaceScan &now);
    // Where a fill's archive puts the changed files and the list of deletions (NUL-separated),
    // inside the volume: names no folder has (the content's own hash), gone when it is filled.
    static QString stageName(const QByteArray &contentHash);
    static QString deletedListName(const QByteArray &contentHash);
    // The fill's script (sh): the previous content, less the deletions, with the staged files
    // over it.
    static QString fillScript(const QByteArray &contentHash);

private:
    struct Held
    {
        std::shared_ptr<const WorkspaceScan> scan;
        QSet<QString> latestOf; // the workspaces whose newest content on the site this is
        int leases = 0;
        bool ready = false;
    };
    using Key = QPair<SandboxSite *, QString>;

    void lease(SandboxSite *site, const QString &volume, qint64 sentBytes, const Done &done);
    void fill(SandboxSite *site, const Language &language, const Workspace &ws,
              const std::shared_ptr<const WorkspaceScan> &scan);
    void filled(SandboxSite *site, const QString &name, const QString &volume,
                const QString &previous, qint64 sentBytes, const QString &error);
    // The newest content of `name` on `site` that is ready, or none.
    QString latestOf(SandboxSite *site, const QString &name) const;
    // Removes `volume` when no run mounts it and it is no workspace's newest content.
    void dropIfStale(SandboxSite *site, const QString &volume);

    Fills m_fills;
    std::shared_ptr<WorkspaceScanner> m_scanner;
    QHash<SandboxSite *, QHash<QString, Held>> m_held;
    QHash<Key, QList<Done>> m_waiting; // fills under way, and who waits for each
};
