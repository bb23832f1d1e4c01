#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

class KubeClient;
class KubeReply;
class KubeStream;
class QObject;

// The pods of the client's namespace (/api/v1/namespaces/NS/pods/...): every call returns its
// reply or stream at once (see KubeReply, KubeStream). A value to use on the spot, like the
// engine room's ContainersApi: PodsApi(client).get(name).
class PodsApi
{
public:
    explicit PodsApi(KubeClient *client) : m_client(client) {}

    // POST of a pod manifest.
    KubeReply *create(const QJsonObject &pod);
    KubeReply *get(const QString &name);
    // With grace 0: the pod's processes are killed at once, as a forced Docker removal does.
    KubeReply *remove(const QString &name);
    // Every pod that has all of `selector` ("key=value", values as Kubernetes labels take them).
    KubeReply *list(const QStringList &selector);
    // An attach of `container` with stdin, stdout and stderr.
    KubeStream *attach(const QString &name, const QString &container, QObject *parent);
    // An exec of `command` in `container`, with stdout and stderr, and stdin when `withStdin`.
    KubeStream *exec(const QString &name, const QString &container, const QStringList &command,
                     bool withStdin, QObject *parent);

    // /api/v1/namespaces/NS/pods
    QString path() const;

private:
    KubeClient *m_client;
};
