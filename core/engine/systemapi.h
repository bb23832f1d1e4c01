#pragma once

class EngineClient;
class EngineReply;

// The engine itself: whether it answers, and what it is.
class SystemApi
{
public:
    explicit SystemApi(EngineClient *engine) : m_engine(engine) {}

    // GET /_ping: cheap (Podman spends about a second on /version).
    EngineReply *ping();
    // GET /version: name, version, API version, components.
    EngineReply *version();
    // GET /info: containers, images, runtime, cgroups.
    EngineReply *info();

private:
    EngineClient *m_engine;
};
