#include "egressgateway.h"

#include "attachstream.h"
#include "backendlog.h"
#include "containersapi.h"
#include "engineclient.h"
#include "enginereply.h"
#include "networksapi.h"
#include "sandboxlayout.h"
#include "systemapi.h"

#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <memory>
#include <utility>

namespace {
// The owner's labels that say whose something is (not which language it ran).
const char *const kOwnerLabels[] = {SandboxLayout::kLabelApp, SandboxLayout::kLabelPid,
                                    SandboxLayout::kLabelHost};
constexpr const char *kLabelRole = "code-sandbox.role";

// The address after the network's own gateway address: "a.b.c.0/n" → a.b.c.2.
QString addressIn(const QString &subnet)
{
    const QPair<QHostAddress, int> parsed = QHostAddress::parseSubnet(subnet);
    if (parsed.first.protocol() != QAbstractSocket::IPv4Protocol || parsed.second > 29)
        return {};
    return QHostAddress(parsed.first.toIPv4Address() + 2).toString();
}

QString randomHex(int bytes)
{
    QByteArray raw(bytes, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(raw.data()),
                                          bytes / int(sizeof(quint32)));
    return QString::fromLatin1(raw.toHex());
}
} // namespace

EgressGateway::EgressGateway(EngineClient *engine, QObject *parent)
    : QObject(parent), m_engine(engine)
{
    m_ping.setInterval(kPingMs);
    connect(&m_ping, &QTimer::timeout, this, &EgressGateway::ping);
    m_startDeadline.setSingleShot(true);
    m_startDeadline.setInterval(kStartTimeoutMs);
    connect(&m_startDeadline, &QTimer::timeout, this, [this] {
        failStart(
            QStringLiteral("it did not report ready within %1 s").arg(kStartTimeoutMs / 1000));
    });
}

EgressGateway::~EgressGateway()
{
    if (m_stream)
        m_stream->deleteLater();
}

void EgressGateway::whenReady(const QMap<QString, QString> &labels, QObject *context,
                              const Ready &done)
{
    if (m_state == State::Ready) {
        done({m_internal, m_address, kPort, {}}, {});
        return;
    }
    if (m_state == State::Stopping) {
        done({}, QStringLiteral("the server is shutting down"));
        return;
    }
    m_waiters.append({context, done});
    if (m_labels.isEmpty()) {
        for (const char *key : kOwnerLabels)
            m_labels.insert(QString::fromLatin1(key), labels.value(QString::fromLatin1(key)));
        const QString instance = labels.value(QString::fromLatin1(SandboxLayout::kLabelOwner));
        m_labels.insert(QString::fromLatin1(kLabelGatewayOf), instance);
        QString name;
        for (const QChar c : instance.left(12))
            name.append(c.isLetterOrNumber() && c.unicode() < 128 ? c : QChar(u'-'));
        m_suffix = name + u'-' + randomHex(4);
    }
    next();
}

QString EgressGateway::grant(const QStringList &patterns, bool ask)
{
    const QString credential = randomHex(16);
    m_grants.insert(credential, {patterns, ask});
    if (m_state == State::Ready)
        sendGrant(credential);
    return credential;
}

void EgressGateway::widen(const QString &credential, const QString &pattern)
{
    const auto it = m_grants.find(credential);
    if (it == m_grants.end() || it->patterns.contains(pattern))
        return;
    it->patterns.append(pattern);
    // A grant again for the same credential replaces the gateway's (connections in flight keep
    // what they were given).
    if (m_state == State::Ready)
        sendGrant(credential);
}

void EgressGateway::answer(quint64 connection, bool allow)
{
    // A gateway made again since the question does not know the connection (it died with the
    // old one): it says so, and the line is harmless.
    if (m_state == State::Ready)
        send(QStringLiteral("verdict\t%1\t%2")
                 .arg(connection)
                 .arg(allow ? QStringLiteral("allow") : QStringLiteral("deny")));
}

void EgressGateway::sendGrant(const QString &credential)
{
    const Grant grant = m_grants.value(credential);
    send(QStringLiteral("grant\t%1\t*\t%2\t%3")
             .arg(credential, grant.ask ? QStringLiteral("ask") : QStringLiteral("refuse"),
                  grant.patterns.join(u',')));
}

void EgressGateway::revoke(const QString &credential)
{
    if (m_grants.remove(credential) && m_state == State::Ready)
        send(QStringLiteral("revoke\t") + credential);
}

void EgressGateway::start()
{
    m_state = State::Starting;
    m_restartAfterLoss = false;
    ++m_generation;
    m_startDeadline.start();
    qCInfo(lcBackend).noquote() << "starting the egress gateway" << m_suffix;
    // Which engine it is first (this may be the engine's first request, before which the
    // client does not know): the internal network is made differently on Podman, and checked.
    ask(SystemApi(m_engine).version(), [this](EngineReply *r) {
        if (m_state != State::Starting)
            return;
        if (!r->ok()) {
            failStart(QStringLiteral("the engine did not say what it is: ") +
                      r->error().toString());
            return;
        }
        m_onPodman = m_engine->dialect().kind() == EngineDialect::Kind::Podman ||
                     EngineDialect::fromVersion(r->json()).kind() == EngineDialect::Kind::Podman;
        if (m_subnet.isEmpty())
            createInternal(true);
        else
            createGateway();
    });
}

void EgressGateway::ask(EngineReply *reply, const std::function<void(EngineReply *)> &onAnswer)
{
    ++m_inFlight;
    reply->then(this, [this, reply, onAnswer] {
        --m_inFlight;
        onAnswer(reply);
        next();
    });
}

void EgressGateway::next()
{
    if (m_inFlight > 0)
        return;
    if (m_state == State::Stopping) {
        finishShutdown();
        return;
    }
    if (m_state == State::Absent && (!m_waiters.isEmpty() || m_restartAfterLoss))
        start();
}

QJsonObject EgressGateway::labelsFor(const char *role) const
{
    QJsonObject out;
    for (auto it = m_labels.begin(); it != m_labels.end(); ++it)
        out.insert(it.key(), it.value());
    out.insert(QString::fromLatin1(kLabelRole), QString::fromLatin1(role));
    return out;
}

void EgressGateway::createInternal(bool probe)
{
    NetworksApi::Create internal;
    internal.name = QStringLiteral("code-sandbox-egress-") + m_suffix;
    internal.labels = labelsFor("egress");
    internal.internal = true;
    // No address on the host's side of the bridge: the sandboxes cannot reach the host's own
    // services through it. Docker's bridge driver takes this option; Podman's CNI backend gives
    // an internal network no gateway by itself, which readSubnet checks (netavark would).
    if (!m_onPodman)
        internal.options = {
            {QStringLiteral("com.docker.network.bridge.inhibit_ipv4"), QStringLiteral("true")}};
    // The engine picks a free subnet for a first network, which is removed and made again with
    // that subnet given: only then may the gateway ask for a fixed address on it.
    internal.subnet = probe ? QString() : m_subnet;
    ask(NetworksApi(m_engine).create(internal),
        [this, name = internal.name, probe](EngineReply *r) {
            if (r->ok())
                m_internal = name;
            if (m_state != State::Starting)
                return;
            if (!r->ok())
                failStart(QStringLiteral("could not create the network %1: %2")
                              .arg(name, r->error().toString()));
            else if (probe)
                readSubnet();
            else
                createOutbound();
        });
}

void EgressGateway::readSubnet()
{
    ask(NetworksApi(m_engine).inspect(m_internal), [this](EngineReply *r) {
        if (m_state != State::Starting)
            return;
        const QJsonArray config = r->json().value(u"IPAM").toObject().value(u"Config").toArray();
        const QString subnet = config.first().toObject().value(u"Subnet").toString();
        if (!r->ok() || addressIn(subnet).isEmpty()) {
            failStart(QStringLiteral("the engine gave the network %1 no usable IPv4 subnet (%2)")
                          .arg(m_internal, r->ok() ? subnet : r->error().toString()));
            return;
        }
        // A host address on the internal network would let a sandbox reach the host's own
        // services past the gateway. Podman says "<nil>" (CNI) when there is none; its netavark
        // backend gives internal networks one, and is refused.
        const QHostAddress hostSide(config.first().toObject().value(u"Gateway").toString());
        if (m_onPodman && !hostSide.isNull()) {
            // Not kept for the next start, which would meet the same engine.
            ask(NetworksApi(m_engine).remove(m_internal), [this](EngineReply *drop) {
                if (drop->ok())
                    m_internal.clear();
            });
            failStart(QStringLiteral("the Podman engine gives its internal networks an address on "
                                     "the host (%1, its netavark network backend), through which "
                                     "the sandboxes would reach the host's services; the "
                                     "allow-list mode needs Podman's CNI backend "
                                     "(containers.conf [network] network_backend = \"cni\") "
                                     "or a Docker engine")
                          .arg(hostSide.toString()));
            return;
        }
        ask(NetworksApi(m_engine).remove(m_internal), [this, subnet](EngineReply *drop) {
            if (drop->ok())
                m_internal.clear();
            if (m_state != State::Starting)
                return;
            if (!drop->ok()) {
                failStart(QStringLiteral("could not remove the network %1: %2")
                              .arg(m_internal, drop->error().toString()));
                return;
            }
            m_subnet = subnet;
            m_address = addressIn(subnet);
            createInternal(false);
        });
    });
}

void EgressGateway::createOutbound()
{
    NetworksApi::Create outbound;
    outbound.name = QStringLiteral("code-sandbox-egress-out-") + m_suffix;
    outbound.labels = labelsFor("egress-out");
    ask(NetworksApi(m_engine).create(outbound), [this, name = outbound.name](EngineReply *r) {
        if (r->ok())
            m_outbound = name;
        if (m_state != State::Starting)
            return;
        if (!r->ok())
            failStart(QStringLiteral("could not create the network %1: %2")
                          .arg(name, r->error().toString()));
        else
            createGateway();
    });
}

QStringList EgressGateway::gatewayArgs() const
{
    QStringList args{QStringLiteral("--listen"),
                     QStringLiteral("0.0.0.0:%1").arg(kPort),
                     QStringLiteral("--control-timeout-ms"),
                     QString::number(kPingMs * 5),
                     QStringLiteral("--ask-timeout-ms"),
                     QString::number(kAskTimeoutMs)};
    const QString hosts = qEnvironmentVariable(kTestHostsVar);
    if (!hosts.isEmpty())
        args << QStringLiteral("--hosts") << hosts;
    const QString publicRanges = qEnvironmentVariable(kTestPublicVar);
    if (!publicRanges.isEmpty())
        args << QStringLiteral("--public") << publicRanges;
    return args;
}

QJsonObject EgressGateway::containerBody() const
{
    // Hardened like a sandbox: read-only, no capabilities, nobody, capped. A thread per
    // connection counts against the pids limit, two descriptors each against nofile.
    const QJsonObject host{
        {QStringLiteral("NetworkMode"), m_outbound},
        {QStringLiteral("Memory"), 256LL * 1024 * 1024},
        {QStringLiteral("MemorySwap"), 256LL * 1024 * 1024},
        {QStringLiteral("NanoCpus"), qint64(1000000000)},
        {QStringLiteral("PidsLimit"), 600},
        {QStringLiteral("ReadonlyRootfs"), true},
        {QStringLiteral("CapDrop"), QJsonArray{QStringLiteral("ALL")}},
        {QStringLiteral("SecurityOpt"), QJsonArray{QStringLiteral("no-new-privileges")}},
        {QStringLiteral("IpcMode"), QStringLiteral("private")},
        // Gone with its program, whoever ends it (also when this server dies and its stdin ends).
        {QStringLiteral("AutoRemove"), true},
        {QStringLiteral("Ulimits"),
         QJsonArray{QJsonObject{{QStringLiteral("Name"), QStringLiteral("nofile")},
                                {QStringLiteral("Soft"), 2048},
                                {QStringLiteral("Hard"), 2048}}}},
    };
    return {
        {QStringLiteral("Image"), m_image},
        {QStringLiteral("Cmd"), QJsonArray::fromStringList(gatewayArgs())},
        {QStringLiteral("User"), QStringLiteral("65534:65534")},
        {QStringLiteral("Labels"), labelsFor("gateway")},
        {QStringLiteral("AttachStdin"), true},
        {QStringLiteral("AttachStdout"), true},
        {QStringLiteral("AttachStderr"), true},
        {QStringLiteral("OpenStdin"), true},
        {QStringLiteral("StdinOnce"), true},
        {QStringLiteral("Tty"), false},
        {QStringLiteral("HostConfig"), host},
    };
}

void EgressGateway::createGateway()
{
    const QString name =
        QStringLiteral("code-sandbox-gateway-%1-%2").arg(m_suffix).arg(m_generation);
    ask(ContainersApi(m_engine).create(containerBody(), name), [this](EngineReply *r) {
        if (r->ok())
            m_containerId = r->json().value(u"Id").toString();
        if (m_state != State::Starting) {
            if (m_state == State::Absent)
                removeContainer(); // given up meanwhile (the deadline)
            return;
        }
        if (!r->ok()) {
            failStart(r->error().isNotFound()
                          ? QStringLiteral("the engine does not have the image %1; build it "
                                           "with containers/build-images.sh gateway")
                                .arg(m_image)
                          : QStringLiteral("could not create it: ") + r->error().toString());
            return;
        }
        joinAndAttach();
    });
}

void EgressGateway::joinAndAttach()
{
    ask(NetworksApi(m_engine).connect(m_internal, m_containerId, m_address),
        [this](EngineReply *r) {
            if (m_state != State::Starting)
                return;
            if (!r->ok()) {
                failStart(QStringLiteral("could not join it to %1 at %2: %3")
                              .arg(m_internal, m_address, r->error().toString()));
                return;
            }
            m_pending.clear();
            m_stream = ContainersApi(m_engine).attach(m_containerId);
            connect(m_stream, &AttachStream::output, this, &EgressGateway::onOutput);
            connect(m_stream, &AttachStream::ended, this,
                    [this] { lost(QStringLiteral("its program ended")); });
            connect(m_stream, &AttachStream::failed, this, [this](const EngineError &e) {
                lost(QStringLiteral("its control stream failed: ") + e.toString());
            });
            connect(m_stream, &AttachStream::established, this, &EgressGateway::startContainer);
        });
}

void EgressGateway::startContainer()
{
    ask(ContainersApi(m_engine).start(m_containerId), [this](EngineReply *r) {
        if (m_state == State::Starting && !r->ok())
            failStart(QStringLiteral("could not start it: ") + r->error().toString());
        // Ready when the program says so (onOutput), not when the engine has started it.
    });
}

void EgressGateway::onOutput(int stream, const QByteArray &bytes)
{
    if (stream == 2) {
        qCWarning(lcBackend).noquote() << "egress gateway:" << bytes.trimmed();
        return;
    }
    m_pending.append(bytes);
    qsizetype newline;
    while ((newline = m_pending.indexOf('\n')) >= 0) {
        const QByteArray line = m_pending.left(newline);
        m_pending.remove(0, newline + 1);
        const QJsonObject message = QJsonDocument::fromJson(line).object();
        const QString kind = message.value(u"ev").toString();
        if (kind == u"ready") {
            if (m_state == State::Starting)
                onReady();
        } else if (kind == u"pong") {
            ++m_pongs;
            releaseFlushes(false);
        } else if (kind == u"error") {
            qCWarning(lcBackend).noquote() << "egress gateway refused a control line:" << line;
            // An image older than this server: it goes out directly, which behind the host's
            // proxy reaches nothing.
            if (message.value(u"line").toString().startsWith(u"upstream"))
                qCWarning(lcBackend).noquote()
                    << "the gateway image" << m_image
                    << "cannot go out through the host's proxy: it is older than this server; "
                       "rebuild it with containers/build-images.sh --force gateway";
        } else if (kind == u"conn" || kind == u"ask" || kind == u"end") {
            qCDebug(lcBackend).noquote() << "egress:" << line;
            Q_EMIT event(message);
        }
    }
    // A gateway that writes no newline is not ours to buffer for ever.
    if (m_pending.size() > 64 * 1024)
        m_pending.clear();
}

void EgressGateway::setUpstream(const UpstreamProxy &proxy)
{
    m_upstream = proxy;
    if (m_state == State::Ready)
        sendUpstream();
}

void EgressGateway::sendUpstream()
{
    const QByteArray basic = m_upstream.basicCredential();
    const QStringList noProxy = m_upstream.noProxy();
    send(QStringLiteral("upstream\t%1\t%2\t%3")
             .arg(m_upstream.isSet() ? m_upstream.hostPort() : QStringLiteral("-"),
                  basic.isEmpty() ? QStringLiteral("-") : QString::fromLatin1(basic),
                  noProxy.isEmpty() ? QStringLiteral("-") : noProxy.join(u',')));
}

void EgressGateway::onReady()
{
    m_startDeadline.stop();
    m_state = State::Ready;
    m_ping.start();
    if (m_upstream.isSet())
        sendUpstream();
    for (auto it = m_grants.cbegin(); it != m_grants.cend(); ++it)
        sendGrant(it.key());
    qCInfo(lcBackend).noquote() << "egress gateway" << m_containerId.left(12) << "ready at"
                                << m_address << "on" << m_internal;
    settle(QString());
}

void EgressGateway::failStart(const QString &why)
{
    if (m_state != State::Starting)
        return;
    qCWarning(lcBackend).noquote() << "the egress gateway could not start:" << why;
    m_startDeadline.stop();
    m_state = State::Absent;
    settle(QStringLiteral("the egress gateway (the allow-list mode's only way out) could not "
                          "start: ") +
           why);
    removeContainer();
}

void EgressGateway::lost(const QString &why)
{
    if (m_state == State::Starting) {
        failStart(why);
        return;
    }
    if (m_state != State::Ready)
        return;
    qCWarning(lcBackend).noquote() << "the egress gateway is gone:" << why
                                   << "- allow-list sandboxes have no way out until the next "
                                      "one starts";
    m_state = State::Absent;
    m_ping.stop();
    // Warm sandboxes are granted on this one's address: make the next one as soon as this one
    // is removed.
    m_restartAfterLoss = !m_grants.isEmpty();
    removeContainer();
    next();
}

void EgressGateway::closeStream()
{
    releaseFlushes(true);
    m_pingsSent = m_pongs = 0;
    if (!m_stream)
        return;
    m_stream->disconnect(this);
    m_stream->close();
    m_stream->deleteLater();
    m_stream.clear();
}

void EgressGateway::removeContainer()
{
    closeStream();
    if (m_containerId.isEmpty())
        return;
    const QString id = std::exchange(m_containerId, {});
    ask(ContainersApi(m_engine).remove(id), [this, id](EngineReply *r) {
        // A refusal is not yet a failure: the engine may be removing it already (AutoRemove,
        // once its program ended), which Docker answers with 409 and Podman with 500 ("container
        // state improper"). Said only if the container is still there after the checks.
        const EngineError &e = r->error();
        waitGone(id, kGoneChecks, r->ok() || e.isNotFound() ? QString() : e.toString());
    });
}

// Until the engine no longer knows the container: only then are its address on the internal
// network free for the next gateway, and the networks free to be removed.
void EgressGateway::waitGone(const QString &id, int checksLeft, const QString &removalError)
{
    ask(ContainersApi(m_engine).inspect(id), [this, id, checksLeft, removalError](EngineReply *r) {
        if (r->error().isNotFound())
            return;
        if (checksLeft <= 0) {
            if (!removalError.isEmpty())
                qCWarning(lcBackend).noquote()
                    << "could not remove the egress gateway" << id.left(12) << ":" << removalError;
            return;
        }
        ++m_inFlight;
        QTimer::singleShot(kGoneCheckMs, this, [this, id, checksLeft, removalError] {
            --m_inFlight;
            waitGone(id, checksLeft - 1, removalError);
        });
    });
}

void EgressGateway::settle(const QString &error)
{
    const QList<Waiter> waiters = std::exchange(m_waiters, {});
    const ContainerSpec::Egress where{m_internal, m_address, kPort, {}};
    for (const Waiter &w : waiters)
        if (w.context)
            w.done(error.isEmpty() ? where : ContainerSpec::Egress{}, error);
}

void EgressGateway::send(const QString &line)
{
    if (m_stream)
        m_stream->write(line.toUtf8() + '\n');
}

void EgressGateway::ping()
{
    if (!m_stream)
        return;
    send(QStringLiteral("ping"));
    ++m_pingsSent;
}

void EgressGateway::flush(QObject *context, const std::function<void()> &done)
{
    if (m_state != State::Ready || !m_stream) {
        done();
        return;
    }
    ping();
    const quint64 token = ++m_flushTokens;
    m_flushes.append({token, m_pingsSent, context, done});
    QTimer::singleShot(kFlushTimeoutMs, this, [this, token] {
        for (qsizetype i = 0; i < m_flushes.size(); ++i)
            if (m_flushes.at(i).token == token) {
                const Flush late = m_flushes.takeAt(i);
                qCWarning(lcBackend)
                    << "the egress gateway did not answer a ping within" << kFlushTimeoutMs
                    << "ms; a run's result may miss its last "
                       "connections";
                if (late.context)
                    late.done();
                return;
            }
    });
}

void EgressGateway::releaseFlushes(bool all)
{
    QList<Flush> due;
    for (qsizetype i = 0; i < m_flushes.size();)
        if (all || m_flushes.at(i).ping <= m_pongs)
            due.append(m_flushes.takeAt(i));
        else
            ++i;
    for (const Flush &f : due)
        if (f.context)
            f.done();
}

void EgressGateway::shutdown(QObject *context, const std::function<void()> &done)
{
    failStart(QStringLiteral("the server is shutting down"));
    settle(QStringLiteral("the server is shutting down"));
    m_state = State::Stopping;
    m_ping.stop();
    m_startDeadline.stop();
    m_shutdownContext = context;
    m_shutdownDone = done;
    next();
}

// Once no request is in flight: the gateway, then (once it is off them) the networks, then done.
void EgressGateway::finishShutdown()
{
    if (!m_shutdownDone)
        return;
    if (!m_containerId.isEmpty()) {
        removeContainer();
        return;
    }
    closeStream();
    bool removing = false;
    for (QString *network : {&m_internal, &m_outbound}) {
        if (network->isEmpty())
            continue;
        removing = true;
        ask(NetworksApi(m_engine).remove(*network), [name = *network](EngineReply *r) {
            if (!r->ok() && !r->error().isNotFound())
                qCWarning(lcBackend).noquote()
                    << "could not remove the network" << name << ":" << r->error().toString();
        });
        network->clear();
    }
    if (removing)
        return;
    const std::function<void()> done = std::exchange(m_shutdownDone, {});
    if (m_shutdownContext)
        done();
}
