#include "containerspec.h"

#include "embeddedscripts.h"
#include "language.h"
#include "sandboxconfig.h"
#include "sandboxlayout.h"

#include <QCoreApplication>
#include <QJsonArray>

const char *ContainerSpec::supervisorScript()
{
    // containers/cs-run, compiled in: the images carry the same file for manual use, but passing
    // it inline keeps any image with a POSIX shell usable (CONTAINER_IMAGE, --python-image).
    return kSupervisorScript;
}

QJsonObject ContainerSpec::build(const Language &language, const QString &image,
                                 const SandboxConfig &config, const QString &librariesVolume,
                                 bool session)
{
    QStringList env;
    if (session)
        env.append(QStringLiteral("CS_SESSION=1"));
    if (!language.preloadCommand.isEmpty())
        env.append(QStringLiteral("CS_PRELOAD=/tmp/.cs-nonce"));
    if (!language.compileCommand.isEmpty())
        env.append(QStringLiteral("CS_COMPILE=") + language.compileCommand);
    // Installed by an earlier install container; read-only here, so a program cannot change
    // what the next run with the same libraries gets.
    if (!librariesVolume.isEmpty())
        env += language.libraryEnv;
    QJsonObject spec =
        base(language, image, config, language.fileName,
             language.preloadCommand.isEmpty() ? language.command : language.preloadCommand, env);
    if (!librariesVolume.isEmpty()) {
        QJsonObject host = spec.value(u"HostConfig").toObject();
        QJsonArray mounts = host.value(u"Mounts").toArray();
        mounts.append(QJsonObject{
            {QStringLiteral("Type"), QStringLiteral("volume")},
            {QStringLiteral("Source"), librariesVolume},
            {QStringLiteral("Target"), QString::fromLatin1(SandboxLayout::kLibrariesDir)},
            {QStringLiteral("ReadOnly"), true}});
        host.insert(QStringLiteral("Mounts"), mounts);
        spec.insert(QStringLiteral("HostConfig"), host);
    }
    return spec;
}

QJsonObject ContainerSpec::buildInstall(const Language &language, const QString &image,
                                        const SandboxConfig &config, const QString &volume,
                                        const QStringList &extraEnv,
                                        const QString &caBundleHostPath)
{
    // The install script arrives as the "program" and runs with sh, with network, writing into the
    // libraries volume; everything else is as hardened as a run. It never gets the pass-through
    // variables: package names come from the model (which a prompt injection can steer), and a
    // package's install code runs here with network, so it could send them anywhere.
    SandboxConfig installConfig = config;
    installConfig.passThroughEnv.clear();
    QStringList env = extraEnv;
    const QString caTarget = QStringLiteral("/etc/code-sandbox/host-ca.crt");
    if (!caBundleHostPath.isEmpty())
        for (const char *var :
             {"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "PIP_CERT", "CURL_CA_BUNDLE"})
            env.append(QString::fromLatin1(var) + u'=' + caTarget);
    QJsonObject spec = base(language, image, installConfig, QStringLiteral("install.sh"),
                            {QStringLiteral("sh"), QStringLiteral("install.sh")}, env);
    QJsonObject host = spec.value(u"HostConfig").toObject();
    QJsonArray mounts = host.value(u"Mounts").toArray();
    mounts.append(
        QJsonObject{{QStringLiteral("Type"), QStringLiteral("volume")},
                    {QStringLiteral("Source"), volume},
                    {QStringLiteral("Target"), QString::fromLatin1(SandboxLayout::kLibrariesDir)}});
    if (!caBundleHostPath.isEmpty()) {
        // The host's trust store, so installs work behind a TLS-inspecting proxy too.
        mounts.append(QJsonObject{{QStringLiteral("Type"), QStringLiteral("bind")},
                                  {QStringLiteral("Source"), caBundleHostPath},
                                  {QStringLiteral("Target"), caTarget},
                                  {QStringLiteral("ReadOnly"), true}});
    }
    host.insert(QStringLiteral("Mounts"), mounts);
    host.insert(QStringLiteral("NetworkMode"), QStringLiteral("bridge"));
    spec.insert(QStringLiteral("HostConfig"), host);
    spec.insert(QStringLiteral("NetworkDisabled"), false);
    QJsonObject labels = spec.value(u"Labels").toObject();
    labels.insert(QStringLiteral("code-sandbox.role"), QStringLiteral("install"));
    spec.insert(QStringLiteral("Labels"), labels);
    return spec;
}

QJsonObject ContainerSpec::base(const Language &language, const QString &image,
                                const SandboxConfig &config, const QString &fileName,
                                const QStringList &command, const QStringList &extraEnv)
{
    QJsonArray cmd{QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                   QString::fromLatin1(supervisorScript()), QStringLiteral("cs-run"), fileName};
    for (const QString &part : command)
        cmd.append(part);

    QJsonArray env{
        QStringLiteral("HOME=/sandbox"), QStringLiteral("LANG=C.UTF-8"),
        QStringLiteral("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"),
        QStringLiteral("OUTPUT_DIR=") + QString::fromLatin1(SandboxLayout::kOutputDir)};
    for (const QString &e : language.env + extraEnv)
        env.append(e);
    // Last, so nothing of ours can override what the operator passes through.
    for (const auto &var : config.passThroughEnv)
        env.append(var.first + u'=' + var.second);

    QJsonObject labels{
        {QString::fromLatin1(SandboxLayout::kLabelApp), QStringLiteral("1")},
        {QString::fromLatin1(SandboxLayout::kLabelOwner), config.instanceId},
        {QString::fromLatin1(SandboxLayout::kLabelPid),
         QString::number(QCoreApplication::applicationPid())},
        {QString::fromLatin1(SandboxLayout::kLabelHost), SandboxLayout::hostId()},
        {QStringLiteral("code-sandbox.language"), language.name},
    };

    // The workdir is a tmpfs too, but mounted as a volume: the engine's archive endpoint reaches
    // into volumes of a running container, not into its tmpfs mounts, and that is how input
    // files go in and output files and plots come out. It allows exec, for compiled programs;
    // the volume goes with the container (removal with v=1).
    const QJsonObject workdir{
        {QStringLiteral("Type"), QStringLiteral("volume")},
        {QStringLiteral("Target"), QString::fromLatin1(SandboxLayout::kWorkdir)},
        {QStringLiteral("VolumeOptions"),
         QJsonObject{
             {QStringLiteral("Labels"), labels},
             {QStringLiteral("DriverConfig"),
              QJsonObject{{QStringLiteral("Name"), QStringLiteral("local")},
                          {QStringLiteral("Options"),
                           QJsonObject{{QStringLiteral("type"), QStringLiteral("tmpfs")},
                                       {QStringLiteral("device"), QStringLiteral("tmpfs")},
                                       {QStringLiteral("o"),
                                        QStringLiteral("nosuid,nodev,size=%1,uid=1000,gid=1000,"
                                                       "mode=0755")
                                            .arg(config.tmpfsBytes)}}}}}}}};

    QJsonObject host{
        {QStringLiteral("NetworkMode"),
         config.network ? QStringLiteral("bridge") : QStringLiteral("none")},
        {QStringLiteral("Memory"), config.memoryBytes},
        {QStringLiteral("MemorySwap"), config.memoryBytes},
        {QStringLiteral("NanoCpus"), qRound64(config.cpus * 1e9)},
        {QStringLiteral("PidsLimit"), config.pidsLimit},
        {QStringLiteral("ReadonlyRootfs"), true},
        {QStringLiteral("Tmpfs"),
         QJsonObject{{QStringLiteral("/tmp"),
                      QStringLiteral("rw,nosuid,nodev,size=%1,mode=1777").arg(config.tmpfsBytes)}}},
        {QStringLiteral("Mounts"), QJsonArray{workdir}},
        {QStringLiteral("CapDrop"), QJsonArray{QStringLiteral("ALL")}},
        {QStringLiteral("SecurityOpt"), QJsonArray{QStringLiteral("no-new-privileges")}},
        {QStringLiteral("Init"), true},
        {QStringLiteral("IpcMode"), QStringLiteral("private")},
        {QStringLiteral("Ulimits"),
         QJsonArray{QJsonObject{{QStringLiteral("Name"), QStringLiteral("nofile")},
                                {QStringLiteral("Soft"), 1024},
                                {QStringLiteral("Hard"), 1024}}}},
    };

    return {
        {QStringLiteral("Image"), image},
        {QStringLiteral("Cmd"), cmd},
        {QStringLiteral("Entrypoint"), QJsonArray{}},
        {QStringLiteral("Env"), env},
        {QStringLiteral("User"), QStringLiteral("1000:1000")},
        {QStringLiteral("WorkingDir"), QString::fromLatin1(SandboxLayout::kWorkdir)},
        {QStringLiteral("Labels"), labels},
        {QStringLiteral("NetworkDisabled"), !config.network},
        {QStringLiteral("AttachStdin"), true},
        {QStringLiteral("AttachStdout"), true},
        {QStringLiteral("AttachStderr"), true},
        {QStringLiteral("OpenStdin"), true},
        {QStringLiteral("StdinOnce"), true},
        {QStringLiteral("Tty"), false},
        {QStringLiteral("HostConfig"), host},
    };
}
