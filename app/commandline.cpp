#include "commandline.h"

#include "applog.h"
#include "appsettings.h"
#include "calltimeout.h"
#include "egresslist.h"
#include "kubetarget.h"
#include "languageregistry.h"
#include "passthroughenv.h"
#include "preloadplanner.h"

#include <QCommandLineParser>
#include <QFileInfo>
#include <QRegularExpression>
#include <QUrl>
#include <climits>
#include <functional>

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

namespace {
const QString kDescription = QStringLiteral(
    "Code Sandbox: an MCP server that runs code from AI assistants in hardened, single-use "
    "containers (Docker or Podman).\n\n"
    "Without a mode it opens the window, which shows every run live (its own, and those of "
    "the instances assistants launched), lets you run code by hand, and serves MCP over HTTP "
    "in the background (it keeps serving from the tray when the window is closed).\n"
    "MCP clients start it as 'code-sandbox --stdio' (or 'code-sandbox-mcp').\n"
    "Every run: no network, capped memory/CPU/processes, read-only system files, no "
    "capabilities, a non-root user, a timeout, capped output; only the host variables named "
    "by --pass-through-env enter the sandbox.\n\n"
    "Environment: DOCKER_HOST, DOCKER_TLS_VERIFY, DOCKER_CERT_PATH, DOCKER_CONTEXT, "
    "DOCKER_CONFIG, CONTAINER_HOST (the engine, as the Docker CLI and Podman read them; see "
    "--engine), CODE_SANDBOX_SSH_CONFIG (an ssh config file for ssh:// engines), CONTAINER_IMAGE + "
    "CONTAINER_LANGUAGE (one custom image), SANDBOX_MEMORY, SANDBOX_CPUS, "
    "SANDBOX_NETWORK_MODE, CODE_SANDBOX_TIMEOUT, CODE_SANDBOX_PASS_THROUGH_ENV.");

// When an option is read. --help and --version answer before anything else is checked,
// --print-token needs only the HTTP options, so a mistake in a later one does not stop them.
enum class Stage
{
    BeforeHelp,
    Mode, // read by name where the mode is chosen
    Http,
    Sandbox
};

// Reads an option's values (every one of a repeated option; the environment variable's when the
// option is not given; none for a flag) into the command line. Returns an error, or nothing.
using Apply =
    std::function<QString(CommandLine &, const QStringList &, const QProcessEnvironment &)>;

struct Option
{
    QCommandLineOption option;
    Stage stage;
    Apply apply;
    const char *env = nullptr; // read when the option is not given; empty is not set
    bool blankIsUnset = false; // `--option ''` is as if it were not given
};

// A field of the command line or of its sandbox configuration, where an option's value goes.
template <class T> class Field
{
public:
    Field(T CommandLine::*member) : m_member(member) {}
    Field(T SandboxConfig::*member) : m_configMember(member) {}
    T &of(CommandLine &cl) const { return m_member ? cl.*m_member : cl.config.*m_configMember; }

private:
    T CommandLine::*m_member = nullptr;
    T SandboxConfig::*m_configMember = nullptr;
};

QString mustBe(const QString &name, const QString &what, const QString &value)
{
    return QStringLiteral("--%1 must be %2, not '%3'").arg(name, what, value);
}

// One helper per kind of option.

// Chooses the mode; read by name, nothing to store.
Option mode(const QStringList &names, const QString &help)
{
    return {QCommandLineOption(names, help), Stage::Mode, nullptr};
}

// Sets `target` to `value`. From an environment variable, any value but "none" counts as given.
Option flag(const QString &name, const QString &help, Stage stage, Field<bool> target,
            bool value = true, const char *env = nullptr)
{
    return {
        QCommandLineOption(name, help), stage,
        [target, value](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
            const bool on = values.isEmpty() || values.last() != u"none";
            target.of(cl) = on ? value : !value;
            return QString();
        },
        env};
}

Option text(const QString &name, const QString &valueName, const QString &help, Stage stage,
            Field<QString> target)
{
    return {QCommandLineOption(name, help, valueName), stage,
            [target](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
                target.of(cl) = values.last();
                return QString();
            }};
}

// Repeatable: PEM files of certificate authorities, read (and refused when empty) here.
Option certificateFiles(const QString &name, const QString &help,
                        Field<QList<QSslCertificate>> target)
{
    return {
        QCommandLineOption(name, help, QStringLiteral("file")), Stage::Http,
        [name, target](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
            QList<QSslCertificate> all;
            for (const QString &path : values) {
                const QList<QSslCertificate> read = QSslCertificate::fromPath(path);
                if (read.isEmpty())
                    return QStringLiteral("--%1: %2 holds no PEM certificate (or cannot be "
                                          "read)")
                        .arg(name, path);
                all += read;
            }
            target.of(cl) = all;
            return QString();
        }};
}

// Repeatable: where the engines are. Each value is checked for its form here (an address, or
// context:NAME); EngineLocator resolves them when the engines are opened.
Option engineAddresses(const QString &name, const QString &help)
{
    return {QCommandLineOption(name, help, QStringLiteral("address")), Stage::Sandbox,
            [name](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
                QStringList engines;
                QStringList clusters;
                for (const QString &raw : values) {
                    const QString value = raw.trimmed();
                    if (KubeTarget::isKubeUrl(value)) {
                        // A cluster: resolved from the kubeconfig when the services start.
                        QString error;
                        KubeTarget::parse(value, &error);
                        if (!error.isEmpty())
                            return QStringLiteral("--%1: %2").arg(name, error);
                        clusters.append(value);
                        continue;
                    }
                    QString runtime;
                    QString error;
                    const QString where = EngineAddress::takeRuntime(value, &runtime, &error);
                    if (!error.isEmpty())
                        return QStringLiteral("--%1: %2").arg(name, error);
                    if (where.startsWith(u"context:")) {
                        const QString context = where.mid(8);
                        if (context != u"default" && !EngineLocator::isValidContextName(context))
                            return QStringLiteral("--%1: '%2' is not a Docker context name")
                                .arg(name, context);
                    } else {
                        if (!EngineAddress::parse(where, &error).isValid())
                            return QStringLiteral("--%1: %2").arg(name, error);
                    }
                    engines.append(value);
                }
                cl.engines = engines;
                cl.engine = engines.value(0);
                cl.kubeEngines = clusters;
                return QString();
            }};
}

// A whole number from `min` to `max`; `what` describes it in the error.
template <class T>
Option integer(const QString &name, const QString &valueName, const QString &help, Stage stage,
               int min, int max, const QString &what, Field<T> target, const char *env = nullptr,
               bool blankIsUnset = false)
{
    return {QCommandLineOption(name, help, valueName), stage,
            [=](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
                bool ok = false;
                const int n = values.last().toInt(&ok);
                if (!ok || n < min || n > max)
                    return mustBe(name, what, values.last());
                target.of(cl) = T(n);
                return QString();
            },
            env, blankIsUnset};
}

// A number from `min` to `max`, possibly with a fraction.
Option real(const QString &name, const QString &valueName, const QString &help, double min,
            double max, const QString &what, Field<double> target, const char *env)
{
    return {QCommandLineOption(name, help, valueName), Stage::Sandbox,
            [=](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
                bool ok = false;
                const double n = values.last().toDouble(&ok);
                if (!ok || n < min || n > max)
                    return mustBe(name, what, values.last());
                target.of(cl) = n;
                return QString();
            },
            env, true};
}

// Seconds from `min` to `max`, possibly with a fraction, kept in milliseconds.
Option seconds(const QString &name, const QString &help, double min, double max,
               Field<int> targetMs)
{
    return {QCommandLineOption(name, help, QStringLiteral("seconds")), Stage::Http,
            [=](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
                bool ok = false;
                const double n = values.last().toDouble(&ok);
                if (!ok || !(n >= min && n <= max))
                    return mustBe(
                        name, QStringLiteral("a number of seconds from %1 to %2").arg(min).arg(max),
                        values.last());
                targetMs.of(cl) = int(n * 1000);
                return QString();
            }};
}

// A size like 512m (CommandLine::parseSize) of at least `min` bytes.
Option size(const QString &name, const QString &help, qint64 min, const QString &what,
            Field<qint64> target, const char *env = nullptr)
{
    return {QCommandLineOption(name, help, QStringLiteral("size")), Stage::Sandbox,
            [=](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
                const qint64 bytes = CommandLine::parseSize(values.last());
                if (bytes < min)
                    return mustBe(name, what, values.last());
                target.of(cl) = bytes;
                return QString();
            },
            env, true};
}

// --snapshot-max SESSION[,ALL]: sizes (CommandLine::parseSize); 0 turns snapshots off.
Option snapshotMax()
{
    const QString name = QStringLiteral("snapshot-max");
    return {QCommandLineOption(
                name,
                QStringLiteral("What the snapshots of one session may hold, and of all sessions "
                               "together, e.g. 256m,1g (the default): one is taken after every "
                               "call of a session, the oldest go first past these; 0 takes "
                               "none. They are kept beside the history, never in a sandbox."),
                QStringLiteral("size[,size]")),
            Stage::Sandbox,
            [name](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
                const QStringList parts = values.last().split(u',');
                const qint64 session = CommandLine::parseSize(parts.value(0));
                const qint64 all = parts.size() > 1 ? CommandLine::parseSize(parts.value(1))
                                                    : qMax(session, cl.snapshotTotalBytes);
                if (parts.size() > 2 || session < 0 || all < 0 || (session > 0 && all < session))
                    return mustBe(name,
                                  QStringLiteral("a size, or two (a session's, then all "
                                                 "sessions', no smaller), like 256m or 256m,1g"),
                                  values.last());
                cl.snapshotSessionBytes = session;
                cl.snapshotTotalBytes = all;
                return QString();
            }};
}

// Repeatable: names accepted in the Host and Origin headers, lower case, without brackets.
Option hostNames(const QString &name, const QString &help)
{
    return {QCommandLineOption(name, help, QStringLiteral("name")), Stage::Http,
            [name](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
                static const QRegularExpression hostName(QStringLiteral(
                    "^(\\[[0-9A-Fa-f:.]+\\]|[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*|[A-Za-z0-9_.-]+)$"));
                for (const QString &value : values) {
                    if (!hostName.match(value.trimmed()).hasMatch())
                        return QStringLiteral(
                                   "--%1 takes a host name or an address without a port or "
                                   "scheme, like sandbox.lan or 192.168.1.5, not '%2'")
                            .arg(name, value);
                    QString n = value.trimmed().toLower();
                    if (n.startsWith(u'['))
                        n = n.mid(1, n.size() - 2);
                    cl.allowHosts.append(n);
                }
                return QString();
            }};
}

// The image of one language.
Option languageImage(const QString &name, const QString &help, const QString &language)
{
    return {QCommandLineOption(name, help, QStringLiteral("image")), Stage::Sandbox,
            [language](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
                cl.images.insert(language, values.last());
                return QString();
            }};
}

// Repeatable language=image pairs.
Option languageImages(const QString &name, const QString &help)
{
    return {QCommandLineOption(name, help, QStringLiteral("lang=image")), Stage::Sandbox,
            [name](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
                for (const QString &pair : values) {
                    const qsizetype eq = pair.indexOf(u'=');
                    if (eq <= 0 || eq == pair.size() - 1)
                        return QStringLiteral(
                                   "--%1 takes language=image, e.g. ruby=myorg/ruby:3, not '%2'")
                            .arg(name, pair);
                    cl.images.insert(pair.left(eq).trimmed().toLower(), pair.mid(eq + 1).trimmed());
                }
                return QString();
            }};
}

// Repeatable (or comma-separated) module names for warm sandboxes (Python modules, npm
// packages: each language takes its own, see PreloadPlanner::setFixed), or "none"; not given:
// learned from the calls.
Option preloadModules(const QString &name, const QString &help)
{
    return {QCommandLineOption(name, help, QStringLiteral("module")), Stage::Sandbox,
            [name](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
                QStringList modules;
                for (const QString &value : values)
                    for (const QString &item : value.split(u',', Qt::SkipEmptyParts)) {
                        const QString m = item.trimmed();
                        if (m == u"none")
                            continue;
                        if (!PreloadPlanner::isModuleName(m.toLatin1()))
                            return QStringLiteral("--%1 takes a Python module name like pandas or "
                                                  "matplotlib.pyplot, an npm package name like "
                                                  "lodash, or 'none', not '%2'")
                                .arg(name, m);
                        if (!modules.contains(m))
                            modules.append(m);
                    }
                if (modules.size() > PreloadPlanner::kMaxModules)
                    return QStringLiteral("--%1 names at most %2 modules")
                        .arg(name)
                        .arg(PreloadPlanner::kMaxModules);
                cl.config.preload = modules;
                return QString();
            },
            "CODE_SANDBOX_PRELOAD"};
}

// A comma-separated list of host variables whose values enter the sandbox.
Option variableNames(const QString &name, const QString &help, const char *env)
{
    return {
        QCommandLineOption(name, help, QStringLiteral("A,B")), Stage::Sandbox,
        [name](CommandLine &cl, const QStringList &values, const QProcessEnvironment &env) {
            QStringList names;
            for (const QString &n : values.last().split(u',', Qt::SkipEmptyParts)) {
                const QString trimmed = n.trimmed();
                if (trimmed.isEmpty())
                    continue;
                if (!AppSettings::isValidEnvName(trimmed))
                    return QStringLiteral("--%1: '%2' is not a variable name").arg(name, trimmed);
                names.append(trimmed);
            }
            const PassThroughEnv resolved = PassThroughEnv::resolve(names, env);
            cl.config.passThroughEnv = resolved.values;
            cl.missingPassThrough = resolved.missing;
            return QString();
        },
        env, true};
}

// Secrets bound to hosts: NAME=HOSTVAR@HOST[,HOST…], repeatable. The value is read from the host
// variable once, here; the sandbox's NAME holds a placeholder that the egress gateway replaces
// with it in requests to those hosts only.
Option secrets()
{
    return {
        QCommandLineOption(
            QStringLiteral("secret"),
            QStringLiteral(
                "Let runs use a key without holding it: the sandbox's NAME holds a "
                "placeholder, and the egress gateway puts the value of the host variable "
                "HOSTVAR in its place in requests to HOST (comma-separated; host or "
                "*.suffix, optional :port) and nowhere else, terminating TLS for those hosts "
                "only. Repeatable. Runs are in the allow-list mode, the secrets' hosts "
                "reachable."),
            QStringLiteral("NAME=HOSTVAR@HOST")),
        Stage::Sandbox,
        [](CommandLine &cl, const QStringList &values, const QProcessEnvironment &env) {
            for (const QString &value : values) {
                const qsizetype eq = value.indexOf(u'=');
                const qsizetype at = value.indexOf(u'@', eq + 1);
                const QString name = value.left(eq).trimmed();
                const QString var = value.mid(eq + 1, at - eq - 1).trimmed();
                if (eq <= 0 || at < 0 || !AppSettings::isValidEnvName(name) ||
                    !AppSettings::isValidEnvName(var))
                    return QStringLiteral("--secret takes NAME=HOSTVAR@HOST[,HOST...], e.g. "
                                          "OPENAI_API_KEY=OPENAI_API_KEY@api.openai.com, not "
                                          "'%1'")
                        .arg(value);
                QString error;
                const QStringList hosts =
                    EgressList::parse(value.mid(at + 1).split(u',', Qt::SkipEmptyParts), &error);
                if (!error.isEmpty() || hosts.isEmpty())
                    return QStringLiteral("--secret %1: %2")
                        .arg(name, error.isEmpty() ? QStringLiteral("it names no host") : error);
                if (!env.contains(var) || env.value(var).isEmpty())
                    return QStringLiteral("--secret %1: the host variable %2 is not set")
                        .arg(name, var);
                for (const SandboxSpec::Secret &other : std::as_const(cl.config.secrets))
                    if (other.name == name)
                        return QStringLiteral("--secret %1 is given twice").arg(name);
                cl.config.secrets.append({name, hosts, env.value(var).toUtf8()});
            }
            return QString();
        },
        nullptr, true};
}

// The user's folders runs may ask for: NAME=PATH[:rw], repeatable (Workspace::parse).
Option workspaces()
{
    return {QCommandLineOption(
                QStringLiteral("workspace"),
                QStringLiteral(
                    "Let runs that ask for it by name (their 'workspaces' argument) see the folder "
                    "PATH at /workspace/NAME: a copy, read-only, or with :rw copy-on-write (the "
                    "program may change its copy; the changes come back with the result and "
                    "reach PATH only when applied: from the window, or at once with :rw:always, "
                    "or asked in the window with :rw:ask). Credentials (.env*, *.pem, *.key, id_*, "
                    ".netrc, .npmrc, .pypirc, .aws/, .ssh/, .gnupg/) stay out. Repeatable."),
                QStringLiteral("NAME=PATH[:rw[:ask|:always]]")),
            Stage::Sandbox,
            [](CommandLine &cl, const QStringList &values, const QProcessEnvironment &) {
                for (const QString &value : values) {
                    QString error;
                    const std::optional<Workspace> w = Workspace::parse(value, &error);
                    if (!w)
                        return QStringLiteral("--workspace %1: %2").arg(value, error);
                    if (cl.config.workspace(w->name))
                        return QStringLiteral("--workspace %1 is given twice").arg(w->name);
                    cl.config.workspaces.append(*w);
                }
                return QString();
            },
            nullptr, true};
}

// Host patterns every run may reach (the allow-list mode): --egress values (repeatable, each
// also comma-separated) or --egress-file files, added to what the other one gave; the same for
// the hosts installs may reach besides their index (--index-host).
Option egress(const QString &name, const QString &valueName, const QString &help, bool files,
              const char *env, QStringList SandboxConfig::*field = &SandboxConfig::egress)
{
    return {QCommandLineOption(name, help, valueName), Stage::Sandbox,
            [name, files, field](CommandLine &cl, const QStringList &values,
                                 const QProcessEnvironment &) {
                QString error;
                QStringList patterns;
                for (const QString &value : values) {
                    patterns +=
                        files ? EgressList::readFile(value, &error)
                              : EgressList::parse(value.split(u',', Qt::SkipEmptyParts), &error);
                    if (!error.isEmpty())
                        return QStringLiteral("--%1: %2").arg(name, error);
                }
                QStringList &list = cl.config.*field;
                for (const QString &p : std::as_const(patterns))
                    if (!list.contains(p))
                        list.append(p);
                return QString();
            },
            env, true};
}

// Every option once, in the order --help lists them: how runs are made, ...
QList<Option> sandboxOptions()
{
    const auto s = [](const char *text) { return QString::fromUtf8(text); };
    return {
        mode({s("stdio")}, s("Serve MCP on stdin/stdout (for MCP clients).")),
        variableNames(s("pass-through-env"),
                      s("Comma-separated host variables whose values enter the sandbox."),
                      "CODE_SANDBOX_PASS_THROUGH_ENV"),
        secrets(),
        workspaces(),
        size(s("workspace-max"),
             s("The most one workspace may hold, e.g. 500m (2g): a bigger folder is refused "
               "before anything runs."),
             1024, s("a size of at least 1k, like 500m or 2g"), &SandboxConfig::workspaceMaxBytes),
        languageImage(s("python-image"),
                      s("Image for Python (default code-sandbox/python:latest)."), s("python")),
        languageImage(s("js-image"), s("Image for JavaScript (default code-sandbox/node:latest)."),
                      s("javascript")),
        languageImages(s("image"), s("Image for one language, e.g. --image ruby=myorg/ruby:3 "
                                     "(repeatable).")),
        flag(s("allow-network-for-install"),
             s("Let execute_code install its 'libraries' (pip, npm, gem, R) in a separate install "
               "container that reaches only the language's package index, through the engine's "
               "egress gateway (which goes out through the host's http:// HTTPS_PROXY or "
               "HTTP_PROXY when one is set); the "
               "programs themselves still run without network. "
               "Installed sets are cached in volumes labelled code-sandbox.libraries."),
             Stage::Sandbox, &SandboxConfig::allowInstall),
        egress(s("index-host"), s("pattern"),
               s("A package mirror installs may reach besides their language's index "
                 "(repeatable, or comma-separated; host or *.suffix with an optional :port). "
                 "Installs reach only these and the index (PyPI, the npm registry, RubyGems, "
                 "CRAN) through the engine's egress gateway. The hosts of the host's "
                 "PIP_INDEX_URL, PIP_EXTRA_INDEX_URL and npm_config_registry, which installs "
                 "are given, are added by themselves."),
               false, "CODE_SANDBOX_INDEX_HOSTS", &SandboxConfig::indexHosts),
        text(s("install-ca-file"), s("file"),
             s("The host's trust store, for networks that inspect TLS: mounted read-only into "
               "install containers as their trust store, and into runs with network (--network, "
               "--egress, --secret) whose programs trust it besides the image's own; runs "
               "without network get nothing. The egress gateway checks the hosts of secrets "
               "against it. On Docker and Podman engines (a path on the engine's machine); "
               "Kubernetes pods keep their image's. Default /etc/ssl/certs/ca-certificates.crt "
               "when it exists; 'none' keeps the images' own."),
             Stage::Sandbox, &SandboxConfig::installCaBundle),
    };
}

// ... where the engines are and how they are reached (part of how runs are made), ...
QList<Option> engineAccessOptions()
{
    const auto s = [](const char *text) { return QString::fromUtf8(text); };
    return {
        engineAddresses(
            s("engine"),
            s("Where the container engine is (repeatable, for several engines): "
              "unix:///path (or /path) for a local socket, e.g. unix:///run/podman/podman.sock; "
              "tcp://host:port, with TLS from --tls-ca/--tls-cert/--tls-key or "
              "DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH (plain TCP only to this machine unless "
              "--insecure-tcp); ssh://[user@]host[:port][/socket], one ssh connection forwarding "
              "that socket on that host (default /var/run/docker.sock; Podman's, e.g. "
              "/run/podman/podman.sock, too) with your ssh config, keys and agent (never a "
              "password; CODE_SANDBOX_SSH_CONFIG names another ssh config file); or "
              "context:NAME, a Docker "
              "context ('docker context ls'); or k8s://[CONTEXT][/NAMESPACE], a Kubernetes "
              "cluster as kubectl finds it (KUBECONFIG or ~/.kube/config, or the pod's service "
              "account; see packaging/kubernetes/). Default: DOCKER_HOST, DOCKER_CONTEXT, the "
              "Docker CLI's current context, CONTAINER_HOST, Podman, then Docker.")),
        text(s("tls-ca"), s("file"),
             s("CA certificate that signed the engine's: the only one trusted for the tcp:// "
               "engines of --engine (default: DOCKER_CERT_PATH/ca.pem with DOCKER_TLS_VERIFY). "
               "TLS without a CA is refused; 'system' trusts this machine's certificate store "
               "instead."),
             Stage::Sandbox, &CommandLine::tlsCa),
        text(s("tls-cert"), s("file"),
             s("Client certificate for the tcp:// engines of --engine (with --tls-key)."),
             Stage::Sandbox, &CommandLine::tlsCert),
        text(s("tls-key"), s("file"), s("Private key of --tls-cert (PEM, not encrypted)."),
             Stage::Sandbox, &CommandLine::tlsKey),
        flag(s("insecure-tcp"),
             s("Allow plain tcp:// (no TLS) to an engine on another host. Anyone who can reach "
               "that port controls the engine and its host: only on a network you trust."),
             Stage::Sandbox, &CommandLine::insecureTcp),
    };
}

// ... and what each sandbox may use (the rest of how runs are made), ...
QList<Option> sandboxLimitOptions()
{
    const auto s = [](const char *text) { return QString::fromUtf8(text); };
    return {
        integer<int>(s("timeout"), s("seconds"), s("Default per-call timeout in seconds (30)."),
                     Stage::Sandbox, 1, INT_MAX, s("a whole number of seconds ≥ 1"),
                     &CommandLine::askedTimeoutSec, "CODE_SANDBOX_TIMEOUT", true),
        integer<int>(s("max-timeout"), s("seconds"), s("Largest timeout a call may ask for (300)."),
                     Stage::Sandbox, 1, INT_MAX, s("a whole number of seconds ≥ 1"),
                     &CommandLine::askedMaxTimeoutSec, nullptr, true),
        size(s("memory"), s("Memory per sandbox, e.g. 512m, 1g (512m)."), 6 * 1024 * 1024,
             s("a size of at least 6m, like 512m or 1g"), &SandboxConfig::memoryBytes,
             "SANDBOX_MEMORY"),
        real(s("cpus"), s("n"), s("CPUs per sandbox, e.g. 0.5, 2 (1)."), 0.01, 1024,
             s("a number like 0.5 or 2"), &SandboxConfig::cpus, "SANDBOX_CPUS"),
        size(s("output-limit"), s("Cap per output stream, e.g. 1m (1m)."), 1024,
             s("a size of at least 1k"), &SandboxConfig::outputCapBytes),
        integer<int>(s("pool"), s("n"),
                     s("Sandboxes kept started ahead of time per language, for fast calls: the "
                       "base the pool starts from and returns to after a quiet spell; 0 "
                       "disables (2)."),
                     Stage::Sandbox, 0, 64, s("a whole number from 0 to 64"),
                     &SandboxConfig::poolSize, "CODE_SANDBOX_POOL", true),
        integer<int>(s("pool-max"), s("n"),
                     s("The most a language's pool grows to when calls come in bursts, so that "
                       "the next such burst finds them all warm (one per 512 MiB of the "
                       "engine's memory, at most 32)."),
                     Stage::Sandbox, 1, 256, s("a whole number from 1 to 256"),
                     &SandboxConfig::poolMax, "CODE_SANDBOX_POOL_MAX", true),
        preloadModules(
            s("preload"),
            s("A module warm sandboxes import (Python) or require (JavaScript, TypeScript: an "
              "npm package) while they wait, instead of the ones learned from the calls "
              "(repeatable, or comma-separated; a language takes the ones its image has, and "
              "ones no image has); 'none' preloads nothing. By default warm sandboxes import "
              "the image's libraries that most recent calls imported (at most 8, within a "
              "memory budget; a call's result lists them under 'preloaded').")),
        integer<int>(s("max-concurrent"), s("n"),
                     s("Programs running at once; more calls wait in a queue (twice the cores, "
                       "at least 4)."),
                     Stage::Sandbox, 1, 1024, s("a whole number from 1 to 1024"),
                     &SandboxConfig::maxConcurrent, nullptr, true),
        flag(s("network"), s("Give sandboxes network access (off by default)."), Stage::Sandbox,
             &SandboxConfig::network, true, "SANDBOX_NETWORK_MODE"),
        egress(s("egress"), s("pattern"),
               s("Let runs reach this host, and no other, through the engine's egress gateway "
                 "(repeatable, or comma-separated): host, *.suffix (names below it) or an IP "
                 "address, each with an optional :port (default 80 and 443). The sandbox gets "
                 "HTTP_PROXY/HTTPS_PROXY; it resolves no names and has no other route. Narrows "
                 "--network. On Docker and Podman engines, and on Kubernetes (a gateway pod in the "
                 "namespace); the gateway is the image code-sandbox/gateway."),
               false, "CODE_SANDBOX_EGRESS"),
        egress(s("egress-file"), s("file"),
               s("Host patterns for --egress from a file, one per line (# comments)."), true,
               nullptr),
    };
}

// ... the HTTP server and the modes, ...
QList<Option> serverOptions()
{
    const auto s = [](const char *text) { return QString::fromUtf8(text); };
    return {
        mode({s("http")}, s("Serve MCP over Streamable HTTP at http://HOST:PORT/mcp (headless).")),
        integer<quint16>(s("port"), s("n"), s("HTTP port (8765; 0 picks a free one)."), Stage::Http,
                         0, 65535, s("a number from 0 to 65535"), &CommandLine::httpPort),
        text(s("host"), s("addr"),
             s("HTTP address to bind (127.0.0.1). Anything but loopback exposes the sandbox to "
               "the network."),
             Stage::Http, &CommandLine::httpHost),
        text(s("token"), s("t"),
             s("Bearer token HTTP clients must send. Kept for compatibility: a value on the "
               "command line is visible to every local user (ps, /proc); use --token-file or "
               "CODE_SANDBOX_TOKEN instead. Without any of them, a token generated once and "
               "stored in ~/.config/code-sandbox/http-token (mode 0600) is used."),
             Stage::Http, &CommandLine::token),
        flag(s("no-auth"), s("HTTP without a token (loopback only)."), Stage::Http,
             &CommandLine::noAuth),
        mode({s("print-token")}, s("Print the HTTP token the server would use with the same "
                                   "options and environment, and exit.")),
        {QCommandLineOption(s("new-credential"),
                            s("Make an HTTP credential for the assistant NAME, print it (it is "
                              "shown only once) and exit. Its requests run as NAME under NAME's "
                              "policy, whatever name the client gives itself."),
                            s("name")),
         Stage::Mode, nullptr},
        {QCommandLineOption(s("approve-client"),
                            s("Let in the assistant waiting to sign in (OAuth) with this sign-in "
                              "id, which its sign-in page shows, on the server at --host and "
                              "--port; --as NAME names the assistant it runs as (its "
                              "registered name otherwise). Then exit."),
                            s("id")),
         Stage::Mode, nullptr},
        {QCommandLineOption(s("deny-client"),
                            s("Refuse the sign-in with this id (see --approve-client), and exit."),
                            s("id")),
         Stage::Mode, nullptr},
        {QCommandLineOption(s("as"), s("With --approve-client: the assistant's name."), s("name")),
         Stage::Mode, nullptr},
        mode({s("list-credentials")},
             s("List the HTTP credentials (id, assistant, made, last used) and exit.")),
        {QCommandLineOption(s("revoke-credential"),
                            s("Revoke the HTTP credential with this id, or every credential of "
                              "the assistant of this name, and exit. Its next request is refused."),
                            s("id|name")),
         Stage::Mode, nullptr},
        mode({s("h"), s("help")}, s("Show this help.")),
        mode({s("v"), s("version")}, s("Show the version.")),
    };
}

// ... and this instance: history, window, sessions, HTTP limits.
QList<Option> instanceOptions()
{
    const auto s = [](const char *text) { return QString::fromUtf8(text); };
    return {
        flag(s("no-history"),
             s("Do not keep runs in the history (by default every run is stored in "
               "~/.local/share/code-sandbox/history.sqlite; CODE_SANDBOX_HISTORY names another "
               "file)."),
             Stage::BeforeHelp, &CommandLine::history, false),
        flag(s("no-monitor"),
             s("Do not show this instance's runs in the Code Sandbox window (by default a "
               "headless instance sends them there when the window is open)."),
             Stage::BeforeHelp, &CommandLine::monitor, false),
        flag(s("hidden"),
             s("Start the window hidden, in the tray (for starting with the desktop session)."),
             Stage::BeforeHelp, &CommandLine::startHidden),
        integer<int>(s("session-idle"), s("seconds"),
                     s("A session (create_session) ends after this many seconds without a call "
                       "(600)."),
                     Stage::Sandbox, 5, 7 * 24 * 3600, s("a number of seconds from 5 to 604800"),
                     &CommandLine::sessionIdleSec),
        text(s("image-prefix"), s("registry/prefix"),
             s("Where Kubernetes clusters of --engine pull the images from: "
               "REGISTRY/PREFIX/code-sandbox/NAME:latest instead of code-sandbox/NAME:latest "
               "(push them with containers/build-images.sh --push REGISTRY/PREFIX)."),
             Stage::Sandbox, &CommandLine::imagePrefix),
        text(s("runtime"), s("name"),
             s("Container runtime of the sandboxes on the Docker and Podman engines of --engine "
               "that name none of their own (ADDRESS?runtime=NAME), e.g. runsc for gVisor: a "
               "kernel of its own between the program and the host's. The engine must have it "
               "registered (Docker: \"runtimes\" in /etc/docker/daemon.json; see the README); "
               "default: the engine's own (runc)."),
             Stage::Sandbox, &CommandLine::runtime),
        text(s("runtime-class"), s("name"),
             s("RuntimeClass of the sandbox pods on Kubernetes clusters of --engine, e.g. one "
               "for gVisor (runsc), for a kernel of their own."),
             Stage::Sandbox, &CommandLine::runtimeClass),
        integer<int>(s("max-pods"), s("n"),
                     s("Sandbox pods running at once on each Kubernetes cluster of --engine (8)."),
                     Stage::Sandbox, 1, 10000, s("a whole number from 1 to 10000"),
                     &CommandLine::maxPods),
        integer<int>(s("max-sessions"), s("n"),
                     s("Sessions open at once, all clients together (8)."), Stage::Sandbox, 0, 256,
                     s("a whole number from 0 to 256"), &CommandLine::maxSessions),
        snapshotMax(),
        hostNames(s("allow-host"),
                  s("Accept this name (or address) in the Host and Origin headers of HTTP "
                    "requests, besides localhost, 127.0.0.1, ::1 and the --host address; for "
                    "clients that reach the server by another name (repeatable). Others are "
                    "refused, against DNS rebinding.")),
        text(s("token-file"), s("path"),
             s("Read the bearer token HTTP clients must send from the first line of this file."),
             Stage::Http, &CommandLine::tokenFile),
        seconds(s("http-head-timeout"),
                s("Seconds an HTTP client has to send a request's head, from its first byte (10)."),
                0.1, 3600, &CommandLine::httpHeadTimeoutMs),
        seconds(s("http-body-timeout"),
                s("Seconds an HTTP client has to send a request's body, after its head (30)."), 0.1,
                3600, &CommandLine::httpBodyTimeoutMs),
        integer<int>(s("oauth-token-lifetime"), s("seconds"),
                     s("Life of the access tokens that clients signing in (OAuth) get, in "
                       "seconds (900); they renew them with their refresh token."),
                     Stage::Http, 5, 86400, s("a number of seconds from 5 to 86400"),
                     &CommandLine::oauthTokenSec),
        certificateFiles(s("client-metadata-ca"),
                         s("Trust the certificate authorities in this PEM file, besides the "
                           "system's, when fetching the metadata documents that name clients "
                           "signing in (https client IDs), e.g. a company's own (repeatable)."),
                         &CommandLine::clientMetadataCas),
        flag(s("client-metadata-private"),
             s("Fetch client ID metadata documents from loopback and private addresses too "
               "(a client whose document is on this machine or this network). Off by default: "
               "a sign-in page could otherwise make the server probe them."),
             Stage::Http, &CommandLine::clientMetadataPrivate),
    };
}

// Reads the options of one stage, in the table's order; the first error ends it.
QString applyStage(Stage stage, const QList<Option> &options, const QCommandLineParser &p,
                   const QProcessEnvironment &env, CommandLine &cl)
{
    for (const Option &o : options) {
        if (o.stage != stage)
            continue;
        QStringList values;
        if (p.isSet(o.option))
            values = p.values(o.option);
        else if (o.env && !env.value(QString::fromLatin1(o.env)).isEmpty())
            values = {env.value(QString::fromLatin1(o.env))};
        else
            continue;
        if (o.blankIsUnset && values.last().isEmpty())
            continue;
        const QString error = o.apply(cl, values, env);
        if (!error.isEmpty())
            return error;
    }
    return {};
}

// The help text under the name the program was started as (code-sandbox-mcp, or code-sandbox
// whatever folder it is in). QCommandLineParser takes the name from QCoreApplication, which
// does not exist yet when the command line is parsed ("Usage: <executable_name>"), and would
// give the whole path if it did.
QString helpText(const QCommandLineParser &p, const QString &argv0)
{
    QString text = p.helpText();
    const QString name = QFileInfo(argv0).fileName();
    const QString usage = QStringLiteral("Usage: ");
    const QString suffix = QStringLiteral(" [options]");
    const qsizetype eol = text.indexOf(u'\n');
    if (text.startsWith(usage) && eol > 0 && text.left(eol).endsWith(suffix))
        text.replace(0, eol,
                     usage + (name.isEmpty() ? QStringLiteral("code-sandbox") : name) + suffix);
    return text;
}

// Where the HTTP token comes from: one of --token, --token-file and --no-auth, else
// CODE_SANDBOX_TOKEN, else the store (HttpToken).
QString tokenChoice(const QCommandLineParser &p)
{
    const bool token = p.isSet(QStringLiteral("token"));
    const bool file = p.isSet(QStringLiteral("token-file"));
    if (token && file)
        return QStringLiteral("choose one of --token and --token-file");
    if (p.isSet(QStringLiteral("no-auth")) && (token || file))
        return QStringLiteral("choose one of --token/--token-file and --no-auth");
    if (file && p.value(QStringLiteral("token-file")).isEmpty())
        return QStringLiteral("--token-file needs a path");
    return {};
}

// code-sandbox-mcp's single custom image: both variables or neither. Before the image options,
// which win over it.
QString customImage(const QProcessEnvironment &env, CommandLine &cl)
{
    const QString image = env.value(QStringLiteral("CONTAINER_IMAGE"));
    const QString language = env.value(QStringLiteral("CONTAINER_LANGUAGE"));
    if (image.isEmpty() != language.isEmpty())
        return QStringLiteral("CONTAINER_IMAGE and CONTAINER_LANGUAGE must be set together");
    if (!image.isEmpty())
        cl.images.insert(language.toLower(), image);
    return {};
}

// The host's trust store for sandboxes with network: the one named, or the system's when it
// exists.
QString trustStore(bool given, SandboxConfig &c)
{
    const QString ca =
        given ? c.installCaBundle : QStringLiteral("/etc/ssl/certs/ca-certificates.crt");
    c.installCaBundle.clear();
    if (given && ca != u"none" && !QFileInfo(ca).isFile())
        return QStringLiteral("--install-ca-file: '%1' is not a file").arg(ca);
    if (ca != u"none" && QFileInfo(ca).isFile())
        c.installCaBundle = QFileInfo(ca).absoluteFilePath();
    return {};
}

// --tls-ca/--tls-cert/--tls-key: files that exist (--tls-ca may be 'system' instead), a CA,
// a certificate with its key, and a tcp:// engine on the command line to use them for.
QString engineTls(CommandLine &cl)
{
    if (cl.tlsCa.isEmpty() && cl.tlsCert.isEmpty() && cl.tlsKey.isEmpty())
        return {};
    if (cl.tlsCert.isEmpty() != cl.tlsKey.isEmpty())
        return QStringLiteral("--tls-cert and --tls-key go together");
    // The engine's CA is the only trust root: a client certificate alone would mean trusting
    // every CA of this machine, which only --tls-ca system may ask for.
    if (cl.tlsCa.isEmpty())
        return QStringLiteral("--tls-cert and --tls-key need --tls-ca: the CA that signed the "
                              "engine's certificate is the only one trusted ('--tls-ca system' "
                              "trusts this machine's certificate store instead)");
    for (QString *file : {&cl.tlsCa, &cl.tlsCert, &cl.tlsKey}) {
        if (file->isEmpty() || *file == QLatin1String(EngineLocator::kSystemCa))
            continue;
        if (!QFileInfo(*file).isFile())
            return QStringLiteral("--tls-ca/--tls-cert/--tls-key: '%1' is not a file").arg(*file);
        *file = QFileInfo(*file).absoluteFilePath();
    }
    for (const QString &engine : std::as_const(cl.engines))
        if (QString runtime;
            EngineAddress::parse(EngineAddress::takeRuntime(engine, &runtime)).scheme ==
            EngineAddress::Scheme::Tcp)
            return {};
    return QStringLiteral("--tls-ca, --tls-cert and --tls-key are for tcp:// engines given with "
                          "--engine (a Docker context brings its own; DOCKER_HOST uses "
                          "DOCKER_CERT_PATH)");
}

// The host's proxy and package index settings reach install containers only (runs have no use
// for them). The hosts of the index settings join the installs' allow-list: a mirror the
// operator set up for pip or npm is where the install must go. A setting that names no http(s)
// host (a local folder, say) would not work inside the sandbox: it is left out, with a warning,
// rather than stopping a server that was asked nothing about it.
void installSettings(const QProcessEnvironment &env, SandboxConfig &c)
{
    c.installEnv.clear();
    for (const char *name :
         {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"})
        if (env.contains(QString::fromLatin1(name)))
            c.installEnv.append(QString::fromLatin1(name) + u'=' +
                                env.value(QString::fromLatin1(name)));
    for (const char *name :
         {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "npm_config_registry", "NPM_CONFIG_REGISTRY"}) {
        const QString value = env.value(QString::fromLatin1(name)).trimmed();
        if (value.isEmpty())
            continue;
        // pip takes several extra indexes, separated by spaces.
        QStringList hosts;
        for (const QString &word : value.split(u' ', Qt::SkipEmptyParts)) {
            const QUrl url(word, QUrl::StrictMode);
            QString error;
            const QStringList host = EgressList::parse(
                {url.port() > 0 ? QStringLiteral("%1:%2").arg(url.host()).arg(url.port())
                                : url.host()},
                &error);
            if (!url.isValid() || !error.isEmpty() ||
                (url.scheme() != u"http" && url.scheme() != u"https")) {
                hosts.clear();
                break;
            }
            hosts += host;
        }
        if (hosts.isEmpty()) {
            qCWarning(lcApp).noquote()
                << name << "is not passed to install containers: it names no http(s) host";
            continue;
        }
        c.installEnv.append(QString::fromLatin1(name) + u'=' + value);
        for (const QString &host : std::as_const(hosts))
            if (!c.indexHosts.contains(host))
                c.indexHosts.append(host);
    }
}

// The sandbox's options, after the mode is known and --print-token has answered.
QString applySandbox(const QList<Option> &options, const QCommandLineParser &p,
                     const QProcessEnvironment &env, CommandLine &cl)
{
    QString error = customImage(env, cl);
    if (error.isEmpty())
        error = applyStage(Stage::Sandbox, options, p, env, cl);
    SandboxConfig &c = cl.config;
    CallTimeout timeout;
    if (error.isEmpty() &&
        CallTimeout::resolve(cl.askedTimeoutSec, cl.askedMaxTimeoutSec,
                             {c.defaultTimeoutSec, c.maxTimeoutSec}, &timeout, &error)) {
        c.defaultTimeoutSec = timeout.defaultSec;
        c.maxTimeoutSec = timeout.maxSec;
    }
    if (error.isEmpty())
        error = engineTls(cl);
    if (error.isEmpty() && !cl.runtime.isEmpty() && !EngineAddress::isRuntimeName(cl.runtime))
        error = QStringLiteral("--runtime: '%1' is not a runtime's name (letters, digits, '.', "
                               "'_', '-'), such as runsc")
                    .arg(cl.runtime);
    if (error.isEmpty())
        error = trustStore(p.isSet(QStringLiteral("install-ca-file")), c);
    // The open network has no gateway to add a secret: the placeholder would leave as it is.
    if (error.isEmpty() && !c.secrets.isEmpty() && c.network && c.egress.isEmpty())
        error = QStringLiteral("--secret needs the allow-list mode, and --network gives the open "
                               "network, where nothing can add the secret: leave out --network "
                               "(the secrets' hosts are reachable), or list hosts with --egress");
    installSettings(env, c);
    return error;
}
} // namespace

namespace {
// --new-credential, --list-credentials, --revoke-credential (Mode::Credentials) and
// --approve-client, --deny-client (Mode::Consent): at most one of them. An error, or nothing.
QString credentialMode(const QCommandLineParser &p, CommandLine &cl)
{
    using Mode = CommandLine::Mode;
    QStringList given;
    const QList<std::pair<QString, Mode>> modes = {
        {QStringLiteral("new-credential"), Mode::Credentials},
        {QStringLiteral("list-credentials"), Mode::Credentials},
        {QStringLiteral("revoke-credential"), Mode::Credentials},
        {QStringLiteral("approve-client"), Mode::Consent},
        {QStringLiteral("deny-client"), Mode::Consent}};
    for (const auto &[option, mode] : modes) {
        if (!p.isSet(option))
            continue;
        given.append(QStringLiteral("--") + option);
        cl.mode = mode;
        const QString action = option.section(u'-', 0, 0);
        const QString value = option == u"list-credentials" ? QString() : p.value(option);
        if (mode == Mode::Credentials) {
            cl.credentialAction = action;
            cl.credentialName = value;
        } else {
            cl.consentAction = action;
            cl.consentRequest = value;
            cl.consentAs = p.value(QStringLiteral("as"));
        }
    }
    if (given.size() > 1)
        return QStringLiteral("%1 cannot be given together").arg(given.join(QStringLiteral(", ")));
    return {};
}
} // namespace

CommandLine CommandLine::parse(const QStringList &arguments, const QProcessEnvironment &env)
{
    CommandLine cl;
    const QList<Option> options = sandboxOptions() + engineAccessOptions() + sandboxLimitOptions() +
                                  serverOptions() + instanceOptions();
    QCommandLineParser p;
    p.setApplicationDescription(kDescription);
    for (const Option &o : options)
        p.addOption(o.option);
    const auto fail = [&cl](const QString &message) {
        cl.mode = Mode::Error;
        cl.message = message;
        return cl;
    };
    if (!p.parse(arguments))
        return fail(p.errorText() + QStringLiteral("\nTry --help."));
    cl.given = p.optionNames();
    applyStage(Stage::BeforeHelp, options, p, env, cl);
    if (p.isSet(QStringLiteral("help"))) {
        cl.mode = Mode::Help;
        cl.message = helpText(p, arguments.value(0));
        return cl;
    }
    if (p.isSet(QStringLiteral("version"))) {
        cl.mode = Mode::Version;
        cl.message = QStringLiteral("code-sandbox %1").arg(QStringLiteral(CODE_SANDBOX_VERSION));
        return cl;
    }
    if (!p.positionalArguments().isEmpty())
        return fail(QStringLiteral("unexpected argument '%1'. Try --help.")
                        .arg(p.positionalArguments().first()));

    const bool stdio = p.isSet(QStringLiteral("stdio"));
    const bool http = p.isSet(QStringLiteral("http"));
    if (stdio && http)
        return fail(QStringLiteral("choose one of --stdio and --http"));
    if (http)
        cl.mode = Mode::Http;
    else if (stdio || QFileInfo(arguments.value(0)).fileName() == u"code-sandbox-mcp")
        cl.mode = Mode::Stdio;

    QString error = tokenChoice(p);
    if (error.isEmpty())
        error = applyStage(Stage::Http, options, p, env, cl);
    if (!error.isEmpty())
        return fail(error);
    const QString envToken = env.value(QStringLiteral("CODE_SANDBOX_TOKEN"));
    cl.tokenFromEnvironment = !p.isSet(QStringLiteral("token")) && cl.tokenFile.isEmpty() &&
                              !cl.noAuth && !envToken.isEmpty();
    if (cl.tokenFromEnvironment)
        cl.token = envToken;
    // The credentials' and the sign-ins' commands need the HTTP options only.
    error = credentialMode(p, cl);
    if (!error.isEmpty())
        return fail(error);
    if (cl.mode == Mode::Credentials || cl.mode == Mode::Consent)
        return cl;
    if (p.isSet(QStringLiteral("print-token"))) {
        if (cl.noAuth)
            return fail(QStringLiteral("--print-token: no token is used with --no-auth"));
        cl.mode = Mode::PrintToken;
        return cl;
    }
    error = applySandbox(options, p, env, cl);
    return error.isEmpty() ? cl : fail(error);
}

EngineLocator::Options CommandLine::engineOptions() const
{
    EngineLocator::Options o;
    o.engines = engines;
    o.tlsCa = tlsCa;
    o.tlsCert = tlsCert;
    o.tlsKey = tlsKey;
    o.insecureTcp = insecureTcp;
    return o;
}

namespace {
// The window's bound secrets, when --secret gave none. What would stop a server started with
// --secret is skipped here with a warning instead: the settings were saved for other starts, and
// a variable missing today should not keep the window from opening.
void settingsSecrets(const QList<AppSettings::SecretBinding> &bindings,
                     const QProcessEnvironment &env, CommandLine &cl)
{
    SandboxConfig &c = cl.config;
    for (const AppSettings::SecretBinding &b : bindings) {
        // load() checked them; a caller's own list is checked as --secret checks its hosts.
        QString error;
        const QStringList hosts = EgressList::parse(b.hosts, &error);
        bool twice = false;
        for (const SandboxSpec::Secret &s : std::as_const(c.secrets))
            twice = twice || s.name == b.name;
        if (!AppSettings::isValidEnvName(b.name) || !AppSettings::isValidEnvName(b.hostVar) ||
            !error.isEmpty() || hosts.isEmpty() || twice) {
            qCWarning(lcApp).noquote() << "settings: ignoring the bound secret" << b.toString();
            continue;
        }
        if (env.value(b.hostVar).isEmpty()) {
            cl.missingSecretVars.append({b.name, b.hostVar});
            continue;
        }
        c.secrets.append({b.name, hosts, env.value(b.hostVar).toUtf8()});
    }
    // The open network has no gateway to add them (what --secret refuses to start with).
    if (!c.secrets.isEmpty() && c.network && c.egress.isEmpty()) {
        QStringList names;
        for (const SandboxSpec::Secret &s : std::as_const(c.secrets))
            names.append(s.name);
        qCWarning(lcApp).noquote()
            << "settings: the bound secrets" << names.join(QStringLiteral(", "))
            << "are not used: runs have the open network (--network or SANDBOX_NETWORK_MODE), "
               "where nothing can add them; list hosts with --egress to use them";
        c.secrets.clear();
    }
}

// The window's workspaces, when --workspace named none. Checked as --workspace checks them (the
// folder made canonical, and there); one that would stop a server started with --workspace is
// skipped with a warning instead: a drive unplugged today should not keep the window from
// opening.
void settingsWorkspaces(const QList<Workspace> &workspaces, CommandLine &cl)
{
    SandboxConfig &c = cl.config;
    for (const Workspace &saved : workspaces) {
        // The mode spelled out, so that a folder whose name ends in ":rw" keeps it.
        const bool rw = saved.mode == Workspace::Mode::CopyOnWrite;
        QString error;
        std::optional<Workspace> w = Workspace::parse(
            saved.name + u'=' + saved.path + (rw ? QStringLiteral(":rw") : QStringLiteral(":ro")),
            &error);
        if (!w) {
            qCWarning(lcApp).noquote() << "settings: skipping a workspace:" << error;
            continue;
        }
        if (c.workspace(w->name)) {
            qCWarning(lcApp).noquote() << "settings: skipping a second workspace named" << w->name;
            continue;
        }
        w->apply = saved.apply;
        w->exclude = saved.exclude;
        w->include = saved.include;
        c.workspaces.append(*w);
    }
}
} // namespace

CommandLine CommandLine::withSettings(const AppSettings &settings,
                                      const QProcessEnvironment &env) const
{
    CommandLine cl = *this;
    const auto given = [&cl](const char *option) {
        return cl.given.contains(QLatin1String(option));
    };
    if (!given("engine") && !settings.engineList().isEmpty()) {
        cl.engines = settings.engineList();
        cl.engine = cl.engines.constFirst();
    }
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
    if (!given("timeout")) {
        // The settings' default, within the maximum the command line resolved.
        CallTimeout timeout;
        QString error;
        CallTimeout::resolve(0, 0, {settings.defaultTimeoutSec, c.maxTimeoutSec}, &timeout, &error);
        c.defaultTimeoutSec = timeout.defaultSec;
    }
    if (!given("memory"))
        c.memoryBytes = qint64(settings.memoryMiB) * 1024 * 1024;
    if (!given("cpus"))
        c.cpus = settings.cpus;
    c.pidsLimit = settings.pidsLimit;
    // AppSettings::load() kept only valid names.
    if (!given("pass-through-env") && c.passThroughEnv.isEmpty()) {
        const PassThroughEnv resolved = PassThroughEnv::resolve(settings.passThroughEnv, env);
        c.passThroughEnv = resolved.values;
        cl.missingPassThrough += resolved.missing;
    }
    if (!given("secret") && c.secrets.isEmpty())
        settingsSecrets(settings.secrets, env, cl);
    if (!given("workspace") && c.workspaces.isEmpty())
        settingsWorkspaces(settings.workspaces, cl);
    if (!given("port"))
        cl.httpPort = settings.httpPort;
    // The token: Settings keeps it in the token store, where HttpToken::resolve() finds it.
    return cl;
}
