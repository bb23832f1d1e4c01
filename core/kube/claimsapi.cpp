#include "claimsapi.h"

#include "kubeclient.h"

#include <QJsonArray>

QString ClaimsApi::path() const
{
    return QStringLiteral("/api/v1/namespaces/%1/persistentvolumeclaims")
        .arg(m_client->access().namespaceName);
}

KubeReply *ClaimsApi::create(const QString &name, const QJsonObject &metadata, qint64 bytes)
{
    QJsonObject meta = metadata;
    meta.insert(QStringLiteral("name"), name);
    const QJsonObject claim{
        {QStringLiteral("apiVersion"), QStringLiteral("v1")},
        {QStringLiteral("kind"), QStringLiteral("PersistentVolumeClaim")},
        {QStringLiteral("metadata"), meta},
        {QStringLiteral("spec"),
         QJsonObject{
             {QStringLiteral("accessModes"), QJsonArray{QStringLiteral("ReadWriteOnce")}},
             {QStringLiteral("resources"),
              QJsonObject{{QStringLiteral("requests"),
                           QJsonObject{{QStringLiteral("storage"), QString::number(bytes)}}}}}}},
    };
    return m_client->post(path(), claim);
}

KubeReply *ClaimsApi::get(const QString &name)
{
    return m_client->get(path() + u'/' + name);
}

KubeReply *ClaimsApi::remove(const QString &name)
{
    return m_client->del(path() + u'/' + name);
}

KubeReply *ClaimsApi::list(const QStringList &selector)
{
    return m_client->list(path(), selector);
}
