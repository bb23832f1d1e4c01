#include "sandboxservice.h"

#include "containerspec.h"
#include "engineclient.h"
#include "execution.h"
#include "sandboxcontainer.h"
#include "sandboxlog.h"

#include <QTimer>

SandboxService::SandboxService(EngineClient *engine, const LanguageRegistry &languages,
                               const SandboxConfig &config, QObject *parent)
    : QObject(parent), m_engine(engine), m_languages(languages), m_config(config)
{}

SandboxService::~SandboxService() = default;

Execution *SandboxService::execute(const ExecutionRequest &request)
{
    const Language *language = m_languages.find(request.language);
    if (!language) {
        auto *e = new Execution(request, request.language, m_config.defaultTimeoutSec,
                                m_config.outputCapBytes, this);
        e->failEarly(QStringLiteral("unsupported language '%1'; supported: %2")
                         .arg(request.language, m_languages.names().join(QStringLiteral(", "))),
                     QString());
        connect(e, &Execution::finished, e, &QObject::deleteLater);
        return e;
    }
    return start(*language, request);
}

Execution *SandboxService::start(const Language &language, const ExecutionRequest &request)
{
    int timeout = request.timeoutSec > 0 ? request.timeoutSec : m_config.defaultTimeoutSec;
    timeout = qMin(timeout, m_config.maxTimeoutSec);
    auto *execution = new Execution(request, language.name, timeout, m_config.outputCapBytes, this);
    m_executions.insert(execution);
    connect(execution, &Execution::finished, this, [this, execution] {
        m_executions.remove(execution);
        execution->deleteLater();
    });
    if (m_shuttingDown) {
        execution->failEarly(QStringLiteral("the server is shutting down"), language.image);
        return execution;
    }
    QJsonObject spec = ContainerSpec::build(language, language.image, m_config);
    auto *container = new SandboxContainer(m_engine, spec, language.image, this);
    track(container);
    if (!language.buildName.isEmpty())
        container->setMissingImageHint(
            QStringLiteral("Build it with: containers/build-images.sh %1 (from the Code Sandbox "
                           "source tree), or name another image with --%2-image.")
                .arg(language.buildName,
                     language.buildName == u"node" ? QStringLiteral("js") : language.buildName));
    Q_EMIT executionStarted(execution);
    execution->run(container);
    return execution;
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
    connect(container, &SandboxContainer::failed, container, &SandboxContainer::remove);
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
    ExecutionRequest request{language->name, QString(), 20};
    Execution *e = start(probe, request);
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
    qCInfo(lcSandbox) << "shutting down:" << m_executions.size() << "running,"
                      << m_containers.size() << "containers to remove";
    const auto executions = m_executions;
    for (Execution *e : executions)
        e->cancel();
    const auto containers = m_containers;
    for (SandboxContainer *c : containers)
        c->remove();
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
    if (m_shuttingDown && !m_shutdownSignalled && m_containers.isEmpty()) {
        m_shutdownSignalled = true;
        QMetaObject::invokeMethod(this, &SandboxService::shutdownFinished, Qt::QueuedConnection);
    }
}
