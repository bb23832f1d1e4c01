#pragma once

#include "kubeaccess.h"
#include "kubetarget.h"

#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

// Resolves how to reach a cluster the way kubectl does. Kubeconfig files: every file named by
// KUBECONFIG (colon-separated; missing ones skipped), else ~/.kube/config, merged by kubectl's
// rules: the first file to define a cluster, user or context by name wins, and current-context
// comes from the first file that sets one. Relative paths in an entry are taken from the folder
// of the file that defined it. Then the context (the target's, else the current one), its
// cluster (server, certificate-authority or -data, tls-server-name, insecure-skip-tls-verify —
// refused unless the caller allows it) and its user (token, tokenFile, client certificate and
// key as file or -data, an exec credential plugin), and the namespace (the target's, else the
// context's, else "default"). Inside a pod (KUBERNETES_SERVICE_HOST/PORT set and a
// service-account token present), `k8s://` without a current context uses the pod's service
// account. Errors name the file and the key; secrets never reach a message or the log.
class KubeConfig
{
public:
    static constexpr qint64 kMaxFileBytes = 16 * 1024 * 1024; // one kubeconfig file
    static inline const QString kServiceAccountDir =
        QStringLiteral("/var/run/secrets/kubernetes.io/serviceaccount");

    struct Options
    {
        // insecure-skip-tls-verify: true is refused unless this is set.
        bool allowInsecure = false;
        // Where a pod's service account is mounted; tests point it elsewhere.
        QString serviceAccountDir = kServiceAccountDir;
        int execTimeoutMs = KubeCredentials::kDefaultExecTimeoutMs;
    };

    struct Result
    {
        KubeAccess access;
        QString error;

        bool ok() const { return error.isEmpty() && access.isValid(); }
    };

    static Result resolve(const KubeTarget &target, const QProcessEnvironment &env,
                          const Options &options);
    static Result resolve(const KubeTarget &target, const Options &options);
    static Result resolve(const KubeTarget &target);

    // The kubeconfig files to read, in order, whether or not they exist.
    static QStringList files(const QProcessEnvironment &env);
    // Whether a pod's service account is there to use.
    static bool inClusterAvailable(const QProcessEnvironment &env,
                                   const QString &serviceAccountDir);
};
