#include "volumesapi.h"

#include "engineclient.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QUrl>

EngineReply *VolumesApi::create(const QString &name, const QJsonObject &labels)
{
    return m_engine->post("/volumes/create", QJsonObject{{QStringLiteral("Name"), name},
                                                         {QStringLiteral("Labels"), labels}});
}

EngineReply *VolumesApi::remove(const QString &name)
{
    return m_engine->del("/volumes/" + EngineClient::encode(name));
}

EngineReply *VolumesApi::inspect(const QString &name)
{
    return m_engine->get("/volumes/" + EngineClient::encode(name));
}

EngineReply *VolumesApi::listUnused(const QStringList &labels)
{
    // "dangling": referenced by no container, running or not (Docker and Podman alike).
    const QJsonObject filters{{QStringLiteral("label"), QJsonArray::fromStringList(labels)},
                              {QStringLiteral("dangling"), QJsonArray{QStringLiteral("true")}}};
    return m_engine->get("/volumes?filters=" +
                         QUrl::toPercentEncoding(QString::fromUtf8(
                             QJsonDocument(filters).toJson(QJsonDocument::Compact))));
}
