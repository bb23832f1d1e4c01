// code-sandbox: the window that shows every run, and the MCP server, on stdio for clients that
// launch it and on Streamable HTTP for local assistants that connect to it.

#include "appcontroller.h"
#include "applog.h"
#include "appsettings.h"
#include "commandline.h"
#include "consentcommand.h"
#include "credentialcommand.h"
#include "httptoken.h"
#include "mainwindow.h"
#include "mcpserver.h"
#include "mcpsession.h"
#include "monitorprotocol.h"
#include "monitorserver.h"
#include "monitorsocket.h"
#include "oauthserver.h"
#include "sandboxservice.h"
#include "services.h"
#include "signalwatcher.h"
#include "stdiotransport.h"
#include "streamablehttpserver.h"
#include "tokenstore.h"

#include <QApplication>
#include <QHostAddress>
#include <QLocalSocket>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <memory>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {
int runStdio(QCoreApplication &app, const CommandLine &cl)
{
    const std::unique_ptr<Services> s = Services::create(cl, Services::Mode::Stdio);
    if (!s)
        return 2;
    auto *transport = new StdioTransport(STDIN_FILENO, STDOUT_FILENO);
    McpSession *session = s->server()->openSession(transport);
    // Who started this instance: a policy may require that launcher (the name a client claims
    // is anybody's to claim).
    session->setIdentity(CallerIdentity::ofParentProcess());
    qCInfo(lcApp).noquote() << "serving MCP on stdio," << session->identity().describe();

    bool stopping = false;
    const auto stop = [&](const char *why) {
        if (stopping)
            return;
        stopping = true;
        qCInfo(lcApp) << "stopping:" << why;
        // Running programs are stopped by the shutdown; their calls are still answered (as
        // cancelled) so a client that is still reading learns what happened.
        QObject::connect(s->sandbox(), &SandboxService::shutdownFinished, &app, [&app, transport] {
            transport->flushBlocking();
            app.quit();
        });
        s->sandbox()->shutdown();
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
    const HttpToken::Resolved token = HttpToken::resolve(cl, TokenStore::defaultPath());
    if (!cl.noAuth && token.token.isEmpty()) {
        std::fprintf(stderr, "code-sandbox: %s\n", qPrintable(token.error));
        return 2;
    }
    const StreamableHttpServer::Config http =
        Services::httpConfig(cl, address, cl.noAuth ? QByteArray() : token.token.toUtf8());
    const std::unique_ptr<Services> s = Services::create(cl, Services::Mode::Http);
    if (!s)
        return 2;
    QString error;
    const std::unique_ptr<StreamableHttpServer> endpoint =
        s->startHttp(http, address, cl.httpPort, &error);
    if (!endpoint) {
        std::fprintf(stderr, "code-sandbox: cannot listen on %s:%u: %s\n", qPrintable(cl.httpHost),
                     cl.httpPort, qPrintable(error));
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
                 endpoint->port());

    SignalWatcher watcher;
    QObject::connect(&watcher, &SignalWatcher::terminationRequested, &app, [&](int) {
        qCInfo(lcApp) << "stopping";
        QObject::connect(s->sandbox(), &SandboxService::shutdownFinished, &app,
                         &QCoreApplication::quit);
        s->sandbox()->shutdown();
    });
    const int rc = app.exec();
    endpoint->closeAll();
    return rc;
}
// A window already runs for this user: it is asked to show itself, and this launch ends.
bool showRunningWindow(const QString &socketPath)
{
    QLocalSocket socket;
    socket.connectToServer(socketPath);
    if (!socket.waitForConnected(1000))
        return false;
    // Only a window of this user's own: another user's listener is not asked, nor obeyed.
    if (MonitorSocket::peerUid(socket.socketDescriptor()) != qint64(::geteuid())) {
        qCWarning(lcApp) << "the monitor socket's listener is not this user's; not asking it";
        socket.abort();
        return false;
    }
    socket.write(MonitorProtocol::encode(MonitorProtocol::Show{}));
    socket.waitForBytesWritten(1000);
    socket.disconnectFromServer();
    return true;
}

// The names and the icon the desktop shows for the window.
void setWindowIdentity()
{
    QApplication::setApplicationDisplayName(QStringLiteral("Code Sandbox"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/code-sandbox.png")));
    // The desktop entry's name (without .desktop): shells match the window to its entry and icon.
    QApplication::setDesktopFileName(QStringLiteral(CODE_SANDBOX_APP_ID));
}

// The background HTTP server for local assistants, into `endpoint`. A port in use is shown in the
// window, not fatal: the window and manual runs still work.
ServerStatus startLocalEndpoint(const Services &s, const CommandLine &cl, bool enabled,
                                std::unique_ptr<StreamableHttpServer> *endpoint)
{
    ServerStatus server;
    server.binary = QCoreApplication::applicationFilePath();
    server.httpEnabled = enabled;
    if (!enabled)
        return server;
    // The same token as --print-token shows: options and environment first, else the store
    // (where Settings keeps it too).
    CommandLine withAuth = cl;
    withAuth.noAuth = false;
    const HttpToken::Resolved resolved = HttpToken::resolve(withAuth, TokenStore::defaultPath());
    const QString token = resolved.token;
    if (token.isEmpty()) {
        server.error = resolved.error;
        return server;
    }
    server.token = token;
    QString error;
    *endpoint =
        s.startHttp(Services::httpConfig(cl, QHostAddress(QHostAddress::LocalHost), token.toUtf8()),
                    QHostAddress::LocalHost, cl.httpPort, &error);
    if (*endpoint) {
        server.listening = true;
        server.url = QStringLiteral("http://127.0.0.1:%1/mcp").arg((*endpoint)->port());
        qCInfo(lcApp).noquote() << "MCP endpoint" << server.url;
    } else {
        server.error = QStringLiteral("cannot listen on 127.0.0.1:%1 (%2); choose another "
                                      "port in Settings → Server")
                           .arg(cl.httpPort)
                           .arg(error);
    }
    return server;
}

// What the window's controller needs beyond its constructor: the HTTP endpoint, the control
// room, and the history.
void prepareController(AppController &controller, const Services &s, StreamableHttpServer *endpoint,
                       const ServerStatus &server, const AppSettings &settings)
{
    controller.setHttpServer(endpoint, server);
    // The control room: this window stops any run and approves its own HTTP runs.
    controller.setRunGate(s.gate());
    controller.setRunControl(s.runControl());
    // The sessions of its own server, whose snapshots the session tree shows.
    controller.setSessions(s.sessions());
    controller.pruneHistory(settings.historyRetentionDays);
    controller.loadHistory();
}

int runWindow(QApplication &app, const CommandLine &given)
{
    setWindowIdentity();
    const QString monitorPath = MonitorSocket::path(true);
    if (!monitorPath.isEmpty() && showRunningWindow(monitorPath)) {
        std::fprintf(stderr, "code-sandbox: the window was already open; it is shown now\n");
        return 0;
    }
    AppSettings settings = AppSettings::load();
    const CommandLine cl = given.withSettings(settings, QProcessEnvironment::systemEnvironment());
    const std::unique_ptr<Services> s = Services::create(cl, Services::Mode::Window);
    if (!s)
        return 2;

    MonitorServer monitor;
    QString monitorError = QStringLiteral("no private folder for its socket");
    if (monitorPath.isEmpty() || !monitor.listen(monitorPath, &monitorError))
        qCWarning(lcApp).noquote() << "runs of headless instances will not show:" << monitorError;

    std::unique_ptr<StreamableHttpServer> endpoint;
    const ServerStatus server = startLocalEndpoint(*s, cl, settings.httpEnabled, &endpoint);
    AppController controller(s->sandbox(), s->journal(), s->history(), &monitor);
    prepareController(controller, *s, endpoint.get(), server, settings);

    MainWindow window(&controller, settings);
    if (endpoint)
        window.setSignIn(s->oauth());
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
        QObject::connect(s->sandbox(), &SandboxService::shutdownFinished, &app,
                         &QCoreApplication::quit);
        s->sandbox()->shutdown();
    };
    QObject::connect(&window, &MainWindow::quitRequested, &app, stop);
    // Policies apply at once; the other settings at the next start (the window says which).
    QObject::connect(
        &window, &MainWindow::settingsChanged, &controller,
        [&controller](const AppSettings &changed) { controller.setPolicies(changed.policies); });
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
        // The application id io.github.codesandbox.CodeSandbox read backwards. No organisation
        // name: it would move QStandardPaths' AppConfigLocation, where the HTTP token is kept
        // (~/.config/code-sandbox), to ~/.config/ORGANISATION/code-sandbox.
        QCoreApplication::setOrganizationDomain(QStringLiteral("codesandbox.github.io"));
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
    case CommandLine::Mode::Consent:
    case CommandLine::Mode::Credentials: {
        QCoreApplication app(argc, argv);
        names();
        return cl.mode == CommandLine::Mode::Consent ? ConsentCommand::run(cl)
                                                     : CredentialCommand::run(cl);
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
