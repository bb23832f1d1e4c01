#include "appsettings.h"
#include "calltimeout.h"
#include "commandline.h"
#include "httptoken.h"
#include "runnetwork.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

using Mode = CommandLine::Mode;
Q_DECLARE_METATYPE(CommandLine::Mode)

namespace {
const QString kProgram = QStringLiteral("/usr/local/bin/code-sandbox");

QProcessEnvironment environment(const QStringList &assignments)
{
    QProcessEnvironment env;
    for (const QString &a : assignments) {
        const qsizetype eq = a.indexOf(u'=');
        env.insert(a.left(eq), a.mid(eq + 1));
    }
    return env;
}

CommandLine parse(const QStringList &args, const QStringList &env = {})
{
    return CommandLine::parse(QStringList{kProgram} + args, environment(env));
}

QStringList assignments(const QList<QPair<QString, QString>> &vars)
{
    QStringList out;
    for (const auto &v : vars)
        out.append(v.first + u'=' + v.second);
    return out;
}

QStringList assignments(const QMap<QString, QString> &map)
{
    QStringList out;
    for (auto it = map.begin(); it != map.end(); ++it)
        out.append(it.key() + u'=' + it.value());
    return out;
}
} // namespace

class tst_CommandLine : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void mode_data();
    void mode();
    void helpText();
    void usageLine_data();
    void usageLine();
    void versionText();
    void errors_data();
    void errors();
    void timeouts_data();
    void timeouts();
    void memory_data();
    void memory();
    void cpus_data();
    void cpus();
    void outputLimit();
    void network_data();
    void network();
    void egress_data();
    void egress();
    void egressFile();
    void indexHosts_data();
    void indexHosts();
    void passThrough_data();
    void passThrough();
    void passThroughNeverReadsTheRealEnvironment();
    void secrets_data();
    void secrets();
    void images_data();
    void images();
    void engine();
    void defaults();
    void windowAndJournalFlags_data();
    void windowAndJournalFlags();
    void parseSize_data();
    void parseSize();
    void httpOptions();
    void httpOptionErrors_data();
    void httpOptionErrors();
    void tokenResolution_data();
    void tokenResolution();
    void storedTokenIsPrivateAndStable();
    void windowSettings();
    void windowSettingsSecrets();
    void windowSettingsWorkspaces();
    void callTimeout_data();
    void callTimeout();
};

void tst_CommandLine::mode_data()
{
    QTest::addColumn<QStringList>("arguments"); // program path first
    QTest::addColumn<Mode>("mode");

    QTest::newRow("--stdio") << QStringList{kProgram, "--stdio"} << Mode::Stdio;
    QTest::newRow("no options") << QStringList{kProgram} << Mode::NoMode;
    QTest::newRow("code-sandbox-mcp implies stdio")
        << QStringList{"/usr/local/bin/code-sandbox-mcp"} << Mode::Stdio;
    QTest::newRow("code-sandbox-mcp relative") << QStringList{"code-sandbox-mcp"} << Mode::Stdio;
    QTest::newRow("code-sandbox-mcp with --stdio")
        << QStringList{"/opt/cs/code-sandbox-mcp", "--stdio"} << Mode::Stdio;
    QTest::newRow("a directory named code-sandbox-mcp")
        << QStringList{"/opt/code-sandbox-mcp/code-sandbox"} << Mode::NoMode;
    QTest::newRow("--help") << QStringList{kProgram, "--help"} << Mode::Help;
    QTest::newRow("-h") << QStringList{kProgram, "-h"} << Mode::Help;
    QTest::newRow("--help with --stdio")
        << QStringList{kProgram, "--stdio", "--help"} << Mode::Help;
    QTest::newRow("--version") << QStringList{kProgram, "--version"} << Mode::Version;
    QTest::newRow("-v") << QStringList{kProgram, "-v"} << Mode::Version;
    QTest::newRow("unknown option") << QStringList{kProgram, "--bogus"} << Mode::Error;
    QTest::newRow("unknown option with --stdio")
        << QStringList{kProgram, "--stdio", "--bogus"} << Mode::Error;
    QTest::newRow("unknown short option") << QStringList{kProgram, "-x"} << Mode::Error;
    QTest::newRow("value on a flag") << QStringList{kProgram, "--stdio=yes"} << Mode::Error;
    QTest::newRow("positional argument") << QStringList{kProgram, "serve"} << Mode::Error;
}

void tst_CommandLine::mode()
{
    QFETCH(QStringList, arguments);
    QFETCH(Mode, mode);

    QCOMPARE(int(CommandLine::parse(arguments, QProcessEnvironment()).mode), int(mode));
}

void tst_CommandLine::helpText()
{
    const CommandLine cl = parse({"--help"});
    QCOMPARE(int(cl.mode), int(Mode::Help));
    for (const char *option :
         {"--stdio", "--pass-through-env", "--python-image", "--js-image", "--engine", "--timeout",
          "--max-timeout", "--memory", "--cpus", "--output-limit", "--network", "--version",
          "--tls-ca", "--tls-cert", "--tls-key", "--insecure-tcp"})
        QVERIFY2(cl.message.contains(QLatin1String(option)), option);
    // --engine explains every form it takes.
    for (const char *form : {"unix:///path", "tcp://host:port", "ssh://[user@]host[:port][/socket]",
                             "context:NAME", "DOCKER_CONTEXT", "CODE_SANDBOX_SSH_CONFIG"})
        QVERIFY2(cl.message.contains(QLatin1String(form)), form);
}

void tst_CommandLine::usageLine_data()
{
    QTest::addColumn<QString>("program"); // argv[0]
    QTest::addColumn<QString>("usage");   // the help text's first line

    QTest::newRow("installed") << kProgram << QStringLiteral("Usage: code-sandbox [options]");
    QTest::newRow("relative") << QStringLiteral("./build/bin/code-sandbox")
                              << QStringLiteral("Usage: code-sandbox [options]");
    QTest::newRow("as code-sandbox-mcp") << QStringLiteral("/usr/local/bin/code-sandbox-mcp")
                                         << QStringLiteral("Usage: code-sandbox-mcp [options]");
    QTest::newRow("a folder with a space") << QStringLiteral("/opt/my tools/code-sandbox")
                                           << QStringLiteral("Usage: code-sandbox [options]");
    QTest::newRow("no argv[0]") << QString() << QStringLiteral("Usage: code-sandbox [options]");
}

// The name it was started as, whether or not a QCoreApplication exists (this test has one, the
// program has none yet when it parses its command line).
void tst_CommandLine::usageLine()
{
    QFETCH(QString, program);
    QFETCH(QString, usage);

    const CommandLine cl =
        CommandLine::parse(QStringList{program, QStringLiteral("--help")}, QProcessEnvironment());
    QCOMPARE(int(cl.mode), int(Mode::Help));
    QCOMPARE(cl.message.section(u'\n', 0, 0), usage);
    QVERIFY(!cl.message.contains(QLatin1String("executable_name")));
}

void tst_CommandLine::versionText()
{
    const CommandLine cl = parse({"--version"});
    QCOMPARE(int(cl.mode), int(Mode::Version));
    QCOMPARE(cl.message, QStringLiteral("code-sandbox " CODE_SANDBOX_VERSION));
}

void tst_CommandLine::errors_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<QString>("message");

    QTest::newRow("unknown option") << QStringList{"--bogus"} << QStringList()
                                    << QStringLiteral("Unknown option 'bogus'.\nTry --help.");
    QTest::newRow("missing value")
        << QStringList{"--timeout"} << QStringList()
        << QStringLiteral("Missing value after '--timeout'.\nTry --help.");
    QTest::newRow("positional argument")
        << QStringList{"--stdio", "serve"} << QStringList()
        << QStringLiteral("unexpected argument 'serve'. Try --help.");

    const QString timeout =
        QStringLiteral("--timeout must be a whole number of seconds ≥ 1, not '%1'");
    QTest::newRow("timeout 0") << QStringList{"--timeout=0"} << QStringList() << timeout.arg("0");
    QTest::newRow("timeout negative")
        << QStringList{"--timeout=-5"} << QStringList() << timeout.arg("-5");
    QTest::newRow("timeout fraction")
        << QStringList{"--timeout", "1.5"} << QStringList() << timeout.arg("1.5");
    QTest::newRow("timeout text") << QStringList{"--timeout", "soon"} << QStringList()
                                  << timeout.arg("soon");
    QTest::newRow("CODE_SANDBOX_TIMEOUT text")
        << QStringList() << QStringList{"CODE_SANDBOX_TIMEOUT=later"} << timeout.arg("later");
    QTest::newRow("max-timeout 0")
        << QStringList{"--max-timeout", "0"} << QStringList()
        << QStringLiteral("--max-timeout must be a whole number of seconds ≥ 1, not '0'");
    QTest::newRow("max-timeout text")
        << QStringList{"--max-timeout", "1m"} << QStringList()
        << QStringLiteral("--max-timeout must be a whole number of seconds ≥ 1, not '1m'");

    const QString memory =
        QStringLiteral("--memory must be a size of at least 6m, like 512m or 1g, not '%1'");
    QTest::newRow("memory garbage")
        << QStringList{"--memory", "lots"} << QStringList() << memory.arg("lots");
    QTest::newRow("memory negative")
        << QStringList{"--memory=-1g"} << QStringList() << memory.arg("-1g");
    QTest::newRow("memory too small")
        << QStringList{"--memory", "5m"} << QStringList() << memory.arg("5m");
    QTest::newRow("memory unknown unit")
        << QStringList{"--memory", "1p"} << QStringList() << memory.arg("1p");
    QTest::newRow("SANDBOX_MEMORY garbage")
        << QStringList() << QStringList{"SANDBOX_MEMORY=big"} << memory.arg("big");

    const QString cpus = QStringLiteral("--cpus must be a number like 0.5 or 2, not '%1'");
    QTest::newRow("cpus 0") << QStringList{"--cpus", "0"} << QStringList() << cpus.arg("0");
    QTest::newRow("cpus text") << QStringList{"--cpus", "half"} << QStringList()
                               << cpus.arg("half");
    QTest::newRow("cpus too many")
        << QStringList{"--cpus", "2000"} << QStringList() << cpus.arg("2000");
    QTest::newRow("SANDBOX_CPUS garbage")
        << QStringList() << QStringList{"SANDBOX_CPUS=all"} << cpus.arg("all");

    QTest::newRow("output-limit too small")
        << QStringList{"--output-limit", "512"} << QStringList()
        << QStringLiteral("--output-limit must be a size of at least 1k, not '512'");

    const QString badName = QStringLiteral("--pass-through-env: '%1' is not a variable name");
    QTest::newRow("variable starting with a digit")
        << QStringList{"--pass-through-env", "GOOD,1BAD"} << QStringList{"GOOD=1"}
        << badName.arg("1BAD");
    QTest::newRow("variable with a dash")
        << QStringList{"--pass-through-env", "API-KEY"} << QStringList() << badName.arg("API-KEY");
    QTest::newRow("variable with a space")
        << QStringList{"--pass-through-env", "A B"} << QStringList() << badName.arg("A B");
    QTest::newRow("variable with =")
        << QStringList{"--pass-through-env", "A=1"} << QStringList() << badName.arg("A=1");
    QTest::newRow("variable with $")
        << QStringList{"--pass-through-env", "$HOME"} << QStringList() << badName.arg("$HOME");
    QTest::newRow("CODE_SANDBOX_PASS_THROUGH_ENV bad name")
        << QStringList() << QStringList{"CODE_SANDBOX_PASS_THROUGH_ENV=OK,not-ok"}
        << badName.arg("not-ok");

    const QString together =
        QStringLiteral("CONTAINER_IMAGE and CONTAINER_LANGUAGE must be set together");
    QTest::newRow("CONTAINER_IMAGE alone")
        << QStringList() << QStringList{"CONTAINER_IMAGE=my/py:1"} << together;
    QTest::newRow("CONTAINER_LANGUAGE alone")
        << QStringList() << QStringList{"CONTAINER_LANGUAGE=python"} << together;
    QTest::newRow("CONTAINER_IMAGE with empty language")
        << QStringList() << QStringList{"CONTAINER_IMAGE=my/py:1", "CONTAINER_LANGUAGE="}
        << together;
}

void tst_CommandLine::errors()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, env);
    QFETCH(QString, message);

    const CommandLine cl = parse(arguments, env);
    QCOMPARE(int(cl.mode), int(Mode::Error));
    QCOMPARE(cl.message, message);
}

void tst_CommandLine::timeouts_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<int>("defaultTimeout");
    QTest::addColumn<int>("maxTimeout");

    QTest::newRow("defaults") << QStringList() << QStringList() << 30 << 300;
    QTest::newRow("--timeout") << QStringList{"--timeout", "60"} << QStringList() << 60 << 300;
    QTest::newRow("--timeout=1") << QStringList{"--timeout=1"} << QStringList() << 1 << 300;
    QTest::newRow("--timeout above the default max")
        << QStringList{"--timeout", "600"} << QStringList() << 600 << 600;
    QTest::newRow("--max-timeout")
        << QStringList{"--max-timeout", "900"} << QStringList() << 30 << 900;
    QTest::newRow("both") << QStringList{"--max-timeout", "10", "--timeout", "5"} << QStringList()
                          << 5 << 10;
    QTest::newRow("CODE_SANDBOX_TIMEOUT")
        << QStringList() << QStringList{"CODE_SANDBOX_TIMEOUT=45"} << 45 << 300;
    QTest::newRow("--timeout wins over CODE_SANDBOX_TIMEOUT")
        << QStringList{"--timeout", "20"} << QStringList{"CODE_SANDBOX_TIMEOUT=45"} << 20 << 300;
}

void tst_CommandLine::timeouts()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, env);
    QFETCH(int, defaultTimeout);
    QFETCH(int, maxTimeout);

    const CommandLine cl = parse(arguments, env);
    QCOMPARE(cl.message, QString());
    QCOMPARE(int(cl.mode), int(Mode::NoMode));
    QCOMPARE(cl.config.defaultTimeoutSec, defaultTimeout);
    QCOMPARE(cl.config.maxTimeoutSec, maxTimeout);
}

void tst_CommandLine::memory_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<qint64>("bytes");

    const qint64 mib = 1024 * 1024;
    QTest::newRow("default") << QStringList() << QStringList() << 512 * mib;
    QTest::newRow("512m") << QStringList{"--memory", "512m"} << QStringList() << 512 * mib;
    QTest::newRow("1g") << QStringList{"--memory", "1g"} << QStringList() << 1024 * mib;
    QTest::newRow("1.5g") << QStringList{"--memory", "1.5g"} << QStringList() << 1536 * mib;
    QTest::newRow("256MiB") << QStringList{"--memory", "256MiB"} << QStringList() << 256 * mib;
    QTest::newRow("2GB") << QStringList{"--memory=2GB"} << QStringList() << 2048 * mib;
    QTest::newRow("smallest, 6m") << QStringList{"--memory", "6m"} << QStringList() << 6 * mib;
    QTest::newRow("plain bytes") << QStringList{"--memory", "1073741824"} << QStringList()
                                 << 1024 * mib;
    QTest::newRow("SANDBOX_MEMORY")
        << QStringList() << QStringList{"SANDBOX_MEMORY=1g"} << 1024 * mib;
    QTest::newRow("--memory wins over SANDBOX_MEMORY")
        << QStringList{"--memory", "256m"} << QStringList{"SANDBOX_MEMORY=1g"} << 256 * mib;
    QTest::newRow("--memory wins over bad SANDBOX_MEMORY")
        << QStringList{"--memory", "256m"} << QStringList{"SANDBOX_MEMORY=bad"} << 256 * mib;
}

void tst_CommandLine::memory()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, env);
    QFETCH(qint64, bytes);

    const CommandLine cl = parse(arguments, env);
    QCOMPARE(cl.message, QString());
    QCOMPARE(cl.config.memoryBytes, bytes);
}

void tst_CommandLine::cpus_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<double>("cpus");

    QTest::newRow("default") << QStringList() << QStringList() << 1.0;
    QTest::newRow("half") << QStringList{"--cpus", "0.5"} << QStringList() << 0.5;
    QTest::newRow("two") << QStringList{"--cpus=2"} << QStringList() << 2.0;
    QTest::newRow("smallest") << QStringList{"--cpus", "0.01"} << QStringList() << 0.01;
    QTest::newRow("largest") << QStringList{"--cpus", "1024"} << QStringList() << 1024.0;
    QTest::newRow("SANDBOX_CPUS") << QStringList() << QStringList{"SANDBOX_CPUS=4"} << 4.0;
    QTest::newRow("--cpus wins over SANDBOX_CPUS")
        << QStringList{"--cpus", "0.5"} << QStringList{"SANDBOX_CPUS=4"} << 0.5;
}

void tst_CommandLine::cpus()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, env);
    QFETCH(double, cpus);

    const CommandLine cl = parse(arguments, env);
    QCOMPARE(cl.message, QString());
    QCOMPARE(cl.config.cpus, cpus);
}

void tst_CommandLine::outputLimit()
{
    QCOMPARE(parse({}).config.outputCapBytes, qint64(1024 * 1024));
    QCOMPARE(parse({"--output-limit", "1k"}).config.outputCapBytes, qint64(1024));
    QCOMPARE(parse({"--output-limit", "4m"}).config.outputCapBytes, qint64(4 * 1024 * 1024));
}

void tst_CommandLine::network_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<bool>("network");

    QTest::newRow("off by default") << QStringList() << QStringList() << false;
    QTest::newRow("--network") << QStringList{"--network"} << QStringList() << true;
    QTest::newRow("SANDBOX_NETWORK_MODE none")
        << QStringList() << QStringList{"SANDBOX_NETWORK_MODE=none"} << false;
    QTest::newRow("SANDBOX_NETWORK_MODE empty")
        << QStringList() << QStringList{"SANDBOX_NETWORK_MODE="} << false;
    QTest::newRow("SANDBOX_NETWORK_MODE bridge")
        << QStringList() << QStringList{"SANDBOX_NETWORK_MODE=bridge"} << true;
    QTest::newRow("--network wins over none")
        << QStringList{"--network"} << QStringList{"SANDBOX_NETWORK_MODE=none"} << true;
}

void tst_CommandLine::network()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, env);
    QFETCH(bool, network);

    const CommandLine cl = parse(arguments, env);
    QCOMPARE(cl.message, QString());
    QCOMPARE(cl.config.network, network);
}

void tst_CommandLine::egress_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<QStringList>("egress");
    QTest::addColumn<QString>("error");

    QTest::newRow("none by default")
        << QStringList() << QStringList() << QStringList() << QString();
    QTest::newRow("repeated and comma-separated, normalised, once each")
        << QStringList{"--egress", "PyPI.org.", "--egress", "*.example.com:8443,pypi.org"}
        << QStringList() << QStringList{"pypi.org", "*.example.com:8443"} << QString();
    QTest::newRow("from the environment")
        << QStringList() << QStringList{"CODE_SANDBOX_EGRESS=api.github.com,10.0.0.5:8080"}
        << QStringList{"api.github.com", "10.0.0.5:8080"} << QString();
    QTest::newRow("not a pattern")
        << QStringList{"--egress", "pypi.org", "--egress", "http://x.org/"} << QStringList()
        << QStringList() << QStringLiteral("--egress: not a host pattern");
    QTest::newRow("a bare wildcard") << QStringList{"--egress", "*"} << QStringList()
                                     << QStringList() << QStringLiteral("--egress: not a host");
    QTest::newRow("a bad port") << QStringList{"--egress", "pypi.org:99999"} << QStringList()
                                << QStringList() << QStringLiteral("--egress: not a host");
}

void tst_CommandLine::egress()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, env);
    QFETCH(QStringList, egress);
    QFETCH(QString, error);

    const CommandLine cl = parse(arguments, env);
    if (error.isEmpty()) {
        QCOMPARE(cl.message, QString());
        QCOMPARE(cl.config.egress, egress);
    } else {
        QVERIFY2(cl.message.contains(error), qPrintable(cl.message));
        QCOMPARE(int(cl.mode), int(Mode::Error));
    }
}

void tst_CommandLine::egressFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("egress.txt"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("# the team's hosts\n\npypi.org\n  files.pythonhosted.org  \n*.npmjs.org\n");
    file.close();
    CommandLine cl = parse({"--egress-file", path, "--egress", "api.github.com"});
    QCOMPARE(cl.message, QString());
    QCOMPARE(cl.config.egress.size(), 4);
    for (const char *host : {"pypi.org", "files.pythonhosted.org", "*.npmjs.org", "api.github.com"})
        QVERIFY2(cl.config.egress.contains(QString::fromLatin1(host)), host);

    QVERIFY(file.open(QIODevice::Append));
    file.write("not a host!\n");
    file.close();
    cl = parse({"--egress-file", path});
    QVERIFY2(cl.message.contains(path) && cl.message.contains(QStringLiteral("not a host!")),
             qPrintable(cl.message));
    cl = parse({"--egress-file", dir.filePath(QStringLiteral("missing.txt"))});
    QVERIFY2(cl.message.contains(QStringLiteral("cannot read")), qPrintable(cl.message));
}

void tst_CommandLine::indexHosts_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<QStringList>("hosts");      // SandboxConfig::indexHosts
    QTest::addColumn<QStringList>("installEnv"); // what install containers are given
    QTest::addColumn<QString>("error");

    QTest::newRow("none by default")
        << QStringList() << QStringList{"PATH=/bin"} << QStringList() << QStringList() << QString();
    QTest::newRow("repeated and comma-separated, normalised, once each")
        << QStringList{"--index-host", "Mirror.Example.", "--index-host",
                       "*.cdn.example:8443,mirror.example"}
        << QStringList() << QStringList{"mirror.example", "*.cdn.example:8443"} << QStringList()
        << QString();
    QTest::newRow("from the environment")
        << QStringList() << QStringList{"CODE_SANDBOX_INDEX_HOSTS=pypi.mirror.example"}
        << QStringList{"pypi.mirror.example"} << QStringList() << QString();
    QTest::newRow("not a pattern")
        << QStringList{"--index-host", "https://mirror.example/simple"} << QStringList()
        << QStringList() << QStringList() << QStringLiteral("--index-host: not a host pattern");
    // The host's own index settings go to installs, and their hosts (with a port that is not the
    // scheme's) join the list; pip's extra indexes are several.
    QTest::newRow("the host's pip and npm indexes")
        << QStringList{"--index-host", "extra.example"}
        << QStringList{"PIP_INDEX_URL=https://pypi.corp.example/simple",
                       "PIP_EXTRA_INDEX_URL=http://a.example:8080/simple "
                       "https://b.example/simple",
                       "npm_config_registry=https://npm.corp.example/"}
        << QStringList{"extra.example", "pypi.corp.example", "a.example:8080", "b.example",
                       "npm.corp.example"}
        << QStringList{"PIP_INDEX_URL=https://pypi.corp.example/simple",
                       "PIP_EXTRA_INDEX_URL=http://a.example:8080/simple https://b.example/simple",
                       "npm_config_registry=https://npm.corp.example/"}
        << QString();
    // A setting that names no http(s) host would not work in the sandbox: left out, and the
    // server still starts.
    QTest::newRow("a local index is left out")
        << QStringList()
        << QStringList{"PIP_INDEX_URL=file:///srv/wheels",
                       "NPM_CONFIG_REGISTRY=https://npm.corp.example"}
        << QStringList{"npm.corp.example"}
        << QStringList{"NPM_CONFIG_REGISTRY=https://npm.corp.example"} << QString();
    QTest::newRow("proxies go to installs, their hosts do not join")
        << QStringList() << QStringList{"HTTPS_PROXY=http://proxy:3128", "no_proxy=.corp"}
        << QStringList() << QStringList{"HTTPS_PROXY=http://proxy:3128", "no_proxy=.corp"}
        << QString();
}

void tst_CommandLine::indexHosts()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, env);
    QFETCH(QStringList, hosts);
    QFETCH(QStringList, installEnv);
    QFETCH(QString, error);

    const CommandLine cl = parse(QStringList{"--stdio"} + arguments, env);
    if (error.isEmpty()) {
        QCOMPARE(cl.message, QString());
        QCOMPARE(cl.config.indexHosts, hosts);
        QCOMPARE(cl.config.installEnv, installEnv);
    } else {
        QVERIFY2(cl.message.contains(error), qPrintable(cl.message));
        QCOMPARE(int(cl.mode), int(Mode::Error));
    }
}

void tst_CommandLine::passThrough_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<QStringList>("passed"); // NAME=value, in order
    QTest::addColumn<QStringList>("missing");

    QTest::newRow("none") << QStringList() << QStringList{"API_KEY=secret"} << QStringList()
                          << QStringList();
    QTest::newRow("present") << QStringList{"--pass-through-env", "API_KEY"}
                             << QStringList{"API_KEY=secret", "OTHER=x"}
                             << QStringList{"API_KEY=secret"} << QStringList();
    QTest::newRow("present and missing")
        << QStringList{"--pass-through-env=API_KEY,MISSING"} << QStringList{"API_KEY=s3"}
        << QStringList{"API_KEY=s3"} << QStringList{"MISSING"};
    QTest::newRow("order kept") << QStringList{"--pass-through-env", "B,A"}
                                << QStringList{"A=1", "B=2"} << QStringList{"B=2", "A=1"}
                                << QStringList();
    QTest::newRow("spaces and empty items")
        << QStringList{"--pass-through-env", " A , ,B ,"} << QStringList{"A=1", "B=2"}
        << QStringList{"A=1", "B=2"} << QStringList();
    QTest::newRow("empty value is present")
        << QStringList{"--pass-through-env", "EMPTY"} << QStringList{"EMPTY="}
        << QStringList{"EMPTY="} << QStringList();
    QTest::newRow("value with = and spaces")
        << QStringList{"--pass-through-env", "DSN"} << QStringList{"DSN=a=b c"}
        << QStringList{"DSN=a=b c"} << QStringList();
    QTest::newRow("lower case and underscore")
        << QStringList{"--pass-through-env", "_tok3n"} << QStringList{"_tok3n=v"}
        << QStringList{"_tok3n=v"} << QStringList();
    QTest::newRow("CODE_SANDBOX_PASS_THROUGH_ENV")
        << QStringList() << QStringList{"CODE_SANDBOX_PASS_THROUGH_ENV=TOKEN", "TOKEN=t"}
        << QStringList{"TOKEN=t"} << QStringList();
    QTest::newRow("option wins over CODE_SANDBOX_PASS_THROUGH_ENV")
        << QStringList{"--pass-through-env", "A"}
        << QStringList{"CODE_SANDBOX_PASS_THROUGH_ENV=B", "A=1", "B=2"} << QStringList{"A=1"}
        << QStringList();
}

void tst_CommandLine::passThrough()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, env);
    QFETCH(QStringList, passed);
    QFETCH(QStringList, missing);

    const CommandLine cl = parse(arguments, env);
    QCOMPARE(cl.message, QString());
    QCOMPARE(assignments(cl.config.passThroughEnv), passed);
    QCOMPARE(cl.missingPassThrough, missing);
}

void tst_CommandLine::secrets_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<QStringList>("bound"); // NAME=value@hosts, in order
    QTest::addColumn<QString>("error");     // a part of the message, "" for none

    QTest::newRow("one") << QStringList{"--secret", "KEY=HOST_KEY@api.example.com"}
                         << QStringList{"HOST_KEY=sk-1"} << QStringList{"KEY=sk-1@api.example.com"}
                         << QString();
    QTest::newRow("two hosts, two secrets")
        << QStringList{"--secret", "A=VA@a.example.com,*.b.example.com:8443", "--secret",
                       "B=VB@b.example.com"}
        << QStringList{"VA=1", "VB=2"}
        << QStringList{"A=1@a.example.com,*.b.example.com:8443", "B=2@b.example.com"} << QString();
    QTest::newRow("with an allow-list")
        << QStringList{"--secret", "K=K@x.example.com", "--egress", "pypi.org", "--network"}
        << QStringList{"K=v"} << QStringList{"K=v@x.example.com"} << QString();
    QTest::newRow("missing variable")
        << QStringList{"--secret", "K=NOT_SET@x.example.com"} << QStringList() << QStringList()
        << QStringLiteral("the host variable NOT_SET is not set");
    QTest::newRow("no host") << QStringList{"--secret", "K=V@"} << QStringList{"V=1"}
                             << QStringList() << QStringLiteral("names no host");
    QTest::newRow("bad host") << QStringList{"--secret", "K=V@http://x"} << QStringList{"V=1"}
                              << QStringList() << QStringLiteral("--secret K:");
    QTest::newRow("not NAME=VAR@HOST")
        << QStringList{"--secret", "K@x.example.com"} << QStringList{"K=1"} << QStringList()
        << QStringLiteral("--secret takes NAME=HOSTVAR@HOST");
    QTest::newRow("twice") << QStringList{"--secret", "K=V@a.example.com", "--secret",
                                          "K=V@b.example.com"}
                           << QStringList{"V=1"} << QStringList() << QStringLiteral("given twice");
    QTest::newRow("open network") << QStringList{"--secret", "K=V@a.example.com", "--network"}
                                  << QStringList{"V=1"} << QStringList()
                                  << QStringLiteral("--secret needs the allow-list mode");
}

void tst_CommandLine::secrets()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, env);
    QFETCH(QStringList, bound);
    QFETCH(QString, error);

    const CommandLine cl = parse(QStringList{"--stdio"} + arguments, env);
    if (!error.isEmpty()) {
        QVERIFY2(cl.message.contains(error), qPrintable(cl.message));
        // The message names the variable, never its value.
        for (const QString &assignment : env)
            if (assignment.section(u'=', 1).size() > 1)
                QVERIFY(!cl.message.contains(assignment.section(u'=', 1)));
        return;
    }
    QCOMPARE(cl.message, QString());
    QStringList got;
    for (const SandboxSpec::Secret &s : cl.config.secrets)
        got.append(s.name + u'=' + QString::fromUtf8(s.value) + u'@' + s.hosts.join(u','));
    QCOMPARE(got, bound);
}

void tst_CommandLine::passThroughNeverReadsTheRealEnvironment()
{
    // PATH and HOME are set in this process; only the environment handed in may count.
    QVERIFY(qEnvironmentVariableIsSet("PATH"));
    qputenv("CODE_SANDBOX_UNIT_SECRET", "from the real environment");
    const CommandLine cl = parse({"--pass-through-env", "PATH,CODE_SANDBOX_UNIT_SECRET"},
                                 {"CODE_SANDBOX_UNIT_SECRET=handed in"});
    qunsetenv("CODE_SANDBOX_UNIT_SECRET");
    QCOMPARE(assignments(cl.config.passThroughEnv),
             QStringList{"CODE_SANDBOX_UNIT_SECRET=handed in"});
    QCOMPARE(cl.missingPassThrough, QStringList{"PATH"});
}

void tst_CommandLine::images_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<QStringList>("images"); // language=image, sorted by language

    QTest::newRow("none") << QStringList() << QStringList() << QStringList();
    QTest::newRow("--python-image") << QStringList{"--python-image", "my/py:3.12"} << QStringList()
                                    << QStringList{"python=my/py:3.12"};
    QTest::newRow("--js-image") << QStringList{"--js-image=my/node:22"} << QStringList()
                                << QStringList{"javascript=my/node:22"};
    QTest::newRow("both options") << QStringList{"--python-image", "p", "--js-image", "j"}
                                  << QStringList() << QStringList{"javascript=j", "python=p"};
    QTest::newRow("CONTAINER_IMAGE and CONTAINER_LANGUAGE")
        << QStringList() << QStringList{"CONTAINER_IMAGE=corp/py:1", "CONTAINER_LANGUAGE=Python"}
        << QStringList{"python=corp/py:1"};
    QTest::newRow("CONTAINER_LANGUAGE as an alias")
        << QStringList() << QStringList{"CONTAINER_IMAGE=corp/node:1", "CONTAINER_LANGUAGE=js"}
        << QStringList{"js=corp/node:1"};
    QTest::newRow("--python-image wins over CONTAINER_IMAGE")
        << QStringList{"--python-image", "opt/py"}
        << QStringList{"CONTAINER_IMAGE=env/py", "CONTAINER_LANGUAGE=python"}
        << QStringList{"python=opt/py"};
}

void tst_CommandLine::images()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, env);
    QFETCH(QStringList, images);

    const CommandLine cl = parse(arguments, env);
    QCOMPARE(cl.message, QString());
    QCOMPARE(assignments(cl.images), images);
}

void tst_CommandLine::engine()
{
    QCOMPARE(parse({}).engine, QString());
    QCOMPARE(parse({"--engine", "unix:///run/podman/podman.sock"}).engine,
             QStringLiteral("unix:///run/podman/podman.sock"));
    // The locator reads DOCKER_HOST itself; the command line only carries the option.
    QCOMPARE(parse({}, {"DOCKER_HOST=unix:///d.sock"}).engine, QString());
    QCOMPARE(parse({}).engines, QStringList());

    // Repeatable, in order; `engine` is the first.
    const CommandLine many =
        parse({"--engine", "unix:///a.sock", "--engine", "ssh://me@build:2222/run/docker.sock",
               "--engine", "context:ci", "--engine", "tcp://127.0.0.1:2375"});
    QCOMPARE(many.message, QString());
    QCOMPARE(many.engines, QStringList({"unix:///a.sock", "ssh://me@build:2222/run/docker.sock",
                                        "context:ci", "tcp://127.0.0.1:2375"}));
    QCOMPARE(many.engine, QStringLiteral("unix:///a.sock"));
    QCOMPARE(many.engineOptions().engines, many.engines);
    QVERIFY(!many.insecureTcp);
    QCOMPARE(many.runtime, QString());

    // A value that is no address is refused at once, with the reason.
    const auto error = [](const QStringList &args) {
        const CommandLine cl = parse(args);
        return cl.mode == Mode::Error ? cl.message : QString();
    };
    QVERIFY(error({"--engine", "docker.sock"})
                .contains(u"--engine: 'docker.sock' is not an engine address"));
    QVERIFY(error({"--engine", "npipe:////./pipe/x"}).contains(u"npipe:// is not supported"));
    QVERIFY(error({"--engine", "ssh://u:secret@h"}).contains(u"no password"));
    QVERIFY(!error({"--engine", "ssh://u:secret@h"}).contains(u"secret"));
    QVERIFY(error({"--engine", "context:bad name"}).contains(u"not a Docker context name"));
    QVERIFY(error({"--engine", "tcp://h:99999"}).contains(u"tcp://h:99999"));

    // A runtime: for every Docker/Podman engine (--runtime), or one engine's (?runtime=NAME).
    const CommandLine runtimes = parse({"--engine", "unix:///a.sock?runtime=runsc", "--engine",
                                        "context:ci?runtime=kata", "--runtime", "runsc"});
    QCOMPARE(runtimes.message, QString());
    QCOMPARE(runtimes.runtime, QStringLiteral("runsc"));
    QCOMPARE(runtimes.engines,
             QStringList({"unix:///a.sock?runtime=runsc", "context:ci?runtime=kata"}));
    QVERIFY(error({"--engine", "unix:///a.sock?network=none"}).contains(u"only runtime=NAME"));
    QVERIFY(error({"--engine", "unix:///a.sock?runtime="}).contains(u"only runtime=NAME"));
    QVERIFY(
        error({"--runtime", "run sc"}).contains(u"--runtime: 'run sc' is not a runtime's name"));

    // Kubernetes clusters are kept apart: they are resolved from the kubeconfig, not located.
    const CommandLine clusters =
        parse({"--engine", "k8s://prod/code-sandbox", "--engine", "unix:///a.sock", "--max-pods",
               "20", "--image-prefix", "registry.example.com/team", "--runtime-class", "gvisor"});
    QCOMPARE(clusters.message, QString());
    QCOMPARE(clusters.kubeEngines, QStringList{"k8s://prod/code-sandbox"});
    QCOMPARE(clusters.engines, QStringList{"unix:///a.sock"});
    QCOMPARE(clusters.maxPods, 20);
    QCOMPARE(clusters.imagePrefix, QStringLiteral("registry.example.com/team"));
    QCOMPARE(clusters.runtimeClass, QStringLiteral("gvisor"));
    QCOMPARE(parse({"--engine", "k8s://"}).kubeEngines, QStringList{"k8s://"});
    QVERIFY(error({"--engine", "k8s://ctx/Not_A_Namespace"}).startsWith(u"--engine: "));
    QVERIFY(error({"--max-pods", "0"}).contains(u"--max-pods"));

    // TLS files: for a tcp:// engine of the command line, existing, certificate with key.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (const char *name : {"ca.pem", "cert.pem", "key.pem"}) {
        QFile f(dir.filePath(QLatin1String(name)));
        QVERIFY(f.open(QIODevice::WriteOnly));
    }
    const QString ca = dir.filePath("ca.pem"), cert = dir.filePath("cert.pem"),
                  key = dir.filePath("key.pem");
    const CommandLine tls = parse({"--engine", "tcp://build:2376", "--tls-ca", ca, "--tls-cert",
                                   cert, "--tls-key", key, "--insecure-tcp"});
    QCOMPARE(tls.message, QString());
    QCOMPARE(tls.tlsCa, ca);
    QCOMPARE(tls.engineOptions().tlsCert, cert);
    QCOMPARE(tls.engineOptions().tlsKey, key);
    QVERIFY(tls.engineOptions().insecureTcp);
    QVERIFY(error({"--engine", "tcp://build:2376", "--tls-cert", cert})
                .contains(u"--tls-cert and --tls-key go together"));
    QVERIFY(error({"--engine", "tcp://build:2376", "--tls-ca", dir.filePath("none.pem")})
                .contains(u"is not a file"));
    // The engine's CA is the only trust root: a client certificate alone is refused, and this
    // machine's store is used only when asked for by name.
    QVERIFY(error({"--engine", "tcp://build:2376", "--tls-cert", cert, "--tls-key", key})
                .contains(u"--tls-cert and --tls-key need --tls-ca"));
    const CommandLine system = parse({"--engine", "tcp://build:2376", "--tls-ca", "system",
                                      "--tls-cert", cert, "--tls-key", key});
    QCOMPARE(system.message, QString());
    QCOMPARE(system.tlsCa, QStringLiteral("system"));
    const EngineLocator::Result located = EngineLocator::locate(
        system.engineOptions(), QProcessEnvironment(), [](const QString &) { return false; });
    QVERIFY2(located.ok(), qPrintable(located.error));
    QVERIFY(located.address.systemCa);
    QVERIFY(error({"--tls-ca", ca}).contains(u"are for tcp:// engines given with --engine"));
    QVERIFY(error({"--engine", "ssh://h", "--tls-ca", ca})
                .contains(u"are for tcp:// engines given with --engine"));
}

void tst_CommandLine::windowAndJournalFlags_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<bool>("history");
    QTest::addColumn<bool>("monitor");
    QTest::addColumn<bool>("hidden");
    QTest::addColumn<QStringList>("given");
    QTest::newRow("none") << QStringList{} << true << true << false << QStringList{};
    QTest::newRow("--no-history") << QStringList{"--stdio", "--no-history"} << false << true
                                  << false << QStringList{"stdio", "no-history"};
    QTest::newRow("--no-monitor") << QStringList{"--http", "--no-monitor"} << true << false << false
                                  << QStringList{"http", "no-monitor"};
    QTest::newRow("--hidden with options the window's settings would fill")
        << QStringList{"--hidden", "--port", "9000", "--memory", "1g"} << true << true << true
        << QStringList{"hidden", "port", "memory"};
}

void tst_CommandLine::windowAndJournalFlags()
{
    QFETCH(QStringList, args);
    QFETCH(bool, history);
    QFETCH(bool, monitor);
    QFETCH(bool, hidden);
    QFETCH(QStringList, given);
    const CommandLine cl = parse(args);
    QVERIFY2(cl.mode != Mode::Error, qPrintable(cl.message));
    QCOMPARE(cl.history, history);
    QCOMPARE(cl.monitor, monitor);
    QCOMPARE(cl.startHidden, hidden);
    // The window fills in from its settings only what the command line left open.
    QCOMPARE(cl.given, given);
}

void tst_CommandLine::defaults()
{
    const CommandLine cl = parse({"--stdio"});
    const SandboxConfig fresh;
    QCOMPARE(int(cl.mode), int(Mode::Stdio));
    QCOMPARE(cl.message, QString());
    QCOMPARE(cl.config.memoryBytes, fresh.memoryBytes);
    QCOMPARE(cl.config.cpus, fresh.cpus);
    QCOMPARE(cl.config.pidsLimit, fresh.pidsLimit);
    QCOMPARE(cl.config.network, false);
    QCOMPARE(cl.config.defaultTimeoutSec, 30);
    QCOMPARE(cl.config.maxTimeoutSec, 300);
    QVERIFY(cl.config.passThroughEnv.isEmpty());
    QVERIFY(cl.missingPassThrough.isEmpty());
    QVERIFY(cl.images.isEmpty());
}

void tst_CommandLine::parseSize_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("bytes");

    const qint64 k = 1024;
    QTest::newRow("0") << "0" << qint64(0);
    QTest::newRow("bytes") << "1073741824" << qint64(1073741824);
    QTest::newRow("1b") << "1b" << qint64(1);
    QTest::newRow("1k") << "1k" << k;
    QTest::newRow("1K") << "1K" << k;
    QTest::newRow("1kb") << "1kb" << k;
    QTest::newRow("1KiB") << "1KiB" << k;
    QTest::newRow("512m") << "512m" << 512 * k * k;
    QTest::newRow("256MiB") << "256MiB" << 256 * k * k;
    QTest::newRow("1g") << "1g" << k * k * k;
    QTest::newRow("1.5g") << "1.5g" << 3 * k * k * k / 2;
    QTest::newRow("1 GiB") << "1 GiB" << k * k * k;
    QTest::newRow("2t") << "2t" << 2 * k * k * k * k;
    QTest::newRow("spaces around") << "  64m  " << 64 * k * k;
    QTest::newRow("fraction of a byte dropped") << "1.9" << qint64(1);

    QTest::newRow("empty") << "" << qint64(-1);
    QTest::newRow("blank") << "   " << qint64(-1);
    QTest::newRow("unit only") << "m" << qint64(-1);
    QTest::newRow("negative") << "-1g" << qint64(-1);
    QTest::newRow("unknown unit") << "1x" << qint64(-1);
    QTest::newRow("petabytes") << "1p" << qint64(-1);
    QTest::newRow("two units") << "1mg" << qint64(-1);
    QTest::newRow("exponent") << "1e3" << qint64(-1);
    QTest::newRow("hex") << "0x10" << qint64(-1);
    QTest::newRow("dangling dot") << "1.g" << qint64(-1);
    QTest::newRow("comma decimal") << "1,5g" << qint64(-1);
    QTest::newRow("words") << "lots" << qint64(-1);
    // 10^8 TiB is past qint64: unreadable as a size, not a wrapped-around number.
    QTest::newRow("beyond qint64") << "100000000t" << qint64(-1);
}

void tst_CommandLine::parseSize()
{
    QFETCH(QString, text);
    QFETCH(qint64, bytes);

    QCOMPARE(CommandLine::parseSize(text), bytes);
}

void tst_CommandLine::httpOptions()
{
    const CommandLine d = parse({"--http"});
    QCOMPARE(d.httpHeadTimeoutMs, 10000);
    QCOMPARE(d.httpBodyTimeoutMs, 30000);
    QVERIFY(d.allowHosts.isEmpty());

    const CommandLine cl = parse({"--http", "--allow-host", "Sandbox.LAN", "--allow-host",
                                  "192.168.1.5", "--allow-host", "[fe80::1]", "--http-head-timeout",
                                  "2.5", "--http-body-timeout", "60"});
    QCOMPARE(cl.mode, Mode::Http);
    QCOMPARE(cl.allowHosts, (QStringList{"sandbox.lan", "192.168.1.5", "fe80::1"}));
    QCOMPARE(cl.httpHeadTimeoutMs, 2500);
    QCOMPARE(cl.httpBodyTimeoutMs, 60000);
}

void tst_CommandLine::httpOptionErrors_data()
{
    QTest::addColumn<QStringList>("arguments");
    QTest::addColumn<QString>("message");

    QTest::newRow("allow-host with scheme")
        << QStringList{"--http", "--allow-host", "http://x/"} << "--allow-host takes";
    QTest::newRow("allow-host with space")
        << QStringList{"--http", "--allow-host", "a b"} << "--allow-host takes";
    QTest::newRow("allow-host empty")
        << QStringList{"--http", "--allow-host", ""} << "--allow-host takes";
    QTest::newRow("head timeout zero")
        << QStringList{"--http", "--http-head-timeout", "0"} << "--http-head-timeout must";
    QTest::newRow("body timeout text")
        << QStringList{"--http", "--http-body-timeout", "soon"} << "--http-body-timeout must";
    QTest::newRow("token and token-file")
        << QStringList{"--http", "--token", "a", "--token-file", "/x"}
        << "choose one of --token and --token-file";
    QTest::newRow("token-file and no-auth")
        << QStringList{"--http", "--token-file", "/x", "--no-auth"} << "--no-auth";
    QTest::newRow("print-token and no-auth")
        << QStringList{"--print-token", "--no-auth"} << "no token is used with --no-auth";
}

void tst_CommandLine::httpOptionErrors()
{
    QFETCH(QStringList, arguments);
    QFETCH(QString, message);
    const CommandLine cl = parse(arguments);
    QCOMPARE(cl.mode, Mode::Error);
    QVERIFY2(cl.message.contains(message), qPrintable(cl.message));
}

void tst_CommandLine::tokenResolution_data()
{
    QTest::addColumn<QStringList>("arguments"); // after the mode; FILE is the token file
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<QString>("token"); // STORED: the store's
    QTest::addColumn<QString>("source");

    QTest::newRow("the store") << QStringList{} << QStringList{} << "STORED"
                               << "token store";
    QTest::newRow("environment") << QStringList{} << QStringList{"CODE_SANDBOX_TOKEN=from-env"}
                                 << "from-env"
                                 << "CODE_SANDBOX_TOKEN";
    QTest::newRow("--token over the environment")
        << QStringList{"--token", "from-arg"} << QStringList{"CODE_SANDBOX_TOKEN=from-env"}
        << "from-arg"
        << "--token";
    QTest::newRow("--token-file over the environment")
        << QStringList{"--token-file", "FILE"} << QStringList{"CODE_SANDBOX_TOKEN=from-env"}
        << "from-file"
        << "token file";
    QTest::newRow("empty environment variable: the store")
        << QStringList{} << QStringList{"CODE_SANDBOX_TOKEN="} << "STORED"
        << "token store";
}

void tst_CommandLine::tokenResolution()
{
    QFETCH(QStringList, arguments);
    QFETCH(QStringList, env);
    QFETCH(QString, token);
    QFETCH(QString, source);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString store = dir.filePath("config/http-token");
    QFile file(dir.filePath("token"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("from-file\nsecond line is not part of it\n");
    file.close();
    arguments.replaceInStrings(QStringLiteral("FILE"), file.fileName());

    // The server and --print-token with the same options and environment agree.
    const CommandLine http = parse(QStringList{"--http"} + arguments, env);
    const CommandLine print = parse(QStringList{"--print-token"} + arguments, env);
    QCOMPARE(http.mode, Mode::Http);
    QCOMPARE(print.mode, Mode::PrintToken);
    const HttpToken::Resolved served = HttpToken::resolve(http, store);
    const HttpToken::Resolved printed = HttpToken::resolve(print, store);
    QVERIFY2(served.error.isEmpty(), qPrintable(served.error));
    QCOMPARE(printed.token, served.token);
    QVERIFY2(served.source.contains(source), qPrintable(served.source));
    if (token == u"STORED") {
        QVERIFY(served.stored);
        QCOMPARE(served.token.size(), 64);
    } else {
        QCOMPARE(served.token, token);
        QVERIFY(!QFile::exists(store)); // nothing generated when a token is given
    }
    QVERIFY(HttpToken::resolve(parse({"--http", "--no-auth"}), store).token.isEmpty());
    const HttpToken::Resolved missing =
        HttpToken::resolve(parse({"--http", "--token-file", dir.filePath("none")}), store);
    QVERIFY(missing.token.isEmpty());
    QVERIFY2(missing.error.contains("cannot read"), qPrintable(missing.error));
}

void tst_CommandLine::storedTokenIsPrivateAndStable()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString store = dir.filePath("config/http-token");
    const QString first = HttpToken::resolve(parse({"--http"}), store).token;
    QCOMPARE(first.size(), 64);
    // 0x7077: the owner's, the group's and others' bits (the "user" ones repeat the owner's).
    QCOMPARE(QFile::permissions(store) & 0x7077,
             QFileDevice::ReadOwner | QFileDevice::WriteOwner); // 0600: no group, no others
    QCOMPARE(HttpToken::resolve(parse({"--print-token"}), store).token, first);
    // A store others can read is made private again when it is read.
    QFile::setPermissions(store, QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                     QFileDevice::ReadGroup | QFileDevice::ReadOther);
    QCOMPARE(HttpToken::resolve(parse({"--http"}), store).token, first);
    QCOMPARE(QFile::permissions(store) & 0x7077, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
}

// The window's settings fill in what the command line leaves open, through the same timeout
// rule and pass-through resolver as the command line.
void tst_CommandLine::windowSettings()
{
    AppSettings settings;
    settings.defaultTimeoutSec = 120;
    settings.memoryMiB = 256;
    settings.cpus = 2;
    settings.pidsLimit = 64;
    settings.passThroughEnv = {QStringLiteral("HAVE"), QStringLiteral("LACK")};
    settings.httpPort = 9000;
    settings.engineSocket = QStringLiteral("unix:///from/settings.sock");
    settings.images.insert(QStringLiteral("python"), QStringLiteral("settings/python:1"));
    settings.images.insert(QStringLiteral("cobol"), QStringLiteral("settings/cobol:1"));
    const QProcessEnvironment env = environment({"HAVE=yes", "OTHER=x"});

    CommandLine cl = parse({}, {"HAVE=yes"}).withSettings(settings, env);
    QCOMPARE(cl.config.defaultTimeoutSec, 120);
    QCOMPARE(cl.config.maxTimeoutSec, 300);
    QCOMPARE(cl.config.memoryBytes, 256LL * 1024 * 1024);
    QCOMPARE(cl.config.cpus, 2.0);
    QCOMPARE(cl.config.pidsLimit, 64);
    QCOMPARE(assignments(cl.config.passThroughEnv), QStringList{"HAVE=yes"});
    QCOMPARE(cl.missingPassThrough, QStringList{"LACK"});
    QCOMPARE(cl.httpPort, quint16(9000));
    QCOMPARE(cl.engine, QStringLiteral("unix:///from/settings.sock"));
    QCOMPARE(cl.engines, QStringList{QStringLiteral("unix:///from/settings.sock")});
    // A language this build does not know is skipped, not a reason to refuse to start.
    QCOMPARE(assignments(cl.images), QStringList{"python=settings/python:1"});

    // Several engines listed in Settings are all used, in their order.
    AppSettings several = settings;
    several.engines = {QStringLiteral("unix:///first.sock"), QStringLiteral("ssh://me@box")};
    cl = parse({}).withSettings(several, env);
    QCOMPARE(cl.engines, several.engines);
    QCOMPARE(cl.engine, QStringLiteral("unix:///first.sock"));

    // The settings' default stays within the maximum the command line set.
    cl = parse({"--max-timeout", "60"}).withSettings(settings, env);
    QCOMPARE(cl.config.defaultTimeoutSec, 60);
    QCOMPARE(cl.config.maxTimeoutSec, 60);

    // What the command line says wins.
    cl = parse({"--timeout", "20", "--memory", "1g", "--cpus", "0.5", "--port", "0",
                "--pass-through-env", "OTHER", "--engine", "unix:///given.sock", "--python-image",
                "given/python:2"},
               {"OTHER=x"})
             .withSettings(settings, env);
    QCOMPARE(cl.config.defaultTimeoutSec, 20);
    QCOMPARE(cl.config.memoryBytes, 1024LL * 1024 * 1024);
    QCOMPARE(cl.config.cpus, 0.5);
    QCOMPARE(assignments(cl.config.passThroughEnv), QStringList{"OTHER=x"});
    QVERIFY(cl.missingPassThrough.isEmpty());
    QCOMPARE(cl.httpPort, quint16(0));
    QCOMPARE(cl.engine, QStringLiteral("unix:///given.sock"));
    QCOMPARE(assignments(cl.images), QStringList{"python=given/python:2"});
}

// The window's bound secrets when --secret gives none: each host variable read from the
// environment handed in, one that is not set skipped and reported rather than refusing to start;
// --secret wins over them all; the open network drops them with a warning.
void tst_CommandLine::windowSettingsSecrets()
{
    AppSettings settings;
    settings.secrets = {{"OPENAI_API_KEY", "MY_OPENAI_KEY", {"api.openai.com"}},
                        {"LACKING", "NOT_SET_HERE", {"x.example.com"}},
                        {"GH_TOKEN", "GH_TOKEN", {"api.github.com", "*.githubusercontent.com"}},
                        {"BLANK", "EMPTY_HERE", {"y.example.com"}}};
    const QProcessEnvironment env =
        environment({"MY_OPENAI_KEY=sk-1", "GH_TOKEN=ghp-2", "EMPTY_HERE=", "CLI_KEY=c-3"});
    const auto bound = [](const CommandLine &cl) {
        QStringList out;
        for (const SandboxSpec::Secret &s : cl.config.secrets)
            out.append(s.name + u'=' + QString::fromUtf8(s.value) + u'@' + s.hosts.join(u','));
        return out;
    };
    const QList<QPair<QString, QString>> missing{{"LACKING", "NOT_SET_HERE"},
                                                 {"BLANK", "EMPTY_HERE"}};

    CommandLine cl = parse({}).withSettings(settings, env);
    QCOMPARE(int(cl.mode), int(Mode::NoMode));
    QCOMPARE(bound(cl), (QStringList{"OPENAI_API_KEY=sk-1@api.openai.com",
                                     "GH_TOKEN=ghp-2@api.github.com,*.githubusercontent.com"}));
    QCOMPARE(cl.missingSecretVars, missing);
    QVERIFY(RunNetwork::decide(cl.config).bindsSecrets());

    // --secret wins: none of the settings' is added, none reported missing.
    cl = parse({"--secret", "CLI=CLI_KEY@cli.example.com"}, {"CLI_KEY=c-3"})
             .withSettings(settings, env);
    QCOMPARE(bound(cl), QStringList{"CLI=c-3@cli.example.com"});
    QVERIFY(cl.missingSecretVars.isEmpty());

    // The open network narrowed by an allow-list has the gateway: they are kept.
    cl = parse({"--network", "--egress", "pypi.org"}).withSettings(settings, env);
    QCOMPARE(bound(cl).size(), 2);

    // The open network alone has nothing to add them: dropped with a warning, where --secret
    // would refuse to start; from SANDBOX_NETWORK_MODE too.
    for (const auto &[arguments, environmentSet] :
         {std::pair<QStringList, QStringList>{{"--network"}, {}},
          std::pair<QStringList, QStringList>{{}, {"SANDBOX_NETWORK_MODE=bridge"}}}) {
        QTest::ignoreMessage(QtWarningMsg,
                             QRegularExpression(QStringLiteral(
                                 "^settings: the bound secrets OPENAI_API_KEY, GH_TOKEN are not "
                                 "used: runs have the open network")));
        cl = parse(arguments, environmentSet).withSettings(settings, env);
        QCOMPARE(int(cl.mode), int(Mode::NoMode));
        QVERIFY(cl.config.network);
        QVERIFY(cl.config.secrets.isEmpty());
        QCOMPARE(cl.missingSecretVars, missing);
    }

    // A list that did not come through load(): what --secret would refuse is skipped, said in
    // the log without a value.
    AppSettings odd;
    odd.secrets = {{"BAD", "MY_OPENAI_KEY", {"http://x"}},
                   {"OK", "GH_TOKEN", {"a.example.com"}},
                   {"OK", "MY_OPENAI_KEY", {"b.example.com"}}};
    QTest::ignoreMessage(QtWarningMsg,
                         "settings: ignoring the bound secret BAD=MY_OPENAI_KEY@http://x");
    QTest::ignoreMessage(QtWarningMsg,
                         "settings: ignoring the bound secret OK=MY_OPENAI_KEY@b.example.com");
    cl = parse({}).withSettings(odd, env);
    QCOMPARE(bound(cl), QStringList{"OK=ghp-2@a.example.com"});
}

// The window's workspaces when --workspace gives none: made canonical as --workspace makes them,
// with their apply setting and rules; one whose folder is gone skipped with a warning rather than
// refusing to start; --workspace wins over them all.
void tst_CommandLine::windowSettingsWorkspaces()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("data")));
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("out:rw")));
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("cli")));
    const QString root = QFileInfo(dir.path()).canonicalFilePath();
    const auto workspace = [](const QString &name, const QString &path, Workspace::Mode mode) {
        Workspace w;
        w.name = name;
        w.path = path;
        w.mode = mode;
        return w;
    };
    AppSettings settings;
    settings.workspaces = {
        workspace("data", dir.path() + QStringLiteral("/./data/"), Workspace::Mode::ReadOnly),
        workspace("gone", dir.filePath("gone"), Workspace::Mode::ReadOnly),
        // A folder whose name ends as the mode suffix does keeps its name, and this mode.
        workspace("out", dir.filePath("out:rw"), Workspace::Mode::CopyOnWrite),
        workspace("data", dir.filePath("out:rw"), Workspace::Mode::ReadOnly)};
    settings.workspaces[2].apply = Workspace::Apply::Always;
    settings.workspaces[2].exclude = {QStringLiteral("build/")};
    settings.workspaces[2].include = {QStringLiteral(".env.example")};
    const auto described = [](const CommandLine &cl) {
        QStringList out;
        for (const Workspace &w : cl.config.workspaces)
            out.append(QStringLiteral("%1=%2 %3 %4 -%5 +%6")
                           .arg(w.name, w.path, Workspace::modeName(w.mode),
                                Workspace::applyName(w.apply), w.exclude.join(u','),
                                w.include.join(u',')));
        return out;
    };

    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral(
                             "^settings: skipping a workspace: workspace 'gone': the folder .*"
                             "/gone does not exist$")));
    QTest::ignoreMessage(QtWarningMsg, "settings: skipping a second workspace named data");
    CommandLine cl = parse({}).withSettings(settings, {});
    QCOMPARE(int(cl.mode), int(Mode::NoMode));
    QCOMPARE(described(cl),
             (QStringList{"data=" + root + "/data read-only never - +",
                          "out=" + root + "/out:rw copy-on-write always -build/ +.env.example"}));

    // --workspace wins: none of the settings' is added.
    cl = parse({"--workspace", "mine=" + dir.filePath("cli") + ":rw"}).withSettings(settings, {});
    QCOMPARE(int(cl.mode), int(Mode::NoMode));
    QCOMPARE(described(cl), QStringList{"mine=" + root + "/cli copy-on-write never - +"});
}

void tst_CommandLine::callTimeout_data()
{
    QTest::addColumn<int>("askedDefault");
    QTest::addColumn<int>("askedMax");
    QTest::addColumn<int>("defaultSec");
    QTest::addColumn<int>("maxSec");
    QTest::addColumn<QString>("error");

    QTest::newRow("nothing asked") << 0 << 0 << 30 << 300 << QString();
    QTest::newRow("a default") << 60 << 0 << 60 << 300 << QString();
    QTest::newRow("a default above the maximum raises it") << 600 << 0 << 600 << 600 << QString();
    QTest::newRow("a lower maximum lowers the default") << 0 << 10 << 10 << 10 << QString();
    QTest::newRow("both") << 5 << 10 << 5 << 10 << QString();
    QTest::newRow("a default above an asked maximum")
        << 20 << 10 << 0 << 0 << QStringLiteral("--timeout 20 is above --max-timeout 10");
}

void tst_CommandLine::callTimeout()
{
    QFETCH(int, askedDefault);
    QFETCH(int, askedMax);
    QFETCH(int, defaultSec);
    QFETCH(int, maxSec);
    QFETCH(QString, error);

    CallTimeout t;
    QString message;
    QCOMPARE(CallTimeout::resolve(askedDefault, askedMax, {30, 300}, &t, &message),
             error.isEmpty());
    QCOMPARE(message, error);
    if (!error.isEmpty())
        return;
    QCOMPARE(t.defaultSec, defaultSec);
    QCOMPARE(t.maxSec, maxSec);
    // A call: its own timeout within the maximum, else the default.
    QCOMPARE(t.forCall(0), defaultSec);
    QCOMPARE(t.forCall(1), 1);
    QCOMPARE(t.forCall(maxSec + 1), maxSec);
}

QTEST_GUILESS_MAIN(tst_CommandLine)
#include "tst_commandline.moc"
