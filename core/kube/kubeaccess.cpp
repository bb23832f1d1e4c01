#include "kubeaccess.h"

QString KubeAccess::description() const
{
    const QString where = QStringLiteral("%1, namespace %2")
                              .arg(server.toString(QUrl::RemoveUserInfo), namespaceName);
    if (inCluster)
        return QStringLiteral("the in-cluster service account (%1)").arg(where);
    return QStringLiteral("context %1 (%2)").arg(context, where);
}
