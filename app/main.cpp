// code-sandbox: the MCP server (and, in a later version, the desktop window).

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

#include <QCoreApplication>
#include <QLoggingCategory>
#include <QUuid>
#include <csignal>
#include <cstdio>
#include <unistd.h>

namespace {
Q_LOGGING_CATEGORY(lcApp, "sandbox.app", QtInfoMsg)

int runStdio(QCoreApplication &app, const CommandLine &cl)
{
    const EngineLocator::Result where = EngineLocator::locate(cl.engine);
    if (!where.error.isEmpty()) {
        std::fprintf(stderr, "code-sandbox: %s\n", qPrintable(where.error));
        return 2;
    }
    LanguageRegistry languages = LanguageRegistry::builtIn();
    for (auto it = cl.images.begin(); it != cl.images.end(); ++it) {
        if (!languages.setImage(it.key(), it.value())) {
            std::fprintf(stderr,
                         "code-sandbox: unknown language '%s' for a custom image; known: %s\n",
                         qPrintable(it.key()), qPrintable(languages.names().join(u", ")));
            return 2;
        }
    }
    SandboxConfig config = cl.config;
    config.instanceId = QUuid::createUuid().toString(QUuid::WithoutBraces);
    for (const QString &name : cl.missingPassThrough)
        qCWarning(lcApp).noquote()
            << "--pass-through-env:" << name << "is not set here; it will not be passed";

    EngineClient engine(where.socketPath);
    SandboxService sandbox(&engine, languages, config);
    McpServer server({QStringLiteral("code-sandbox"), QStringLiteral("Code Sandbox"),
                      QStringLiteral(CODE_SANDBOX_VERSION),
                      QStringLiteral("Run code in hardened, single-use containers. Use "
                                     "run_python_code or run_javascript_code for quick programs, "
                                     "execute_code for other languages and options; print what "
                                     "you want to see.")});
    SandboxTools::registerAll(server, sandbox);
    qCInfo(lcApp).noquote() << "serving MCP on stdio; engine" << where.socketPath << "("
                            << where.source << "), instance" << config.instanceId.left(8);

    auto *transport = new StdioTransport(STDIN_FILENO, STDOUT_FILENO);
    McpSession *session = server.openSession(transport);

    bool stopping = false;
    const auto stop = [&](const char *why) {
        if (stopping)
            return;
        stopping = true;
        qCInfo(lcApp) << "stopping:" << why;
        // Running programs are stopped by the shutdown; their calls are still answered (as
        // cancelled) so a client that is still reading learns what happened.
        QObject::connect(&sandbox, &SandboxService::shutdownFinished, &app, [&app, transport] {
            transport->flushBlocking();
            app.quit();
        });
        sandbox.shutdown();
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
    // Warm the pool at once (this also finds the engine, so a problem shows in the log before
    // the first call); without a pool, just look for the engine.
    sandbox.reapOrphans();
    if (config.poolSize > 0) {
        sandbox.warmUp();
    } else {
        EngineReply *probe = engine.ping();
        QObject::connect(probe, &EngineReply::finished, probe, &QObject::deleteLater);
    }
    return app.exec();
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
    case CommandLine::Mode::Stdio:
        return runStdio(app, cl);
    case CommandLine::Mode::NoMode:
        break;
    }
    // No window in this version: a client that started us without --stdio still gets a server
    // (its stdin is a pipe); a person at a terminal gets directions.
    if (!isatty(STDIN_FILENO))
        return runStdio(app, cl);
    std::fprintf(stderr, "code-sandbox: this version has no window yet. MCP clients start it as\n"
                         "  code-sandbox --stdio\n"
                         "See --help for the options.\n");
    return 2;
}
