#include "volumesapi.h"

#include "engineclient.h"

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
