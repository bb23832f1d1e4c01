#include "enginelocator.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

namespace {

using Result = EngineLocator::Result;
using Options = EngineLocator::Options;

const QString kContextPrefix = QStringLiteral("context:");

// The files of a TLS folder in Docker's layout (ca.pem, cert.pem, key.pem), those that exist.
struct TlsFiles
{
    QString ca;
    QString cert;
    QString key;

    bool any() const { return !ca.isEmpty() || !cert.isEmpty() || !key.isEmpty(); }

    static TlsFiles in(const QString &dir)
    {
        const auto file = [&dir](const char *name) {
            const QString path = dir + u'/' + QString::fromLatin1(name);
            return QFileInfo(path).isFile() ? path : QString();
        };
        return {file("ca.pem"), file("cert.pem"), file("key.pem")};
    }
};

// The one resolution, for one engine.
class Resolver
{
public:
    Resolver(const Options &options, const QProcessEnvironment &env,
             const EngineLocator::Exists &exists)
        : m_options(options), m_env(env), m_exists(exists)
    {}

    Result named(const QString &value)
    {
        if (value.startsWith(kContextPrefix))
            return context(value.mid(kContextPrefix.size()), QStringLiteral("--engine"));
        Result r;
        r.source = QStringLiteral("--engine");
        QString error;
        EngineAddress a = EngineAddress::parse(value, &error);
        if (!a.isValid())
            return failed(r, QStringLiteral("--engine: %1").arg(error));
        if (a.scheme == EngineAddress::Scheme::Tcp) {
            const bool given = !m_options.tlsCa.isEmpty() || !m_options.tlsCert.isEmpty() ||
                               !m_options.tlsKey.isEmpty();
            if (given) {
                a.tls = true;
                a.systemCa = m_options.tlsCa == QLatin1String(EngineLocator::kSystemCa);
                a.caFile = a.systemCa ? QString() : m_options.tlsCa;
                a.certFile = m_options.tlsCert;
                a.keyFile = m_options.tlsKey;
                if (!hasTrustRoot(a, r, QStringLiteral("--tls-ca was not given")))
                    return r;
            } else if (!tlsFromEnvironment(a, r)) {
                return r;
            }
        }
        return checked(r, a);
    }

    // Without --engine: the environment, the Docker config, the local sockets.
    Result fromEnvironment()
    {
        const QString dockerHost = m_env.value(QStringLiteral("DOCKER_HOST"));
        if (!dockerHost.isEmpty())
            return fromVariable(QStringLiteral("DOCKER_HOST"), dockerHost, true);
        const QString dockerContext = m_env.value(QStringLiteral("DOCKER_CONTEXT"));
        if (!dockerContext.isEmpty())
            return context(dockerContext, QStringLiteral("DOCKER_CONTEXT"));
        const QString current = currentContext();
        if (!current.isEmpty())
            return context(current, QStringLiteral("currentContext in %1").arg(configFile()));
        return withoutContext(false);
    }

private:
    static Result failed(Result r, const QString &error)
    {
        r.error = error;
        return r;
    }

    // TLS trusts the CA named for the engine and nothing else, as docs/security.md says: without
    // one the address is refused, unless --tls-ca system asked for this machine's trust store.
    // `missing` says where the CA was looked for. False when `r` holds an error.
    static bool hasTrustRoot(const EngineAddress &a, Result &r, const QString &missing)
    {
        if (!a.tls || !a.caFile.isEmpty() || a.systemCa)
            return true;
        r = failed(r, QStringLiteral("%1: %2 uses TLS but names no CA (%3). The CA that signed "
                                     "the engine's certificate is the only trust root Code "
                                     "Sandbox accepts, so it will not connect: provide that "
                                     "CA (ca.pem, or --tls-ca FILE with --engine), or give "
                                     "--engine with --tls-ca system to trust this machine's "
                                     "certificate store instead.")
                          .arg(r.source, a.display(), missing));
        return false;
    }

    // The rules every address passes, wherever it came from.
    Result checked(Result r, const EngineAddress &a) const
    {
        r.address = a;
        if (a.scheme == EngineAddress::Scheme::Unix)
            r.socketPath = a.socketPath;
        if (a.scheme == EngineAddress::Scheme::Tcp && !a.tls && !a.isLoopback() &&
            !m_options.insecureTcp)
            return failed(
                r, QStringLiteral("%1 is %2: plain TCP to another host is refused, as anyone "
                                  "who reaches that port controls the engine's host. Use TLS "
                                  "(DOCKER_TLS_VERIFY=1 and DOCKER_CERT_PATH, or --tls-ca, "
                                  "--tls-cert, --tls-key), ssh://, or --insecure-tcp on a "
                                  "network you trust.")
                       .arg(r.source, a.display()));
        return r;
    }

    // DOCKER_TLS_VERIFY (with DOCKER_CERT_PATH, default the Docker config folder) turns TLS on
    // for a tcp:// address, as for the Docker CLI; DOCKER_TLS alone (TLS without checking the
    // engine) is refused. False when `r` holds an error.
    bool tlsFromEnvironment(EngineAddress &a, Result &r) const
    {
        const bool verify = !m_env.value(QStringLiteral("DOCKER_TLS_VERIFY")).isEmpty();
        const bool tls = !m_env.value(QStringLiteral("DOCKER_TLS")).isEmpty();
        if (!verify && tls) {
            r = failed(r, QStringLiteral("%1: DOCKER_TLS without DOCKER_TLS_VERIFY would "
                                         "accept any engine's certificate, which Code Sandbox "
                                         "refuses; set DOCKER_TLS_VERIFY=1 (and "
                                         "DOCKER_CERT_PATH to the folder with ca.pem)")
                              .arg(r.source));
            return false;
        }
        if (!verify)
            return true;
        QString dir = m_env.value(QStringLiteral("DOCKER_CERT_PATH"));
        if (dir.isEmpty())
            dir = EngineLocator::dockerConfigDir(m_env);
        const TlsFiles files = TlsFiles::in(dir);
        a.tls = true;
        a.caFile = files.ca;
        a.certFile = files.cert;
        a.keyFile = files.key;
        return hasTrustRoot(a, r, QStringLiteral("no ca.pem in %1").arg(dir));
    }

    Result fromVariable(const QString &variable, const QString &value, bool dockerTls)
    {
        Result r;
        r.source = variable;
        QString error;
        EngineAddress a = EngineAddress::parse(value, &error);
        if (!a.isValid())
            return failed(r, QStringLiteral("%1: %2").arg(variable, error));
        if (dockerTls && a.scheme == EngineAddress::Scheme::Tcp && !tlsFromEnvironment(a, r))
            return r;
        return checked(r, a);
    }

    // The usual order after the contexts: CONTAINER_HOST, then the local sockets. With
    // `dockerHost`, DOCKER_HOST first (the context "default", asked for by name).
    Result withoutContext(bool dockerHost)
    {
        const QString host = m_env.value(QStringLiteral("DOCKER_HOST"));
        if (dockerHost && !host.isEmpty())
            return fromVariable(QStringLiteral("DOCKER_HOST"), host, true);
        const QString containerHost = m_env.value(QStringLiteral("CONTAINER_HOST"));
        if (!containerHost.isEmpty())
            return fromVariable(QStringLiteral("CONTAINER_HOST"), containerHost, false);
        return localSockets();
    }

    Result localSockets()
    {
        Result r;
        QList<QPair<QString, QString>> candidates;
        const QString xdg = m_env.value(QStringLiteral("XDG_RUNTIME_DIR"));
        if (!xdg.isEmpty())
            candidates.append(
                {xdg + QStringLiteral("/podman/podman.sock"), QStringLiteral("rootless Podman")});
        candidates.append({QStringLiteral("/run/podman/podman.sock"), QStringLiteral("Podman")});
        candidates.append({QStringLiteral("/var/run/docker.sock"), QStringLiteral("Docker")});
        for (const auto &c : candidates) {
            r.tried.append(c.first);
            if (m_exists(c.first)) {
                r.source = c.second;
                r.address = EngineAddress::unixSocket(c.first);
                r.socketPath = c.first;
                return r;
            }
        }
        // Nothing there yet: aim at Docker's default so the error names the usual place.
        r.source = QStringLiteral("default");
        r.address = EngineAddress::unixSocket(QStringLiteral("/var/run/docker.sock"));
        r.socketPath = r.address.socketPath;
        return r;
    }

    QString configFile() const
    {
        return EngineLocator::dockerConfigDir(m_env) + QStringLiteral("/config.json");
    }

    QString currentContext() const
    {
        QFile file(configFile());
        if (!file.open(QIODevice::ReadOnly))
            return {};
        return QJsonDocument::fromJson(file.readAll())
            .object()
            .value(u"currentContext")
            .toString()
            .trimmed();
    }

    // A context as the Docker CLI stores it.
    Result context(const QString &name, const QString &source)
    {
        Result r;
        r.source = source == u"--engine" ? QStringLiteral("--engine context:%1").arg(name)
                                         : QStringLiteral("%1 (context %2)").arg(source, name);
        if (name == u"default") {
            Result usual = withoutContext(true);
            usual.source = r.source + QStringLiteral(", ") + usual.source;
            return usual;
        }
        if (!EngineLocator::isValidContextName(name))
            return failed(
                r, QStringLiteral("%1: '%2' is not a Docker context name").arg(source, name));
        const QString dir = EngineLocator::dockerConfigDir(m_env) + QStringLiteral("/contexts");
        const QString hash = EngineLocator::contextDirName(name);
        const QString metaPath =
            dir + QStringLiteral("/meta/") + hash + QStringLiteral("/meta.json");
        QFile meta(metaPath);
        if (!meta.open(QIODevice::ReadOnly))
            return failed(r, QStringLiteral("%1: no Docker context '%2' (%3 not found; see "
                                            "'docker context ls')")
                                 .arg(r.source, name, metaPath));
        QJsonParseError parseError;
        const QJsonObject root = QJsonDocument::fromJson(meta.readAll(), &parseError).object();
        if (parseError.error != QJsonParseError::NoError)
            return failed(r, QStringLiteral("%1: %2 is not valid JSON: %3")
                                 .arg(r.source, metaPath, parseError.errorString()));
        const QJsonObject endpoint =
            root.value(u"Endpoints").toObject().value(u"docker").toObject();
        QString host = endpoint.value(u"Host").toString();
        if (host.isEmpty()) // the Docker CLI's default
            host = QStringLiteral("unix:///var/run/docker.sock");
        QString error;
        EngineAddress a = EngineAddress::parse(host, &error);
        if (!a.isValid())
            return failed(r, QStringLiteral("%1: %2").arg(r.source, error));
        a.context = name;
        if (a.scheme == EngineAddress::Scheme::Tcp) {
            if (endpoint.value(u"SkipTLSVerify").toBool())
                return failed(r, QStringLiteral("%1: the context skips verifying the engine's "
                                                "certificate (SkipTLSVerify), which Code Sandbox "
                                                "refuses; give it the engine's CA instead "
                                                "(docker context update %2 --docker "
                                                "\"host=%3,ca=FILE,cert=FILE,key=FILE\")")
                                     .arg(r.source, name, host));
            const QString tlsDir = dir + QStringLiteral("/tls/") + hash + QStringLiteral("/docker");
            const TlsFiles files = TlsFiles::in(tlsDir);
            a.tls = files.any();
            a.caFile = files.ca;
            a.certFile = files.cert;
            a.keyFile = files.key;
            if (!hasTrustRoot(a, r, QStringLiteral("the context has no ca.pem in %1").arg(tlsDir)))
                return r;
        }
        return checked(r, a);
    }

    const Options &m_options;
    const QProcessEnvironment &m_env;
    const EngineLocator::Exists &m_exists;
};

} // namespace

QString EngineLocator::socketPathFromUrl(const QString &url)
{
    if (url.startsWith(u"unix://"))
        return url.mid(7);
    if (url.startsWith(u'/'))
        return url;
    return {};
}

QString EngineLocator::dockerConfigDir(const QProcessEnvironment &env)
{
    const QString dir = env.value(QStringLiteral("DOCKER_CONFIG"));
    if (!dir.isEmpty())
        return dir;
    QString home = env.value(QStringLiteral("HOME"));
    if (home.isEmpty())
        home = QDir::homePath();
    return home + QStringLiteral("/.docker");
}

QString EngineLocator::contextDirName(const QString &name)
{
    return QString::fromLatin1(
        QCryptographicHash::hash(name.toUtf8(), QCryptographicHash::Sha256).toHex());
}

bool EngineLocator::isValidContextName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[a-zA-Z0-9][a-zA-Z0-9_.+-]+$"));
    return re.match(name).hasMatch();
}

QList<EngineLocator::Result> EngineLocator::locateAll(const Options &options,
                                                      const QProcessEnvironment &env,
                                                      const Exists &exists)
{
    Resolver resolver(options, env, exists);
    if (options.engines.isEmpty())
        return {resolver.fromEnvironment()};
    QList<Result> results;
    for (const QString &value : options.engines) {
        // An address the user named is taken as given (no fallback), so a typo is reported
        // rather than silently replaced by another engine.
        // "?runtime=NAME" is the engine's setting, not part of where it is.
        QString runtime;
        QString error;
        const QString where = EngineAddress::takeRuntime(value.trimmed(), &runtime, &error);
        Result r = resolver.named(where);
        r.address.runtime = runtime;
        if (!error.isEmpty())
            r.error = error;
        for (qsizetype i = 0; r.ok() && i < results.size(); ++i)
            if (results[i].ok() && results[i].address.url() == r.address.url())
                r.error = QStringLiteral("--engine %1: the same engine as --engine %2")
                              .arg(value, options.engines[i]);
        results.append(r);
    }
    return results;
}

QList<EngineLocator::Result> EngineLocator::locateAll(const Options &options)
{
    return locateAll(options, QProcessEnvironment::systemEnvironment(),
                     [](const QString &p) { return QFileInfo::exists(p); });
}

EngineLocator::Result EngineLocator::locate(const Options &options, const QProcessEnvironment &env,
                                            const Exists &exists)
{
    return locateAll(options, env, exists).value(0);
}

EngineLocator::Result EngineLocator::locate(const QString &explicitEngine,
                                            const QProcessEnvironment &env, const Exists &exists)
{
    Options options;
    if (!explicitEngine.isEmpty())
        options.engines = {explicitEngine};
    return locate(options, env, exists);
}

EngineLocator::Result EngineLocator::locate(const QString &explicitEngine)
{
    return locate(explicitEngine, QProcessEnvironment::systemEnvironment(),
                  [](const QString &p) { return QFileInfo::exists(p); });
}
