#include "sandboxservice.h"

#include "containerpool.h"
#include "execution.h"
#include "executionqueue.h"
#include "interceptionauthority.h"
#include "janitor.h"
#include "missingimage.h"
#include "sandboxbackend.h"
#include "sandboxcontainer.h"
#include "sandboxlayout.h"
#include "sandboxlog.h"
#include "sandboxsession.h"
#include "sandboxsite.h"
#include "sitelibraries.h"
#include "workspacecache.h"
#include "workspacescanner.h"
#include "workspacetransfer.h"

#include <QFile>
#include <QPointer>
#include <QSet>
#include <QTimer>
#include <algorithm>
#include <unistd.h>

SandboxService::SandboxService(SandboxBackend *backend, const LanguageRegistry &languages,
                               const SandboxConfig &config, QObject *parent)
    : SandboxService(QList<SandboxBackend *>{backend}, languages, config, parent)
{}

SandboxService::SandboxService(const QList<SandboxBackend *> &backends,
                               const LanguageRegistry &languages, const SandboxConfig &config,
                               QObject *parent)
    : QObject(parent), m_languages(languages), m_config(config),
      m_workspaceScanner(std::make_shared<WorkspaceScanner>())
{
    Q_ASSERT(!backends.isEmpty());
    m_upstream = UpstreamProxy::fromEnv(config.installEnv);
    if (!m_upstream.error().isEmpty())
        qCWarning(lcSandbox).noquote()
            << m_upstream.error() << "- the egress gateway goes out directly";
    else if (m_upstream.isSet())
        qCInfo(lcSandbox).noquote()
            << "the egress gateway goes out through the host's proxy" << m_upstream.describe();
    if (!config.secrets.isEmpty())
        loadAuthority();
    for (const Language &language : m_languages.all()) {
        if (language.preloadModules.isEmpty())
            continue;
        m_preload.setCandidates(language.name, language.preloadModules);
        m_preload.setFixed(language.name, config.preload);
    }
    for (SandboxBackend *backend : backends)
        m_sites.append(new SandboxSite(backend, int(m_sites.size()), this));
    int capacity = 0;
    for (SandboxSite *site : std::as_const(m_sites))
        capacity += site->capacity();
    // As many at once as asked for, else as the backends run well.
    m_queue = new ExecutionQueue(
        config.maxConcurrent > 0 ? config.maxConcurrent : capacity, config.maxQueued,
        [this](const ExecutionQueue::Job &job) { launch(job); }, this);
    m_libraries = makeLibraries();
    m_workspaceCache = makeWorkspaceCache();
    for (SandboxSite *site : std::as_const(m_sites))
        setUpSite(site);
    // One engine is not watched: a call finds out what is wrong with it and says so, as ever.
    // With several, a call must never wait for one that is gone.
    if (m_sites.size() > 1)
        for (SandboxSite *site : std::as_const(m_sites))
            site->watch();
}

void SandboxService::loadAuthority()
{
    QString error;
    const QString folder = m_config.secretsAuthorityFolder.isEmpty()
                               ? InterceptionAuthority::defaultFolder()
                               : m_config.secretsAuthorityFolder;
    const auto authority = InterceptionAuthority::loadOrCreate(folder, &error);
    if (!authority) {
        // Runs with secrets then fail with a clear error (EgressLease); the others go on.
        qCWarning(lcSandbox).noquote() << "secrets cannot be used:" << error;
        return;
    }
    m_authorityCertificate = authority->certificatePem();
    m_authorityKey = authority->keyPem();
    // The host's trust store checks the real servers where a secret is added: the one installs
    // use (--install-ca-file), else the system's.
    QFile trust(m_config.installCaBundle.isEmpty()
                    ? QStringLiteral("/etc/ssl/certs/ca-certificates.crt")
                    : m_config.installCaBundle);
    if (trust.open(QIODevice::ReadOnly))
        m_trust = trust.read(4 * 1024 * 1024);
    else
        qCWarning(lcSandbox).noquote()
            << "no trust store at" << trust.fileName()
            << "- the hosts secrets are bound to cannot be checked, so they cannot be reached";
    qCInfo(lcSandbox).noquote() << "secrets:" << m_config.secrets.size()
                                << "bound; their hosts' certificates are signed by the authority in"
                                << folder;
}

SiteLibraries *SandboxService::makeLibraries()
{
    // Through these three and no more: what an execution is and how it goes stays here.
    SiteLibraries::Runs runs{
        [this](const Language &language, const RunNetwork &network, const QString &volume) {
            return runSpecFor(language, network, volume);
        },
        [this](const Language &language, const ExecutionRequest &request, int timeoutSec) {
            return create(language, request, timeoutSec);
        },
        [this](Execution *execution, const SpecFor &spec, const QString &image, SandboxSite *site) {
            submit(execution, spec, image, site);
        }};
    return new SiteLibraries(m_config, m_placement, std::move(runs), this);
}

WorkspaceCache *SandboxService::makeWorkspaceCache()
{
    WorkspaceCache::Fills fills;
    fills.run = [this](SandboxSite *site, const Language &language, const QString &volume,
                       const QString &previous, const QString &script,
                       WorkspaceTransfer *transfer) -> Execution * {
        if (m_shuttingDown)
            return nullptr;
        Language filler = language;
        filler.preloadCommand.clear();
        filler.compileCommand.clear();
        ExecutionRequest request;
        request.language = language.name;
        request.code = script;
        Execution *execution = create(filler, request, m_config.installTimeoutSec);
        execution->setWorkspaces(transfer);
        // The owner's labels: gone with this server (Janitor), or with the next when it died.
        const QMap<QString, QString> owner = SandboxSpec::ownerLabels(m_config);
        QJsonObject labels;
        for (auto it = owner.cbegin(); it != owner.cend(); ++it)
            labels.insert(it.key(), it.value());
        labels.insert(QStringLiteral("code-sandbox.workspace"), QStringLiteral("1"));
        QPointer<Execution> guard(execution);
        QPointer<SandboxSite> where(site);
        site->backend()->createVolume(
            volume, labels, this,
            [this, guard, where, filler, volume, previous,
             image = language.image](const QString &error) {
                if (!guard)
                    return;
                if (!where || !error.isEmpty()) {
                    guard->fail(QStringLiteral("could not create the volume: %1")
                                    .arg(where ? error : QStringLiteral("the engine went away")));
                    return;
                }
                submit(
                    guard,
                    [filler, volume, previous, config = m_config](const SandboxBackend &backend) {
                        return backend.fillSpec(filler, filler.image, config, volume, previous);
                    },
                    image, where);
            });
        return execution;
    };
    fills.remove = [](SandboxSite *site, const QString &volume) {
        site->backend()->removeVolume(volume);
    };
    return new WorkspaceCache(std::move(fills), m_workspaceScanner, this);
}

void SandboxService::setUpSite(SandboxSite *site)
{
    site->backend()->setUpstreamProxy(m_upstream);
    if (!m_authorityKey.isEmpty())
        site->backend()->setInterception(m_authorityCertificate, m_authorityKey, m_trust);
    site->setLibraries(m_libraries->makeCache(site));
    auto *janitor = new Janitor(
        site->backend(), m_config.instanceId,
        [this] {
            QSet<QString> names;
            for (auto it = m_containers.cbegin(); it != m_containers.cend(); ++it)
                names.insert(it.key()->name());
            return names;
        },
        site);
    site->setJanitor(janitor);
    connect(janitor, &Janitor::orphansReaped, this, &SandboxService::orphansReaped);
    connect(janitor, &Janitor::idle, this, &SandboxService::checkShutdownDone);
    site->setPool(makePool(site));
    connect(site, &SandboxSite::stateChanged, this,
            [this](SandboxSite *s, SandboxSite::State) { siteStateChanged(s); });
    connect(site, &SandboxSite::unreachable, this, [this](SandboxSite *s) {
        failRunsOn(s);
        dropPool(s);
    });
    connect(site, &SandboxSite::described, this, [this, site] {
        if (site->pool())
            site->pool()->setMaxSize(poolMaxFor(site));
        updateCapacity();
        Q_EMIT sitesChanged();
    });
}

ContainerPool *SandboxService::makePool(SandboxSite *site)
{
    if (m_config.poolSize <= 0)
        return nullptr;
    auto *pool = new ContainerPool(
        m_config.poolSize,
        [this, site](const SandboxSpec &spec) { return makeContainer(site, spec); }, site);
    pool->setMaxSize(poolMaxFor(site));
    pool->setReadyHook([this, pool](SandboxContainer *container, const SandboxSpec &spec) {
        // A session's kernel reads calls of its own kind; a run's loader reads the line first.
        const bool loader = std::any_of(spec.env.cbegin(), spec.env.cend(),
                                        [](const auto &v) { return v.first == u"CS_PRELOAD"; });
        if (spec.session || !loader || !m_preload.preloads(spec.language))
            return;
        const QByteArray line = m_preload.line(
            spec.language, PreloadPlanner::budget(spec.limits.memoryBytes, pool->totalTarget()));
        if (!line.isEmpty())
            container->write(line);
    });
    const QString where =
        m_sites.size() > 1 ? QStringLiteral(" on ") + site->endpoint() : QString();
    connect(pool, &ContainerPool::warmed, this,
            [where](const QString &label, int count, qint64 ms) {
                qCInfo(lcSandbox).noquote() << "pool:" << count << label << "sandbox(es) warm"
                                            << "after" << ms << "ms" + where;
            });
    return pool;
}

int SandboxService::poolMaxFor(const SandboxSite *site) const
{
    if (m_config.poolMax > 0)
        return qMax(m_config.poolSize, m_config.poolMax);
    // A warm sandbox holds little (an idle interpreter, its shim), but a burst's worth of them
    // must fit beside the runs: one per 512 MiB of the engine's machine, at most 32.
    qint64 memory = site->health().memoryBytes;
    if (memory <= 0)
        memory = qint64(::sysconf(_SC_PHYS_PAGES)) * qint64(::sysconf(_SC_PAGESIZE));
    const int byMemory = int(qMin<qint64>(32, memory / (qint64(512) << 20)));
    return qMax(m_config.poolSize, byMemory);
}

void SandboxService::updateCapacity()
{
    if (m_config.maxConcurrent > 0)
        return;
    int capacity = 0;
    for (SandboxSite *site : std::as_const(m_sites))
        if (site->isUsable())
            capacity += site->capacity();
    m_queue->setMaxRunning(capacity);
}

void SandboxService::siteStateChanged(SandboxSite *site)
{
    updateCapacity();
    // Down: nothing more is placed there; its warm sandboxes go once it is known to be gone
    // (unreachable, dropPool), not while it is only slow to answer.
    if (site->state() == SandboxSite::State::Up && !m_shuttingDown) {
        // Back: what it still holds of this instance's (runs failed while it was away) goes,
        // and its pools fill again.
        site->janitor()->createOutcomeUnknown();
        if (!site->pool())
            site->setPool(makePool(site));
        site->warming().clear();
        for (const Language &language : m_languages.all())
            if (m_warmed.contains(language.name))
                warmOn(site, language);
    }
    Q_EMIT sitesChanged();
}

void SandboxService::dropPool(SandboxSite *site)
{
    // Its warm sandboxes are out of reach; a new pool is made when it answers again.
    if (ContainerPool *pool = site->pool()) {
        pool->clear();
        pool->deleteLater();
        site->setPool(nullptr);
    }
}

void SandboxService::failRunsOn(SandboxSite *site)
{
    // A run whose engine died usually fails by itself (its stream ends); one on an engine that
    // hangs or whose link is cut would wait for its timeout. Neither waits longer than this.
    const QString message =
        QStringLiteral("the container engine %1 stopped answering while this ran (%2); new calls "
                       "go to the other engines")
            .arg(site->endpoint(), site->error());
    const auto placed = m_placed;
    for (auto it = placed.cbegin(); it != placed.cend(); ++it)
        if (it.value() == site)
            it.key()->fail(message);
}

SandboxBackend *SandboxService::backend() const
{
    return m_sites.first()->backend();
}

ContainerPool *SandboxService::pool() const
{
    return m_sites.first()->pool();
}

SandboxSite *SandboxService::siteOf(SandboxContainer *container) const
{
    return m_containers.value(container);
}

SandboxService::~SandboxService() = default;

Execution *SandboxService::execute(const ExecutionRequest &asked)
{
    // A request nobody decided the network of (a run from the window, a test) gets the server's:
    // the record, the spec and the result read this one value from here on.
    ExecutionRequest request = asked;
    if (!request.network)
        request.network = RunNetwork::decide(m_config);
    Execution *execution = nullptr;
    const Language *language =
        request.resolved ? &*request.resolved : m_languages.find(request.language);
    QString unknownWorkspace;
    for (const QString &name : request.workspaces)
        if (!m_config.workspace(name))
            unknownWorkspace = name;
    // A run in a session goes through its session (SessionManager::execute), which brings the
    // session's workspaces: here it would get a fresh sandbox with copies of its own.
    if (!unknownWorkspace.isEmpty() || (!request.workspaces.isEmpty() && request.session)) {
        execution = new Execution(request, request.language, m_config.defaultTimeoutSec,
                                  m_config.outputCapBytes, this);
        execution->failEarly(
            unknownWorkspace.isEmpty()
                ? QStringLiteral("a session's workspaces are chosen when it is created, and its "
                                 "runs go through the session")
                : QStringLiteral("this server has no workspace '%1'").arg(unknownWorkspace),
            QString());
        connect(execution, &Execution::finished, execution, &QObject::deleteLater);
    } else if (!language) {
        execution = new Execution(request, request.language, m_config.defaultTimeoutSec,
                                  m_config.outputCapBytes, this);
        execution->failEarly(
            QStringLiteral("unsupported language '%1'; supported: %2")
                .arg(request.language, m_languages.names().join(QStringLiteral(", "))),
            QString());
        connect(execution, &Execution::finished, execution, &QObject::deleteLater);
    } else if (!request.libraries.isEmpty()) {
        execution = executeWithLibraries(*language, request);
    } else {
        execution = start(*language, request);
    }
    Q_EMIT executionCreated(execution);
    return execution;
}

Execution *SandboxService::start(const Language &language, const ExecutionRequest &request)
{
    Execution *execution = create(language, request, timeoutFor(request));
    // After warmUp(), a language's first call starts its pool; this call takes the container
    // furthest along.
    if (m_warmOnFirstUse)
        warm(language);
    const SpecFor spec = runSpecFor(language, *request.network);
    WorkspaceTransfer *workspaces = execution->workspaces();
    if (!workspaces) {
        submit(execution, spec, language.image);
        return execution;
    }
    // Workspaces do not fit the workdir (its size is the same for every sandbox, and small):
    // they are scanned first, then each read-only one is mounted from its volume on the engine
    // (WorkspaceCache) and the others copied in, so no warm sandbox serves such a run.
    QPointer<Execution> guard(execution);
    workspaces->scan([this, guard, spec, language](const QString &error) {
        if (!guard)
            return;
        if (!error.isEmpty()) {
            guard->failEarly(error, language.image);
            return;
        }
        placeWithWorkspaces(guard, language, spec);
    });
    return execution;
}

void SandboxService::placeWithWorkspaces(Execution *execution, const Language &language,
                                         const SpecFor &spec)
{
    // The volumes are on one engine: the run goes there, placed once the engines have said
    // what they have.
    if (m_placement.settlingSite()) {
        QPointer<Execution> guard(execution);
        m_placement.whenSettled(execution, [this, guard, language, spec] {
            if (guard)
                placeWithWorkspaces(guard, language, spec);
        });
        return;
    }
    SandboxSite *site = m_placement.place(spec);
    if (!site || !site->backend()->keepsVolumes() || m_shuttingDown) {
        submitWithWorkspaces(execution, site, spec, language.image);
        return;
    }
    cacheWorkspaces(execution, site, language, spec, 0);
}

void SandboxService::cacheWorkspaces(Execution *execution, SandboxSite *site,
                                     const Language &language, const SpecFor &spec, int index)
{
    WorkspaceTransfer *transfer = execution->workspaces();
    const QList<WorkspaceRun> &runs = transfer->runs();
    if (index >= runs.size()) {
        submitWithWorkspaces(execution, site, spec, language.image);
        return;
    }
    const WorkspaceRun &run = runs.at(index);
    if (run.scan->files > 0)
        execution->reportProgress(QStringLiteral("workspace %1 onto the engine (once per content)")
                                      .arg(run.workspace.name));
    QPointer<Execution> guard(execution);
    QPointer<SandboxSite> where(site);
    m_workspaceCache->ensure(
        site, language, run.workspace, run.scan,
        [this, guard, where, site, language, spec, index,
         name = run.workspace.name](const QString &volume, qint64 sentBytes, const QString &error) {
            if (!guard || !where) {
                if (!volume.isEmpty())
                    m_workspaceCache->release(site, volume);
                return;
            }
            if (volume.isEmpty()) {
                // The run still gets the folder, through the archive endpoint.
                qCWarning(lcSandbox).noquote()
                    << "workspace" << name << "could not be kept on the engine" << site->endpoint()
                    << "(" << error << "); copied into the sandbox instead";
            } else {
                guard->workspaces()->setCached(index, volume, sentBytes);
                connect(guard, &Execution::finished, this, [this, where, volume] {
                    if (where)
                        m_workspaceCache->release(where, volume);
                });
            }
            cacheWorkspaces(guard, site, language, spec, index + 1);
        });
}

void SandboxService::submitWithWorkspaces(Execution *execution, SandboxSite *site,
                                          const SpecFor &spec, const QString &image)
{
    // The copied ones at kWorkspaceDir, memory-backed and capped like the workdir; each cached
    // read-only one in its volume below it, read-only; each cached copy-on-write one's volume
    // read-only at kWorkspaceBaseDir/NAME, which the supervisor copies into a memory-backed
    // space of the sandbox's user's at kWorkspaceDir/NAME before the program starts.
    WorkspaceTransfer *transfer = execution->workspaces();
    QList<SandboxSpec::Mount> mounts;
    if (const qint64 bytes = transfer->scratchBytes(); bytes > 0)
        mounts.append({SandboxSpec::Mount::Kind::Scratch, QString(),
                       QString::fromLatin1(SandboxLayout::kWorkspaceDir), false, bytes});
    QStringList copies;
    for (qsizetype i = 0; i < transfer->runs().size(); ++i) {
        const WorkspaceRun &run = transfer->runs().at(i);
        if (run.volume.isEmpty())
            continue;
        const QString name = run.workspace.name;
        const QString at = QString::fromLatin1(SandboxLayout::kWorkspaceDir) + u'/' + name;
        if (run.workspace.mode == Workspace::Mode::ReadOnly) {
            mounts.append({SandboxSpec::Mount::Kind::Volume, run.volume, at, true});
            continue;
        }
        mounts.append({SandboxSpec::Mount::Kind::Volume, run.volume,
                       QString::fromLatin1(SandboxLayout::kWorkspaceBaseDir) + u'/' + name, true});
        SandboxSpec::Mount copy{SandboxSpec::Mount::Kind::Scratch, QString(), at, false,
                                transfer->copyBytes(int(i))};
        copy.sandboxUsers = true;
        mounts.append(copy);
        copies.append(name);
    }
    // A copy-on-write workspace is fetched after the program's end line: the sandbox waits for
    // that (cs-run's linger) on every backend, a pod too, which otherwise ends with its result.
    const bool linger = transfer->hasCopyOnWrite();
    submit(
        execution,
        [spec, mounts, linger, copies](const SandboxBackend &backend) {
            SandboxSpec::Result made = spec(backend);
            if (!made.ok())
                return made;
            made.spec->mounts += mounts;
            if (linger && !made.spec->envEntries().contains(QStringLiteral("CS_LINGER=1")))
                made.spec->env.append({QStringLiteral("CS_LINGER"), QStringLiteral("1")});
            if (!copies.isEmpty())
                made.spec->env.append({QStringLiteral("CS_WORKSPACE_COPY"), copies.join(u' ')});
            return made;
        },
        image, site);
}

SandboxService::SpecFor SandboxService::runSpecFor(const Language &language,
                                                   const RunNetwork &network,
                                                   const QString &librariesVolume,
                                                   bool session) const
{
    return [language, config = m_config, network, librariesVolume,
            session](const SandboxBackend &backend) {
        return backend.runSpec(language, language.image, config, network, librariesVolume, session);
    };
}

int SandboxService::timeoutFor(const ExecutionRequest &request) const
{
    return m_config.callTimeout().forCall(request.timeoutSec);
}

Execution *SandboxService::create(const Language &language, const ExecutionRequest &request,
                                  int timeoutSec)
{
    auto *execution =
        new Execution(request, language.name, timeoutSec, m_config.outputCapBytes, this);
    OutputManifest::Limits files; // (how many a result names: the manifest's own default)
    files.perFile = m_config.fileCapBytes;
    files.total = m_config.filesTotalCapBytes;
    files.maxFiles = m_config.maxFilesPerRun;
    execution->setFileLimits(files);
    // Names known to the server (the tools room and execute() checked them). A session's run
    // gets the session's workspaces instead (executeIn).
    if (!request.workspaces.isEmpty() && !request.session) {
        QList<Workspace> workspaces;
        for (const QString &name : request.workspaces)
            if (const Workspace *w = m_config.workspace(name))
                workspaces.append(*w);
        execution->setWorkspaces(
            new WorkspaceTransfer(workspaces, m_workspaceScanner, m_config.workspaceMaxBytes));
    }
    m_executions.insert(execution);
    connect(execution, &Execution::finished, this, [this, execution, name = language.name] {
        // What its loader reported it imported (a run that never reported says nothing, and a
        // session's cells are not what warm sandboxes serve).
        const ExecutionResult &r = execution->result();
        if (!execution->isSession() && r.error.isEmpty() && r.exitCode >= 0 && !r.timedOut)
            m_preload.learn(name, r);
        m_executions.remove(execution);
        execution->deleteLater();
        m_queue->finished(execution);
    });
    return execution;
}

void SandboxService::submit(Execution *execution, const SpecFor &spec, const QString &image,
                            SandboxSite *site)
{
    if (execution->isFinished())
        return;
    if (m_shuttingDown) {
        execution->failEarly(QStringLiteral("the server is shutting down"), image);
        return;
    }
    // Placed once the engines have said which runtimes they have (the first moments after
    // start), so that a run is not placed on a guess.
    if (!site && m_placement.settlingSite()) {
        QPointer<Execution> guard(execution);
        m_placement.whenSettled(execution, [this, guard, spec, image] {
            if (guard)
                submit(guard, spec, image);
        });
        return;
    }
    // Never queued behind engines that are all gone, nor when the engine cannot run it (no
    // runtime the run requires): said at once, after the caller has connected to the run.
    SandboxSite *target = site ? site : m_placement.place(spec);
    if (!target) {
        execution->failEarly(m_placement.noSiteMessage(spec), image);
        return;
    }
    if (const SandboxSpec::Result made = spec(*target->backend()); !made.ok()) {
        execution->failEarly(made.error, image);
        return;
    }
    Q_EMIT executionStarted(execution);
    m_queue->submit({execution, spec, image, site});
}

Execution *SandboxService::executeWithLibraries(const Language &language,
                                                const ExecutionRequest &request)
{
    Execution *execution = create(language, request, timeoutFor(request));
    m_libraries->start(execution, language, request.libraries, *request.network);
    return execution;
}

SandboxSite *SandboxService::settlingSite() const
{
    return m_placement.settlingSite();
}

void SandboxService::whenSettled(QObject *context, const std::function<void()> &f)
{
    m_placement.whenSettled(context, f);
}

QString SandboxService::librariesRefusal(const Language &language,
                                         const QStringList &libraries) const
{
    return m_libraries->refusal(language, libraries);
}

void SandboxService::ensureLibraries(
    const Language &language, const QStringList &libraries,
    const std::function<void(const QString &)> &progress,
    const std::function<void(const QString &, const QString &)> &done, const RunNetwork &network)
{
    m_libraries->ensure(language, libraries, progress, done, network);
}

Execution *SandboxService::runInstall(SandboxSite *site, const Language &language,
                                      const QString &volume, const QString &script)
{
    return m_libraries->install(site, language, volume, script);
}

SandboxContainer *SandboxService::createSessionContainer(const Language &language,
                                                         const RunNetwork &network,
                                                         const QString &librariesVolume,
                                                         QString *error)
{
    const SpecFor spec = runSpecFor(language, network, librariesVolume, true);
    SandboxSite *site = librariesVolume.isEmpty()
                            ? m_placement.place(spec)
                            : m_placement.place(spec, m_libraries->sitesOf(librariesVolume));
    if (!site) {
        if (error)
            *error = m_placement.noSiteMessage(spec);
        return nullptr;
    }
    const SandboxSpec::Result made = spec(*site->backend());
    if (!made.ok()) {
        if (error)
            *error = made.error;
        return nullptr;
    }
    site->countPlaced();
    SandboxContainer *container = makeContainer(site, *made.spec);
    container->prepare();
    return container;
}

Execution *SandboxService::executeIn(SandboxContainer *container, const Language &language,
                                     const ExecutionRequest &request, WorkspaceTransfer *workspaces,
                                     bool start)
{
    Execution *execution = create(language, request, timeoutFor(request));
    execution->setSession(language.interruptible);
    if (workspaces)
        execution->setWorkspaces(workspaces);
    if (SandboxSite *site = siteOf(container)) {
        nameRuntime(container, site);
        placeOn(execution, site);
    }
    Q_EMIT executionCreated(execution);
    // Not through the queue: the session's container is already running, and its calls come one
    // at a time. (Not yet when the caller starts it later: after a snapshot.)
    if (start)
        execution->run(container);
    return execution;
}

void SandboxService::launch(const ExecutionQueue::Job &next)
{
    SandboxSite *site = next.site ? next.site : m_placement.place(next.spec);
    if (!site || !site->isUsable()) {
        next.execution->fail(site ? QStringLiteral("the container engine %1 does not answer: %2")
                                        .arg(site->endpoint(), site->error())
                                  : m_placement.noSiteMessage(next.spec));
        return;
    }
    const SandboxSpec::Result made = next.spec(*site->backend());
    if (!made.ok()) {
        next.execution->fail(made.error);
        return;
    }
    ContainerPool *pool = site->pool();
    if (pool)
        pool->setBusy(true);
    SandboxContainer *container = pool ? pool->take(*made.spec) : nullptr;
    if (!container)
        container = makeContainer(site, *made.spec);
    nameRuntime(container, site);
    site->countPlaced();
    placeOn(next.execution, site);
    next.execution->run(container);
}

void SandboxService::placeOn(Execution *execution, SandboxSite *site)
{
    m_placed.insert(execution, site);
    site->addRunning(1);
    site->busy();
    QPointer<SandboxSite> at(site);
    execution->setRemover([this, at](SandboxContainer *container, bool ended) {
        if (ended && at && !m_shuttingDown) {
            // It waits, idle, for a quiet moment; its run is over, and so is its way out.
            container->endNetwork();
            at->deferRemoval(container);
        } else
            container->remove();
    });
    if (m_sites.size() > 1)
        execution->setEngine(site->endpoint());
    QPointer<SandboxSite> where(site);
    connect(execution, &Execution::finished, this, [this, execution, where] {
        m_placed.remove(execution);
        if (!where)
            return;
        where->addRunning(-1);
        if (where->running() == 0) {
            // Refills wait while programs run there (see ContainerPool::setBusy); so do the
            // removals of used containers, while calls wait too.
            if (where->pool())
                where->pool()->setBusy(false);
            if (m_queue->waiting() == 0)
                where->quiet();
        }
    });
}

void SandboxService::nameRuntime(SandboxContainer *container, SandboxSite *site)
{
    // A spec that names no runtime gets the engine's default, which the engine may have named
    // only after the pool made the container (its first answer comes after the first creates).
    if (container->runtime().isEmpty())
        container->setRuntime(site->backend()->defaultRuntime());
}

SandboxContainer *SandboxService::makeContainer(SandboxSite *site, const SandboxSpec &spec)
{
    // Named after the instance, so that the engine's own listing shows whose it is, and so that
    // one created after its request was given up on is recognised as a stray.
    const QString containerName =
        QStringLiteral("code-sandbox-%1-%2")
            .arg(m_config.instanceId.isEmpty() ? QStringLiteral("anonymous") : m_config.instanceId)
            .arg(++m_containerSeq);
    SandboxContainer *container = site->backend()->createSandbox(spec, containerName, this);
    container->setRuntime(spec.runtime);
    if (m_missingImageWording) {
        MissingImage missing;
        missing.image = spec.image;
        missing.language = spec.language;
        if (const Language *language = m_languages.find(spec.language))
            missing.buildName = language->buildName;
        missing.endpoint = site->endpoint();
        missing.severalEngines = m_sites.size() > 1;
        // The builder's status is read when the create fails, not now: it may change meanwhile.
        container->setMissingImageHint([missing, site, wording = m_missingImageWording]() mutable {
            missing.build = site->backend()->imageBuild(missing.image);
            return wording(missing);
        });
    }
    track(container, site);
    return container;
}

void SandboxService::reapOrphans()
{
    for (SandboxSite *site : std::as_const(m_sites))
        site->janitor()->reapOrphans();
}

void SandboxService::warmUp()
{
    if (m_config.poolSize <= 0 || m_shuttingDown)
        return;
    m_warmOnFirstUse = true;
    // The most used languages at once; the others once they are first asked for (eleven pools
    // at every start would cost the engine seconds of CPU for languages most sessions never use).
    for (const Language &language : m_languages.all())
        if (m_config.warmLanguages.contains(language.name))
            warm(language);
}

void SandboxService::warm(const Language &language)
{
    if (m_config.poolSize <= 0 || m_shuttingDown || m_warmed.contains(language.name))
        return;
    m_warmed.insert(language.name);
    for (SandboxSite *site : std::as_const(m_sites))
        if (site->isUsable())
            warmOn(site, language);
}

void SandboxService::warmOn(SandboxSite *site, const Language &language)
{
    if (!site->pool() || site->warming().contains(language.name))
        return;
    site->warming().insert(language.name);
    const SandboxSpec::Result made =
        runSpecFor(language, RunNetwork::decide(m_config))(*site->backend());
    if (made.ok())
        site->pool()->warm(*made.spec, language.name);
}

void SandboxService::track(SandboxContainer *container, SandboxSite *site)
{
    m_containers.insert(container, site);
    connect(container, &SandboxContainer::removed, this, [this, container] {
        m_containers.remove(container);
        container->deleteLater();
        checkShutdownDone();
    });
    // A container that failed to come up may still exist in the engine (created, not started).
    // Queued, so whoever waits on the container hears the engine's own error first, not the end
    // of the stream that removal brings.
    connect(container, &SandboxContainer::failed, container, &SandboxContainer::remove,
            Qt::QueuedConnection);
    QPointer<SandboxSite> where(site);
    connect(container, &SandboxContainer::failed, this, [container, where](const QString &why) {
        if (!where)
            return;
        if (container->createOutcomeUnknown())
            where->janitor()->createOutcomeUnknown();
        // The engine going away: no more runs there until it answers again.
        if (container->backendLost())
            where->reportLost(why);
    });
}

void SandboxService::languageVersion(const QString &name, const std::function<void(QString)> &done)
{
    const Language *language = m_languages.find(name);
    if (!language) {
        done(QString());
        return;
    }
    const auto cached = m_versions.constFind(language->name);
    if (cached != m_versions.cend()) {
        done(*cached);
        return;
    }
    // The version command runs as the "program" in an ordinary sandbox with an empty source.
    Language probe = *language;
    probe.command = language->versionCommand;
    probe.preloadCommand.clear();
    probe.compileCommand.clear();
    ExecutionRequest request;
    request.language = language->name;
    request.timeoutSec = 20;
    Execution *e = create(probe, request, request.timeoutSec);
    submit(e, runSpecFor(probe, RunNetwork::decide(m_config)), probe.image);
    const QString key = language->name;
    connect(e, &Execution::finished, this, [this, key, done](const ExecutionResult &r) {
        QString version;
        if (r.error.isEmpty() && r.exitCode == 0) {
            version = QString::fromUtf8(r.stdoutData + r.stderrData).trimmed();
            m_versions.insert(key, version);
        }
        done(version);
    });
}

void SandboxService::shutdown(int graceMs)
{
    m_shuttingDown = true;
    m_queue->stop();
    for (SandboxSite *site : std::as_const(m_sites)) {
        site->stopWatching();
        site->flushRemovals();
        if (site->pool())
            site->pool()->clear();
    }
    qCInfo(lcSandbox) << "shutting down:" << m_executions.size() << "running,"
                      << m_containers.size() << "containers to remove";
    const auto executions = m_executions;
    for (Execution *e : executions)
        e->cancel();
    const auto containers = m_containers.keys();
    for (SandboxContainer *c : containers)
        c->remove();
    // A create whose answer never came may have made a container nobody knows the id of.
    for (SandboxSite *site : std::as_const(m_sites)) {
        site->janitor()->stop();
        site->janitor()->finalSweep();
    }
    QTimer::singleShot(graceMs, this, [this] {
        if (m_shutdownSignalled)
            return;
        qCWarning(lcSandbox) << m_containers.size()
                             << "containers were not confirmed removed before the deadline";
        m_shutdownSignalled = true;
        Q_EMIT shutdownFinished();
    });
    checkShutdownDone();
}

int SandboxService::janitorsPending() const
{
    int pending = 0;
    for (SandboxSite *site : m_sites)
        pending += site->janitor()->pending();
    return pending;
}

void SandboxService::checkShutdownDone()
{
    if (!m_shuttingDown || m_shutdownSignalled || !m_containers.isEmpty() || janitorsPending() != 0)
        return;
    // The volumes of cached workspaces (WorkspaceCache) were in use until the sandboxes went,
    // so the first sweep left them: swept again now that nothing mounts them.
    if (!m_volumesSwept) {
        m_volumesSwept = true;
        for (SandboxSite *site : std::as_const(m_sites))
            site->janitor()->finalSweep();
        if (janitorsPending() != 0)
            return;
    }
    // The sandboxes are gone: now what the backends made for them (gateways, networks).
    if (m_backendsReleasing < 0) {
        m_backendsReleasing = int(m_sites.size());
        for (SandboxSite *site : std::as_const(m_sites))
            site->backend()->shutdown(this, [this] {
                --m_backendsReleasing;
                checkShutdownDone();
            });
    }
    // (A backend with nothing to remove answers at once, from inside the loop above.)
    if (m_backendsReleasing > 0 || m_shutdownSignalled)
        return;
    m_shutdownSignalled = true;
    QMetaObject::invokeMethod(this, &SandboxService::shutdownFinished, Qt::QueuedConnection);
}
