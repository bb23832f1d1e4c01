#include "commandline.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QRegularExpression>

qint64 CommandLine::parseSize(const QString &text)
{
    static const QRegularExpression re(
        QStringLiteral("^\\s*(\\d+(?:\\.\\d+)?)\\s*([kmgt]?)(?:i?b)?\\s*$"),
        QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(text);
    if (!m.hasMatch())
        return -1;
    double value = m.captured(1).toDouble();
    const QString unit = m.captured(2).toLower();
    const QString units = QStringLiteral("kmgt");
    if (!unit.isEmpty())
        for (qsizetype i = 0; i <= units.indexOf(unit); ++i)
            value *= 1024;
    // Beyond what a qint64 holds is not a size anyone means (and the cast would be undefined).
    if (value >= 9.2e18)
        return -1;
    return qint64(value);
}

CommandLine CommandLine::parse(const QStringList &arguments, const QProcessEnvironment &env)
{
    CommandLine cl;
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral(
        "Code Sandbox: an MCP server that runs code from AI assistants in hardened, single-use "
        "containers (Docker or Podman).\n\n"
        "Without a mode it opens the window, which shows every run live (its own, and those of "
        "the instances assistants launched), lets you run code by hand, and serves MCP over HTTP "
        "in the background (it keeps serving from the tray when the window is closed).\n"
        "MCP clients start it as 'code-sandbox --stdio' (or 'code-sandbox-mcp').\n"
        "Every run: no network, capped memory/CPU/processes, read-only system files, no "
        "capabilities, a non-root user, a timeout, capped output; only the host variables named "
        "by --pass-through-env enter the sandbox.\n\n"
        "Environment: DOCKER_HOST / CONTAINER_HOST (engine socket), CONTAINER_IMAGE + "
        "CONTAINER_LANGUAGE (one custom image), SANDBOX_MEMORY, SANDBOX_CPUS, "
        "SANDBOX_NETWORK_MODE, CODE_SANDBOX_TIMEOUT, CODE_SANDBOX_PASS_THROUGH_ENV."));
    const QCommandLineOption stdio(QStringLiteral("stdio"),
                                   QStringLiteral("Serve MCP on stdin/stdout (for MCP clients)."));
    const QCommandLineOption passEnv(
        QStringLiteral("pass-through-env"),
        QStringLiteral("Comma-separated host variables whose values enter the sandbox."),
        QStringLiteral("A,B"));
    const QCommandLineOption pyImage(
        QStringLiteral("python-image"),
        QStringLiteral("Image for Python (default code-sandbox/python:latest)."),
        QStringLiteral("image"));
    const QCommandLineOption jsImage(
        QStringLiteral("js-image"),
        QStringLiteral("Image for JavaScript (default code-sandbox/node:latest)."),
        QStringLiteral("image"));
    const QCommandLineOption image(
        QStringLiteral("image"),
        QStringLiteral("Image for one language, e.g. --image ruby=myorg/ruby:3 (repeatable)."),
        QStringLiteral("lang=image"));
    const QCommandLineOption allowInstall(
        QStringLiteral("allow-network-for-install"),
        QStringLiteral("Let execute_code install its 'libraries' (pip, npm, gem, R) in a separate "
                       "install container that has network; the programs themselves still run "
                       "without network. Installed sets are cached in volumes labelled "
                       "code-sandbox.libraries."));
    const QCommandLineOption caFile(
        QStringLiteral("install-ca-file"),
        QStringLiteral("Trust store mounted into install containers, for networks that inspect "
                       "TLS (default /etc/ssl/certs/ca-certificates.crt when it exists; 'none' "
                       "keeps the image's own)."),
        QStringLiteral("file"));
    const QCommandLineOption engine(
        QStringLiteral("engine"),
        QStringLiteral("Engine socket, e.g. unix:///run/podman/podman.sock "
                       "(default: DOCKER_HOST, CONTAINER_HOST, Podman, then Docker)."),
        QStringLiteral("url"));
    const QCommandLineOption timeout(QStringLiteral("timeout"),
                                     QStringLiteral("Default per-call timeout in seconds (30)."),
                                     QStringLiteral("seconds"));
    const QCommandLineOption maxTimeout(QStringLiteral("max-timeout"),
                                        QStringLiteral("Largest timeout a call may ask for (300)."),
                                        QStringLiteral("seconds"));
    const QCommandLineOption memory(QStringLiteral("memory"),
                                    QStringLiteral("Memory per sandbox, e.g. 512m, 1g (512m)."),
                                    QStringLiteral("size"));
    const QCommandLineOption cpus(QStringLiteral("cpus"),
                                  QStringLiteral("CPUs per sandbox, e.g. 0.5, 2 (1)."),
                                  QStringLiteral("n"));
    const QCommandLineOption outputLimit(QStringLiteral("output-limit"),
                                         QStringLiteral("Cap per output stream, e.g. 1m (1m)."),
                                         QStringLiteral("size"));
    const QCommandLineOption pool(
        QStringLiteral("pool"),
        QStringLiteral("Sandboxes kept started ahead of time per language, "
                       "for fast calls; 0 disables (2)."),
        QStringLiteral("n"));
    const QCommandLineOption maxConcurrent(
        QStringLiteral("max-concurrent"),
        QStringLiteral("Programs running at once; more calls wait in a queue (twice the cores, "
                       "at least 4)."),
        QStringLiteral("n"));
    const QCommandLineOption network(
        QStringLiteral("network"),
        QStringLiteral("Give sandboxes network access (off by default)."));
    const QCommandLineOption http(QStringLiteral("http"),
                                  QStringLiteral("Serve MCP over Streamable HTTP at "
                                                 "http://HOST:PORT/mcp (headless)."));
    const QCommandLineOption port(QStringLiteral("port"),
                                  QStringLiteral("HTTP port (8765; 0 picks a free one)."),
                                  QStringLiteral("n"));
    const QCommandLineOption host(QStringLiteral("host"),
                                  QStringLiteral("HTTP address to bind (127.0.0.1). Anything but "
                                                 "loopback exposes the sandbox to the network."),
                                  QStringLiteral("addr"));
    const QCommandLineOption allowHost(
        QStringLiteral("allow-host"),
        QStringLiteral("Accept this name (or address) in the Host and Origin headers of HTTP "
                       "requests, besides localhost, 127.0.0.1, ::1 and the --host address; for "
                       "clients that reach the server by another name (repeatable). Others are "
                       "refused, against DNS rebinding."),
        QStringLiteral("name"));
    const QCommandLineOption tokenFile(
        QStringLiteral("token-file"),
        QStringLiteral("Read the bearer token HTTP clients must send from the first line of "
                       "this file."),
        QStringLiteral("path"));
    const QCommandLineOption token(
        QStringLiteral("token"),
        QStringLiteral("Bearer token HTTP clients must send. Kept for compatibility: a value on "
                       "the command line is visible to every local user (ps, /proc); use "
                       "--token-file or CODE_SANDBOX_TOKEN instead. Without any of them, a token "
                       "generated once and stored in ~/.config/code-sandbox/http-token (mode "
                       "0600) is used."),
        QStringLiteral("t"));
    const QCommandLineOption noAuth(QStringLiteral("no-auth"),
                                    QStringLiteral("HTTP without a token (loopback only)."));
    const QCommandLineOption printToken(
        QStringLiteral("print-token"),
        QStringLiteral("Print the HTTP token the server would use with the same options and "
                       "environment, and exit."));
    const QCommandLineOption headTimeout(
        QStringLiteral("http-head-timeout"),
        QStringLiteral("Seconds an HTTP client has to send a request's head, from its first "
                       "byte (10)."),
        QStringLiteral("seconds"));
    const QCommandLineOption bodyTimeout(
        QStringLiteral("http-body-timeout"),
        QStringLiteral("Seconds an HTTP client has to send a request's body, after its head "
                       "(30)."),
        QStringLiteral("seconds"));
    const QCommandLineOption noHistory(
        QStringLiteral("no-history"),
        QStringLiteral("Do not keep runs in the history (by default every run is stored in "
                       "~/.local/share/code-sandbox/history.sqlite; CODE_SANDBOX_HISTORY names "
                       "another file)."));
    const QCommandLineOption noMonitor(
        QStringLiteral("no-monitor"),
        QStringLiteral("Do not show this instance's runs in the Code Sandbox window (by default a "
                       "headless instance sends them there when the window is open)."));
    const QCommandLineOption sessionIdle(
        QStringLiteral("session-idle"),
        QStringLiteral("A session (create_session) ends after this many seconds without a call "
                       "(600)."),
        QStringLiteral("seconds"));
    const QCommandLineOption maxSessions(
        QStringLiteral("max-sessions"),
        QStringLiteral("Sessions open at once, all clients together (8)."), QStringLiteral("n"));
    const QCommandLineOption hidden(QStringLiteral("hidden"),
                                    QStringLiteral("Start the window hidden, in the tray (for "
                                                   "starting with the desktop session)."));
    const QCommandLineOption help(QStringList{QStringLiteral("h"), QStringLiteral("help")},
                                  QStringLiteral("Show this help."));
    const QCommandLineOption version(QStringList{QStringLiteral("v"), QStringLiteral("version")},
                                     QStringLiteral("Show the version."));
    p.addOptions({stdio,       passEnv,     pyImage,       jsImage,     image,       allowInstall,
                  caFile,      engine,      timeout,       maxTimeout,  memory,      cpus,
                  outputLimit, pool,        maxConcurrent, network,     http,        port,
                  host,        token,       noAuth,        printToken,  help,        version,
                  noHistory,   noMonitor,   hidden,        sessionIdle, maxSessions, allowHost,
                  tokenFile,   headTimeout, bodyTimeout});

    const auto fail = [&cl](const QString &message) {
        cl.mode = Mode::Error;
        cl.message = message;
        return cl;
    };
    if (!p.parse(arguments))
        return fail(p.errorText() + QStringLiteral("\nTry --help."));
    cl.given = p.optionNames();
    cl.history = !p.isSet(noHistory);
    cl.monitor = !p.isSet(noMonitor);
    cl.startHidden = p.isSet(hidden);
    if (p.isSet(help)) {
        cl.mode = Mode::Help;
        cl.message = p.helpText();
        return cl;
    }
    if (p.isSet(version)) {
        cl.mode = Mode::Version;
        cl.message = QStringLiteral("code-sandbox %1").arg(QStringLiteral(CODE_SANDBOX_VERSION));
        return cl;
    }
    if (!p.positionalArguments().isEmpty())
        return fail(QStringLiteral("unexpected argument '%1'. Try --help.")
                        .arg(p.positionalArguments().first()));

    const QString program = QFileInfo(arguments.value(0)).fileName();
    if (p.isSet(stdio) && p.isSet(http))
        return fail(QStringLiteral("choose one of --stdio and --http"));
    if (p.isSet(http))
        cl.mode = Mode::Http;
    else if (p.isSet(stdio) || program == u"code-sandbox-mcp")
        cl.mode = Mode::Stdio;
    if (p.isSet(port)) {
        bool ok = false;
        const uint n = p.value(port).toUInt(&ok);
        if (!ok || n > 65535)
            return fail(QStringLiteral("--port must be a number from 0 to 65535, not '%1'")
                            .arg(p.value(port)));
        cl.httpPort = quint16(n);
    }
    if (p.isSet(host))
        cl.httpHost = p.value(host);
    static const QRegularExpression hostName(
        QStringLiteral("^(\\[[0-9A-Fa-f:.]+\\]|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*|[A-Za-z0-9_.-]+)$"));
    for (const QString &name : p.values(allowHost)) {
        if (!hostName.match(name.trimmed()).hasMatch())
            return fail(QStringLiteral("--allow-host takes a host name or an address without a "
                                       "port or scheme, like sandbox.lan or 192.168.1.5, not '%1'")
                            .arg(name));
        QString n = name.trimmed().toLower();
        if (n.startsWith(u'['))
            n = n.mid(1, n.size() - 2);
        cl.allowHosts.append(n);
    }
    cl.noAuth = p.isSet(noAuth);
    if (p.isSet(token) && p.isSet(tokenFile))
        return fail(QStringLiteral("choose one of --token and --token-file"));
    if (cl.noAuth && (p.isSet(token) || p.isSet(tokenFile)))
        return fail(QStringLiteral("choose one of --token/--token-file and --no-auth"));
    cl.tokenFile = p.value(tokenFile);
    if (p.isSet(tokenFile) && cl.tokenFile.isEmpty())
        return fail(QStringLiteral("--token-file needs a path"));
    cl.tokenFromEnvironment = !p.isSet(token) && !p.isSet(tokenFile) && !cl.noAuth &&
                              !env.value(QStringLiteral("CODE_SANDBOX_TOKEN")).isEmpty();
    if (p.isSet(token))
        cl.token = p.value(token);
    else if (cl.tokenFromEnvironment)
        cl.token = env.value(QStringLiteral("CODE_SANDBOX_TOKEN"));
    const auto seconds = [&](const QCommandLineOption &o, double min, double max, int &ms) {
        if (!p.isSet(o))
            return true;
        bool ok = false;
        const double value = p.value(o).toDouble(&ok);
        if (!ok || !(value >= min && value <= max))
            return false;
        ms = int(value * 1000);
        return true;
    };
    if (!seconds(headTimeout, 0.1, 3600, cl.httpHeadTimeoutMs))
        return fail(QStringLiteral("--http-head-timeout must be a number of seconds from 0.1 to "
                                   "3600, not '%1'")
                        .arg(p.value(headTimeout)));
    if (!seconds(bodyTimeout, 0.1, 3600, cl.httpBodyTimeoutMs))
        return fail(QStringLiteral("--http-body-timeout must be a number of seconds from 0.1 to "
                                   "3600, not '%1'")
                        .arg(p.value(bodyTimeout)));
    if (p.isSet(printToken)) {
        if (cl.noAuth)
            return fail(QStringLiteral("--print-token: no token is used with --no-auth"));
        cl.mode = Mode::PrintToken;
        return cl;
    }
    const auto value = [&](const QCommandLineOption &o, const char *envName) {
        if (p.isSet(o))
            return p.value(o);
        return envName ? env.value(QString::fromLatin1(envName)) : QString();
    };

    cl.engine = p.value(engine);

    SandboxConfig &c = cl.config;
    const QString t = value(timeout, "CODE_SANDBOX_TIMEOUT");
    const QString mt = value(maxTimeout, nullptr);
    if (!mt.isEmpty()) {
        bool ok = false;
        c.maxTimeoutSec = mt.toInt(&ok);
        if (!ok || c.maxTimeoutSec < 1)
            return fail(
                QStringLiteral("--max-timeout must be a whole number of seconds ≥ 1, not '%1'")
                    .arg(mt));
    }
    if (!t.isEmpty()) {
        bool ok = false;
        c.defaultTimeoutSec = t.toInt(&ok);
        if (!ok || c.defaultTimeoutSec < 1)
            return fail(
                QStringLiteral("--timeout must be a whole number of seconds ≥ 1, not '%1'").arg(t));
    }
    if (t.isEmpty())
        c.defaultTimeoutSec = qMin(c.defaultTimeoutSec, c.maxTimeoutSec);
    else if (!mt.isEmpty() && c.defaultTimeoutSec > c.maxTimeoutSec)
        return fail(QStringLiteral("--timeout %1 is above --max-timeout %2")
                        .arg(c.defaultTimeoutSec)
                        .arg(c.maxTimeoutSec));
    else
        c.maxTimeoutSec = qMax(c.maxTimeoutSec, c.defaultTimeoutSec);

    const QString mem = value(memory, "SANDBOX_MEMORY");
    if (!mem.isEmpty()) {
        c.memoryBytes = parseSize(mem);
        if (c.memoryBytes < 6 * 1024 * 1024)
            return fail(
                QStringLiteral("--memory must be a size of at least 6m, like 512m or 1g, not '%1'")
                    .arg(mem));
    }
    const QString cpu = value(cpus, "SANDBOX_CPUS");
    if (!cpu.isEmpty()) {
        bool ok = false;
        c.cpus = cpu.toDouble(&ok);
        if (!ok || c.cpus < 0.01 || c.cpus > 1024)
            return fail(QStringLiteral("--cpus must be a number like 0.5 or 2, not '%1'").arg(cpu));
    }
    const QString out = value(outputLimit, nullptr);
    if (!out.isEmpty()) {
        c.outputCapBytes = parseSize(out);
        if (c.outputCapBytes < 1024)
            return fail(
                QStringLiteral("--output-limit must be a size of at least 1k, not '%1'").arg(out));
    }
    const QString poolSize = value(pool, "CODE_SANDBOX_POOL");
    if (!poolSize.isEmpty()) {
        bool ok = false;
        c.poolSize = poolSize.toInt(&ok);
        if (!ok || c.poolSize < 0 || c.poolSize > 64)
            return fail(QStringLiteral("--pool must be a whole number from 0 to 64, not '%1'")
                            .arg(poolSize));
    }
    const QString concurrent = value(maxConcurrent, nullptr);
    if (!concurrent.isEmpty()) {
        bool ok = false;
        c.maxConcurrent = concurrent.toInt(&ok);
        if (!ok || c.maxConcurrent < 1 || c.maxConcurrent > 1024)
            return fail(QStringLiteral("--max-concurrent must be a whole number from 1 to 1024, "
                                       "not '%1'")
                            .arg(concurrent));
    }
    if (p.isSet(sessionIdle)) {
        bool ok = false;
        cl.sessionIdleSec = p.value(sessionIdle).toInt(&ok);
        if (!ok || cl.sessionIdleSec < 5 || cl.sessionIdleSec > 7 * 24 * 3600)
            return fail(QStringLiteral("--session-idle must be a number of seconds from 5 to "
                                       "604800, not '%1'")
                            .arg(p.value(sessionIdle)));
    }
    if (p.isSet(maxSessions)) {
        bool ok = false;
        cl.maxSessions = p.value(maxSessions).toInt(&ok);
        if (!ok || cl.maxSessions < 0 || cl.maxSessions > 256)
            return fail(QStringLiteral("--max-sessions must be a whole number from 0 to 256, "
                                       "not '%1'")
                            .arg(p.value(maxSessions)));
    }
    const QString netMode = env.value(QStringLiteral("SANDBOX_NETWORK_MODE"));
    c.network = p.isSet(network) || (!netMode.isEmpty() && netMode != u"none");

    QString names = value(passEnv, "CODE_SANDBOX_PASS_THROUGH_ENV");
    static const QRegularExpression validName(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    for (QString name : names.split(u',', Qt::SkipEmptyParts)) {
        name = name.trimmed();
        if (name.isEmpty())
            continue;
        if (!validName.match(name).hasMatch())
            return fail(
                QStringLiteral("--pass-through-env: '%1' is not a variable name").arg(name));
        if (env.contains(name))
            c.passThroughEnv.append({name, env.value(name)});
        else
            cl.missingPassThrough.append(name);
    }

    // code-sandbox-mcp's single custom image: both variables or neither.
    const QString customImage = env.value(QStringLiteral("CONTAINER_IMAGE"));
    const QString customLanguage = env.value(QStringLiteral("CONTAINER_LANGUAGE"));
    if (customImage.isEmpty() != customLanguage.isEmpty())
        return fail(QStringLiteral("CONTAINER_IMAGE and CONTAINER_LANGUAGE must be set together"));
    if (!customImage.isEmpty())
        cl.images.insert(customLanguage.toLower(), customImage);
    if (p.isSet(pyImage))
        cl.images.insert(QStringLiteral("python"), p.value(pyImage));
    if (p.isSet(jsImage))
        cl.images.insert(QStringLiteral("javascript"), p.value(jsImage));
    for (const QString &pair : p.values(image)) {
        const qsizetype eq = pair.indexOf(u'=');
        if (eq <= 0 || eq == pair.size() - 1)
            return fail(
                QStringLiteral("--image takes language=image, e.g. ruby=myorg/ruby:3, not '%1'")
                    .arg(pair));
        cl.images.insert(pair.left(eq).trimmed().toLower(), pair.mid(eq + 1).trimmed());
    }

    c.allowInstall = p.isSet(allowInstall);
    const QString ca =
        p.isSet(caFile) ? p.value(caFile) : QStringLiteral("/etc/ssl/certs/ca-certificates.crt");
    if (p.isSet(caFile) && ca != u"none" && !QFileInfo(ca).isFile())
        return fail(QStringLiteral("--install-ca-file: '%1' is not a file").arg(ca));
    if (ca != u"none" && QFileInfo(ca).isFile())
        c.installCaBundle = QFileInfo(ca).absoluteFilePath();
    // Proxy settings reach install containers only (runs have no network to use them with).
    for (const char *name :
         {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"})
        if (env.contains(QString::fromLatin1(name)))
            c.installEnv.append(QString::fromLatin1(name) + u'=' +
                                env.value(QString::fromLatin1(name)));
    return cl;
}
