#pragma once

#include "gatewaykeeper.h"
#include "sandboxbackend.h"
#include "upstreamproxy.h"

#include <QMap>

class KubeClient;
class PodGateway;
class PodIsolation;

// Sandboxes as pods of one namespace of a Kubernetes cluster (through KubeClient): each built by
// PodSpec from the same inputs as a Docker create body, checked against its hardening before it
// is sent, and driven by KubernetesContainer (create, wait for Running, attach over WebSocket,
// delete with grace 0). Pods without network are only created once the namespace has
// NetworkPolicies that deny their egress and their ingress (PodSpec::sandboxIsolationProblem);
// with network on (--network) the pods carry the label the egress policy leaves out, and
// neither is required. Allow-list pods (--egress) reach only the egress gateway this backend
// starts in the namespace (PodGateway). Volumes are PersistentVolumeClaims (a read-only
// workspace's cached content, WorkspaceCache). Libraries are not supported on Kubernetes yet:
// installs fail with that message.
class KubernetesBackend : public SandboxBackend
{
    Q_OBJECT
public:
    struct Options
    {
        // Pods running at once (the capacity placement weighs); 0: kDefaultMaxPods.
        int maxPods = 0;
        QString imagePrefix;
        QString runtimeClassName;
        QMap<QString, QString> nodeSelector;
        // The storage a claim asks for (a cached workspace's volume): the workspace cap.
        qint64 volumeBytes = 2LL * 1024 * 1024 * 1024;
    };

    static constexpr int kDefaultMaxPods = 8;

    KubernetesBackend(KubeClient *client, const Options &options, QObject *parent = nullptr);

    KubeClient *client() const { return m_client; }

    QString endpoint() const override;
    int capacity() const override;
    QString runtime() const override { return m_options.runtimeClassName; }
    // A pod made from PodSpec's rendering of `spec` with the configured image prefix and node
    // selector.
    SandboxContainer *createSandbox(const SandboxSpec &spec, const QString &name,
                                    QObject *parent) override;
    void createVolume(const QString &name, const QJsonObject &labels, QObject *context,
                      const SandboxContainer::Done &done) override;
    // Volumes are PersistentVolumeClaims of Options::volumeBytes (cached workspaces; library
    // installs stay unsupported here).
    void removeVolume(const QString &name) override;
    void hasVolume(const QString &name, QObject *context,
                   const std::function<void(bool exists, const QString &error)> &done) override;
    void
    list(const QStringList &labels, QObject *context,
         const std::function<void(const QList<Listed> &, const QString &error)> &done) override;
    void removeById(const QString &id, QObject *context,
                    const SandboxContainer::Done &done) override;
    // The egress gateways' Services (a dead server's gateway pod is listed with the sandboxes,
    // by its pid and host labels, and goes the same way), ids "service/NAME"; and the claims of
    // cached workspaces, ids "claim/NAME".
    void listLeftovers(
        const QStringList &labels, QObject *context,
        const std::function<void(const QList<Listed> &, const QString &error)> &done) override;
    void removeLeftover(const QString &id, QObject *context,
                        const SandboxContainer::Done &done) override;
    // Cheap: GET /version. Full: the same, then the namespace's NetworkPolicies; a namespace
    // without the egress or ingress policy is reachable but says why no sandbox without network
    // will run.
    void health(bool cheap, QObject *context,
                const std::function<void(const Health &)> &done) override;

    // Removes the egress gateway's pod and Service, if a sandbox ever needed them.
    void shutdown(QObject *context, const std::function<void()> &done) override;
    // Given to the gateway, now or when it is made.
    void setUpstreamProxy(const UpstreamProxy &proxy) override;
    void setInterception(const QByteArray &certificatePem, const QByteArray &keyPem,
                         const QByteArray &trustPem) override;
    // The allow-list mode's gateway in the namespace; null until a sandbox needed it.
    PodGateway *egressGateway() const;

    static QString notSupported();

protected:
    // With the configured RuntimeClass, without the host's trust store (SandboxSpec::
    // dropHostTrustStore); refused with a mount that is not a claim, and for installs
    // (libraries); a workspace's fill runs as the sandbox's user.
    SandboxSpec::Result accept(SandboxSpec spec) const override;

private:
    KubeClient *m_client;
    Options m_options;
    PodIsolation *m_isolation; // whether pods without network may be made; shared by the pods
    GatewayKeeper m_gateways;  // a PodGateway in the namespace
    mutable bool m_saidTrustStore = false; // logged once that pods do without it
};
