#include "systemapi.h"

#include "engineclient.h"

EngineReply *SystemApi::ping()
{
    return m_engine->ping();
}

EngineReply *SystemApi::version()
{
    return m_engine->get("/version");
}

EngineReply *SystemApi::info()
{
    return m_engine->get("/info");
}
