#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

class KubeClient;
class KubeReply;

// The Services of the client's namespace (/api/v1/namespaces/NS/services/...). A value to use
// on the spot, like PodsApi: ServicesApi(client).get(name).
class ServicesApi
{
public:
    explicit ServicesApi(KubeClient *client) : m_client(client) {}

    // POST of a Service manifest; the answer holds its spec.clusterIP.
    KubeReply *create(const QJsonObject &service);
    KubeReply *get(const QString &name);
    KubeReply *remove(const QString &name);
    // Every Service that has all of `selector` ("key=value", values as Kubernetes labels take
    // them).
    KubeReply *list(const QStringList &selector);

    // /api/v1/namespaces/NS/services
    QString path() const;

private:
    KubeClient *m_client;
};
