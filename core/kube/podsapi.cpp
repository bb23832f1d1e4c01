#include "podsapi.h"

#include "kubeclient.h"
#include "kubestream.h"

QString PodsApi::path() const
{
    return QStringLiteral("/api/v1/namespaces/%1/pods").arg(m_client->access().namespaceName);
}

KubeReply *PodsApi::create(const QJsonObject &pod)
{
    return m_client->post(path(), pod);
}

KubeReply *PodsApi::get(const QString &name)
{
    return m_client->get(path() + u'/' + name);
}

KubeReply *PodsApi::remove(const QString &name)
{
    return m_client->del(path() + u'/' + name + QStringLiteral("?gracePeriodSeconds=0"),
                         {{QStringLiteral("gracePeriodSeconds"), 0}});
}

KubeReply *PodsApi::list(const QStringList &selector)
{
    return m_client->list(path(), selector);
}

KubeStream *PodsApi::attach(const QString &name, const QString &container, QObject *parent)
{
    return KubeStream::attach(m_client->access(), name, container, parent);
}

KubeStream *PodsApi::exec(const QString &name, const QString &container, const QStringList &command,
                          bool withStdin, QObject *parent)
{
    return KubeStream::exec(m_client->access(), name, container, command, withStdin, parent);
}
