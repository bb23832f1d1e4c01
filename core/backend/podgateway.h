#pragma once

#include "egressgateway.h"

#include <QPointer>
#include <QTimer>

class KubeClient;
class KubeReply;
class KubeStream;

// The egress gateway in a Kubernetes namespace: a gateway pod and a ClusterIP Service that
// selects it, whose address the sandboxes get in their proxy variables, so a gateway pod made
// again (with a new pod address) is where the warm sandboxes look. Allow-list sandbox pods
// (code-sandbox.network=allowlist) may reach only the gateway: a NetworkPolicy of the
// namespace must say so (code-sandbox-allowlist-egress in packaging/kubernetes/), and deny
// their ingress as every sandbox's (code-sandbox-deny-ingress), which is checked at every start
// (PodSpec::allowlistEgressProblem, sandboxIngressProblem) before anything is made.
//
// A pod and not a Deployment: the gateway's rules come over its stdin from this server alone,
// so a copy restarted by a controller would have none; this class makes it again itself, as on
// a Docker engine. Its control stream is an attach over WebSocket (KubeStream), opened once the
// pod runs; the gateway's answer to the first ping says it is ready. When this server goes,
// the stream ends, and with it the gateway's stdin: it exits and its pod is done.
class PodGateway : public EgressGateway
{
    Q_OBJECT
public:
    static constexpr const char *kContainerName = "gateway";
    // A backstop for a gateway pod whose server vanished without its stream ending.
    static constexpr qint64 kDeadlineSec = 7 * 24 * 3600;
    static constexpr int kPollMs = 200;
    static constexpr qint64 kNobody = 65534; // its user and group

    // `imagePrefix`: the registry the cluster pulls from (PodSpec::prefixedImage).
    PodGateway(KubeClient *client, const QString &imagePrefix, QObject *parent = nullptr);
    ~PodGateway() override;

    // The gateway pod: hardened as a sandbox pod is (PodSpec::hardeningViolations has nothing to
    // say of it), running as nobody with the gateway's arguments.
    static QJsonObject podManifest(const QString &name, const QString &image,
                                   const QStringList &args, const QJsonObject &labels);
    // The Service in front of it: `selector` picks the gateway pod of one server.
    static QJsonObject serviceManifest(const QString &name, const QJsonObject &labels,
                                       const QJsonObject &selector);
    // Our label values as Kubernetes takes them (PodSpec::labelValue).
    static QJsonObject kubeLabels(const QJsonObject &labels);

    // The Service's name, once it is made (until shutdown).
    QString serviceName() const { return m_service; }

protected:
    void startGateway() override;
    void removeGateway() override;
    void finishShutdown() override;
    void writeControl(const QByteArray &bytes) override;
    bool closeControl() override;
    EgressEndpoint where() const override;

private:
    void checkPolicies();
    void createService();
    void createPod();
    void poll();
    void attach();
    // Every API request goes through here, counted (see EgressGateway::requestStarted).
    void ask(KubeReply *reply, const std::function<void(KubeReply *)> &onAnswer);
    QJsonObject selector() const;

    KubeClient *m_client;
    QString m_imagePrefix;
    QString m_service;   // its name, once made
    QString m_clusterIP; // the sandboxes' proxy address
    QPointer<KubeStream> m_stream;
    QTimer m_poll;
};
