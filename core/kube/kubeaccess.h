#pragma once

#include "kubecredentials.h"

#include <QSslConfiguration>
#include <QString>
#include <QUrl>
#include <memory>

// Everything needed to speak to one cluster, as KubeConfig resolved it: where the API server
// is, how to trust it, who we are to it and in which namespace the sandboxes go. A plain value;
// the credentials are shared between its copies (a plugin's answer is cached once).
struct KubeAccess
{
    QString context; // the kubeconfig context; empty in-cluster
    QString cluster; // its cluster's and user's names (for messages)
    QString user;
    bool inCluster = false;
    QUrl server;            // https://host:port[/prefix]
    QString namespaceName;  // never empty once resolved
    QSslConfiguration ssl;  // the cluster's CA as the only trust root (when one is given), the
                            // kubeconfig's client certificate and key
    QString peerVerifyName; // tls-server-name: the name the server's certificate must carry
    bool insecure = false;  // insecure-skip-tls-verify, taken only when explicitly allowed
    QString source;         // the kubeconfig file(s) or the service-account folder it came from
    std::shared_ptr<KubeCredentials> credentials;

    bool isValid() const { return server.isValid() && credentials != nullptr; }
    // "context NAME (https://host:6443, namespace NS)"; never a secret.
    QString description() const;
};
