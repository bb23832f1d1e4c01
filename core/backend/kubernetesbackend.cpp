#include "kubernetesbackend.h"

#include "backendlog.h"
#include "claimsapi.h"
#include "kubeclient.h"
#include "kubernetescontainer.h"
#include "podgateway.h"
#include "podisolation.h"
#include "podsapi.h"
#include "podspec.h"
#include "servicesapi.h"

#include <QJsonArray>
#include <QPointer>

namespace {
QString errorOf(const KubeReply *reply)
{
    return reply->ok() ? QString() : reply->error().toString();
}

constexpr const char *kServiceLeftover = "service/";
constexpr const char *kClaimLeftover = "claim/";

// Labels as a Kubernetes object's metadata: a value that had to change to fit a label is kept
// whole in the annotation of the same key (as PodSpec does for pods).
QJsonObject metadataOf(const QJsonObject &labels)
{
    QJsonObject fitted;
    QJsonObject annotations;
    for (auto it = labels.begin(); it != labels.end(); ++it) {
        const QString value = it.value().toString();
        const QString label = PodSpec::labelValue(value);
        fitted.insert(it.key(), label);
        if (label != value)
            annotations.insert(it.key(), value);
    }
    QJsonObject metadata{{QStringLiteral("labels"), fitted}};
    if (!annotations.isEmpty())
        metadata.insert(QStringLiteral("annotations"), annotations);
    return metadata;
}

// What `metadataOf` made, back: the labels with their whole values.
QJsonObject labelsOf(const QJsonObject &metadata)
{
    QJsonObject labels = metadata.value(u"labels").toObject();
    const QJsonObject annotations = metadata.value(u"annotations").toObject();
    for (auto it = labels.begin(); it != labels.end(); ++it)
        if (annotations.contains(it.key()))
            it.value() = annotations.value(it.key());
    return labels;
}

// Our label values are made into Kubernetes ones by PodSpec::labelValue, the same way here.
QStringList kubeSelector(const QStringList &labels)
{
    QStringList selector;
    for (const QString &label : labels) {
        const qsizetype eq = label.indexOf(u'=');
        selector.append(eq < 0 ? label
                               : label.left(eq) + u'=' + PodSpec::labelValue(label.mid(eq + 1)));
    }
    return selector;
}
} // namespace

KubernetesBackend::KubernetesBackend(KubeClient *client, const Options &options, QObject *parent)
    : SandboxBackend(parent), m_client(client), m_options(options),
      m_isolation(new PodIsolation(client, this)),
      m_gateways([this] { return new PodGateway(m_client, m_options.imagePrefix, this); })
{}

PodGateway *KubernetesBackend::egressGateway() const
{
    return static_cast<PodGateway *>(m_gateways.gateway());
}

QString KubernetesBackend::notSupported()
{
    return QStringLiteral("libraries (install_packages, library volumes) are not supported on "
                          "Kubernetes yet");
}

QString KubernetesBackend::endpoint() const
{
    return m_client->access().description();
}

int KubernetesBackend::capacity() const
{
    return m_options.maxPods > 0 ? m_options.maxPods : kDefaultMaxPods;
}

SandboxSpec::Result KubernetesBackend::accept(SandboxSpec spec) const
{
    // A pod runs on a node of the cluster, which has no file of this machine to mount: its runs
    // trust their image's authorities only, as before there was a host trust store for runs.
    // Refusing instead would refuse every run with network wherever the host has a store.
    if (spec.dropHostTrustStore() && !m_saidTrustStore) {
        m_saidTrustStore = true;
        qCInfo(lcBackend).noquote()
            << "the host's trust store is not given to pods on" << endpoint()
            << "(a pod cannot mount a file of this machine): their runs with network trust the "
               "authorities of their image only";
    }
    // Claims (a cached workspace) only; installs not at all (libraries are not supported here).
    if (spec.role == QLatin1String("install"))
        return SandboxSpec::Result::refused(notSupported());
    for (const SandboxSpec::Mount &mount : std::as_const(spec.mounts))
        if (mount.kind != SandboxSpec::Mount::Kind::Volume)
            return SandboxSpec::Result::refused(notSupported());
    // A pod runs as non-root: the sandbox that fills a claim runs as the sandbox's user, and the
    // claim's files are the pod's group's (fsGroup), writable by it.
    if (spec.role == QLatin1String("workspace"))
        spec.uid = spec.gid = 1000;
    spec.runtime = m_options.runtimeClassName;
    // The cluster's RuntimeClasses are not listed here: a run that requires gVisor goes only
    // where --runtime-class names one (GKE's is "gvisor"; others call it after runsc), one
    // that requires a named runtime only where --runtime-class is that name.
    if (!spec.isolation.isEmpty()) {
        const QString rc = spec.runtime;
        const bool gvisor = spec.isolation.compare(QLatin1String(SandboxSpec::kIsolationGvisor),
                                                   Qt::CaseInsensitive) == 0;
        const bool has = gvisor ? (rc.contains(u"gvisor", Qt::CaseInsensitive) ||
                                   rc.contains(u"runsc", Qt::CaseInsensitive))
                                : rc == spec.isolation;
        if (!has)
            return SandboxSpec::Result::refused(
                QStringLiteral("the cluster %1 runs sandbox pods with %2, not %3 (give "
                               "--runtime-class the RuntimeClass that has it)")
                    .arg(endpoint(),
                         rc.isEmpty() ? QStringLiteral("its default runtime")
                                      : QStringLiteral("the RuntimeClass %1").arg(rc),
                         gvisor ? QStringLiteral("gVisor") : spec.isolation));
    }
    return SandboxBackend::accept(spec);
}

SandboxContainer *KubernetesBackend::createSandbox(const SandboxSpec &spec, const QString &name,
                                                   QObject *parent)
{
    PodSpec::Options options;
    options.imagePrefix = m_options.imagePrefix;
    options.nodeSelector = m_options.nodeSelector;
    auto *pod = new KubernetesContainer(m_client, m_isolation, PodSpec::render(spec, options),
                                        spec.image, name, parent);
    pod->useEgress(m_gateways.leaseFor(spec, pod));
    return pod;
}

void KubernetesBackend::setInterception(const QByteArray &certificatePem, const QByteArray &keyPem,
                                        const QByteArray &trustPem)
{
    m_gateways.setInterception(certificatePem, keyPem, trustPem);
}

void KubernetesBackend::setUpstreamProxy(const UpstreamProxy &proxy)
{
    m_gateways.setUpstream(proxy);
}

void KubernetesBackend::shutdown(QObject *context, const std::function<void()> &done)
{
    m_gateways.shutdown(context, done);
}

void KubernetesBackend::createVolume(const QString &name, const QJsonObject &labels,
                                     QObject *context, const SandboxContainer::Done &done)
{
    KubeReply *reply = ClaimsApi(m_client).create(name, metadataOf(labels), m_options.volumeBytes);
    connect(reply, &KubeReply::finished, context, [reply, done] {
        reply->deleteLater();
        done(errorOf(reply));
    });
    connect(context, &QObject::destroyed, reply, &QObject::deleteLater);
}

void KubernetesBackend::removeVolume(const QString &name)
{
    // (A claim that a pod still mounts goes once that pod is gone: the cluster keeps it.)
    KubeReply *reply = ClaimsApi(m_client).remove(name);
    connect(reply, &KubeReply::finished, this, [reply, name] {
        reply->deleteLater();
        if (!reply->ok() && !reply->error().isNotFound())
            qCWarning(lcBackend).noquote()
                << "could not remove the claim" << name << ":" << errorOf(reply);
    });
}

void KubernetesBackend::hasVolume(
    const QString &name, QObject *context,
    const std::function<void(bool exists, const QString &error)> &done)
{
    KubeReply *reply = ClaimsApi(m_client).get(name);
    connect(reply, &KubeReply::finished, context, [reply, done] {
        reply->deleteLater();
        if (reply->error().isNotFound()) {
            done(false, QString());
            return;
        }
        // One being deleted is as good as gone: a new pod could not mount it.
        const bool deleting =
            reply->json().value(u"metadata").toObject().contains(u"deletionTimestamp");
        done(reply->ok() && !deleting, errorOf(reply));
    });
    connect(context, &QObject::destroyed, reply, &QObject::deleteLater);
}

void KubernetesBackend::list(
    const QStringList &labels, QObject *context,
    const std::function<void(const QList<Listed> &, const QString &error)> &done)
{
    KubeReply *reply = PodsApi(m_client).list(kubeSelector(labels));
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
            const QString name =
                annotations.value(QLatin1String(PodSpec::kAnnotationName)).toString();
            found.append({podName, name.isEmpty() ? podName : name, labels});
        }
        done(found, errorOf(reply));
    });
    connect(context, &QObject::destroyed, reply, &QObject::deleteLater);
}

void KubernetesBackend::removeById(const QString &id, QObject *context,
                                   const SandboxContainer::Done &done)
{
    KubeReply *reply = PodsApi(m_client).remove(id);
    connect(reply, &KubeReply::finished, context, [reply, done] {
        reply->deleteLater();
        done(reply->ok() || reply->error().isNotFound() ? QString() : errorOf(reply));
    });
    connect(context, &QObject::destroyed, reply, &QObject::deleteLater);
}

void KubernetesBackend::listLeftovers(
    const QStringList &labels, QObject *context,
    const std::function<void(const QList<Listed> &, const QString &error)> &done)
{
    const QStringList selector =
        kubeSelector(labels)
        << QStringLiteral("%1=gateway-service").arg(QLatin1String(EgressGateway::kLabelRole));
    KubeReply *reply = ServicesApi(m_client).list(selector);
    QPointer<QObject> guard(context);
    connect(reply, &KubeReply::finished, context, [this, reply, labels, guard, done] {
        reply->deleteLater();
        QList<Listed> found;
        for (const QJsonValue &v : reply->json().value(u"items").toArray()) {
            const QJsonObject meta = v.toObject().value(u"metadata").toObject();
            const QString name = meta.value(u"name").toString();
            found.append({QString::fromLatin1(kServiceLeftover) + name, name,
                          meta.value(u"labels").toObject()});
        }
        const QString servicesError = errorOf(reply);
        // And the claims of cached workspaces (a claim a pod still mounts stays until the pod
        // is gone, whoever asks for its removal).
        KubeReply *claims = ClaimsApi(m_client).list(kubeSelector(labels));
        connect(claims, &KubeReply::finished, guard,
                [claims, found, servicesError, done]() mutable {
                    claims->deleteLater();
                    for (const QJsonValue &v : claims->json().value(u"items").toArray()) {
                        const QJsonObject meta = v.toObject().value(u"metadata").toObject();
                        const QString name = meta.value(u"name").toString();
                        found.append(
                            {QString::fromLatin1(kClaimLeftover) + name, name, labelsOf(meta)});
                    }
                    done(found, servicesError.isEmpty() ? errorOf(claims) : servicesError);
                });
        connect(guard, &QObject::destroyed, claims, &QObject::deleteLater);
    });
    connect(context, &QObject::destroyed, reply, &QObject::deleteLater);
}

void KubernetesBackend::removeLeftover(const QString &id, QObject *context,
                                       const SandboxContainer::Done &done)
{
    const bool claim = id.startsWith(QLatin1String(kClaimLeftover));
    if (!claim && !id.startsWith(QLatin1String(kServiceLeftover))) {
        QMetaObject::invokeMethod(
            context, [done] { done(QString()); }, Qt::QueuedConnection);
        return;
    }
    KubeReply *reply =
        claim ? ClaimsApi(m_client).remove(id.mid(qsizetype(qstrlen(kClaimLeftover))))
              : ServicesApi(m_client).remove(id.mid(qsizetype(qstrlen(kServiceLeftover))));
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
        m_isolation->check(guard, [h, done](const QString &problem) mutable {
            h.error = problem;
            done(h);
        });
    });
    connect(context, &QObject::destroyed, reply, &QObject::deleteLater);
}
