#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

class EngineClient;
class EngineReply;

// The engine's networks (/networks/...): the allow-list mode's internal network and its
// gateway's way out. Every call returns its reply at once (see EngineReply).
class NetworksApi
{
public:
    explicit NetworksApi(EngineClient *engine) : m_engine(engine) {}

    struct Create
    {
        QString name;
        QJsonObject labels;
        // No route beyond the network (Docker and Podman: no masquerade, no default route).
        bool internal = false;
        // The bridge driver's options (Docker: com.docker.network.bridge.*).
        QJsonObject options;
        // "a.b.c.d/n" and its gateway address; empty: the engine picks. Only a network with a
        // subnet given here lets connect() choose a container's address.
        QString subnet;
        QString gateway;
    };
    // A bridge network; a name the engine has already is refused (409), never shared.
    EngineReply *create(const Create &network);
    // Joins a created (or running) container to the network, at `address` (IPv4) or, when
    // empty, an address the engine picks.
    EngineReply *connect(const QString &network, const QString &container,
                         const QString &address = {});
    // 404 when there is no such network; refused while a container still uses it.
    EngineReply *remove(const QString &network);
    EngineReply *inspect(const QString &network);
    // Every network that has all of `labels` ("key" or "key=value").
    EngineReply *list(const QStringList &labels);

private:
    EngineClient *m_engine;
};
