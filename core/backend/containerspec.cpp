#include "containerspec.h"

#include "egressendpoint.h"
#include "sandboxspec.h"

#include <QJsonArray>

namespace {
QJsonObject labelsJson(const QMap<QString, QString> &labels)
{
    QJsonObject out;
    for (auto it = labels.begin(); it != labels.end(); ++it)
        out.insert(it.key(), it.value());
    return out;
}

QString networkMode(SandboxSpec::Network network)
{
    switch (network) {
    case SandboxSpec::Network::Open:
        return QStringLiteral("bridge");
    case SandboxSpec::Network::None:
    case SandboxSpec::Network::Allowlist: // until joinEgress
        break;
    }
    return QStringLiteral("none");
}

// A size-capped tmpfs volume, as the engine's archive endpoint reaches into volumes (not into
// tmpfs mounts); removed with the container (v=1), and labelled like it so that one left behind
// is found as a leftover.
QJsonObject tmpfsVolume(const QString &target, qint64 sizeBytes, qint64 uid, qint64 gid,
                        const QJsonObject &labels)
{
    return {
        {QStringLiteral("Type"), QStringLiteral("volume")},
        {QStringLiteral("Target"), target},
        {QStringLiteral("VolumeOptions"),
         QJsonObject{{QStringLiteral("Labels"), labels},
                     {QStringLiteral("DriverConfig"),
                      QJsonObject{{QStringLiteral("Name"), QStringLiteral("local")},
                                  {QStringLiteral("Options"),
                                   QJsonObject{{QStringLiteral("type"), QStringLiteral("tmpfs")},
                                               {QStringLiteral("device"), QStringLiteral("tmpfs")},
                                               {QStringLiteral("o"),
                                                QStringLiteral("nosuid,nodev,size=%1,uid=%2,"
                                                               "gid=%3,mode=0755")
                                                    .arg(sizeBytes)
                                                    .arg(uid)
                                                    .arg(gid)}}}}}}}};
}

QJsonObject mountJson(const SandboxSpec &spec, const SandboxSpec::Mount &mount,
                      const QJsonObject &labels)
{
    // A run's workspaces: root's, so that the sandbox's user cannot swap their folders; a
    // copy-on-write one's copy that the sandbox makes itself: its user's.
    if (mount.kind == SandboxSpec::Mount::Kind::Scratch)
        return mount.sandboxUsers
                   ? tmpfsVolume(mount.target, mount.sizeBytes, spec.uid, spec.gid, labels)
                   : tmpfsVolume(mount.target, mount.sizeBytes, 0, 0, labels);
    QJsonObject out{{QStringLiteral("Type"), mount.kind == SandboxSpec::Mount::Kind::HostFile
                                                 ? QStringLiteral("bind")
                                                 : QStringLiteral("volume")},
                    {QStringLiteral("Source"), mount.source},
                    {QStringLiteral("Target"), mount.target}};
    if (mount.readOnly)
        out.insert(QStringLiteral("ReadOnly"), true);
    return out;
}
} // namespace

QJsonObject ContainerSpec::render(const SandboxSpec &spec)
{
    const QJsonObject labels = labelsJson(spec.labels);
    return {
        {QStringLiteral("Image"), spec.image},
        {QStringLiteral("Cmd"), QJsonArray::fromStringList(spec.command)},
        {QStringLiteral("Entrypoint"), QJsonArray{}},
        {QStringLiteral("Env"), QJsonArray::fromStringList(spec.envEntries())},
        {QStringLiteral("User"), QStringLiteral("%1:%2").arg(spec.uid).arg(spec.gid)},
        {QStringLiteral("WorkingDir"), spec.workingDir},
        {QStringLiteral("Labels"), labelsJson(spec.sandboxLabels())},
        {QStringLiteral("NetworkDisabled"), spec.network != SandboxSpec::Network::Open},
        {QStringLiteral("AttachStdin"), true},
        {QStringLiteral("AttachStdout"), true},
        {QStringLiteral("AttachStderr"), true},
        {QStringLiteral("OpenStdin"), true},
        {QStringLiteral("StdinOnce"), true},
        {QStringLiteral("Tty"), false},
        {QStringLiteral("HostConfig"), hostConfig(spec, labels)},
    };
}

QJsonObject ContainerSpec::hostConfig(const SandboxSpec &spec, const QJsonObject &labels)
{
    const SandboxSpec::Limits &limits = spec.limits;
    // The workdir is a tmpfs too, but mounted as a volume: the engine's archive endpoint reaches
    // into volumes of a running container, not into its tmpfs mounts, and that is how input
    // files go in and output files and plots come out. It allows exec, for compiled programs;
    // the volume goes with the container (removal with v=1). It carries the owner's labels, so
    // one left behind is found as a leftover.
    const QJsonObject workdir =
        tmpfsVolume(spec.workingDir, limits.tmpfsBytes, spec.uid, spec.gid, labels);
    QJsonArray mounts{workdir};
    for (const SandboxSpec::Mount &mount : spec.mounts)
        mounts.append(mountJson(spec, mount, labels));

    QJsonObject host{
        {QStringLiteral("NetworkMode"), networkMode(spec.network)},
        {QStringLiteral("Memory"), limits.memoryBytes},
        {QStringLiteral("MemorySwap"), limits.memoryBytes},
        {QStringLiteral("NanoCpus"), qRound64(limits.cpus * 1e9)},
        {QStringLiteral("PidsLimit"), limits.pidsLimit},
        {QStringLiteral("ReadonlyRootfs"), true},
        {QStringLiteral("Tmpfs"),
         QJsonObject{{QStringLiteral("/tmp"),
                      QStringLiteral("rw,nosuid,nodev,size=%1,mode=1777").arg(limits.tmpfsBytes)}}},
        {QStringLiteral("Mounts"), mounts},
        {QStringLiteral("CapDrop"), QJsonArray{QStringLiteral("ALL")}},
        {QStringLiteral("SecurityOpt"), QJsonArray{QStringLiteral("no-new-privileges")}},
        {QStringLiteral("Init"), true},
        {QStringLiteral("IpcMode"), QStringLiteral("private")},
        {QStringLiteral("Ulimits"),
         QJsonArray{QJsonObject{{QStringLiteral("Name"), QStringLiteral("nofile")},
                                {QStringLiteral("Soft"), 1024},
                                {QStringLiteral("Hard"), 1024}}}},
    };
    if (!spec.runtime.isEmpty())
        host.insert(QStringLiteral("Runtime"), spec.runtime);
    return host;
}

QJsonObject ContainerSpec::joinEgress(const QJsonObject &body, const EgressEndpoint &egress)
{
    QJsonObject out = body;
    QJsonArray env = out.value(u"Env").toArray();
    for (const QString &entry : egress.proxyEnv())
        env.append(entry);
    out.insert(QStringLiteral("Env"), env);
    out.insert(QStringLiteral("NetworkDisabled"), false);
    QJsonObject host = out.value(u"HostConfig").toObject();
    host.insert(QStringLiteral("NetworkMode"), egress.network);
    host.insert(QStringLiteral("Dns"),
                QJsonArray{QString::fromLatin1(EgressEndpoint::kNoNameServer)});
    out.insert(QStringLiteral("HostConfig"), host);
    return out;
}
