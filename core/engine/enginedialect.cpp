#include "enginedialect.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QStringList>
#include <sys/resource.h>

EngineDialect EngineDialect::fromVersion(const QJsonObject &version)
{
    EngineDialect d;
    // Podman names itself among the components ("Podman Engine"); Docker says "Engine".
    for (const QJsonValue &c : version.value(u"Components").toArray())
        if (c.toObject().value(u"Name").toString().contains(u"Podman", Qt::CaseInsensitive))
            d.m_kind = Kind::Podman;
    return d;
}

QString EngineDialect::name() const
{
    return m_kind == Kind::Podman ? QStringLiteral("Podman") : QStringLiteral("Docker");
}

QString EngineDialect::initName() const
{
    // Docker's is tini under another name; Podman's is catatonit, bind-mounted as /run/podman-init.
    return m_kind == Kind::Podman ? QStringLiteral("podman-init") : QStringLiteral("docker-init");
}

QJsonObject EngineDialect::adaptCreate(const QJsonObject &request) const
{
    if (m_kind != Kind::Podman || request.isEmpty())
        return request;
    QJsonObject spec = request;

    // Podman adds TERM=xterm and container=podman (its containers.conf "env") to what the
    // request sets; Docker adds nothing. The supervisor (containers/cs-run) unsets the ones
    // named here, unless the request sets them itself (a pass-through TERM, say).
    QJsonArray env = spec.value(u"Env").toArray();
    QStringList added{QStringLiteral("TERM"), QStringLiteral("container")};
    for (const QJsonValue &e : std::as_const(env))
        added.removeAll(e.toString().section(u'=', 0, 0));
    if (!added.isEmpty()) {
        env.append(QStringLiteral("CS_UNSET_ENV=") + added.join(u' '));
        spec.insert(QStringLiteral("Env"), env);
    }

    QJsonObject host = spec.value(u"HostConfig").toObject();
    tmpfsVolumesToMounts(host);
    spec.insert(QStringLiteral("HostConfig"), host);

    QJsonArray ulimits = host.value(u"Ulimits").toArray();
    if (ulimits.isEmpty())
        return spec;
    // Docker leaves a limit the request does not name as the engine's own. Podman, once a
    // request names any ulimit, sets the ones it does not name to 1048576, and raising
    // RLIMIT_NPROC that high needs CAP_SYS_RESOURCE: without it (nested or restricted hosts)
    // every start fails with "error setting rlimit type 6". Naming nproc keeps Docker's meaning.
    for (const QJsonValue &u : std::as_const(ulimits))
        if (u.toObject().value(u"Name").toString() == u"nproc")
            return spec;
    // (Read once: the host's limits do not change under a running server.)
    static const qint64 limit = podmanProcessLimit();
    ulimits.append(QJsonObject{{QStringLiteral("Name"), QStringLiteral("nproc")},
                               {QStringLiteral("Soft"), limit},
                               {QStringLiteral("Hard"), limit}});
    host.insert(QStringLiteral("Ulimits"), ulimits);
    spec.insert(QStringLiteral("HostConfig"), host);
    return spec;
}

qint64 EngineDialect::podmanProcessLimit()
{
    rlimit own{};
    const qint64 hard = getrlimit(RLIMIT_NPROC, &own) == 0 && own.rlim_max != RLIM_INFINITY
                            ? qint64(own.rlim_max)
                            : -1;
    QFile f(QStringLiteral("/proc/sys/kernel/pid_max"));
    bool ok = false;
    const qint64 pidMax = f.open(QIODevice::ReadOnly) ? f.readAll().trimmed().toLongLong(&ok) : 0;
    return podmanProcessLimit(hard, ok ? pidMax : -1);
}

qint64 EngineDialect::podmanProcessLimit(qint64 ownHardLimit, qint64 pidMax)
{
    // -1 means unknown or unlimited. With neither known, 32768 is the kernel's default pid_max.
    if (ownHardLimit > 0 && pidMax > 0)
        return std::min(ownHardLimit, pidMax);
    if (ownHardLimit > 0)
        return ownHardLimit;
    return pidMax > 0 ? pidMax : 32768;
}

void EngineDialect::tmpfsVolumesToMounts(QJsonObject &host)
{
    // A volume of the local driver with type=tmpfs is how Docker gives a size-capped workdir that
    // its archive endpoint can reach. Podman 4 ignores a create request's DriverConfig and makes
    // an ordinary volume on disk, without the cap; but its archive endpoint reaches into the
    // tmpfs mounts of a running container, so there the same workdir is a plain tmpfs mount.
    // Podman's tmpfs knows no uid=/gid=: "U" gives it to the container's user instead, and it is
    // noexec unless told otherwise, where a volume is not.
    const QJsonArray mounts = host.value(u"Mounts").toArray();
    QJsonArray kept;
    QJsonObject tmpfs = host.value(u"Tmpfs").toObject();
    for (const QJsonValue &m : mounts) {
        const QJsonObject mount = m.toObject();
        const QJsonObject driver =
            mount.value(u"VolumeOptions").toObject().value(u"DriverConfig").toObject();
        const QJsonObject opts = driver.value(u"Options").toObject();
        if (mount.value(u"Type").toString() != u"volume" ||
            !mount.value(u"Source").toString().isEmpty() ||
            opts.value(u"type").toString() != u"tmpfs") {
            kept.append(mount);
            continue;
        }
        QStringList options{mount.value(u"ReadOnly").toBool() ? QStringLiteral("ro")
                                                              : QStringLiteral("rw")};
        bool owned = false;
        bool execSet = false;
        for (const QString &o : opts.value(u"o").toString().split(u',', Qt::SkipEmptyParts)) {
            if (o.startsWith(u"uid=") || o.startsWith(u"gid=")) {
                owned = true;
                continue;
            }
            execSet = execSet || o == u"exec" || o == u"noexec";
            options.append(o);
        }
        if (!execSet)
            options.append(QStringLiteral("exec"));
        if (owned)
            options.append(QStringLiteral("U"));
        tmpfs.insert(mount.value(u"Target").toString(), options.join(u','));
    }
    if (kept.size() == mounts.size())
        return;
    host.insert(QStringLiteral("Mounts"), kept);
    host.insert(QStringLiteral("Tmpfs"), tmpfs);
}
