#pragma once

#include <QString>

// A cluster as `--engine` names it: `k8s://` (kubeconfig's current context), `k8s://CONTEXT`,
// `k8s://CONTEXT/NAMESPACE` or `k8s:///NAMESPACE` (current context, that namespace). Context
// names may hold characters a URL cannot (EKS names them `arn:aws:eks:…:cluster/NAME`), so the
// context part is percent-decoded: write a '/' in it as %2F. A plain value: parsing checks the
// form only; whether the context exists is KubeConfig's question.
struct KubeTarget
{
    static constexpr int kMaxNamespaceLength = 63; // a DNS-1123 label, as Kubernetes names it

    bool valid = false;
    QString context;    // empty: the current context
    QString namespace_; // empty: the context's, else "default"

    bool isValid() const { return valid; }
    // Canonical: k8s://CONTEXT/NAMESPACE with the context percent-encoded where it must be.
    QString url() const;

    // Whether `text` is meant as a cluster (it starts with k8s://), whatever else it holds.
    static bool isKubeUrl(const QString &text);
    // On failure an invalid target and `*error` says why.
    static KubeTarget parse(const QString &text, QString *error = nullptr);
    static bool isValidNamespace(const QString &name);
};
