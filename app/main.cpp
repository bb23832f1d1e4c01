// code-sandbox: the MCP server, on stdio for clients that launch it and on Streamable HTTP for
// local assistants that connect to it.

#include "commandline.h"
#include "engineclient.h"
#include "enginelocator.h"
#include "enginereply.h"
#include "mcpserver.h"
#include "mcpsession.h"
#include "sandboxservice.h"
#include "sandboxtools.h"
#include "signalwatcher.h"
#include "stdiotransport.h"
#include "streamablehttpserver.h"
#include "tokenstore.h"

#include <QCoreApplication>
#include <QHostAddress>
#include <QLoggingCategory>
#include <QUuid>
#include <csignal>
#include <cstdio>
#include <memory>
#include <unistd.h>

namespace {
Q_LOGGING_CATEGORY(lcApp, "sandbox.app", QtInfoMsg)

// The engine, the sandbox service and the MCP server with the product's tools: the same for
// every transport.
struct Services
{
    std::unique_ptr<EngineClient> engine;
    std::unique_ptr<SandboxService> sandbox;
    std::unique_ptr<McpServer> server;
};

bool makeServices(const CommandLine &cl, Services &s)
{
    const EngineLocator::Result where = EngineLocator::locate(cl.engine);
    if (!where.error.isEmpty()) {
        std::fprintf(stderr, "code-sandbox: %s\n", qPrintable(where.error));
        return false;
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
    SandboxTools::registerAll(*s.server, *s.sandbox);
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
    if (!makeServices(cl, s))
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
    if (!cl.noAuth) {
        QString token = cl.token;
        QString error;
        if (token.isEmpty())
            token = TokenStore::loadOrCreate(&error);
        if (token.isEmpty()) {
            std::fprintf(stderr, "code-sandbox: %s\n", qPrintable(error));
            return 2;
        }
        http.token = token.toUtf8();
    }
    if (!address.isLoopback()) {
        qCWarning(lcApp).noquote()
            << "listening on" << cl.httpHost
            << "— not loopback: anyone who can reach it and has the token can run code";
        http.allowedHosts.append(cl.httpHost);
    }
    Services s;
    if (!makeServices(cl, s))
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
    std::fprintf(stderr, "code-sandbox: MCP endpoint http://%s:%u/mcp\n", qPrintable(host),
                 endpoint.port());
    if (cl.noAuth)
        std::fprintf(stderr, "code-sandbox: no authentication (--no-auth)\n");
    else if (cl.token.isEmpty())
        std::fprintf(stderr,
                     "code-sandbox: clients send 'Authorization: Bearer <token>'; "
                     "'code-sandbox --print-token' shows it (stored in %s)\n",
                     qPrintable(TokenStore::path()));
    else
        std::fprintf(stderr, "code-sandbox: clients send 'Authorization: Bearer <token>' with "
                             "the token you gave\n");

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
} // namespace

int main(int argc, char *argv[])
{
    qSetMessagePattern(QStringLiteral(
        "code-sandbox: %{if-warning}warning: %{endif}%{if-critical}error: %{endif}%{message}"));
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("code-sandbox"));
    QCoreApplication::setApplicationVersion(QStringLiteral(CODE_SANDBOX_VERSION));

    const CommandLine cl =
        CommandLine::parse(app.arguments(), QProcessEnvironment::systemEnvironment());
    switch (cl.mode) {
    case CommandLine::Mode::Help:
    case CommandLine::Mode::Version:
        std::fprintf(stdout, "%s\n", qPrintable(cl.message));
        return 0;
    case CommandLine::Mode::Error:
        std::fprintf(stderr, "code-sandbox: %s\n", qPrintable(cl.message));
        return 2;
    case CommandLine::Mode::PrintToken: {
        QString error;
        const QString token = TokenStore::loadOrCreate(&error);
        if (token.isEmpty()) {
            std::fprintf(stderr, "code-sandbox: %s\n", qPrintable(error));
            return 2;
        }
        std::fprintf(stdout, "%s\n", qPrintable(token));
        return 0;
    }
    case CommandLine::Mode::Stdio:
        return runStdio(app, cl);
    case CommandLine::Mode::Http:
        return runHttp(app, cl);
    case CommandLine::Mode::NoMode:
        break;
    }
    // No window in this version: a client that started us without --stdio still gets a server
    // (its stdin is a pipe); a person at a terminal gets directions.
    if (!isatty(STDIN_FILENO))
        return runStdio(app, cl);
    std::fprintf(stderr, "code-sandbox: this version has no window yet. MCP clients start it as\n"
                         "  code-sandbox --stdio\n"
                         "or connect to  code-sandbox --http  (see --help).\n");
    return 2;
}
