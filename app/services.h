#pragma once

#include "enginelocator.h"
#include "streamablehttpserver.h"

#include <QList>
#include <QString>
#include <memory>
#include <vector>

class DockerBackend;
class KubeClient;
class KubernetesBackend;
class SandboxBackend;
class EngineClient;
class HistoryStore;
class Journal;
class McpServer;
class MonitorApprover;
class MonitorPublisher;
class QFileSystemWatcher;
class RunControl;
class RunGate;
class CredentialStore;
class OAuthServer;
class QHostAddress;
class QTemporaryDir;
class SandboxService;
class SessionManager;
struct CommandLine;

// The composition root: the engine, the sandbox service, the MCP server with the product's
// tools, the sessions, the journal with the history and, for a headless instance, the publisher
// that shows its runs in the window. Built the same way for every run mode (stdio, HTTP, the
// window) and for the GUI tests, which use this class rather than a copy of it.
class Services
{
public:
    // Stdio and Http publish their runs to the window when one runs; Window is it.
    enum class Mode
    {
        Stdio,
        Http,
        Window
    };
    // What an instance keeps outside itself; empty: a fresh instance id, the user's history.
    struct Placement
    {
        QString instanceId;
        QString historyPath;
    };

    ~Services();
    Services(const Services &) = delete;
    Services &operator=(const Services &) = delete;

    // Null when the instance cannot start; why is said on stderr (exit code 2 for the caller).
    static std::unique_ptr<Services> create(const CommandLine &cl, Mode mode,
                                            const Placement &placement = {});

    // The first Docker engine (the only one unless --engine was given several times); null when
    // every --engine is a Kubernetes cluster.
    EngineClient *engine() const { return m_engines.empty() ? nullptr : m_engines.front().get(); }
    const std::vector<std::unique_ptr<EngineClient>> &engines() const { return m_engines; }
    SandboxService *sandbox() const { return m_sandbox.get(); }
    McpServer *server() const { return m_server.get(); }
    SessionManager *sessions() const { return m_sessions.get(); }
    HistoryStore *history() const { return m_history.get(); }
    Journal *journal() const { return m_journal.get(); }
    const QString &instanceId() const { return m_instanceId; }
    // Every run tool call passes the assistants' policies here (read from the settings file; a
    // headless instance reads them again when the file changes).
    RunGate *gate() const { return m_gate.get(); }
    // The assistants' HTTP credentials (CredentialStore::defaultPath()): the endpoint accepts
    // them, and the gate keeps their names for them.
    CredentialStore *credentials() const { return m_credentials.get(); }
    // The sign-in (OAuth) of the HTTP endpoint: the window answers its consent questions.
    OAuthServer *oauth() const { return m_oauth.get(); }
    // Stops a run of this process by its id (the window's Stop; for a headless instance, the
    // window's request over the monitor socket).
    RunControl *runControl() const { return m_runControl.get(); }

    // The MCP endpoint over HTTP, configured from the command line: its deadlines and the host
    // names it accepts (the bound address's too when it is not loopback). `token` empty: none.
    static StreamableHttpServer::Config
    httpConfig(const CommandLine &cl, const QHostAddress &address, const QByteArray &token);
    // The one place it starts, for --http and for the window alike; with a token, the
    // assistants' credentials are accepted too. Null when it cannot listen (`error` says why).
    std::unique_ptr<StreamableHttpServer> startHttp(const StreamableHttpServer::Config &config,
                                                    const QHostAddress &address, quint16 port,
                                                    QString *error) const;

    // Sign-ins to a headless instance's endpoint go to the window as questions (while one is
    // connected); its answers come back to `oauth`.
    static void askSignInsInWindow(OAuthServer *oauth, MonitorPublisher *publisher);

private:
    Services() = default;
    bool build(const CommandLine &cl, Mode mode, const Placement &placement);
    // One backend per Docker engine found (kept here, as their engine clients are).
    // `runtime`: --runtime, for the engines that name none of their own.
    QList<SandboxBackend *> addDockerEngines(const QList<EngineLocator::Result> &engines,
                                             const QString &runtime);
    // The run gate, the MCP server with this product's tools, and the sessions they use.
    void createServer(const CommandLine &cl, Mode mode);
    // A headless instance's link to the window: its events go there, and the window may stop
    // its runs and answer its approvals.
    void publishToWindow(Mode mode, const QString &monitorPath);

    // One backend per k8s:// engine; false (said on stderr) when a cluster cannot be reached as
    // its kubeconfig says.
    bool addClusters(const CommandLine &cl, QList<SandboxBackend *> *backends);
    void openHistory(Mode mode, const QString &path);
    void watchPolicies();

    QString m_instanceId;
    QString m_historyPath; // the history's file, whether it is kept or not
    // In the order they are built: each is destroyed before what it refers to (the journal and
    // the publisher refer to the sandbox).
    std::vector<std::unique_ptr<EngineClient>> m_engines;
    std::vector<std::unique_ptr<DockerBackend>> m_backends;
    std::vector<std::unique_ptr<KubeClient>> m_clusters;
    std::vector<std::unique_ptr<KubernetesBackend>> m_kubeBackends;
    std::unique_ptr<SandboxService> m_sandbox;
    std::unique_ptr<RunControl> m_runControl;
    std::unique_ptr<CredentialStore> m_credentials;
    std::unique_ptr<OAuthServer> m_oauth;
    std::unique_ptr<RunGate> m_gate;
    std::unique_ptr<McpServer> m_server;
    // Sessions' snapshots without a history (--no-history): gone with this instance.
    std::unique_ptr<QTemporaryDir> m_snapshotFolder;
    std::unique_ptr<SessionManager> m_sessions;
    std::unique_ptr<HistoryStore> m_history;
    std::unique_ptr<Journal> m_journal;
    std::unique_ptr<MonitorPublisher> m_publisher;
    std::unique_ptr<MonitorApprover> m_approver;
    std::unique_ptr<QFileSystemWatcher> m_settingsWatcher;
};
