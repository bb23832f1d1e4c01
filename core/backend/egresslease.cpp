#include "egresslease.h"

#include "egressgateway.h"

#include <QRandomGenerator>

EgressLease::EgressLease(EgressGateway *gateway, const QStringList &patterns, bool ask,
                         const QMap<QString, QString> &labels, QObject *parent)
    : QObject(parent), m_gateway(gateway), m_patterns(patterns), m_ask(ask), m_labels(labels)
{}

EgressLease::~EgressLease()
{
    revoke();
}

void EgressLease::take(QObject *context,
                       const std::function<void(const EgressEndpoint &, const QString &)> &done)
{
    if (!m_gateway) {
        done({}, QStringLiteral("no egress gateway"));
        return;
    }
    m_waiting = true;
    QPointer<QObject> guard(context);
    m_gateway->whenReady(
        m_labels, this, [this, guard, done](const EgressEndpoint &where, const QString &error) {
            m_waiting = false;
            if (!guard)
                return;
            if (!error.isEmpty() || !m_gateway) {
                done({}, error.isEmpty() ? QStringLiteral("no egress gateway") : error);
                return;
            }
            EgressEndpoint egress = where;
            QList<EgressGateway::SecretGrant> secrets;
            for (const SandboxSpec::Secret &s : std::as_const(m_secrets)) {
                const QString placeholder = placeholderFor(s.name);
                secrets.append({s.name, placeholder, s.value, s.hosts});
                egress.env.append(s.name + u'=' + placeholder);
            }
            if (!secrets.isEmpty()) {
                if (m_gateway->authorityCertificate().isEmpty()) {
                    done({}, QStringLiteral("this run has secrets, but the authority the egress "
                                            "gateway signs their hosts' certificates with could "
                                            "not be loaded (see the server's log)"));
                    return;
                }
                egress.env.append(QString::fromLatin1(kAuthorityVar) + u'=' +
                                  QString::fromLatin1(m_gateway->authorityCertificate()));
            }
            egress.credential = m_credential = m_gateway->grant(m_patterns, m_ask, secrets);
            m_network = egress.network;
            connect(m_gateway, &EgressGateway::event, this, &EgressLease::onEvent,
                    Qt::UniqueConnection);
            done(egress, QString());
        });
}

QString EgressLease::placeholderFor(const QString &name)
{
    quint64 bits[2];
    QRandomGenerator::system()->fillRange(bits);
    return QStringLiteral("csb-secret-%1-%2%3")
        .arg(name)
        .arg(bits[0], 16, 16, QLatin1Char('0'))
        .arg(bits[1], 16, 16, QLatin1Char('0'));
}

void EgressLease::bind(const QString &address, QObject *context,
                       const std::function<void(const QString &)> &done)
{
    if (!m_gateway || m_credential.isEmpty()) {
        done(QStringLiteral("no egress gateway"));
        return;
    }
    if (address.isEmpty()) {
        done(QStringLiteral("the sandbox has no address on the egress gateway's network, so its "
                            "credential could not be bound to it"));
        return;
    }
    m_gateway->bind(m_credential, address);
    // The gateway answers control lines in order: once a ping sent after the grant is answered,
    // it has the grant, and the sandbox's first connection finds it.
    m_gateway->flush(context, [done] { done(QString()); });
}

void EgressLease::revoke()
{
    if (m_gateway && !m_credential.isEmpty())
        m_gateway->revoke(m_credential);
    m_credential.clear();
}

void EgressLease::onEvent(const GatewayProtocol::NetworkEvent &event)
{
    using P = GatewayProtocol;
    // A connection is this sandbox's by the credential it came with; its end, and the secrets
    // its requests got, say only its id.
    if (const auto *end = std::get_if<P::End>(&event)) {
        if (m_connections.remove(end->id))
            Q_EMIT networkEvent(event);
        return;
    }
    if (const auto *used = std::get_if<P::SecretsUsed>(&event)) {
        if (m_connections.contains(used->id))
            Q_EMIT networkEvent(event);
        return;
    }
    const auto *ask = std::get_if<P::Ask>(&event);
    const auto *conn = std::get_if<P::Connection>(&event);
    const std::string credential = ask ? ask->credential : conn ? conn->credential : std::string();
    if (m_credential.isEmpty() || credential != m_credential.toStdString())
        return;
    if (conn && conn->outcome == P::Connection::Outcome::Allow)
        m_connections.insert(conn->id);
    Q_EMIT networkEvent(event);
}

void EgressLease::settle(QObject *context, const std::function<void()> &done)
{
    if (m_gateway && !m_credential.isEmpty())
        m_gateway->flush(context, done);
    else
        done();
}

void EgressLease::answer(quint64 connection, bool allow, const QString &widenTo)
{
    if (!m_gateway || m_credential.isEmpty())
        return;
    if (allow && !widenTo.isEmpty())
        m_gateway->widen(m_credential, widenTo);
    m_gateway->answer(connection, allow);
}
