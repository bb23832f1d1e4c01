#pragma once

#include "enginerequest.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

class AttachStream;
class EngineClient;
class EngineReply;

// The engine's containers (/containers/...): every call returns its reply at once (see
// EngineReply). A value to use on the spot: ContainersApi(engine).start(id).
class ContainersApi
{
public:
    explicit ContainersApi(EngineClient *engine) : m_engine(engine) {}

    // `spec` is the create body (Docker's meaning; adapted to Podman's by the client). `name`,
    // when given, must be unique on the engine.
    EngineReply *create(const QJsonObject &spec, const QString &name = {});
    EngineReply *start(const QString &id);
    // Attaches to stdin, stdout and stderr on a connection of its own (before start, so nothing
    // is missed).
    AttachStream *attach(const QString &id);
    // Blocks in the engine until the container ends; the answer holds StatusCode.
    EngineReply *wait(const QString &id);
    // `signal` as the engine names them: "SIGINT", "SIGKILL".
    EngineReply *kill(const QString &id, const QByteArray &signal);
    // Forced (a running container is killed), with its anonymous volumes.
    EngineReply *remove(const QString &id);
    EngineReply *inspect(const QString &id);
    // Every container (running or not) that has all of `labels` ("key" or "key=value").
    EngineReply *list(const QStringList &labels);
    // A tar of `path`; an archive longer than `maxBytes` fails with EngineError::Kind::TooLarge
    // without being held.
    EngineReply *getArchive(const QString &id, const QString &path,
                            qint64 maxBytes = EngineRequest::kDefaultMaxBodyBytes);
    // Unpacks `tar` into the folder `dir` of the container.
    EngineReply *putArchive(const QString &id, const QString &dir, const QByteArray &tar);
    // One reading of the container's cgroup (GET .../stats, one-shot: no second reading to
    // compute a rate, which would keep the answer for another second). Docker publishes a
    // reading once a second, so the answer can take up to that long; Podman answers at once.
    // Needs API 1.41 (older engines ignore one-shot and take two seconds).
    EngineReply *stats(const QString &id);

    // What a stats answer says, or -1 for what it does not. Memory as `docker stats` shows it:
    // the cgroup's usage less the inactive file cache, which the kernel drops before it kills.
    struct Usage
    {
        qint64 memoryBytes = -1;
        qint64 cpuTimeNs = -1; // since the container started, all CPUs together
        bool isValid() const { return memoryBytes >= 0 && cpuTimeNs >= 0; }
    };
    static Usage usage(const QJsonObject &stats);
    // A stats answer is a few kilobytes (more with a per-CPU list on a large host).
    static constexpr qint64 kMaxStatsBytes = 256 * 1024;

private:
    QByteArray path(const QString &id, const char *tail = "") const;

    EngineClient *m_engine;
};
