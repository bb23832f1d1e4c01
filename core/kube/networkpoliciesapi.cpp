#include "networkpoliciesapi.h"

#include "kubeclient.h"

QString NetworkPoliciesApi::namespaceName() const
{
    return m_client->access().namespaceName;
}

KubeReply *NetworkPoliciesApi::list()
{
    return m_client->get(QStringLiteral("/apis/networking.k8s.io/v1/namespaces/%1/networkpolicies")
                             .arg(namespaceName()));
}
