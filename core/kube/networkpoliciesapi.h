#pragma once

#include <QString>

class KubeClient;
class KubeReply;

// The NetworkPolicies of the client's namespace
// (/apis/networking.k8s.io/v1/namespaces/NS/networkpolicies). A value to use on the spot:
// NetworkPoliciesApi(client).list().
class NetworkPoliciesApi
{
public:
    explicit NetworkPoliciesApi(KubeClient *client) : m_client(client) {}

    // A NetworkPolicyList: the policies are its items.
    KubeReply *list();

    QString namespaceName() const;

private:
    KubeClient *m_client;
};
