#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

class KubeClient;
class KubeReply;

// The PersistentVolumeClaims of the client's namespace (/api/v1/namespaces/NS/
// persistentvolumeclaims/...): the backend's volumes (cached workspaces). A value to use on the
// spot, like PodsApi: ClaimsApi(client).get(name).
class ClaimsApi
{
public:
    explicit ClaimsApi(KubeClient *client) : m_client(client) {}

    // A claim `name` of `bytes` of storage, ReadWriteOnce (its fill writes it; the runs that
    // mount it read-only are on the same node), with `metadata`'s labels and annotations.
    KubeReply *create(const QString &name, const QJsonObject &metadata, qint64 bytes);
    KubeReply *get(const QString &name);
    // The cluster keeps a claim that a pod still mounts until that pod is gone.
    KubeReply *remove(const QString &name);
    // Every claim that has all of `selector` ("key=value", values as Kubernetes labels take
    // them).
    KubeReply *list(const QStringList &selector);

    // /api/v1/namespaces/NS/persistentvolumeclaims
    QString path() const;

private:
    KubeClient *m_client;
};
