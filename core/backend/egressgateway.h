#pragma once

#include "egressendpoint.h"
#include "gatewayprotocol.h"
#include "upstreamproxy.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <functional>

// The allow-list mode's way out on one backend: one egress gateway (code-sandbox/gateway,
// gateway/), an HTTP proxy that lets each sandbox's credential reach only that
// sandbox's hosts. It takes its rules over its stdin and reports on its stdout (an attach
// stream, which works wherever the backend is: a socket, TLS, ssh, a cluster's API server), so
// this class is its whole control channel: grants and revocations in, a ping every kPingMs,
// events out. Where the gateway runs and how the sandboxes reach it is the subclasses' part:
// EngineGateway (a container and two networks on a Docker or Podman engine), PodGateway (a pod
// and a Service in a Kubernetes namespace).
//
// Started on the first sandbox that needs it; made again when it is gone (killed, crashed, the
// engine restarted) at the same address, and given every live grant again, so warm sandboxes
// keep working. While none runs, an allow-list sandbox has no way out: the gateway exits when
// this side stops talking (stdin ends, or no ping for its --control-timeout-ms), so nothing
// fails open.
class EgressGateway : public QObject
{
    Q_OBJECT
public:
    static constexpr const char *kImage = "code-sandbox/gateway:latest";
    static constexpr int kPort = 3128;
    static constexpr int kPingMs = 2000;
    // From the first request to the gateway's "ready": past it the waiting sandboxes fail.
    static constexpr int kStartTimeoutMs = 30000;
    // After a removal, how often and how many times the backend is asked whether it is done.
    static constexpr int kGoneCheckMs = 200;
    static constexpr int kGoneChecks = 50;
    // On the gateway and what it needs, naming their instance. Not the instance label: the
    // janitor removes every container of this instance it does not know as a sandbox. A dead
    // instance's gateway and networks are still found by their pid (Janitor::isOrphan).
    static constexpr const char *kLabelGatewayOf = "code-sandbox.gateway-of";
    static constexpr const char *kLabelRole = "code-sandbox.role";
    // The longest a held connection waits in the gateway: past the longest approval time (an
    // hour), which the server applies and answers at; this bounds a question whose answer was
    // lost.
    static constexpr int kAskTimeoutMs = 61 * 60 * 1000;
    // The longest a run's result waits for the gateway's pending events (flush()).
    static constexpr int kFlushTimeoutMs = 3000;
    // Test-only: NAME=ADDRESS,... resolved by the gateway without DNS, and IPv4 ranges it treats
    // as public (the tests' servers stand for the internet on this machine's private addresses).
    static constexpr const char *kTestHostsVar = "CODE_SANDBOX_TEST_EGRESS_HOSTS";
    static constexpr const char *kTestPublicVar = "CODE_SANDBOX_TEST_EGRESS_PUBLIC";

    explicit EgressGateway(QObject *parent = nullptr);
    ~EgressGateway() override;

    // Where the sandboxes reach the proxy (and the network to join, on an engine), or why
    // there is none.
    using Ready = std::function<void(const EgressEndpoint &where, const QString &error)>;
    // Calls `done` once the gateway answers (starting it when none runs). `labels`: the owner's
    // labels of the asking sandbox (app, instance, pid, host); what the gateway is made of
    // carries them, so leftovers of an instance that died can be found.
    void whenReady(const QMap<QString, QString> &labels, QObject *context, const Ready &done);

    // One sandbox's secret as the gateway gets it: the placeholder the sandbox holds, made for
    // it alone.
    struct SecretGrant
    {
        QString name;
        QString placeholder;
        QByteArray value;
        QStringList hosts;
    };
    // A new credential for one sandbox (random, 128 bits), its hosts and its secrets. Kept until
    // revoked, and given to a gateway made again. With `ask`, a connection to another host is
    // held and reported (an Ask event) until answer() says, else refused at once.
    // The gateway is told of it by bind(), once the sandbox's address is known.
    QString grant(const QStringList &patterns, bool ask = false,
                  const QList<SecretGrant> &secrets = {});
    // The address the credential's sandbox connects from (on the internal network, or its
    // pod's): the gateway honours the credential from there alone, so that a credential that
    // leaves its sandbox is worth nothing elsewhere. Sent now if a gateway runs, else with the
    // grants when one starts; flush() after it says when the gateway has it.
    void bind(const QString &credential, const QString &source);
    void revoke(const QString &credential);
    // The credential may reach `pattern` too from now on (a person allowed it always).
    void widen(const QString &credential, const QString &pattern);
    // The verdict on a held connection (its id from the "ask" event).
    void answer(quint64 connection, bool allow);
    // Calls `done` once every event the gateway wrote before now has arrived: it answers control
    // lines in order on the stream its events come on, so a ping's answer follows them. A run's
    // end comes on the sandbox's own stream and can overtake its last connection's event; its
    // result waits for this. At once when no gateway runs; after kFlushTimeoutMs at the latest.
    void flush(QObject *context, const std::function<void()> &done);

    // Removes the gateway and what it needed (after the sandboxes on it are gone); `done` when
    // the backend has answered every removal.
    void shutdown(QObject *context, const std::function<void()> &done);

    // The gateway's image (kImage unless told; a registry's copy, say). For the next start.
    void setImage(const QString &image) { m_image = image; }
    // The host's proxy it goes out through (not set: straight out); sent to a running gateway
    // at once, and to each one started, before any grant. Over the control channel, so that
    // the proxy's credential is not in the gateway's configuration.
    void setUpstream(const UpstreamProxy &proxy);

    // The installation's authority (InterceptionAuthority) and the host's trust store, for the
    // hosts secrets are bound to: sent to a running gateway at once and to each one started,
    // before any grant. Without them a secret's host cannot be reached.
    void setInterception(const QByteArray &certificatePem, const QByteArray &keyPem,
                         const QByteArray &trustPem);
    QByteArray authorityCertificate() const { return m_authorityCertificate; }

    bool isRunning() const { return m_state == State::Ready; }
    // Live credentials: sandboxes that exist and may reach their hosts through the gateway.
    int grantCount() const { return int(m_grants.size()); }
    // How many gateways were started (a test sees that a killed one was made again).
    int generation() const { return m_generation; }
    // The running gateway's container id, or its pod's name.
    QString containerId() const { return m_containerId; }

Q_SIGNALS:
    // What the gateway reported of a sandbox's connection: an Ask, a Connection, an End or the
    // SecretsUsed of one (GatewayProtocol).
    void event(const GatewayProtocol::NetworkEvent &event);

protected:
    enum class State
    {
        Absent,
        Starting,
        Ready,
        Stopping
    };

    // The subclasses' part. startGateway(): make what is missing and the gateway, open the
    // control stream (feeding its output to onOutput()), then call onReady() (or the output's
    // "ready" or first "pong" does), or failStart(). removeGateway(): remove m_containerId
    // (the control stream is closed already). finishShutdown(): with no request in flight and
    // no gateway left, remove the rest, then call shutdownDone().
    virtual void startGateway() = 0;
    virtual void removeGateway() = 0;
    virtual void finishShutdown() = 0;
    virtual void writeControl(const QByteArray &bytes) = 0;
    // Closes the stream without its ended/failed following; false when none is open.
    virtual bool closeControl() = 0;
    // Where the sandboxes reach the running gateway.
    virtual EgressEndpoint where() const = 0;

    // Every backend request of a subclass is counted between these: with none in flight, a
    // shutdown or a wanted start proceeds (next()).
    void requestStarted() { ++m_inFlight; }
    void requestFinished();
    void onOutput(int stream, const QByteArray &bytes);
    void onReady();
    void failStart(const QString &why);
    void lost(const QString &why);
    void shutdownDone();
    // The gateway's command line, and the labels of what belongs to it (the owner's, the role).
    QStringList gatewayArgs() const;
    QJsonObject labelsFor(const char *role) const;
    // Closes a subclass's control stream so that nothing of it reaches this object any more.
    template <class Stream> bool closeQuietly(QPointer<Stream> &stream)
    {
        if (!stream)
            return false;
        stream->disconnect(this);
        stream->close();
        stream->deleteLater();
        stream.clear();
        return true;
    }
    // Once the stream is open and the gateway has said nothing yet (an attach after its start
    // missed its "ready"): its answer to this ping makes it ready.
    void ping();

    State m_state = State::Absent;
    QString m_image = QString::fromLatin1(kImage);
    QString m_suffix; // names: code-sandbox-egress[-out]-<suffix>, code-sandbox-gateway-<suffix>
    QString m_containerId;
    int m_generation = 0;

private:
    struct Grant
    {
        QStringList patterns;
        bool ask = false;
        QList<SecretGrant> secrets;
        QString source; // the sandbox's address; "" until bound (and not sent until then)
    };
    struct Waiter
    {
        QPointer<QObject> context;
        Ready done;
    };
    struct Flush
    {
        quint64 token = 0;
        quint64 ping = 0; // released by the answer to this ping
        QPointer<QObject> context;
        std::function<void()> done;
    };

    void start();
    void next();
    void closeStream();
    void removeIfAny();
    void settle(const QString &error);
    // Written unless the protocol refuses it (logged; a secret's reason names no value).
    bool send(const GatewayProtocol::Command &command);
    void handleEvent(const GatewayProtocol::NetworkEvent &event, const QByteArray &line);
    // Releases the flushes whose ping was answered (all with `all`: the stream is gone).
    void releaseFlushes(bool all);
    void sendGrant(const QString &credential);
    void sendUpstream();
    void sendInterception();

    QMap<QString, QString> m_labels;
    QByteArray m_pending; // stdout up to the next newline
    QList<Waiter> m_waiters;
    QList<Flush> m_flushes;
    quint64 m_pingsSent = 0; // on the current stream
    quint64 m_pongs = 0;
    quint64 m_flushTokens = 0;
    QHash<QString, Grant> m_grants; // credential → hosts
    QTimer m_ping;
    QTimer m_startDeadline;
    int m_inFlight = 0;              // backend requests not answered yet
    bool m_restartAfterLoss = false; // a running gateway went away while sandboxes held grants
    UpstreamProxy m_upstream;
    QByteArray m_authorityCertificate;
    QByteArray m_authorityKey;
    QByteArray m_trust;
    // Who asked for the shutdown (the service, and a backend's own caller): each is answered.
    QList<QPair<QPointer<QObject>, std::function<void()>>> m_shutdownWaiters;
};
