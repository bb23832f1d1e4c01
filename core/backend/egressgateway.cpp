#include "egressgateway.h"

#include "backendlog.h"
#include "sandboxlayout.h"

#include <QRandomGenerator>
#include <utility>

namespace {
using P = GatewayProtocol;

std::vector<std::string> toStd(const QStringList &list)
{
    std::vector<std::string> out;
    out.reserve(size_t(list.size()));
    for (const QString &item : list)
        out.push_back(item.toStdString());
    return out;
}

// The owner's labels that say whose something is (not which language it ran).
const char *const kOwnerLabels[] = {SandboxLayout::kLabelApp, SandboxLayout::kLabelPid,
                                    SandboxLayout::kLabelHost};

QString randomHex(int bytes)
{
    QByteArray raw(bytes, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(raw.data()),
                                          bytes / int(sizeof(quint32)));
    return QString::fromLatin1(raw.toHex());
}
} // namespace

EgressGateway::EgressGateway(QObject *parent) : QObject(parent)
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

EgressGateway::~EgressGateway() = default;

void EgressGateway::whenReady(const QMap<QString, QString> &labels, QObject *context,
                              const Ready &done)
{
    if (m_state == State::Ready) {
        done(where(), {});
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
        for (const QChar c : instance.left(12).toLower())
            name.append(c.isLetterOrNumber() && c.unicode() < 128 ? c : QChar(u'-'));
        m_suffix = name + u'-' + randomHex(4);
    }
    next();
}

QString EgressGateway::grant(const QStringList &patterns, bool ask,
                             const QList<SecretGrant> &secrets)
{
    const QString credential = randomHex(16);
    // Not sent yet: the gateway learns it with the sandbox's address (bind()), so that it never
    // works from anywhere else.
    m_grants.insert(credential, {patterns, ask, secrets, {}});
    return credential;
}

void EgressGateway::bind(const QString &credential, const QString &source)
{
    const auto it = m_grants.find(credential);
    if (it == m_grants.end())
        return;
    it->source = source;
    if (m_state == State::Ready)
        sendGrant(credential);
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
        send(P::Verdict{connection, allow});
}

void EgressGateway::sendGrant(const QString &credential)
{
    const Grant grant = m_grants.value(credential);
    if (grant.source.isEmpty())
        return; // bind() sends it
    // Its secrets go only with it (the gateway takes none for a credential it has no grant of).
    if (!send(P::Grant{credential.toStdString(), grant.source.toStdString(), grant.ask,
                       toStd(grant.patterns)}))
        return;
    // Never logged: these lines carry the values.
    for (const SecretGrant &secret : grant.secrets)
        send(P::Secret{credential.toStdString(), secret.name.toStdString(),
                       secret.placeholder.toStdString(), secret.value.toStdString(),
                       toStd(secret.hosts)});
}

void EgressGateway::setInterception(const QByteArray &certificatePem, const QByteArray &keyPem,
                                    const QByteArray &trustPem)
{
    m_authorityCertificate = certificatePem;
    m_authorityKey = keyPem;
    m_trust = trustPem;
    if (m_state == State::Ready)
        sendInterception();
}

void EgressGateway::sendInterception()
{
    if (m_authorityKey.isEmpty())
        return;
    send(P::Authority{m_authorityCertificate.toStdString(), m_authorityKey.toStdString()});
    if (!m_trust.isEmpty())
        send(P::Trust{m_trust.toStdString()});
}

void EgressGateway::revoke(const QString &credential)
{
    if (m_grants.remove(credential) && m_state == State::Ready)
        send(P::Revoke{credential.toStdString()});
}

void EgressGateway::start()
{
    m_state = State::Starting;
    m_restartAfterLoss = false;
    m_pending.clear();
    ++m_generation;
    m_startDeadline.start();
    qCInfo(lcBackend).noquote() << "starting the egress gateway" << m_suffix;
    startGateway();
}

void EgressGateway::requestFinished()
{
    --m_inFlight;
    next();
}

void EgressGateway::next()
{
    if (m_inFlight > 0)
        return;
    if (m_state == State::Stopping) {
        if (!m_shutdownWaiters.isEmpty()) {
            if (!m_containerId.isEmpty())
                removeIfAny();
            else
                finishShutdown();
        }
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
        const P::DecodedEvent decoded = P::decodeEvent(line.toStdString());
        if (decoded.event)
            handleEvent(*decoded.event, line);
        else
            qCWarning(lcBackend).noquote()
                << "egress gateway: a line that is no event of ours ("
                << QString::fromStdString(decoded.why) << "):" << line.left(200);
    }
    // A gateway that writes no newline is not ours to buffer for ever.
    if (m_pending.size() > qsizetype(P::kMaxEventLine))
        m_pending.clear();
}

void EgressGateway::handleEvent(const P::NetworkEvent &event, const QByteArray &line)
{
    if (std::holds_alternative<P::Ready>(event)) {
        if (m_state == State::Starting)
            onReady();
    } else if (std::holds_alternative<P::Pong>(event)) {
        ++m_pongs;
        // An attach after the start missed the "ready": a pong says as much.
        if (m_state == State::Starting)
            onReady();
        releaseFlushes(false);
    } else if (const auto *error = std::get_if<P::Error>(&event)) {
        qCWarning(lcBackend).noquote() << "egress gateway refused a control line:" << line;
        // An image older than this server: it goes out directly, which behind the host's
        // proxy reaches nothing.
        if (error->line.rfind("upstream", 0) == 0)
            qCWarning(lcBackend).noquote()
                << "the gateway image" << m_image
                << "cannot go out through the host's proxy: it is older than this server; "
                   "rebuild it with containers/build-images.sh --force gateway";
    } else if (!std::holds_alternative<P::Ok>(event)) {
        // Ask, Connection, End, SecretsUsed: about a sandbox's connection.
        qCDebug(lcBackend).noquote() << "egress:" << line;
        Q_EMIT this->event(event);
    }
}

void EgressGateway::setUpstream(const UpstreamProxy &proxy)
{
    m_upstream = proxy;
    if (m_state == State::Ready)
        sendUpstream();
}

void EgressGateway::sendUpstream()
{
    // NO_PROXY is the host's: an entry that is no word of a list (a space inside, a name that
    // is not ASCII) would cost the line, and the gateway would drop it as no host name anyway.
    std::vector<std::string> noProxy;
    for (const QString &entry : m_upstream.noProxy())
        if (P::isListItem(entry.toStdString()))
            noProxy.push_back(entry.toStdString());
    // Not set: none, which the gateway takes as going straight out.
    send(P::Upstream{m_upstream.host().toStdString(), m_upstream.isSet() ? m_upstream.port() : 0,
                     m_upstream.basicCredential().toStdString(), noProxy});
}

void EgressGateway::onReady()
{
    m_startDeadline.stop();
    m_state = State::Ready;
    m_ping.start();
    if (m_upstream.isSet())
        sendUpstream();
    sendInterception();
    for (auto it = m_grants.cbegin(); it != m_grants.cend(); ++it)
        sendGrant(it.key());
    const EgressEndpoint at = where();
    // A container's id is long hex; a pod's name is what kubectl shows.
    const QString shown = m_containerId.size() == 64 ? m_containerId.left(12) : m_containerId;
    qCInfo(lcBackend).noquote() << "egress gateway" << shown << "ready at" << at.proxyHost
                                << (at.network.isEmpty() ? QString() : QStringLiteral("on"))
                                << at.network;
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
    removeIfAny();
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
    removeIfAny();
    next();
}

void EgressGateway::closeStream()
{
    releaseFlushes(true);
    m_pingsSent = m_pongs = 0;
    closeControl();
}

void EgressGateway::removeIfAny()
{
    closeStream();
    if (!m_containerId.isEmpty())
        removeGateway();
}

void EgressGateway::settle(const QString &error)
{
    const QList<Waiter> waiters = std::exchange(m_waiters, {});
    const EgressEndpoint at = error.isEmpty() ? where() : EgressEndpoint{};
    for (const Waiter &w : waiters)
        if (w.context)
            w.done(at, error);
}

bool EgressGateway::send(const P::Command &command)
{
    std::string why;
    const std::string line = P::encode(command, &why);
    if (line.empty()) {
        qCWarning(lcBackend).noquote()
            << "a control line for the egress gateway was not sent:" << QString::fromStdString(why);
        return false;
    }
    writeControl(QByteArray::fromStdString(line) + '\n');
    return true;
}

void EgressGateway::ping()
{
    send(P::Ping{});
    ++m_pingsSent;
}

void EgressGateway::flush(QObject *context, const std::function<void()> &done)
{
    if (m_state != State::Ready) {
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
    const bool underWay = !m_shutdownWaiters.isEmpty();
    m_shutdownWaiters.append({context, done});
    if (underWay)
        return;
    failStart(QStringLiteral("the server is shutting down"));
    settle(QStringLiteral("the server is shutting down"));
    m_state = State::Stopping;
    m_ping.stop();
    m_startDeadline.stop();
    next();
}

void EgressGateway::shutdownDone()
{
    closeStream();
    const auto waiters = std::exchange(m_shutdownWaiters, {});
    for (const auto &[context, done] : waiters)
        if (context)
            done();
}
