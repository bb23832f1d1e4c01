#include "podgateway.h"

#include "backendlog.h"
#include "kubeclient.h"
#include "kubestream.h"
#include "networkpoliciesapi.h"
#include "podsapi.h"
#include "podspec.h"
#include "servicesapi.h"

#include <QJsonArray>
#include <utility>

namespace {
QString waitingReason(const QJsonObject &pod)
{
    const QJsonObject state = pod.value(u"status")
                                  .toObject()
                                  .value(u"containerStatuses")
                                  .toArray()
                                  .at(0)[u"state"]
                                  .toObject();
    const QJsonObject waiting = state.value(u"waiting").toObject();
    const QString reason = waiting.value(u"reason").toString();
    return reason == u"ContainerCreating" || reason.isEmpty()
               ? QString()
               : reason + QStringLiteral(": ") + waiting.value(u"message").toString();
}
} // namespace

PodGateway::PodGateway(KubeClient *client, const QString &imagePrefix, QObject *parent)
    : EgressGateway(parent), m_client(client), m_imagePrefix(imagePrefix)
{
    m_poll.setSingleShot(true);
    m_poll.setInterval(kPollMs);
    connect(&m_poll, &QTimer::timeout, this, &PodGateway::poll);
}

PodGateway::~PodGateway()
{
    if (m_stream)
        m_stream->close();
}

EgressEndpoint PodGateway::where() const
{
    return {QString(), m_clusterIP, kPort, {}, {}};
}

QJsonObject PodGateway::kubeLabels(const QJsonObject &labels)
{
    QJsonObject out;
    for (auto it = labels.begin(); it != labels.end(); ++it)
        out.insert(it.key(), PodSpec::labelValue(it.value().toString()));
    return out;
}

QJsonObject PodGateway::selector() const
{
    // Not the app label: the sandbox policies select by it, and the janitor lists sandboxes by
    // it. Which server's gateway it is says the rest.
    const QJsonObject labels = kubeLabels(labelsFor("gateway"));
    const QString role = QString::fromLatin1(kLabelRole);
    const QString of = QString::fromLatin1(kLabelGatewayOf);
    return {{role, labels.value(role)}, {of, labels.value(of)}};
}

QJsonObject PodGateway::podManifest(const QString &name, const QString &image,
                                    const QStringList &args, const QJsonObject &labels)
{
    // As the Docker gateway: read-only, nobody, no capabilities, capped. Its stdin is the
    // control channel; it ends when this server's attach does.
    const QJsonObject quantities{
        {QStringLiteral("cpu"), QStringLiteral("1")},
        {QStringLiteral("memory"), QStringLiteral("256Mi")},
        {QStringLiteral("ephemeral-storage"), QStringLiteral("64Mi")},
    };
    const QJsonObject security = PodSpec::containerSecurity(kNobody, kNobody);
    const QJsonObject container{
        {QStringLiteral("name"), QString::fromLatin1(kContainerName)},
        {QStringLiteral("image"), image},
        {QStringLiteral("imagePullPolicy"), QStringLiteral("IfNotPresent")},
        {QStringLiteral("args"), QJsonArray::fromStringList(args)},
        {QStringLiteral("stdin"), true},
        {QStringLiteral("stdinOnce"), true},
        {QStringLiteral("tty"), false},
        {QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), quantities},
                                                  {QStringLiteral("requests"), quantities}}},
        {QStringLiteral("securityContext"), security},
    };
    const QJsonObject spec{
        {QStringLiteral("restartPolicy"), QStringLiteral("Never")},
        {QStringLiteral("activeDeadlineSeconds"), kDeadlineSec},
        {QStringLiteral("automountServiceAccountToken"), false},
        {QStringLiteral("enableServiceLinks"), false},
        {QStringLiteral("hostNetwork"), false},
        {QStringLiteral("hostPID"), false},
        {QStringLiteral("hostIPC"), false},
        {QStringLiteral("securityContext"),
         QJsonObject{{QStringLiteral("runAsNonRoot"), true},
                     {QStringLiteral("runAsUser"), kNobody},
                     {QStringLiteral("runAsGroup"), kNobody},
                     {QStringLiteral("seccompProfile"),
                      QJsonObject{{QStringLiteral("type"), QStringLiteral("RuntimeDefault")}}}}},
        {QStringLiteral("containers"), QJsonArray{container}},
    };
    return {
        {QStringLiteral("apiVersion"), QStringLiteral("v1")},
        {QStringLiteral("kind"), QStringLiteral("Pod")},
        {QStringLiteral("metadata"),
         QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("labels"), labels}}},
        {QStringLiteral("spec"), spec},
    };
}

QJsonObject PodGateway::serviceManifest(const QString &name, const QJsonObject &labels,
                                        const QJsonObject &selector)
{
    const QJsonObject port{
        {QStringLiteral("name"), QStringLiteral("proxy")},
        {QStringLiteral("protocol"), QStringLiteral("TCP")},
        {QStringLiteral("port"), kPort},
        {QStringLiteral("targetPort"), kPort},
    };
    return {
        {QStringLiteral("apiVersion"), QStringLiteral("v1")},
        {QStringLiteral("kind"), QStringLiteral("Service")},
        {QStringLiteral("metadata"),
         QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("labels"), labels}}},
        {QStringLiteral("spec"), QJsonObject{{QStringLiteral("type"), QStringLiteral("ClusterIP")},
                                             {QStringLiteral("selector"), selector},
                                             {QStringLiteral("ports"), QJsonArray{port}}}},
    };
}

void PodGateway::ask(KubeReply *reply, const std::function<void(KubeReply *)> &onAnswer)
{
    requestStarted();
    connect(reply, &KubeReply::finished, this, [this, reply, onAnswer] {
        reply->deleteLater();
        onAnswer(reply);
        requestFinished();
    });
}

void PodGateway::startGateway()
{
    checkPolicies();
}

// At every start: a policy removed since the last would leave allow-list sandboxes open.
void PodGateway::checkPolicies()
{
    NetworkPoliciesApi policies(m_client);
    const QString ns = policies.namespaceName();
    ask(policies.list(), [this, ns](KubeReply *r) {
        if (m_state != State::Starting)
            return;
        if (!r->ok()) {
            failStart(QStringLiteral("could not read the NetworkPolicies of the namespace %1: %2")
                          .arg(ns, r->error().toString()));
            return;
        }
        // Confined on the way out, and (as every sandbox pod) unreachable from the network.
        const QJsonArray items = r->json().value(u"items").toArray();
        QStringList problems;
        for (const QString &p :
             {PodSpec::allowlistEgressProblem(items), PodSpec::sandboxIngressProblem(items)})
            if (!p.isEmpty())
                problems.append(p);
        const QString problem = problems.join(QStringLiteral("; and "));
        if (!problem.isEmpty()) {
            failStart(QStringLiteral("the namespace %1 does not confine allow-list sandboxes to "
                                     "the gateway: %2")
                          .arg(ns, problem));
            return;
        }
        if (m_clusterIP.isEmpty())
            createService();
        else
            createPod();
    });
}

void PodGateway::createService()
{
    const QString name = QStringLiteral("code-sandbox-gateway-") + m_suffix;
    const QJsonObject service =
        serviceManifest(name, kubeLabels(labelsFor("gateway-service")), selector());
    ask(ServicesApi(m_client).create(service), [this, name](KubeReply *r) {
        if (r->ok())
            m_service = name;
        if (m_state != State::Starting)
            return;
        const QString ip = r->json().value(u"spec").toObject().value(u"clusterIP").toString();
        if (!r->ok() || ip.isEmpty() || ip == u"None") {
            failStart(QStringLiteral("could not create the Service %1: %2")
                          .arg(name, r->ok() ? QStringLiteral("it got no cluster IP")
                                             : r->error().toString()));
            return;
        }
        m_clusterIP = ip;
        createPod();
    });
}

void PodGateway::createPod()
{
    const QString name =
        QStringLiteral("code-sandbox-gateway-%1-%2").arg(m_suffix).arg(m_generation);
    const QJsonObject pod = podManifest(name, PodSpec::prefixedImage(m_imagePrefix, m_image),
                                        gatewayArgs(), kubeLabels(labelsFor("gateway")));
    ask(PodsApi(m_client).create(pod), [this, name](KubeReply *r) {
        if (r->ok())
            m_containerId = name;
        if (m_state != State::Starting) {
            if (m_state == State::Absent && !m_containerId.isEmpty())
                removeGateway(); // given up meanwhile (the deadline)
            return;
        }
        if (!r->ok()) {
            failStart(
                QStringLiteral("could not create the pod %1: %2").arg(name, r->error().toString()));
            return;
        }
        m_poll.start();
    });
}

void PodGateway::poll()
{
    if (m_state != State::Starting || m_containerId.isEmpty())
        return;
    ask(PodsApi(m_client).get(m_containerId), [this](KubeReply *r) {
        if (m_state != State::Starting)
            return;
        if (!r->ok()) {
            failStart(QStringLiteral("could not read its pod %1: %2")
                          .arg(m_containerId, r->error().toString()));
            return;
        }
        const QJsonObject pod = r->json();
        const QString phase = pod.value(u"status").toObject().value(u"phase").toString();
        const QString waiting = waitingReason(pod);
        if (phase == u"Running") {
            attach();
        } else if (phase == u"Succeeded" || phase == u"Failed") {
            failStart(QStringLiteral("its pod %1 ended before it was reached (%2)")
                          .arg(m_containerId, phase));
        } else if (!waiting.isEmpty()) {
            // ErrImagePull, CreateContainerConfigError...: it will not start by waiting.
            failStart(QStringLiteral("its pod %1 cannot start: %2").arg(m_containerId, waiting));
        } else {
            m_poll.start();
        }
    });
}

void PodGateway::attach()
{
    m_stream = PodsApi(m_client).attach(m_containerId, QString::fromLatin1(kContainerName), this);
    connect(m_stream, &KubeStream::output, this, &PodGateway::onOutput);
    connect(m_stream, &KubeStream::finished, this,
            [this] { lost(QStringLiteral("its program ended")); });
    connect(m_stream, &KubeStream::failed, this, [this](const QString &error) {
        lost(QStringLiteral("its control stream failed: ") + error);
    });
    // Its "ready" was written before anyone listened: the answer to a ping says as much.
    connect(m_stream, &KubeStream::established, this, &PodGateway::ping);
}

void PodGateway::writeControl(const QByteArray &bytes)
{
    if (m_stream && m_stream->isEstablished())
        m_stream->write(bytes);
}

bool PodGateway::closeControl()
{
    m_poll.stop();
    return closeQuietly(m_stream);
}

void PodGateway::removeGateway()
{
    const QString name = std::exchange(m_containerId, {});
    ask(PodsApi(m_client).remove(name), [name](KubeReply *r) {
        if (!r->ok() && !r->error().isNotFound())
            qCWarning(lcBackend).noquote() << "could not delete the egress gateway pod" << name
                                           << ":" << r->error().toString();
    });
}

// Once the pod is deleted and no request is in flight: the Service, then done.
void PodGateway::finishShutdown()
{
    if (m_service.isEmpty()) {
        shutdownDone();
        return;
    }
    const QString name = std::exchange(m_service, {});
    m_clusterIP.clear();
    ask(ServicesApi(m_client).remove(name), [name](KubeReply *r) {
        if (!r->ok() && !r->error().isNotFound())
            qCWarning(lcBackend).noquote()
                << "could not delete the Service" << name << ":" << r->error().toString();
    });
}
