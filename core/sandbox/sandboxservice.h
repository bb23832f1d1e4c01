#pragma once

#include "executionqueue.h"
#include "languageregistry.h"
#include "sandboxconfig.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QQueue>
#include <QSet>
#include <functional>

class ContainerPool;
class Janitor;
class LibraryCache;
class SandboxBackend;
class Execution;
class SandboxContainer;
struct ExecutionRequest;

// Runs programs in fresh hardened containers and guarantees their removal. Everything happens on
// the event loop; executions report through their own signals.
class SandboxService : public QObject
{
    Q_OBJECT
public:
    SandboxService(SandboxBackend *backend, const LanguageRegistry &languages,
                   const SandboxConfig &config, QObject *parent = nullptr);
    ~SandboxService() override;

    const LanguageRegistry &languages() const { return m_languages; }
    const SandboxConfig &config() const { return m_config; }
    SandboxBackend *backend() const { return m_backend; }

    // The returned object belongs to the service and is deleted after finished() was delivered.
    Execution *execute(const ExecutionRequest &request);
    // A session's container (see SessionManager): prepared now, serving one program after another
    // until removed; tracked like any other, so shutdown removes it.
    SandboxContainer *createSessionContainer(const Language &language,
                                             const QString &librariesVolume = {});
    // Runs the request's program in a session's container that is ready and idle; the container
    // stays unless the run ended it (Execution::endedSession()).
    Execution *executeIn(SandboxContainer *container, const Language &language,
                         const ExecutionRequest &request);
    // Why `libraries` cannot be installed for `language` here ("" when they can).
    QString librariesRefusal(const Language &language, const QStringList &libraries) const;
    // Installs (or finds cached) `libraries`; `done` gets the volume to mount, or an error.
    void ensureLibraries(const Language &language, const QStringList &libraries,
                         const std::function<void(const QString &)> &progress,
                         const std::function<void(const QString &, const QString &)> &done);
    // Runs `script` with sh in an install container that writes into `volume` (see LibraryCache).
    Execution *runInstall(const Language &language, const QString &volume, const QString &script);
    void removeVolume(const QString &volume);
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
    ContainerPool *pool() const { return m_pool; }
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

private:
    Execution *start(const Language &language, const ExecutionRequest &request);
    // A new execution, tracked until it finishes; submit() then runs or queues it.
    Execution *create(const Language &language, const ExecutionRequest &request, int timeoutSec);
    void submit(Execution *execution, const QJsonObject &spec, const QString &image);
    // The request's timeout, or the default, capped at the configured maximum.
    int timeoutFor(const ExecutionRequest &request) const;
    Execution *executeWithLibraries(const Language &language, const ExecutionRequest &request);
    void launch(const ExecutionQueue::Job &next);
    void warm(const Language &language);
    SandboxContainer *makeContainer(const QJsonObject &spec, const QString &image);
    void track(SandboxContainer *container);
    void checkShutdownDone();

    SandboxBackend *m_backend;
    LanguageRegistry m_languages;
    SandboxConfig m_config;
    QSet<SandboxContainer *> m_containers;
    QSet<Execution *> m_executions;
    ExecutionQueue *m_queue = nullptr;
    ContainerPool *m_pool = nullptr;
    LibraryCache *m_libraries = nullptr;
    Janitor *m_janitor = nullptr;
    quint64 m_containerSeq = 0;
    QHash<QString, QString> m_versions;
    QSet<QString> m_warming; // languages whose pool was started
    bool m_warmOnFirstUse = false;
    bool m_shuttingDown = false;
    bool m_shutdownSignalled = false;
    quint64 m_counter = 0;
};
