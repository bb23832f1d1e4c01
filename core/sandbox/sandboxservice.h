#pragma once

#include "executionqueue.h"
#include "languageregistry.h"
#include "preloadplanner.h"
#include "runnetwork.h"
#include "sandboxconfig.h"
#include "sandboxspec.h"
#include "siteplacement.h"
#include "upstreamproxy.h"

#include <QHash>
#include <QObject>
#include <QQueue>
#include <QSet>
#include <functional>
#include <memory>

class ContainerPool;
class Janitor;
class SandboxBackend;
class SandboxSite;
class SiteLibraries;
class Execution;
class WorkspaceScanner;
class WorkspaceTransfer;
class WorkspaceCache;
class SandboxContainer;
struct ExecutionRequest;
struct MissingImage;

// Runs programs in fresh hardened containers and guarantees their removal. Everything happens on
// the event loop; executions report through their own signals.
//
// It may run them on several backends (engines), each a SandboxSite with its own warm pool,
// janitor and library volumes. A run is placed when it leaves the queue: on the usable site
// with the lowest load (running sandboxes against its capacity), then the one with a warm
// sandbox for it, then the one given fewest runs so far. A session stays on the site its
// container is on; a run with libraries goes where they were installed. With several sites,
// each is watched: one that stops answering has its runs failed with its name, gets no new
// ones, and is taken back once it answers (what it still holds of ours is removed then).
// The choice of a site is SitePlacement's, libraries across the sites SiteLibraries'; this class
// keeps the sites, the queue, the executions and the containers they run in.
class SandboxService : public QObject
{
    Q_OBJECT
public:
    SandboxService(SandboxBackend *backend, const LanguageRegistry &languages,
                   const SandboxConfig &config, QObject *parent = nullptr);
    // `backends` in the order given (at least one); the first is the default one for messages.
    SandboxService(const QList<SandboxBackend *> &backends, const LanguageRegistry &languages,
                   const SandboxConfig &config, QObject *parent = nullptr);
    ~SandboxService() override;

    const LanguageRegistry &languages() const { return m_languages; }
    // How the error of a run whose image is missing ends: what to do about it. Set by whoever
    // answers people and models (ImageWording); without it the error states the fact alone.
    using MissingImageWording = std::function<QString(const MissingImage &)>;
    void setMissingImageWording(MissingImageWording wording)
    {
        m_missingImageWording = std::move(wording);
    }
    const SandboxConfig &config() const { return m_config; }
    // The first backend (the only one, usually).
    SandboxBackend *backend() const;
    const QList<SandboxSite *> &sites() const { return m_sites; }
    // Where a container runs (null for one this service does not know).
    SandboxSite *siteOf(SandboxContainer *container) const;

    // The returned object belongs to the service and is deleted after finished() was delivered.
    Execution *execute(const ExecutionRequest &request);
    // A session's container (see SessionManager): prepared now, serving one program after another
    // until removed; tracked like any other, so shutdown removes it. Placed like a run (where
    // `librariesVolume` was installed, when given); null when no engine answers (`error` says).
    // `network`: the session's, decided when it was created (RunNetwork::decide).
    SandboxContainer *createSessionContainer(const Language &language, const RunNetwork &network,
                                             const QString &librariesVolume = {},
                                             QString *error = nullptr);
    // Runs the request's program in a session's container that is ready and idle; the container
    // stays unless the run ended it (Execution::endedSession()). `workspaces`: the session's
    // (WorkspaceTransfer::Kind::Session), brought up to date before the program and collected
    // after it.
    Execution *executeIn(SandboxContainer *container, const Language &language,
                         const ExecutionRequest &request, WorkspaceTransfer *workspaces = nullptr,
                         bool start = true);
    // The server's one scanner of workspaces (it remembers file digests), for sessions' transfers.
    const std::shared_ptr<WorkspaceScanner> &workspaceScanner() const { return m_workspaceScanner; }
    // Calls `f` once no usable engine is still learning what it adds to specs (its runtimes,
    // just after start): at once nearly always.
    void whenSettled(QObject *context, const std::function<void()> &f);
    // A usable site whose backend is still learning what it adds to specs; null when none.
    SandboxSite *settlingSite() const;
    // Why `libraries` cannot be installed for `language` here ("" when they can).
    QString librariesRefusal(const Language &language, const QStringList &libraries) const;
    // Installs (or finds cached) `libraries`; `done` gets the volume to mount, or an error. On
    // an engine that can run the runs that mount it (with `network`: theirs, which holds what
    // their runtime must be).
    void ensureLibraries(const Language &language, const QStringList &libraries,
                         const std::function<void(const QString &)> &progress,
                         const std::function<void(const QString &, const QString &)> &done,
                         const RunNetwork &network);
    // Runs `script` with sh in an install container on `site` that writes into `volume` there
    // (see LibraryCache).
    Execution *runInstall(SandboxSite *site, const Language &language, const QString &volume,
                          const QString &script);
    // Runs the language's version command once and caches the answer ("" when it failed).
    void languageVersion(const QString &language, const std::function<void(QString)> &done);

    // Starts filling the warm pools of the config's warmLanguages, and of any other language at
    // its first call from then on (no-op with a pool size of 0).
    void warmUp();
    // Removes containers left by instances on this machine that no longer run (killed with
    // SIGKILL, crashed). Emits orphansReaped(count) when done.
    void reapOrphans();

    int activeContainers() const { return int(m_containers.size()); }
    int runningExecutions() const { return m_queue->running(); }
    int queuedExecutions() const { return m_queue->waiting(); }
    int maxConcurrent() const { return m_queue->maxRunning(); }
    // The first site's warm pool (null with a pool size of 0).
    ContainerPool *pool() const;
    // Cancels what runs, removes every container, then emits shutdownFinished() (at most after
    // `graceMs`, even if the engine does not answer).
    void shutdown(int graceMs = 10000);

Q_SIGNALS:
    // Every execution a caller asked for (not installs), as execute() returns it; it may already
    // be doomed (unknown language), then finished() follows from the event loop.
    void executionCreated(Execution *execution);
    void executionStarted(Execution *execution);
    void shutdownFinished();
    void orphansReaped(int count);
    // A site went down or came back, or its description (version, CPUs) arrived.
    void sitesChanged();

private:
    using SpecFor = SitePlacement::SpecFor;

    Execution *start(const Language &language, const ExecutionRequest &request);
    // A new execution, tracked until it finishes; submit() then runs or queues it.
    Execution *create(const Language &language, const ExecutionRequest &request, int timeoutSec);
    void submit(Execution *execution, const SpecFor &spec, const QString &image,
                SandboxSite *site = nullptr);
    // A sandbox of `language` with the run's network as decided (ExecutionRequest::network, a
    // session's, or the server's for warm sandboxes): what each backend would make of it.
    SpecFor runSpecFor(const Language &language, const RunNetwork &network,
                       const QString &librariesVolume = {}, bool session = false) const;
    // The libraries' part, reaching this service's executions through SiteLibraries::Runs.
    SiteLibraries *makeLibraries();
    // The read-only workspaces' volumes, filled by this service's executions (Fills).
    WorkspaceCache *makeWorkspaceCache();
    // A one-shot run with workspaces, scanned: placed, its read-only workspaces in their cached
    // volumes on that engine (those it can have), then submitted there.
    void placeWithWorkspaces(Execution *execution, const Language &language, const SpecFor &spec);
    void cacheWorkspaces(Execution *execution, SandboxSite *site, const Language &language,
                         const SpecFor &spec, int index);
    void submitWithWorkspaces(Execution *execution, SandboxSite *site, const SpecFor &spec,
                              const QString &image);
    void setUpSite(SandboxSite *site);
    // The secrets' authority (InterceptionAuthority) and the trust store, when there are secrets.
    void loadAuthority();
    ContainerPool *makePool(SandboxSite *site);
    void siteStateChanged(SandboxSite *site);
    void dropPool(SandboxSite *site);
    void failRunsOn(SandboxSite *site);
    void updateCapacity();
    int poolMaxFor(const SandboxSite *site) const;
    // The request's timeout, or the default, capped at the configured maximum.
    int timeoutFor(const ExecutionRequest &request) const;
    Execution *executeWithLibraries(const Language &language, const ExecutionRequest &request);
    void launch(const ExecutionQueue::Job &next);
    // Binds the execution to the site until it finishes (load, and failing it if the site dies).
    void placeOn(Execution *execution, SandboxSite *site);
    void warm(const Language &language);
    void warmOn(SandboxSite *site, const Language &language);
    SandboxContainer *makeContainer(SandboxSite *site, const SandboxSpec &spec);
    // Before a run in `container`: the runtime it has, by name (the engine's default when its
    // spec named none).
    static void nameRuntime(SandboxContainer *container, SandboxSite *site);
    void track(SandboxContainer *container, SandboxSite *site);
    void checkShutdownDone();
    int janitorsPending() const;

    QList<SandboxSite *> m_sites;
    // Which site a new sandbox goes to (it reads m_sites).
    SitePlacement m_placement{m_sites};
    LanguageRegistry m_languages;
    SandboxConfig m_config;
    // What warm sandboxes import while they wait, learned from the runs' imports.
    PreloadPlanner m_preload;
    // One for the server: it remembers file hashes between runs, so an unchanged folder is not
    // hashed again (WorkspaceTransfer uses it on its one worker thread, holding it while a scan
    // runs).
    std::shared_ptr<WorkspaceScanner> m_workspaceScanner;
    UpstreamProxy m_upstream; // from the config's installEnv: the host's proxy, if any
    // The secrets' authority and the host's trust store (loadAuthority), for the backends.
    QByteArray m_authorityCertificate;
    QByteArray m_authorityKey;
    QByteArray m_trust;
    MissingImageWording m_missingImageWording;
    QHash<SandboxContainer *, SandboxSite *> m_containers;
    QSet<Execution *> m_executions;
    QHash<Execution *, SandboxSite *> m_placed;
    // Libraries across the sites: installs, and which engines hold each volume.
    SiteLibraries *m_libraries = nullptr;
    WorkspaceCache *m_workspaceCache = nullptr;
    ExecutionQueue *m_queue = nullptr;
    quint64 m_containerSeq = 0;
    QHash<QString, QString> m_versions;
    QSet<QString> m_warmed; // languages whose pools were started (on every site)
    bool m_warmOnFirstUse = false;
    bool m_shuttingDown = false;
    bool m_shutdownSignalled = false;
    // Backends still removing what they made beside sandboxes (SandboxBackend::shutdown); -1
    // until asked.
    int m_backendsReleasing = -1;
    bool m_volumesSwept = false;
    quint64 m_counter = 0;
};
