#include "enginegateway.h"

#include "attachstream.h"
#include "backendlog.h"
#include "containersapi.h"
#include "engineclient.h"
#include "enginereply.h"
#include "networksapi.h"
#include "systemapi.h"

#include <QHostAddress>
#include <QJsonArray>
#include <utility>

namespace {
// The address after the network's own gateway address: "a.b.c.0/n" → a.b.c.2.
QString addressIn(const QString &subnet)
{
    const QPair<QHostAddress, int> parsed = QHostAddress::parseSubnet(subnet);
    if (parsed.first.protocol() != QAbstractSocket::IPv4Protocol || parsed.second > 29)
        return {};
    return QHostAddress(parsed.first.toIPv4Address() + 2).toString();
}
} // namespace

EngineGateway::EngineGateway(EngineClient *engine, QObject *parent)
    : EgressGateway(parent), m_engine(engine)
{}

EngineGateway::~EngineGateway()
{
    if (m_stream)
        m_stream->deleteLater();
}

EgressEndpoint EngineGateway::where() const
{
    return {m_internal, m_address, kPort, {}, {}};
}

void EngineGateway::ask(EngineReply *reply, const std::function<void(EngineReply *)> &onAnswer)
{
    requestStarted();
    reply->then(this, [this, reply, onAnswer] {
        onAnswer(reply);
        requestFinished();
    });
}

void EngineGateway::startGateway()
{
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

void EngineGateway::createInternal(bool probe)
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

void EngineGateway::readSubnet()
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

void EngineGateway::createOutbound()
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

QJsonObject EngineGateway::containerBody() const
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

void EngineGateway::createGateway()
{
    const QString name =
        QStringLiteral("code-sandbox-gateway-%1-%2").arg(m_suffix).arg(m_generation);
    ask(ContainersApi(m_engine).create(containerBody(), name), [this](EngineReply *r) {
        if (r->ok())
            m_containerId = r->json().value(u"Id").toString();
        if (m_state != State::Starting) {
            if (m_state == State::Absent && !m_containerId.isEmpty())
                removeGateway(); // given up meanwhile (the deadline)
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

void EngineGateway::joinAndAttach()
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
            m_stream = ContainersApi(m_engine).attach(m_containerId);
            connect(m_stream, &AttachStream::output, this, &EngineGateway::onOutput);
            connect(m_stream, &AttachStream::ended, this,
                    [this] { lost(QStringLiteral("its program ended")); });
            connect(m_stream, &AttachStream::failed, this, [this](const EngineError &e) {
                lost(QStringLiteral("its control stream failed: ") + e.toString());
            });
            connect(m_stream, &AttachStream::established, this, &EngineGateway::startContainer);
        });
}

void EngineGateway::startContainer()
{
    ask(ContainersApi(m_engine).start(m_containerId), [this](EngineReply *r) {
        if (m_state == State::Starting && !r->ok())
            failStart(QStringLiteral("could not start it: ") + r->error().toString());
        // Ready when the program says so (onOutput), not when the engine has started it.
    });
}

void EngineGateway::writeControl(const QByteArray &bytes)
{
    if (m_stream)
        m_stream->write(bytes);
}

bool EngineGateway::closeControl()
{
    return closeQuietly(m_stream);
}

void EngineGateway::removeGateway()
{
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
void EngineGateway::waitGone(const QString &id, int checksLeft, const QString &removalError)
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
        requestStarted();
        QTimer::singleShot(kGoneCheckMs, this, [this, id, checksLeft, removalError] {
            waitGone(id, checksLeft - 1, removalError);
            requestFinished();
        });
    });
}

// Once the gateway is gone and no request is in flight: the networks, then done.
void EngineGateway::finishShutdown()
{
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
    if (!removing)
        shutdownDone();
}
