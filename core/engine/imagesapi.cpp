#include "imagesapi.h"

#include "engineclient.h"

EngineReply *ImagesApi::inspect(const QString &name)
{
    return m_engine->get("/images/" + EngineClient::encode(name) + "/json");
}
