#pragma once

#include <QJsonObject>
#include <QString>

class EngineClient;
class EngineReply;

// The engine's named volumes (/volumes/...).
class VolumesApi
{
public:
    explicit VolumesApi(EngineClient *engine) : m_engine(engine) {}

    EngineReply *create(const QString &name, const QJsonObject &labels);
    EngineReply *remove(const QString &name);
    // 404 when there is no such volume.
    EngineReply *inspect(const QString &name);
    // The volumes that have all of `labels` ("key=value") and that no container uses.
    EngineReply *listUnused(const QStringList &labels);

private:
    EngineClient *m_engine;
};
