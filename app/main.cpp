// code-sandbox: the window that shows every run, and the MCP server, on stdio for clients that
// launch it and on Streamable HTTP for local assistants that connect to it.

#include "appcontroller.h"
#include "appsettings.h"
#include "commandline.h"
#include "engineclient.h"
#include "enginelocator.h"
#include "enginereply.h"
#include "historystore.h"
#include "httptoken.h"
#include "journal.h"
#include "mainwindow.h"
#include "mcpserver.h"
#include "mcpsession.h"
#include "monitorpublisher.h"
#include "monitorserver.h"
#include "monitorsocket.h"
#include "sandboxservice.h"
#include "sandboxtools.h"
#include "sessionmanager.h"
#include "signalwatcher.h"
#include "stdiotransport.h"
#include "streamablehttpserver.h"
#include "tokenstore.h"

#include <QApplication>
#include <QHostAddress>
#include <QJsonDocument>
#include <QLocalSocket>
#include <QLoggingCategory>
#include <QUuid>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <memory>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {
Q_LOGGING_CATEGORY(lcApp, "sandbox.app", QtInfoMsg)

// The engine, the sandbox service and the MCP server with the product's tools: the same for
// every transport.
// Declared first so it is destroyed last: the journal and the publisher refer to the sandbox.
struct Services
{
    std::unique_ptr<EngineClient> engine;
    std::unique_ptr<SandboxService> sandbox;
    std::unique_ptr<McpServer> server;
    std::unique_ptr<SessionManager> sessions;
    std::unique_ptr<HistoryStore> history;
    std::unique_ptr<Journal> journal;
    std::unique_ptr<MonitorPublisher> publisher;
};

// `mode`: "stdio" and "http" publish their runs to the window when one runs; "window" is it.
bool makeServices(const CommandLine &cl, Services &s, const QString &mode)
{
    EngineLocator::Result where = EngineLocator::locate(cl.engine);
    if (!where.error.isEmpty()) {
        std::fprintf(stderr, "code-sandbox: %s\n", qPrintable(where.error));
        // The window still opens, and says what is wrong with the engine.
        if (mode != u"window")
            return false;
        where.socketPath = QStringLiteral("/var/run/docker.sock");
    }
    LanguageRegistry languages = LanguageRegistry::builtIn();
    for (auto it = cl.images.begin(); it != cl.images.end(); ++it) {
        if (!languages.setImage(it.key(), it.value())) {
            std::fprintf(stderr,
                         "code-sandbox: unknown language '%s' for a custom image; known: %s\n",
                         qPrintable(it.key()), qPrintable(languages.names().join(u", ")));
            return false;
        }
    }
    SandboxConfig config = cl.config;
    config.instanceId = QUuid::createUuid().toString(QUuid::WithoutBraces);
    for (const QString &name : cl.missingPassThrough)
        qCWarning(lcApp).noquote()
            << "--pass-through-env:" << name << "is not set here; it will not be passed";
    s.engine = std::make_unique<EngineClient>(where.socketPath);
    // A hung engine must not hang the server: no answer (or no progress in one) for this long
    // fails the request. Long runs are not affected: their output streams on an upgraded
    // connection, and /wait is only asked of containers that already ended.
    s.engine->setRequestTimeout(120000);
    s.sandbox = std::make_unique<SandboxService>(s.engine.get(), languages, config);
    s.server = std::make_unique<McpServer>(ServerInfo{
        QStringLiteral("code-sandbox"), QStringLiteral("Code Sandbox"),
        QStringLiteral(CODE_SANDBOX_VERSION),
        QStringLiteral("Run code in hardened, single-use containers. Use run_python_code or "
                       "run_javascript_code for quick programs, execute_code for other languages "
                       "and options; print what you want to see.")});
    s.sessions = std::make_unique<SessionManager>(
        s.sandbox.get(), SessionManager::Limits{cl.sessionIdleSec, cl.maxSessions});
    SandboxTools::registerAll(*s.server, *s.sandbox, s.sessions.get());
    s.journal = std::make_unique<Journal>(s.sandbox.get());
    s.journal->watchSessions(s.sessions.get());
    if (cl.history) {
        s.history = std::make_unique<HistoryStore>();
        // Headless instances keep the history as long as the window's setting says, unless the
        // environment names a retention (the window applies its own setting itself).
        if (mode != u"window" && !qEnvironmentVariableIsSet("CODE_SANDBOX_HISTORY_DAYS")) {
            HistoryStore::Retention keep = s.history->retention();
            keep.days = AppSettings::load().historyRetentionDays;
            s.history->setRetention(keep);
        }
        QString error;
        if (s.history->open(HistoryStore::defaultPath(), &error)) {
            s.journal->setHistory(s.history.get());
        } else {
            qCWarning(lcApp).noquote() << "runs are not kept in the history:" << error;
            s.history.reset();
        }
    }
    const QString monitorPath = MonitorSocket::path();
    if (mode != u"window" && cl.monitor && !monitorPath.isEmpty()) {
        s.publisher = std::make_unique<MonitorPublisher>(monitorPath, config.instanceId, mode);
        s.journal->setPublisher(s.publisher.get());
    }
    qCInfo(lcApp).noquote() << "engine" << where.socketPath << "(" << where.source << "), instance"
                            << config.instanceId.left(8);
    // Reap what dead instances left, then warm the pool (this also finds the engine, so a
    // problem shows in the log before the first call).
    s.sandbox->reapOrphans();
    s.sandbox->warmUp();
    return true;
}

int runStdio(QCoreApplication &app, const CommandLine &cl)
{
    Services s;
    if (!makeServices(cl, s, QStringLiteral("stdio")))
        return 2;
    auto *transport = new StdioTransport(STDIN_FILENO, STDOUT_FILENO);
    McpSession *session = s.server->openSession(transport);
    qCInfo(lcApp) << "serving MCP on stdio";

    bool stopping = false;
    const auto stop = [&](const char *why) {
        if (stopping)
            return;
        stopping = true;
        qCInfo(lcApp) << "stopping:" << why;
        // Running programs are stopped by the shutdown; their calls are still answered (as
        // cancelled) so a client that is still reading learns what happened.
        QObject::connect(s.sandbox.get(), &SandboxService::shutdownFinished, &app,
                         [&app, transport] {
                             transport->flushBlocking();
                             app.quit();
                         });
        s.sandbox->shutdown();
    };
    // End of input: answer what is still running (each call is bounded by its timeout), then go.
    // A signal stops at once.
    QObject::connect(session, &McpSession::closed, &app, [&] {
        if (session->callsInFlight() == 0)
            stop("end of input");
    });
    QObject::connect(session, &McpSession::callFinished, &app, [&] {
        if (session->callsInFlight() == 0 && session->isClosed())
            stop("end of input");
    });
    SignalWatcher watcher;
    QObject::connect(&watcher, &SignalWatcher::terminationRequested, &app, [&](int sig) {
        stop(sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal");
    });
    return app.exec();
}

int runHttp(QCoreApplication &app, const CommandLine &cl)
{
    QHostAddress address;
    if (cl.httpHost == u"localhost")
        address = QHostAddress::LocalHost;
    else if (!address.setAddress(cl.httpHost)) {
        std::fprintf(stderr, "code-sandbox: --host '%s' is not an IP address\n",
                     qPrintable(cl.httpHost));
        return 2;
    }
    if (cl.noAuth && !address.isLoopback()) {
        std::fprintf(stderr, "code-sandbox: --no-auth is only allowed on a loopback address\n");
        return 2;
    }
    StreamableHttpServer::Config http;
    http.headTimeoutMs = cl.httpHeadTimeoutMs;
    http.bodyTimeoutMs = cl.httpBodyTimeoutMs;
    http.allowedHosts = cl.allowHosts;
    const HttpToken::Resolved token = HttpToken::resolve(cl, TokenStore::defaultPath());
    if (!cl.noAuth) {
        if (token.token.isEmpty()) {
            std::fprintf(stderr, "code-sandbox: %s\n", qPrintable(token.error));
            return 2;
        }
        http.token = token.token.toUtf8();
    }
    // The address bound is a name clients may use too (as before: --host 10.0.0.5).
    if (!address.isLoopback() && !http.allowedHosts.contains(cl.httpHost))
        http.allowedHosts.append(cl.httpHost);
    Services s;
    if (!makeServices(cl, s, QStringLiteral("http")))
        return 2;
    StreamableHttpServer endpoint(s.server.get(), http);
    if (!endpoint.listen(address, cl.httpPort)) {
        std::fprintf(stderr, "code-sandbox: cannot listen on %s:%u: %s\n", qPrintable(cl.httpHost),
                     cl.httpPort, qPrintable(endpoint.errorString()));
        return 2;
    }
    const QString host = address.protocol() == QAbstractSocket::IPv6Protocol
                             ? QStringLiteral("[%1]").arg(address.toString())
                             : address.toString();
    if (cl.noAuth)
        std::fprintf(stderr, "code-sandbox: no authentication (--no-auth)\n");
    else
        std::fprintf(stderr,
                     "code-sandbox: clients send 'Authorization: Bearer <token>', the token from "
                     "%s ('code-sandbox --print-token' with the same options shows it)\n",
                     qPrintable(token.source));
    if (!address.isLoopback())
        std::fprintf(stderr,
                     "code-sandbox: warning: listening on %s, not loopback: anyone who can reach "
                     "it and has the token can run code. Host names accepted: localhost, "
                     "127.0.0.1, ::1, %s (add others with --allow-host)\n",
                     qPrintable(cl.httpHost), qPrintable(http.allowedHosts.join(u", ")));
    else if (!http.allowedHosts.isEmpty())
        std::fprintf(stderr, "code-sandbox: Host names accepted: localhost, 127.0.0.1, ::1, %s\n",
                     qPrintable(http.allowedHosts.join(u", ")));
    if (cl.given.contains(QLatin1String("token")))
        std::fprintf(stderr, "code-sandbox: warning: a token given with --token is visible to "
                             "other local users in the process list; prefer --token-file or "
                             "CODE_SANDBOX_TOKEN\n");
    // Last: whoever waits for this line (a test, a script) has the others already.
    std::fprintf(stderr, "code-sandbox: MCP endpoint http://%s:%u/mcp\n", qPrintable(host),
                 endpoint.port());

    SignalWatcher watcher;
    QObject::connect(&watcher, &SignalWatcher::terminationRequested, &app, [&](int) {
        qCInfo(lcApp) << "stopping";
        QObject::connect(s.sandbox.get(), &SandboxService::shutdownFinished, &app,
                         &QCoreApplication::quit);
        s.sandbox->shutdown();
    });
    const int rc = app.exec();
    endpoint.closeAll();
    return rc;
}
// The command line wins; the window's settings fill in what it leaves open.
CommandLine withSettings(CommandLine cl, const AppSettings &settings,
                         const QProcessEnvironment &env)
{
    const auto given = [&cl](const char *option) {
        return cl.given.contains(QLatin1String(option));
    };
    if (!given("engine") && !settings.engineSocket.isEmpty())
        cl.engine = settings.engineSocket;
    const LanguageRegistry languages = LanguageRegistry::builtIn();
    for (auto it = settings.images.begin(); it != settings.images.end(); ++it) {
        if (!languages.find(it.key())) {
            // Saved by a build that knew more languages: not a reason to refuse to start.
            qCWarning(lcApp).noquote()
                << "settings: ignoring the image for unknown language" << it.key();
            continue;
        }
        if (!cl.images.contains(it.key()) && !it.value().isEmpty())
            cl.images.insert(it.key(), it.value());
    }
    SandboxConfig &c = cl.config;
    if (!given("timeout"))
        c.defaultTimeoutSec = qMin(settings.defaultTimeoutSec, c.maxTimeoutSec);
    if (!given("memory"))
        c.memoryBytes = qint64(settings.memoryMiB) * 1024 * 1024;
    if (!given("cpus"))
        c.cpus = settings.cpus;
    c.pidsLimit = settings.pidsLimit;
    if (!given("pass-through-env") && c.passThroughEnv.isEmpty()) {
        for (const QString &name : settings.passThroughEnv) {
            if (env.contains(name))
                c.passThroughEnv.append({name, env.value(name)});
            else
                cl.missingPassThrough.append(name);
        }
    }
    if (!given("port"))
        cl.httpPort = settings.httpPort;
    // The token: Settings keeps it in the token store, where HttpToken::resolve() finds it.
    return cl;
}

// A window already runs for this user: it is asked to show itself, and this launch ends.
bool showRunningWindow(const QString &socketPath)
{
    QLocalSocket socket;
    socket.connectToServer(socketPath);
    if (!socket.waitForConnected(1000))
        return false;
    socket.write(QJsonDocument(QJsonObject{{QStringLiteral("type"), QStringLiteral("show")}})
                     .toJson(QJsonDocument::Compact) +
                 '\n');
    socket.waitForBytesWritten(1000);
    socket.disconnectFromServer();
    return true;
}

int runWindow(QApplication &app, const CommandLine &given)
{
    QApplication::setApplicationDisplayName(QStringLiteral("Code Sandbox"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/code-sandbox.png")));
    QApplication::setDesktopFileName(QStringLiteral("io.github.codesandbox.CodeSandbox"));
    const QString monitorPath = MonitorSocket::path(true);
    if (!monitorPath.isEmpty() && showRunningWindow(monitorPath)) {
        std::fprintf(stderr, "code-sandbox: the window was already open; it is shown now\n");
        return 0;
    }
    AppSettings settings = AppSettings::load();
    const CommandLine cl = withSettings(given, settings, QProcessEnvironment::systemEnvironment());
    Services s;
    if (!makeServices(cl, s, QStringLiteral("window")))
        return 2;

    MonitorServer monitor;
    QString monitorError = QStringLiteral("no private folder for its socket");
    if (monitorPath.isEmpty() || !monitor.listen(monitorPath, &monitorError))
        qCWarning(lcApp).noquote() << "runs of headless instances will not show:" << monitorError;

    // The background HTTP server for local assistants. A port in use is shown in the window, not
    // fatal: the window and manual runs still work.
    ServerStatus server;
    server.binary = QCoreApplication::applicationFilePath();
    server.httpEnabled = settings.httpEnabled;
    std::unique_ptr<StreamableHttpServer> endpoint;
    if (settings.httpEnabled) {
        StreamableHttpServer::Config http;
        http.headTimeoutMs = cl.httpHeadTimeoutMs;
        http.bodyTimeoutMs = cl.httpBodyTimeoutMs;
        http.allowedHosts = cl.allowHosts;
        // The same token as --print-token shows: options and environment first, else the store
        // (where Settings keeps it too).
        CommandLine withAuth = cl;
        withAuth.noAuth = false;
        const HttpToken::Resolved resolved =
            HttpToken::resolve(withAuth, TokenStore::defaultPath());
        const QString token = resolved.token;
        if (token.isEmpty()) {
            server.error = resolved.error;
        } else {
            http.token = token.toUtf8();
            server.token = token;
            endpoint = std::make_unique<StreamableHttpServer>(s.server.get(), http);
            if (endpoint->listen(QHostAddress::LocalHost, cl.httpPort)) {
                server.listening = true;
                server.url = QStringLiteral("http://127.0.0.1:%1/mcp").arg(endpoint->port());
                qCInfo(lcApp).noquote() << "MCP endpoint" << server.url;
            } else {
                server.error = QStringLiteral("cannot listen on 127.0.0.1:%1 (%2); choose another "
                                              "port in Settings → Server")
                                   .arg(cl.httpPort)
                                   .arg(endpoint->errorString());
                endpoint.reset();
            }
        }
    }

    AppController controller(s.sandbox.get(), s.journal.get(), s.history.get(), &monitor);
    controller.setHttpServer(endpoint.get(), server);
    controller.pruneHistory(settings.historyRetentionDays);
    controller.loadHistory();

    MainWindow window(&controller, settings);
    QApplication::setQuitOnLastWindowClosed(false);
    QObject::connect(&monitor, &MonitorServer::showRequested, &window, [&window] {
        qCInfo(lcApp) << "showing the window: code-sandbox was started again";
        window.showAndRaise();
    });

    bool stopping = false;
    const auto stop = [&] {
        if (stopping)
            return;
        stopping = true;
        qCInfo(lcApp) << "stopping";
        window.hide();
        if (endpoint)
            endpoint->closeAll();
        QObject::connect(s.sandbox.get(), &SandboxService::shutdownFinished, &app,
                         &QCoreApplication::quit);
        s.sandbox->shutdown();
    };
    QObject::connect(&window, &MainWindow::quitRequested, &app, stop);
    SignalWatcher watcher;
    QObject::connect(&watcher, &SignalWatcher::terminationRequested, &app, stop);
    if (!cl.startHidden)
        window.show();
    return app.exec();
}

// An MCP client that starts us without --stdio talks through a pipe or a socket; a desktop
// launcher gives /dev/null, a terminal a tty.
bool stdinIsAChannel()
{
    struct stat st;
    return ::fstat(STDIN_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

// The HTTP server may hold up to 768 connections (HttpServer's caps); with the engine's, the
// pool's and the history's descriptors that passes the usual soft limit of 1024. Qt polls with
// poll(), so descriptors above 1024 are fine.
void raiseDescriptorLimit()
{
    constexpr rlim_t kWanted = 4096;
    struct rlimit limit;
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= kWanted)
        return;
    limit.rlim_cur = std::min(kWanted, limit.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &limit);
}

bool hasDisplay()
{
    return !qEnvironmentVariableIsEmpty("DISPLAY") ||
           !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") ||
           !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM");
}
} // namespace

int main(int argc, char *argv[])
{
    // The icons live in the ui library's resources; a static library's are not linked in unless
    // asked for.
    Q_INIT_RESOURCE(resources);
    qSetMessagePattern(QStringLiteral(
        "code-sandbox: %{if-warning}warning: %{endif}%{if-critical}error: %{endif}%{message}"));
    QStringList arguments;
    for (int i = 0; i < argc; ++i)
        arguments.append(QString::fromLocal8Bit(argv[i]));
    const CommandLine cl = CommandLine::parse(arguments, QProcessEnvironment::systemEnvironment());
    raiseDescriptorLimit();

    const auto names = [] {
        QCoreApplication::setApplicationName(QStringLiteral("code-sandbox"));
        QCoreApplication::setApplicationVersion(QStringLiteral(CODE_SANDBOX_VERSION));
    };
    switch (cl.mode) {
    case CommandLine::Mode::Help:
    case CommandLine::Mode::Version:
        std::fprintf(stdout, "%s\n", qPrintable(cl.message));
        return 0;
    case CommandLine::Mode::Error:
        std::fprintf(stderr, "code-sandbox: %s\n", qPrintable(cl.message));
        return 2;
    case CommandLine::Mode::PrintToken: {
        QCoreApplication app(argc, argv);
        names();
        // Exactly what a server with the same options and environment would use.
        const HttpToken::Resolved token = HttpToken::resolve(cl, TokenStore::defaultPath());
        if (token.token.isEmpty()) {
            std::fprintf(stderr, "code-sandbox: %s\n", qPrintable(token.error));
            return 2;
        }
        std::fprintf(stdout, "%s\n", qPrintable(token.token));
        return 0;
    }
    case CommandLine::Mode::Stdio: {
        QCoreApplication app(argc, argv);
        names();
        return runStdio(app, cl);
    }
    case CommandLine::Mode::Http: {
        QCoreApplication app(argc, argv);
        names();
        return runHttp(app, cl);
    }
    case CommandLine::Mode::NoMode:
        break;
    }
    if (hasDisplay() && !stdinIsAChannel()) {
        QApplication app(argc, argv);
        names();
        return runWindow(app, cl);
    }
    // No display: a client that started us without --stdio still gets a server (its stdin is a
    // pipe); a person at a terminal gets directions.
    if (!isatty(STDIN_FILENO)) {
        QCoreApplication app(argc, argv);
        names();
        return runStdio(app, cl);
    }
    std::fprintf(stderr, "code-sandbox: no display to open the window on (DISPLAY is not set).\n"
                         "MCP clients start it as\n"
                         "  code-sandbox --stdio\n"
                         "or connect to  code-sandbox --http  (see --help).\n");
    return 2;
}
