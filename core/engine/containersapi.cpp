#include "containersapi.h"

#include "engineclient.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QUrl>

EngineReply *ContainersApi::create(const QJsonObject &spec, const QString &name)
{
    return m_engine->createContainer(spec, name);
}

EngineReply *ContainersApi::start(const QString &id)
{
    return m_engine->post(path(id, "/start"));
}

AttachStream *ContainersApi::attach(const QString &id)
{
    return m_engine->attach(id);
}

EngineReply *ContainersApi::wait(const QString &id)
{
    return m_engine->post(path(id, "/wait"));
}

EngineReply *ContainersApi::kill(const QString &id, const QByteArray &signal)
{
    return m_engine->post(path(id, "/kill?signal=") + QUrl::toPercentEncoding(signal));
}

EngineReply *ContainersApi::remove(const QString &id)
{
    return m_engine->del(path(id, "?force=1&v=1"));
}

EngineReply *ContainersApi::inspect(const QString &id)
{
    return m_engine->get(path(id, "/json"));
}

EngineReply *ContainersApi::list(const QStringList &labels)
{
    const QJsonObject filters{{QStringLiteral("label"), QJsonArray::fromStringList(labels)}};
    return m_engine->get("/containers/json?all=1&filters=" +
                         QUrl::toPercentEncoding(QString::fromUtf8(
                             QJsonDocument(filters).toJson(QJsonDocument::Compact))));
}

EngineReply *ContainersApi::getArchive(const QString &id, const QString &path, qint64 maxBytes)
{
    EngineRequest request{
        "GET", this->path(id, "/archive?path=") + EngineClient::encode(path), {}, {}, false};
    request.maxBodyBytes = maxBytes;
    return m_engine->send(request);
}

EngineReply *ContainersApi::putArchive(const QString &id, const QString &dir, const QByteArray &tar)
{
    return m_engine->request("PUT", path(id, "/archive?path=") + EngineClient::encode(dir), tar,
                             "application/x-tar");
}

EngineReply *ContainersApi::stats(const QString &id)
{
    EngineRequest request{"GET", path(id, "/stats?stream=false&one-shot=true"), {}, {}, false};
    request.maxBodyBytes = kMaxStatsBytes;
    return m_engine->send(request);
}

ContainersApi::Usage ContainersApi::usage(const QJsonObject &stats)
{
    // Numbers only where the engine wrote numbers: a stopped container's answer has an empty
    // memory_stats, and the fields differ between cgroup v1 and v2 (and Podman).
    const auto number = [](const QJsonValue &v) -> qint64 {
        return v.isDouble() && v.toDouble() >= 0 ? qint64(v.toDouble()) : -1;
    };
    Usage u;
    const QJsonObject memory = stats.value(u"memory_stats").toObject();
    const qint64 used = number(memory.value(u"usage"));
    if (used >= 0) {
        const QJsonObject detail = memory.value(u"stats").toObject();
        // cgroup v1 names it total_inactive_file, v2 inactive_file.
        qint64 inactive = number(detail.value(u"total_inactive_file"));
        if (inactive < 0)
            inactive = number(detail.value(u"inactive_file"));
        u.memoryBytes = inactive >= 0 && inactive <= used ? used - inactive : used;
    }
    u.cpuTimeNs = number(
        stats.value(u"cpu_stats").toObject().value(u"cpu_usage").toObject().value(u"total_usage"));
    return u;
}

QByteArray ContainersApi::path(const QString &id, const char *tail) const
{
    return "/containers/" + EngineClient::encode(id) + tail;
}
