#pragma once

#include "egressendpoint.h"
#include "gatewayprotocol.h"
#include "sandboxspec.h"

#include <QMap>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QString>
#include <QStringList>
#include <functional>

class EgressGateway;

// One allow-list sandbox's hold on its backend's egress gateway: a credential of its own for
// its hosts, taken once the gateway answers and revoked when the sandbox goes (or fails), and
// the gateway's events about that sandbox's connections. Each backend's container has one
// (DockerContainer, KubernetesContainer), so both keep the same promises.
class EgressLease : public QObject
{
    Q_OBJECT
public:
    EgressLease(EgressGateway *gateway, const QStringList &patterns, bool ask,
                const QMap<QString, QString> &labels, QObject *parent = nullptr);
    // Its sandbox's secrets: each gets a placeholder of its own when the lease is taken
    // (csb-secret-NAME-<128 random bits>), which is what the sandbox holds.
    void setSecrets(const QList<SandboxSpec::Secret> &secrets) { m_secrets = secrets; }
    static QString placeholderFor(const QString &name);
    // The supervisor adds the authority's certificate from this variable to the trust store.
    static constexpr const char *kAuthorityVar = "CS_EXTRA_CA";
    ~EgressLease() override;

    // Calls `done` with where to reach the proxy and the new credential, or why not (the
    // gateway could not start, or is gone). Not called once `context` is gone.
    void take(QObject *context,
              const std::function<void(const EgressEndpoint &egress, const QString &error)> &done);
    // Once the sandbox runs: the address it connects from (on the gateway's internal network,
    // or its pod's IP). The credential works from there alone; `done` when the gateway has it
    // (before the sandbox is handed a program), or with why not.
    void bind(const QString &address, QObject *context,
              const std::function<void(const QString &error)> &done);
    // The internal network the sandbox joined (none on Kubernetes): where its address is.
    QString network() const { return m_network; }
    // The gateway forgets the credential; the sandbox has no way out from now on.
    void revoke();
    bool isWaiting() const { return m_waiting; }

    // SandboxContainer's: the events of this sandbox's connections have come; a person's verdict
    // on a held connection (and the pattern to add, if always).
    void settle(QObject *context, const std::function<void()> &done);
    void answer(quint64 connection, bool allow, const QString &widenTo);

Q_SIGNALS:
    // The gateway's events about this sandbox's connections (an Ask, a Connection, an End, the
    // SecretsUsed of one: GatewayProtocol).
    void networkEvent(const GatewayProtocol::NetworkEvent &event);

private:
    void onEvent(const GatewayProtocol::NetworkEvent &event);

    QPointer<EgressGateway> m_gateway;
    QStringList m_patterns;
    bool m_ask = false;
    QList<SandboxSpec::Secret> m_secrets;
    QMap<QString, QString> m_labels;
    QString m_credential;
    QString m_network;
    QSet<quint64> m_connections; // the gateway's ids of this sandbox's open connections
    bool m_waiting = false;
};
