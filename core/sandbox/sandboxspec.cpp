#include "sandboxspec.h"

#include "embeddedscripts.h"
#include "language.h"
#include "runnetwork.h"
#include "sandboxconfig.h"
#include "sandboxlayout.h"
#include "upstreamproxy.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace {
QPair<QString, QString> envPair(const QString &entry)
{
    const qsizetype eq = entry.indexOf(u'=');
    return eq < 0 ? qMakePair(entry, QString()) : qMakePair(entry.left(eq), entry.mid(eq + 1));
}

// The common part of a run and an install: the supervisor running `command` on `fileName`, the
// base environment, the owner's labels, the limits, and its network as decided (RunNetwork).
SandboxSpec base(const Language &language, const QString &image, const SandboxConfig &config,
                 const RunNetwork &network, const QString &fileName, const QStringList &command,
                 const QStringList &extraEnv)
{
    SandboxSpec spec;
    spec.language = language.name;
    spec.image = image;
    spec.command = QStringList{QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                               QString::fromLatin1(SandboxSpec::supervisorScript()),
                               QStringLiteral("cs-run"), fileName} +
                   command;
    spec.workingDir = QString::fromLatin1(SandboxLayout::kWorkdir);
    const QStringList env =
        QStringList{
            QStringLiteral("HOME=/sandbox"), QStringLiteral("LANG=C.UTF-8"),
            QStringLiteral("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
            QStringLiteral("OUTPUT_DIR=") + QString::fromLatin1(SandboxLayout::kOutputDir)} +
        language.env + extraEnv;
    for (const QString &entry : env)
        spec.env.append(envPair(entry));
    // Last, so nothing of ours can override what the operator passes through.
    spec.env += config.passThroughEnv;
    spec.labels = SandboxSpec::ownerLabels(config);
    spec.labels.insert(QStringLiteral("code-sandbox.language"), language.name);
    spec.limits.memoryBytes = config.memoryBytes;
    spec.limits.cpus = config.cpus;
    spec.limits.pidsLimit = config.pidsLimit;
    spec.limits.tmpfsBytes = config.tmpfsBytes;
    spec.limits.maxTimeoutSec = config.maxTimeoutSec;
    if (network.isolation != QLatin1String(SandboxSpec::kIsolationContainer))
        spec.isolation = network.isolation;
    spec.network = network.mode;
    if (spec.network == SandboxSpec::Network::Allowlist) {
        spec.egress = network.reachableHosts();
        spec.askOtherHosts = network.askOtherHosts;
        spec.secrets = network.secrets;
    }
    return spec;
}
} // namespace

QMap<QString, QString> SandboxSpec::ownerLabels(const SandboxConfig &config)
{
    return {
        {QString::fromLatin1(SandboxLayout::kLabelApp), QStringLiteral("1")},
        {QString::fromLatin1(SandboxLayout::kLabelOwner), config.instanceId},
        {QString::fromLatin1(SandboxLayout::kLabelPid),
         QString::number(QCoreApplication::applicationPid())},
        {QString::fromLatin1(SandboxLayout::kLabelHost), SandboxLayout::hostId()},
    };
}

const char *SandboxSpec::supervisorScript()
{
    // containers/cs-run, compiled in: the images carry the same file for manual use, but passing
    // it inline keeps any image with a POSIX shell usable (CONTAINER_IMAGE, --python-image).
    return kSupervisorScript;
}

SandboxSpec SandboxSpec::forRun(const Language &language, const QString &image,
                                const SandboxConfig &config, const RunNetwork &network,
                                const QString &librariesVolume, bool session)
{
    QStringList env;
    if (session)
        env.append(QStringLiteral("CS_SESSION=1"));
    if (!language.preloadCommand.isEmpty())
        env.append(QStringLiteral("CS_PRELOAD=/tmp/.cs-nonce"));
    if (!language.compileCommand.isEmpty())
        env.append(QStringLiteral("CS_COMPILE=") + language.compileCommand);
    // Installed by an earlier install sandbox; read-only here, so a program cannot change what
    // the next run with the same libraries gets.
    if (!librariesVolume.isEmpty())
        env += language.libraryEnv;
    // A run that goes out trusts the host's authorities too: behind a proxy that inspects TLS the
    // host's store holds the proxy's authority, which no image has, and every HTTPS request of
    // the run would fail without it. The supervisor adds the file to the image's store rather
    // than using it in its place, so a file that holds only the proxy's authority (or a host
    // store older than the image's) takes nothing away. Mounted, not passed in a variable: a
    // system store is about 200 KB, beyond what one variable may hold (128 KB on Linux) and
    // more than the engine should keep for every sandbox. A run without network gets nothing.
    const bool hostTrust = network.reachesNetwork() && !config.installCaBundle.isEmpty();
    if (hostTrust)
        env.append(QString::fromLatin1(kHostTrustStoreVar) + u'=' +
                   QString::fromLatin1(kHostTrustStore));
    SandboxSpec spec =
        base(language, image, config, network, language.fileName,
             language.preloadCommand.isEmpty() ? language.command : language.preloadCommand, env);
    spec.session = session;
    if (!librariesVolume.isEmpty())
        spec.mounts.append({Mount::Kind::Volume, librariesVolume,
                            QString::fromLatin1(SandboxLayout::kLibrariesDir), true});
    if (hostTrust)
        spec.mounts.append({Mount::Kind::HostFile, config.installCaBundle,
                            QString::fromLatin1(kHostTrustStore), true});
    return spec;
}

SandboxSpec SandboxSpec::forInstall(const Language &language, const QString &image,
                                    const SandboxConfig &config, const QString &volume)
{
    // The install script arrives as the "program" and runs with sh, with network, writing into
    // the libraries volume; everything else is as hardened as a run. It never gets the
    // pass-through variables: package names come from the model (which a prompt injection can
    // steer), and a package's install code runs here with network, so it could send them
    // anywhere.
    SandboxConfig installConfig = config;
    installConfig.passThroughEnv.clear();
    // The host's proxy variables stay out: the gateway is the install's proxy, and goes out
    // through the host's (UpstreamProxy) when there is one.
    QStringList env;
    for (const QString &entry : config.installEnv)
        if (!UpstreamProxy::isProxyVariable(entry.section(u'=', 0, 0)))
            env.append(entry);
    const QString caTarget = QString::fromLatin1(kHostTrustStore);
    if (!config.installCaBundle.isEmpty())
        for (const char *var :
             {"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "PIP_CERT", "CURL_CA_BUNDLE"})
            env.append(QString::fromLatin1(var) + u'=' + caTarget);
    SandboxSpec spec =
        base(language, image, installConfig, RunNetwork(), QStringLiteral("install.sh"),
             {QStringLiteral("sh"), QStringLiteral("install.sh")}, env);
    spec.mounts.append(
        {Mount::Kind::Volume, volume, QString::fromLatin1(SandboxLayout::kLibrariesDir), false});
    // The host's trust store, so installs work behind a TLS-inspecting proxy too.
    if (!config.installCaBundle.isEmpty())
        spec.mounts.append({Mount::Kind::HostFile, config.installCaBundle, caTarget, true});
    // Package code from the index runs here with network, chosen by names the model gave: it
    // reaches the language's index (and the operator's mirrors) through the egress gateway, and
    // nothing else.
    spec.network = Network::Allowlist;
    for (const QString &host : language.indexHosts + config.indexHosts)
        if (!spec.egress.contains(host))
            spec.egress.append(host);
    spec.role = QStringLiteral("install");
    return spec;
}

SandboxSpec SandboxSpec::forWorkspaceFill(const Language &language, const QString &image,
                                          const SandboxConfig &config, const QString &volume,
                                          const QString &previous)
{
    SandboxConfig fillConfig = config;
    fillConfig.passThroughEnv.clear();
    SandboxSpec spec = base(language, image, fillConfig, RunNetwork(), QStringLiteral("fill.sh"),
                            {QStringLiteral("sh"), QStringLiteral("fill.sh")}, {});
    spec.mounts.append({Mount::Kind::Volume, volume,
                        QString::fromLatin1(SandboxLayout::kWorkspaceFillDir), false});
    if (!previous.isEmpty())
        spec.mounts.append({Mount::Kind::Volume, previous,
                            QString::fromLatin1(SandboxLayout::kWorkspacePreviousDir), true});
    // As root, without capabilities: a new volume's root folder is root's (the image has no
    // folder there to copy its owner from), and what it holds is root's, read-only to runs.
    spec.uid = spec.gid = 0;
    spec.role = QStringLiteral("workspace");
    return spec;
}

bool SandboxSpec::dropHostTrustStore()
{
    // Only a run's: an install's store is named by the trust variables themselves.
    const QString var = QString::fromLatin1(kHostTrustStoreVar);
    if (env.removeIf([&var](const QPair<QString, QString> &e) { return e.first == var; }) == 0)
        return false;
    mounts.removeIf([](const Mount &m) {
        return m.kind == Mount::Kind::HostFile && m.target == QLatin1String(kHostTrustStore);
    });
    return true;
}

QStringList SandboxSpec::envEntries() const
{
    QStringList out;
    out.reserve(env.size());
    for (const auto &var : env)
        out.append(var.first + u'=' + var.second);
    return out;
}

QMap<QString, QString> SandboxSpec::sandboxLabels() const
{
    QMap<QString, QString> out = labels;
    if (!role.isEmpty())
        out.insert(QStringLiteral("code-sandbox.role"), role);
    return out;
}

QString SandboxSpec::key() const
{
    QJsonObject labelsJson;
    for (auto it = labels.begin(); it != labels.end(); ++it)
        labelsJson.insert(it.key(), it.value());
    QJsonArray mountsJson;
    for (const Mount &m : mounts)
        mountsJson.append(QJsonArray{int(m.kind), m.source, m.target, m.readOnly, m.sizeBytes});
    QJsonArray secretsJson;
    for (const Secret &s : secrets)
        secretsJson.append(
            QJsonArray{s.name, QJsonArray::fromStringList(s.hosts),
                       QString::fromLatin1(
                           QCryptographicHash::hash(s.value, QCryptographicHash::Sha256).toHex())});
    const QJsonObject all{
        {QStringLiteral("language"), language},
        {QStringLiteral("image"), image},
        {QStringLiteral("command"), QJsonArray::fromStringList(command)},
        {QStringLiteral("workingDir"), workingDir},
        {QStringLiteral("env"), QJsonArray::fromStringList(envEntries())},
        {QStringLiteral("user"), QJsonArray{uid, gid}},
        {QStringLiteral("labels"), labelsJson},
        {QStringLiteral("role"), role},
        {QStringLiteral("limits"), QJsonArray{limits.memoryBytes, limits.cpus, limits.pidsLimit,
                                              limits.tmpfsBytes, limits.maxTimeoutSec}},
        {QStringLiteral("mounts"), mountsJson},
        {QStringLiteral("network"), int(network)},
        {QStringLiteral("egress"), QJsonArray::fromStringList(egress)},
        {QStringLiteral("askOtherHosts"), askOtherHosts},
        {QStringLiteral("runtime"), runtime},
        {QStringLiteral("secrets"), secretsJson},
        {QStringLiteral("session"), session},
    };
    // QJsonDocument writes keys sorted, so equal specs give equal keys.
    return QString::fromLatin1(
        QCryptographicHash::hash(QJsonDocument(all).toJson(QJsonDocument::Compact),
                                 QCryptographicHash::Sha256)
            .toHex());
}
