#include "kubernetesbackend.h"

#include "kubeclient.h"
#include "kubernetescontainer.h"
#include "language.h"
#include "podspec.h"
#include "sandboxconfig.h"

#include <QJsonArray>
#include <QPointer>
#include <QRegularExpression>

namespace {
QString errorOf(const KubeReply *reply)
{
    return reply->ok() ? QString() : reply->error().toString();
}
} // namespace

KubernetesBackend::KubernetesBackend(KubeClient *client, const Options &options, QObject *parent)
    : SandboxBackend(parent), m_client(client), m_options(options)
{}

QString KubernetesBackend::notSupported()
{
    return QStringLiteral("libraries (install_packages, library volumes) are not supported on "
                          "Kubernetes yet");
}

QString KubernetesBackend::podsPath() const
{
    return QStringLiteral("/api/v1/namespaces/%1/pods").arg(m_client->access().namespaceName);
}

QString KubernetesBackend::podName(const QString &name)
{
    // DNS-1123 subdomain: lower-case alphanumerics, '-' and '.', alphanumeric at both ends, at
    // most 253 characters.
    QString out;
    out.reserve(name.size());
    for (QChar c : name.toLower())
        out.append((c.unicode() < 128 && c.isLetterOrNumber()) || c == u'-' || c == u'.'
                       ? c
                       : QChar(u'-'));
    out = out.left(253);
    while (!out.isEmpty() && !out.back().isLetterOrNumber())
        out.chop(1);
    while (!out.isEmpty() && !out.front().isLetterOrNumber())
        out.remove(0, 1);
    return out.isEmpty() ? QStringLiteral("code-sandbox") : out;
}

QString KubernetesBackend::endpoint() const
{
    return m_client->access().description();
}

int KubernetesBackend::capacity() const
{
    return m_options.maxPods > 0 ? m_options.maxPods : kDefaultMaxPods;
}

SandboxSpec::Result KubernetesBackend::runSpec(const Language &language, const QString &image,
                                               const SandboxConfig &config,
                                               const QString &librariesVolume, bool session) const
{
    if (!librariesVolume.isEmpty())
        return SandboxSpec::Result::refused(notSupported());
    SandboxSpec spec = SandboxSpec::forRun(language, image, config, {}, session);
    spec.runtime = m_options.runtimeClassName;
    return SandboxSpec::Result::of(spec);
}

SandboxSpec::Result KubernetesBackend::installSpec(const Language &language, const QString &image,
                                                   const SandboxConfig &config,
                                                   const QString &volume) const
{
    Q_UNUSED(language);
    Q_UNUSED(image);
    Q_UNUSED(config);
    Q_UNUSED(volume);
    return SandboxSpec::Result::refused(notSupported());
}

SandboxContainer *KubernetesBackend::createSandbox(const SandboxSpec &spec, const QString &name,
                                                   QObject *parent)
{
    PodSpec::Options options;
    options.imagePrefix = m_options.imagePrefix;
    options.nodeSelector = m_options.nodeSelector;
    return new KubernetesContainer(this, PodSpec::render(spec, options), spec.image, name, parent);
}

void KubernetesBackend::createVolume(const QString &name, const QJsonObject &labels,
                                     QObject *context, const SandboxContainer::Done &done)
{
    Q_UNUSED(name);
    Q_UNUSED(labels);
    QMetaObject::invokeMethod(
        context, [done] { done(notSupported()); }, Qt::QueuedConnection);
}

void KubernetesBackend::removeVolume(const QString &name)
{
    Q_UNUSED(name); // none is ever created
}

void KubernetesBackend::list(
    const QStringList &labels, QObject *context,
    const std::function<void(const QList<Listed> &, const QString &error)> &done)
{
    // Our label values are made into Kubernetes ones by PodSpec::labelValue, the same way here.
    QStringList selector;
    for (const QString &label : labels) {
        const qsizetype eq = label.indexOf(u'=');
        selector.append(eq < 0 ? label
                               : label.left(eq) + u'=' + PodSpec::labelValue(label.mid(eq + 1)));
    }
    QString path = podsPath();
    if (!selector.isEmpty())
        path += QStringLiteral("?labelSelector=") +
                QString::fromLatin1(QUrl::toPercentEncoding(selector.join(u',')));
    KubeReply *reply = m_client->get(path);
    connect(reply, &KubeReply::finished, context, [reply, done] {
        reply->deleteLater();
        QList<Listed> found;
        for (const QJsonValue &v : reply->json().value(u"items").toArray()) {
            const QJsonObject meta = v.toObject().value(u"metadata").toObject();
            // A value changed to fit a label is kept whole in the annotation of the same key.
            QJsonObject labels = meta.value(u"labels").toObject();
            const QJsonObject annotations = meta.value(u"annotations").toObject();
            for (auto it = labels.begin(); it != labels.end(); ++it)
                if (annotations.contains(it.key()))
                    it.value() = annotations.value(it.key());
            const QString podName = meta.value(u"name").toString();
            const QString name = annotations.value(QLatin1String(kAnnotationName)).toString();
            found.append({podName, name.isEmpty() ? podName : name, labels});
        }
        done(found, errorOf(reply));
    });
    connect(context, &QObject::destroyed, reply, &QObject::deleteLater);
}

void KubernetesBackend::removeById(const QString &id, QObject *context,
                                   const SandboxContainer::Done &done)
{
    KubeReply *reply =
        m_client->del(podsPath() + u'/' + id + QStringLiteral("?gracePeriodSeconds=0"),
                      {{QStringLiteral("gracePeriodSeconds"), 0}});
    connect(reply, &KubeReply::finished, context, [reply, done] {
        reply->deleteLater();
        done(reply->ok() || reply->error().isNotFound() ? QString() : errorOf(reply));
    });
    connect(context, &QObject::destroyed, reply, &QObject::deleteLater);
}

void KubernetesBackend::health(bool cheap, QObject *context,
                               const std::function<void(const Health &)> &done)
{
    KubeReply *reply = m_client->ping();
    QPointer<QObject> guard(context);
    connect(reply, &KubeReply::finished, context, [this, reply, cheap, guard, done] {
        reply->deleteLater();
        Health h;
        h.reachable = reply->ok();
        if (!reply->ok()) {
            h.error = reply->error().toString();
            done(h);
            return;
        }
        h.product = QStringLiteral("Kubernetes");
        h.version = reply->json().value(u"gitVersion").toString();
        h.apiVersion = QStringLiteral("v1");
        if (cheap || !guard) {
            done(h);
            return;
        }
        checkIsolation(guard, [h, done](const QString &problem) mutable {
            h.error = problem;
            done(h);
        });
    });
    connect(context, &QObject::destroyed, reply, &QObject::deleteLater);
}

void KubernetesBackend::checkIsolation(QObject *context,
                                       const std::function<void(const QString &)> &done)
{
    if (m_isolatedAt.isValid() && m_isolatedAt.elapsed() < kIsolationCacheMs) {
        QMetaObject::invokeMethod(
            context, [done] { done(QString()); }, Qt::QueuedConnection);
        return;
    }
    const QString ns = m_client->access().namespaceName;
    KubeReply *reply = m_client->get(
        QStringLiteral("/apis/networking.k8s.io/v1/namespaces/%1/networkpolicies").arg(ns));
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
