#include "containerspec.h"

#include "language.h"
#include "sandboxconfig.h"

#include <QCoreApplication>
#include <QJsonArray>

const char *ContainerSpec::supervisorScript()
{
    // `read` is a shell builtin that stops at the newline, so the program bytes stay in stdin for
    // head. The status goes to both streams because the engine copies them independently: the
    // host knows the run is over only when each stream has delivered everything before it.
    return R"sh(IFS=' ' read -r nonce size || exit 90
case "$size" in ''|*[!0-9]*) echo 'cs-run: bad header' >&2; exit 90;; esac
f=$1; shift
head -c "$size" > "$f" || exit 91
"$@" < /dev/null
rc=$?
printf '%s %s\n' "$nonce" "$rc"
printf '%s %s\n' "$nonce" "$rc" >&2
exit "$rc"
)sh";
}

QJsonObject ContainerSpec::build(const Language &language, const QString &image,
                                 const SandboxConfig &config)
{
    QJsonArray cmd{QStringLiteral("/bin/sh"), QStringLiteral("-c"),
                   QString::fromLatin1(supervisorScript()), QStringLiteral("cs-run"),
                   language.fileName};
    for (const QString &part : language.command)
        cmd.append(part);

    QJsonArray env{
        QStringLiteral("HOME=/sandbox"), QStringLiteral("LANG=C.UTF-8"),
        QStringLiteral("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")};
    for (const QString &e : language.env)
        env.append(e);
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
        {QStringLiteral("NanoCpus"), qint64(config.cpus * 1e9)},
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
