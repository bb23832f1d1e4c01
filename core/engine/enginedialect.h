#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>

// What differs between the engines that speak the Docker Engine API, decided once from their
// GET /version answer, so that callers build one request for all of them and the tests run the
// same suite on each. Only differences that change what a sandbox gets are handled here.
class EngineDialect
{
public:
    enum class Kind
    {
        Docker,
        Podman
    };

    EngineDialect() = default;
    static EngineDialect fromVersion(const QJsonObject &version);

    Kind kind() const { return m_kind; }
    QString name() const;
    // The init the engine puts at PID 1 for HostConfig.Init (its /proc/1/comm).
    QString initName() const;

    // A create request (POST /containers/create) as this engine needs it to mean what Docker
    // makes of it; Docker's is returned as it is.
    QJsonObject adaptCreate(const QJsonObject &spec) const;

    // The RLIMIT_NPROC a Podman container gets when the request sets other ulimits: the smaller
    // of this process's hard limit and the kernel's pid_max (what Docker containers inherit in
    // practice). Both are read from the host; tests pass their own.
    static qint64 podmanProcessLimit();
    static qint64 podmanProcessLimit(qint64 ownHardLimit, qint64 pidMax);

private:
    static void tmpfsVolumesToMounts(QJsonObject &hostConfig);

    Kind m_kind = Kind::Docker;
};
