#include "sandboxservice.h"

#include "containerpool.h"
#include "execution.h"
#include "executionqueue.h"
#include "janitor.h"
#include "librarycache.h"
#include "sandboxbackend.h"
#include "sandboxcontainer.h"
#include "sandboxlog.h"

#include <QPointer>
#include <QSet>
#include <QTimer>

namespace {
QString missingImageHint(const Language &language)
{
    if (language.buildName.isEmpty())
        return {};
    return QStringLiteral("Build it with: containers/build-images.sh %1 (from the Code Sandbox "
                          "source tree), or name another image with --%2-image.")
        .arg(language.buildName,
             language.buildName == u"node" ? QStringLiteral("js") : language.buildName);
}
} // namespace

SandboxService::SandboxService(SandboxBackend *backend, const LanguageRegistry &languages,
                               const SandboxConfig &config, QObject *parent)
    : QObject(parent), m_backend(backend), m_languages(languages), m_config(config),
      m_libraries(new LibraryCache(
          {[this](const Language &language, const QString &volume, const QString &script) {
               return runInstall(language, volume, script);
           },
           [this](const QString &volume) { removeVolume(volume); }},
          this)),
      m_janitor(new Janitor(
          backend, config.instanceId,
          [this] {
              QSet<QString> names;
              for (SandboxContainer *c : std::as_const(m_containers))
                  names.insert(c->name());
              return names;
          },
          this))
{
    connect(m_janitor, &Janitor::orphansReaped, this, &SandboxService::orphansReaped);
    connect(m_janitor, &Janitor::idle, this, &SandboxService::checkShutdownDone);
    // As many at once as asked for, else as the backend runs well.
    m_queue = new ExecutionQueue(
        config.maxConcurrent > 0 ? config.maxConcurrent : backend->capacity(), config.maxQueued,
        [this](const ExecutionQueue::Job &job) { launch(job); }, this);
    if (config.poolSize > 0) {
        m_pool = new ContainerPool(
            config.poolSize,
            [this](const QJsonObject &spec, const QString &image) {
                return makeContainer(spec, image);
            },
            this);
        connect(m_pool, &ContainerPool::warmed, this,
                [](const QString &label, int count, qint64 ms) {
                    qCInfo(lcSandbox).noquote()
                        << "pool:" << count << label << "sandbox(es) warm after" << ms << "ms";
                });
        // Refills wait while programs run (see ContainerPool::setBusy).
        connect(m_queue, &ExecutionQueue::idle, m_pool, [this] { m_pool->setBusy(false); });
    }
}

SandboxService::~SandboxService() = default;

Execution *SandboxService::execute(const ExecutionRequest &request)
{
    Execution *execution = nullptr;
    const Language *language = m_languages.find(request.language);
    if (!language) {
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
    submit(execution, m_backend->runSpec(language, language.image, m_config, {}, false),
           language.image);
    return execution;
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
    m_executions.insert(execution);
    connect(execution, &Execution::finished, this, [this, execution] {
        m_executions.remove(execution);
        execution->deleteLater();
        m_queue->finished(execution);
    });
    return execution;
}

void SandboxService::submit(Execution *execution, const QJsonObject &spec, const QString &image)
{
    if (execution->isFinished())
        return;
    if (m_shuttingDown) {
        execution->failEarly(QStringLiteral("the server is shutting down"), image);
        return;
    }
    Q_EMIT executionStarted(execution);
    m_queue->submit({execution, spec, image});
}

Execution *SandboxService::executeWithLibraries(const Language &language,
                                                const ExecutionRequest &request)
{
    Execution *execution = create(language, request, timeoutFor(request));
    const QString refusal = librariesRefusal(language, request.libraries);
    if (!refusal.isEmpty()) {
        execution->failEarly(refusal, language.image);
        return execution;
    }
    QPointer<Execution> guard(execution);
    m_libraries->ensure(
        language, request.libraries,
        [guard](const QString &message) {
            if (guard)
                guard->reportProgress(message);
        },
        [this, guard, language](const QString &volume, const QString &error) {
            if (!guard)
                return;
            if (!error.isEmpty()) {
                guard->fail(error);
                return;
            }
            submit(guard, m_backend->runSpec(language, language.image, m_config, volume, false),
                   language.image);
        });
    return execution;
}

QString SandboxService::librariesRefusal(const Language &language,
                                         const QStringList &libraries) const
{
    const QString preinstalled = language.preinstalled.isEmpty()
                                     ? QStringLiteral("the standard library")
                                     : language.preinstalled.join(QStringLiteral(", "));
    if (!m_config.allowInstall)
        return QStringLiteral(
                   "installing libraries needs network access, and this server was started "
                   "without --allow-network-for-install. Use the preinstalled libraries (%1), "
                   "or ask the operator to restart the server with that flag.")
            .arg(preinstalled);
    if (language.installCommand.isEmpty())
        return QStringLiteral("%1 has no package manager in this sandbox; use the "
                              "preinstalled libraries (%2)")
            .arg(language.name, preinstalled);
    return LibraryCache::validate(libraries);
}

void SandboxService::ensureLibraries(
    const Language &language, const QStringList &libraries,
    const std::function<void(const QString &)> &progress,
    const std::function<void(const QString &, const QString &)> &done)
{
    m_libraries->ensure(language, libraries, progress, done);
}

SandboxContainer *SandboxService::createSessionContainer(const Language &language,
                                                         const QString &librariesVolume)
{
    SandboxContainer *container =
        makeContainer(m_backend->runSpec(language, language.image, m_config, librariesVolume, true),
                      language.image);
    container->prepare();
    return container;
}

Execution *SandboxService::executeIn(SandboxContainer *container, const Language &language,
                                     const ExecutionRequest &request)
{
    Execution *execution = create(language, request, timeoutFor(request));
    execution->setSession(language.interruptible);
    Q_EMIT executionCreated(execution);
    // Not through the queue: the session's container is already running, and its calls come one
    // at a time.
    execution->run(container);
    return execution;
}

Execution *SandboxService::runInstall(const Language &language, const QString &volume,
                                      const QString &script)
{
    // Package managers download and unpack into /tmp: more room than a run gets.
    SandboxConfig config = m_config;
    config.tmpfsBytes = qMax(config.tmpfsBytes, qint64(1024) * 1024 * 1024);
    Language installer = language;
    installer.preloadCommand.clear();
    installer.compileCommand.clear();
    ExecutionRequest request;
    request.language = language.name;
    request.code = script;
    Execution *execution = create(installer, request, m_config.installTimeoutSec);
    const QJsonObject labels{{QStringLiteral("code-sandbox"), QStringLiteral("1")},
                             {QStringLiteral("code-sandbox.libraries"), language.name}};
    // Created with labels first, so the cache can be listed and pruned.
    QPointer<Execution> guard(execution);
    m_backend->createVolume(
        volume, labels, this, [this, guard, language, volume, config](const QString &error) {
            if (!guard)
                return;
            if (!error.isEmpty()) {
                guard->fail(QStringLiteral("could not create the library volume: %1").arg(error));
                return;
            }
            submit(guard, m_backend->installSpec(language, language.image, config, volume),
                   language.image);
        });
    return execution;
}

void SandboxService::removeVolume(const QString &volume)
{
    m_backend->removeVolume(volume);
}

void SandboxService::launch(const ExecutionQueue::Job &next)
{
    if (m_pool)
        m_pool->setBusy(true);
    SandboxContainer *container = m_pool ? m_pool->take(next.spec) : nullptr;
    if (!container)
        container = makeContainer(next.spec, next.image);
    next.execution->run(container);
}

SandboxContainer *SandboxService::makeContainer(const QJsonObject &spec, const QString &image)
{
    // Named after the instance, so that the engine's own listing shows whose it is, and so that
    // one created after its request was given up on is recognised as a stray.
    const QString containerName =
        QStringLiteral("code-sandbox-%1-%2")
            .arg(m_config.instanceId.isEmpty() ? QStringLiteral("anonymous") : m_config.instanceId)
            .arg(++m_containerSeq);
    SandboxContainer *container = m_backend->createSandbox(spec, image, containerName, this);
    const QString name =
        spec.value(u"Labels").toObject().value(u"code-sandbox.language").toString();
    if (const Language *language = m_languages.find(name))
        container->setMissingImageHint(missingImageHint(*language));
    track(container);
    return container;
}

void SandboxService::reapOrphans()
{
    m_janitor->reapOrphans();
}

void SandboxService::warmUp()
{
    if (!m_pool || m_shuttingDown)
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
    if (!m_pool || m_shuttingDown || m_warming.contains(language.name))
        return;
    m_warming.insert(language.name);
    m_pool->warm(m_backend->runSpec(language, language.image, m_config, {}, false), language.image,
                 language.name);
}

void SandboxService::track(SandboxContainer *container)
{
    m_containers.insert(container);
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
    connect(container, &SandboxContainer::failed, this, [this, container] {
        if (container->createOutcomeUnknown())
            m_janitor->createOutcomeUnknown();
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
    submit(e, m_backend->runSpec(probe, probe.image, m_config, {}, false), probe.image);
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
    if (m_pool)
        m_pool->clear();
    qCInfo(lcSandbox) << "shutting down:" << m_executions.size() << "running,"
                      << m_containers.size() << "containers to remove";
    const auto executions = m_executions;
    for (Execution *e : executions)
        e->cancel();
    const auto containers = m_containers;
    for (SandboxContainer *c : containers)
        c->remove();
    // A create whose answer never came may have made a container nobody knows the id of.
    m_janitor->stop();
    m_janitor->finalSweep();
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

void SandboxService::checkShutdownDone()
{
    if (m_shuttingDown && !m_shutdownSignalled && m_containers.isEmpty() &&
        m_janitor->pending() == 0) {
        m_shutdownSignalled = true;
        QMetaObject::invokeMethod(this, &SandboxService::shutdownFinished, Qt::QueuedConnection);
    }
}
