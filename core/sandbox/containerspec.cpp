#include "containerspec.h"

#include "language.h"
#include "sandboxconfig.h"
#include "supervisorscript.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QSysInfo>

const char *ContainerSpec::supervisorScript()
{
    // containers/cs-run, compiled in: the images carry the same file for manual use, but passing
    // it inline keeps any image with a POSIX shell usable (CONTAINER_IMAGE, --python-image).
    return kSupervisorScript;
}

QString ContainerSpec::hostId()
{
    static const QString id = QString::fromLatin1(QSysInfo::machineUniqueId().toHex().left(16)) +
                              u'-' + QSysInfo::machineHostName();
    return id;
}

QJsonObject ContainerSpec::build(const Language &language, const QString &image,
                                 const SandboxConfig &config)
{
    QJsonArray cmd{QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                   QString::fromLatin1(supervisorScript()), QStringLiteral("cs-run"),
                   language.fileName};
    const bool preload = !language.preloadCommand.isEmpty();
    for (const QString &part : preload ? language.preloadCommand : language.command)
        cmd.append(part);

    QJsonArray env{
        QStringLiteral("HOME=/sandbox"), QStringLiteral("LANG=C.UTF-8"),
        QStringLiteral("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")};
    for (const QString &e : language.env)
        env.append(e);
    if (preload)
        env.append(QStringLiteral("CS_PRELOAD=/tmp/.cs-nonce"));
    for (const auto &var : config.passThroughEnv)
        env.append(var.first + u'=' + var.second);

    const QString tmpfsOpts = QStringLiteral("rw,nosuid,nodev,size=%1").arg(config.tmpfsBytes);
    QJsonObject tmpfs{{QStringLiteral("/tmp"), tmpfsOpts + QStringLiteral(",mode=1777")},
                      {QString::fromLatin1(kWorkdir),
                       tmpfsOpts + QStringLiteral(",uid=1000,gid=1000,mode=0755")}};

    QJsonObject host{
        {QStringLiteral("NetworkMode"),
         config.network ? QStringLiteral("bridge") : QStringLiteral("none")},
        {QStringLiteral("Memory"), config.memoryBytes},
        {QStringLiteral("MemorySwap"), config.memoryBytes},
        {QStringLiteral("NanoCpus"), qRound64(config.cpus * 1e9)},
        {QStringLiteral("PidsLimit"), config.pidsLimit},
        {QStringLiteral("ReadonlyRootfs"), true},
        {QStringLiteral("Tmpfs"), tmpfs},
        {QStringLiteral("CapDrop"), QJsonArray{QStringLiteral("ALL")}},
        {QStringLiteral("SecurityOpt"), QJsonArray{QStringLiteral("no-new-privileges")}},
        {QStringLiteral("Init"), true},
        {QStringLiteral("IpcMode"), QStringLiteral("private")},
        {QStringLiteral("Ulimits"),
         QJsonArray{QJsonObject{{QStringLiteral("Name"), QStringLiteral("nofile")},
                                {QStringLiteral("Soft"), 1024},
                                {QStringLiteral("Hard"), 1024}}}},
    };

    QJsonObject labels{
        {QString::fromLatin1(kLabelApp), QStringLiteral("1")},
        {QString::fromLatin1(kLabelOwner), config.instanceId},
        {QString::fromLatin1(kLabelPid), QString::number(QCoreApplication::applicationPid())},
        {QString::fromLatin1(kLabelHost), hostId()},
        {QStringLiteral("code-sandbox.language"), language.name},
    };

    return {
        {QStringLiteral("Image"), image},
        {QStringLiteral("Cmd"), cmd},
        {QStringLiteral("Entrypoint"), QJsonArray{}},
        {QStringLiteral("Env"), env},
        {QStringLiteral("User"), QStringLiteral("1000:1000")},
        {QStringLiteral("WorkingDir"), QString::fromLatin1(kWorkdir)},
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
