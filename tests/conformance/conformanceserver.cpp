// conformance-server: the project's MCP library serving the conformance suite's fixtures over
// Streamable HTTP on loopback, without a token (the suite cannot send one).

#include "fixtures.h"
#include "mcpserver.h"
#include "streamablehttpserver.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QHostAddress>
#include <cstdio>

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("conformance-server"));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Serves the MCP conformance fixtures at http://127.0.0.1:PORT/mcp"));
    parser.addHelpOption();
    const QCommandLineOption portOption(QStringLiteral("port"),
                                        QStringLiteral("Port to listen on (0: any free port)."),
                                        QStringLiteral("port"), QStringLiteral("0"));
    parser.addOption(portOption);
    parser.process(app);
    bool ok = false;
    const uint port = parser.value(portOption).toUInt(&ok);
    if (!ok || port > 65535) {
        std::fprintf(stderr, "conformance-server: --port takes 0-65535\n");
        return 2;
    }

    McpServer server(ServerInfo{QStringLiteral("mcp-conformance-test-server"),
                                QStringLiteral("MCP Conformance Fixtures"), QStringLiteral("1.0.0"),
                                QString()});
    Fixtures::registerAll(server);

    StreamableHttpServer::Config config;
    config.path = "/mcp";
    StreamableHttpServer http(&server, config);
    if (!http.listen(QHostAddress::LocalHost, quint16(port))) {
        std::fprintf(stderr, "conformance-server: cannot listen on 127.0.0.1:%u: %s\n", port,
                     qPrintable(http.errorString()));
        return 1;
    }
    // The runner reads this line to learn the port.
    std::printf("http://127.0.0.1:%u/mcp\n", unsigned(http.port()));
    std::fflush(stdout);
    return app.exec();
}
