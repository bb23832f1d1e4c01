#include "services.h"

#include "applog.h"
#include "appsettings.h"
#include "commandline.h"
#include "credentialstore.h"
#include "dockerbackend.h"
#include "engineclient.h"
#include "enginelocator.h"
#include "historystore.h"
#include "imagewording.h"
#include "journal.h"
#include "kubeclient.h"
#include "kubeconfig.h"
#include "kubernetesbackend.h"
#include "kubetarget.h"
#include "mcpserver.h"
#include "monitorapprover.h"
#include "monitorpublisher.h"
#include "monitorsocket.h"
#include "oauthserver.h"
#include "runcontrol.h"
#include "rungate.h"
#include "runstopreason.h"
#include "sandboxservice.h"
#include "sandboxtools.h"
#include "sessionmanager.h"

#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHostAddress>
#include <QTemporaryDir>
#include <QUuid>
#include <cstdio>

Services::~Services() = default;

std::unique_ptr<Services> Services::create(const CommandLine &cl, Mode mode,
                                           const Placement &placement)
{
    std::unique_ptr<Services> s(new Services);
    if (!s->build(cl, mode, placement))
        return nullptr;
    return s;
}

namespace {

// Where the Docker engines are; false (said on stderr) when one cannot be found and there is no
// window to say so.
bool locateEngines(const CommandLine &cl, Services::Mode mode,
                   QList<EngineLocator::Result> *engines)
{
    // Only clusters given: no Docker engine is looked for.
    if (cl.kubeEngines.isEmpty() || !cl.engines.isEmpty())
        *engines = EngineLocator::locateAll(cl.engineOptions());
    for (EngineLocator::Result &where : *engines) {
        if (where.error.isEmpty())
            continue;
        std::fprintf(stderr, "code-sandbox: %s\n", qPrintable(where.error));
        // The window still opens, and says what is wrong with the engine.
        if (mode != Services::Mode::Window)
            return false;
        where.address = EngineAddress::unixSocket(QStringLiteral("/var/run/docker.sock"));
    }
    return true;
}

// The custom images of the command line; false (said on stderr) for an unknown language.
bool setImages(const CommandLine &cl, LanguageRegistry *languages)
{
    for (auto it = cl.images.begin(); it != cl.images.end(); ++it) {
        if (!languages->setImage(it.key(), it.value())) {
            std::fprintf(stderr,
                         "code-sandbox: unknown language '%s' for a custom image; known: %s\n",
                         qPrintable(it.key()), qPrintable(languages->names().join(u", ")));
            return false;
        }
    }
    return true;
}

} // namespace

bool Services::build(const CommandLine &cl, Mode mode, const Placement &placement)
{
    QList<EngineLocator::Result> engines;
    if (!locateEngines(cl, mode, &engines))
        return false;
    LanguageRegistry languages = LanguageRegistry::builtIn();
    if (!setImages(cl, &languages))
        return false;
    SandboxConfig config = cl.config;
    config.instanceId = placement.instanceId.isEmpty()
                            ? QUuid::createUuid().toString(QUuid::WithoutBraces)
                            : placement.instanceId;
    m_instanceId = config.instanceId;
    m_historyPath =
        placement.historyPath.isEmpty() ? HistoryStore::defaultPath() : placement.historyPath;
    for (const QString &name : cl.missingPassThrough)
        qCWarning(lcApp).noquote()
            << "--pass-through-env:" << name << "is not set here; it will not be passed";
    for (const auto &[name, hostVar] : cl.missingSecretVars)
        qCWarning(lcApp).noquote() << "bound secret" << name << "(Settings): the host variable"
                                   << hostVar << "is not set here; the secret will not be added";
    QList<SandboxBackend *> backends = addDockerEngines(engines, cl.runtime);
    if (!addClusters(cl, &backends))
        return false;
    m_sandbox = std::make_unique<SandboxService>(backends, languages, config);
    m_sandbox->setMissingImageWording(&ImageWording::missingHint);
    m_runControl = std::make_unique<RunControl>(m_sandbox.get());
    createServer(cl, mode);
    m_journal = std::make_unique<Journal>(m_sandbox.get());
    m_journal->watchSessions(m_sessions.get());
    if (cl.history)
        openHistory(mode, m_historyPath);
    const QString monitorPath = MonitorSocket::path();
    if (mode != Mode::Window && cl.monitor && !monitorPath.isEmpty())
        publishToWindow(mode, monitorPath);
    // The window saves the policies it edits; a headless instance follows them.
    if (mode != Mode::Window)
        watchPolicies();
    qCInfo(lcApp).noquote() << "instance" << config.instanceId.left(8);
    // Reap what dead instances left, then warm the pool (this also finds the engine, so a
    // problem shows in the log before the first call).
    m_sandbox->reapOrphans();
    m_sandbox->warmUp();
    return true;
}

QList<SandboxBackend *> Services::addDockerEngines(const QList<EngineLocator::Result> &engines,
                                                   const QString &runtime)
{
    QList<SandboxBackend *> backends;
    for (const EngineLocator::Result &where : engines) {
        auto engine = std::make_unique<EngineClient>(where.address);
        // A hung engine must not hang the server: no answer (or no progress in one) for this
        // long fails the request. Long runs are not affected: their output streams on an
        // upgraded connection, and /wait is only asked of containers that already ended.
        engine->setRequestTimeout(120000);
        auto backend = std::make_unique<DockerBackend>(engine.get());
        // The engine's own runtime, else the server's; checked against what the engine has.
        backend->setRuntime(where.address.runtime.isEmpty() ? runtime : where.address.runtime);
        backends.append(backend.get());
        qCInfo(lcApp).noquote() << "engine" << where.address.display()
                                << QStringLiteral("(%1)").arg(where.source)
                                << (backend->runtime().isEmpty()
                                        ? QString()
                                        : QStringLiteral("runtime %1").arg(backend->runtime()));
        m_engines.push_back(std::move(engine));
        m_backends.push_back(std::move(backend));
    }
    return backends;
}

void Services::createServer(const CommandLine &cl, Mode mode)
{
    m_credentials = std::make_unique<CredentialStore>(CredentialStore::defaultPath());
    OAuthServer::Config oauth;
    oauth.accessTokenSec = cl.oauthTokenSec;
    oauth.clientsPath = OAuthClients::defaultPath();
    oauth.keyPath = AccessTokens::defaultKeyPath();
    oauth.documents.extraCas = cl.clientMetadataCas;
    oauth.documents.allowPrivate = cl.clientMetadataPrivate;
    m_oauth = std::make_unique<OAuthServer>(m_credentials.get(), oauth);
    m_gate = std::make_unique<RunGate>(m_sandbox->config());
    m_gate->setCredentials(m_credentials.get());
    m_gate->setMode(mode == Mode::Window ? QStringLiteral("window")
                    : mode == Mode::Http ? QStringLiteral("http")
                                         : QStringLiteral("stdio"));
    m_gate->setPolicies(AppSettings::loadPolicies());
    m_server = std::make_unique<McpServer>(ServerInfo{
        QStringLiteral("code-sandbox"), QStringLiteral("Code Sandbox"),
        QStringLiteral(CODE_SANDBOX_VERSION),
        QStringLiteral("Run code in hardened, single-use containers. Use run_python_code or "
                       "run_javascript_code for quick programs, execute_code for other languages "
                       "and options; print what you want to see.")});
    SessionManager::Limits limits{cl.sessionIdleSec, cl.maxSessions};
    if (cl.snapshotSessionBytes > 0) {
        // Beside the history; without one, in a folder of this instance's that goes with it.
        if (cl.history) {
            limits.snapshotFolder =
                QFileInfo(m_historyPath).absolutePath() + QLatin1String("/snapshots");
        } else {
            m_snapshotFolder = std::make_unique<QTemporaryDir>();
            if (m_snapshotFolder->isValid())
                limits.snapshotFolder = m_snapshotFolder->path();
        }
        limits.snapshots = {cl.snapshotSessionBytes, cl.snapshotTotalBytes};
    }
    m_sessions = std::make_unique<SessionManager>(m_sandbox.get(), limits);
    SandboxTools::registerAll(*m_server, *m_sandbox, m_sessions.get(), m_gate.get());
}

void Services::publishToWindow(Mode mode, const QString &monitorPath)
{
    m_publisher = std::make_unique<MonitorPublisher>(monitorPath, m_instanceId,
                                                     mode == Mode::Http ? QStringLiteral("http")
                                                                        : QStringLiteral("stdio"));
    m_journal->setPublisher(m_publisher.get());
    // The window may stop this instance's runs and approve them.
    RunControl *control = m_runControl.get();
    QObject::connect(
        m_publisher.get(), &MonitorPublisher::stopRequested, control,
        [control](const QString &runId) { control->stop(runId, RunStopReason::fromWindow()); });
    m_approver = std::make_unique<MonitorApprover>(m_publisher.get());
    m_gate->setApprover(m_approver.get());
    askSignInsInWindow(m_oauth.get(), m_publisher.get());
}

void Services::askSignInsInWindow(OAuthServer *oauth, MonitorPublisher *publisher)
{
    // An assistant signing in to this instance's endpoint is asked about in the window, when
    // one is open; its sign-in page says where the answer is to be given.
    const auto ask = [publisher](const ConsentRequest &r) {
        publisher->sendControl(MonitorProtocol::SignIn{r.id, r.clientId, r.clientName, r.source,
                                                       r.redirectUri, r.openedFrom});
    };
    QObject::connect(oauth, &OAuthServer::consentNeeded, publisher, ask);
    QObject::connect(oauth, &OAuthServer::consentSettled, publisher,
                     [publisher](const QString &id) {
                         publisher->sendControl(
                             MonitorProtocol::Withdraw{id, QStringLiteral("answered or ended")});
                     });
    QObject::connect(publisher, &MonitorPublisher::signInAnswered, oauth,
                     [oauth](const QString &id, bool allow, const QString &assistant) {
                         QString error;
                         if (!oauth->decide(id, allow, assistant, &error))
                             qCInfo(lcApp).noquote() << "the window's answer:" << error;
                     });
    const auto follow = [oauth, ask](bool connected) {
        oauth->setWindowAsks(connected);
        // Sign-ins that waited for a window: it asks about them now.
        if (connected)
            for (const ConsentRequest &r : oauth->waiting())
                ask(r);
    };
    QObject::connect(publisher, &MonitorPublisher::connectedChanged, oauth, follow);
    // It may have connected already.
    if (publisher->isConnected())
        follow(true);
}

bool Services::addClusters(const CommandLine &cl, QList<SandboxBackend *> *backends)
{
    for (const QString &value : cl.kubeEngines) {
        QString error;
        const KubeTarget target = KubeTarget::parse(value, &error);
        const KubeConfig::Result resolved =
            error.isEmpty() ? KubeConfig::resolve(target) : KubeConfig::Result{{}, error};
        if (!resolved.ok()) {
            std::fprintf(stderr, "code-sandbox: %s: %s\n", qPrintable(value),
                         qPrintable(resolved.error));
            return false;
        }
        auto client = std::make_unique<KubeClient>(resolved.access);
        KubernetesBackend::Options options;
        options.maxPods = cl.maxPods;
        options.imagePrefix = cl.imagePrefix;
        options.runtimeClassName = cl.runtimeClass;
        options.volumeBytes = cl.config.workspaceMaxBytes;
        auto backend = std::make_unique<KubernetesBackend>(client.get(), options);
        backends->append(backend.get());
        qCInfo(lcApp).noquote() << "cluster" << resolved.access.description();
        m_clusters.push_back(std::move(client));
        m_kubeBackends.push_back(std::move(backend));
    }
    return true;
}

void Services::watchPolicies()
{
    const QString file = AppSettings::filePath();
    m_settingsWatcher = std::make_unique<QFileSystemWatcher>();
    // The folder too: QSettings replaces the file (a new inode), which ends a watch on the file.
    m_settingsWatcher->addPath(QFileInfo(file).absolutePath());
    if (QFileInfo::exists(file))
        m_settingsWatcher->addPath(file);
    RunGate *gate = m_gate.get();
    QFileSystemWatcher *watcher = m_settingsWatcher.get();
    const auto reload = [gate, watcher, file] {
        if (QFileInfo::exists(file) && !watcher->files().contains(file))
            watcher->addPath(file);
        const AssistantPolicies policies = AppSettings::loadPolicies();
        if (policies == gate->policies())
            return;
        qCInfo(lcApp) << "the assistants' policies changed in the settings; they apply now";
        gate->setPolicies(policies);
    };
    QObject::connect(watcher, &QFileSystemWatcher::fileChanged, gate, reload);
    QObject::connect(watcher, &QFileSystemWatcher::directoryChanged, gate, reload);
}

void Services::openHistory(Mode mode, const QString &path)
{
    m_history = std::make_unique<HistoryStore>();
    // Headless instances keep the history as long as the window's setting says, unless the
    // environment names a retention (the window applies its own setting itself).
    if (mode != Mode::Window && !qEnvironmentVariableIsSet("CODE_SANDBOX_HISTORY_DAYS")) {
        HistoryStore::Retention keep = m_history->retention();
        keep.days = AppSettings::load().historyRetentionDays;
        m_history->setRetention(keep);
    }
    QString error;
    if (m_history->open(path, &error)) {
        m_journal->setHistory(m_history.get());
    } else {
        qCWarning(lcApp).noquote() << "runs are not kept in the history:" << error;
        m_history.reset();
    }
}

StreamableHttpServer::Config
Services::httpConfig(const CommandLine &cl, const QHostAddress &address, const QByteArray &token)
{
    StreamableHttpServer::Config http;
    http.headTimeoutMs = cl.httpHeadTimeoutMs;
    http.bodyTimeoutMs = cl.httpBodyTimeoutMs;
    http.allowedHosts = cl.allowHosts;
    http.token = token;
    // The address bound is a name clients may use too (as before: --host 10.0.0.5).
    if (!address.isLoopback() && !http.allowedHosts.contains(cl.httpHost))
        http.allowedHosts.append(cl.httpHost);
    return http;
}

std::unique_ptr<StreamableHttpServer>
Services::startHttp(const StreamableHttpServer::Config &config, const QHostAddress &address,
                    quint16 port, QString *error) const
{
    StreamableHttpServer::Config withCredentials = config;
    if (!withCredentials.credentials)
        withCredentials.credentials = m_credentials.get();
    // Signing in needs somewhere to sign in to: a server without a token has no sign-in. And
    // OAuth allows plain http on loopback only: a server bound beyond it has none either (its
    // codes and tokens would cross the network in clear; docs/security.md).
    if (!withCredentials.oauth && !withCredentials.token.isEmpty() && address.isLoopback())
        withCredentials.oauth = m_oauth.get();
    auto endpoint = std::make_unique<StreamableHttpServer>(m_server.get(), withCredentials);
    if (!endpoint->listen(address, port)) {
        *error = endpoint->errorString();
        return nullptr;
    }
    return endpoint;
}
