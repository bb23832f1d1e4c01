#include "networksapi.h"

#include "engineclient.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QUrl>

EngineReply *NetworksApi::create(const Create &network)
{
    QJsonObject body{{QStringLiteral("Name"), network.name},
                     {QStringLiteral("CheckDuplicate"), true},
                     {QStringLiteral("Driver"), QStringLiteral("bridge")},
                     {QStringLiteral("Internal"), network.internal},
                     {QStringLiteral("Labels"), network.labels},
                     {QStringLiteral("Options"), network.options}};
    if (!network.subnet.isEmpty()) {
        QJsonObject config{{QStringLiteral("Subnet"), network.subnet}};
        if (!network.gateway.isEmpty())
            config.insert(QStringLiteral("Gateway"), network.gateway);
        body.insert(QStringLiteral("IPAM"),
                    QJsonObject{{QStringLiteral("Driver"), QStringLiteral("default")},
                                {QStringLiteral("Config"), QJsonArray{config}}});
    }
    return m_engine->post("/networks/create", body);
}

EngineReply *NetworksApi::connect(const QString &network, const QString &container,
                                  const QString &address)
{
    QJsonObject body{{QStringLiteral("Container"), container}};
    if (!address.isEmpty())
        body.insert(QStringLiteral("EndpointConfig"),
                    QJsonObject{{QStringLiteral("IPAMConfig"),
                                 QJsonObject{{QStringLiteral("IPv4Address"), address}}}});
    return m_engine->post("/networks/" + EngineClient::encode(network) + "/connect", body);
}

EngineReply *NetworksApi::remove(const QString &network)
{
    return m_engine->del("/networks/" + EngineClient::encode(network));
}

EngineReply *NetworksApi::inspect(const QString &network)
{
    return m_engine->get("/networks/" + EngineClient::encode(network));
}

EngineReply *NetworksApi::list(const QStringList &labels)
{
    const QJsonObject filters{{QStringLiteral("label"), QJsonArray::fromStringList(labels)}};
    return m_engine->get("/networks?filters=" +
                         QUrl::toPercentEncoding(QString::fromUtf8(
                             QJsonDocument(filters).toJson(QJsonDocument::Compact))));
}
