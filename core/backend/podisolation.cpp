#include "podisolation.h"

#include "kubeclient.h"
#include "networkpoliciesapi.h"
#include "podspec.h"

PodIsolation::PodIsolation(KubeClient *client, QObject *parent) : QObject(parent), m_client(client)
{}

void PodIsolation::check(QObject *context, const std::function<void(const QString &)> &done)
{
    if (m_isolatedAt.isValid() && m_isolatedAt.elapsed() < kCacheMs) {
        QMetaObject::invokeMethod(
            context, [done] { done(QString()); }, Qt::QueuedConnection);
        return;
    }
    NetworkPoliciesApi policies(m_client);
    const QString ns = policies.namespaceName();
    KubeReply *reply = policies.list();
    connect(reply, &KubeReply::finished, context, [this, reply, ns, done] {
        reply->deleteLater();
        if (!reply->ok()) {
            done(QStringLiteral("could not read the NetworkPolicies of the namespace %1, which "
                                "must deny the sandboxes' egress and ingress: %2")
                     .arg(ns, reply->error().toString()));
            return;
        }
        const QString problem =
            PodSpec::sandboxIsolationProblem(reply->json().value(u"items").toArray());
        if (!problem.isEmpty()) {
            m_isolatedAt.invalidate();
            done(QStringLiteral("refusing to run sandboxes without network in the namespace "
                                "%1: %2")
                     .arg(ns, problem));
            return;
        }
        m_isolatedAt.start();
        done(QString());
    });
    connect(context, &QObject::destroyed, reply, &QObject::deleteLater);
}
