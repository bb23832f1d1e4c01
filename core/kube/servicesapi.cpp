#include "servicesapi.h"

#include "kubeclient.h"

QString ServicesApi::path() const
{
    return QStringLiteral("/api/v1/namespaces/%1/services").arg(m_client->access().namespaceName);
}

KubeReply *ServicesApi::create(const QJsonObject &service)
{
    return m_client->post(path(), service);
}

KubeReply *ServicesApi::get(const QString &name)
{
    return m_client->get(path() + u'/' + name);
}

KubeReply *ServicesApi::remove(const QString &name)
{
    return m_client->del(path() + u'/' + name);
}

KubeReply *ServicesApi::list(const QStringList &selector)
{
    return m_client->list(path(), selector);
}
