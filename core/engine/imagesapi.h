#pragma once

#include <QString>

class EngineClient;
class EngineReply;

// The engine's images (/images/...): only what a sandbox needs to know of them.
class ImagesApi
{
public:
    explicit ImagesApi(EngineClient *engine) : m_engine(engine) {}

    // 404 when the engine does not have the image.
    EngineReply *inspect(const QString &name);

private:
    EngineClient *m_engine;
};
