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

QByteArray ContainersApi::path(const QString &id, const char *tail) const
{
    return "/containers/" + EngineClient::encode(id) + tail;
}
