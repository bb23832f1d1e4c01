#include "egresslease.h"

#include "egressgateway.h"

#include <QJsonObject>

EgressLease::EgressLease(EgressGateway *gateway, const QStringList &patterns, bool ask,
                         const QMap<QString, QString> &labels, QObject *parent)
    : QObject(parent), m_gateway(gateway), m_patterns(patterns), m_ask(ask), m_labels(labels)
{}

EgressLease::~EgressLease()
{
    revoke();
}

void EgressLease::take(
    QObject *context,
    const std::function<void(const ContainerSpec::Egress &, const QString &)> &done)
{
    if (!m_gateway) {
        done({}, QStringLiteral("no egress gateway"));
        return;
    }
    m_waiting = true;
    QPointer<QObject> guard(context);
    m_gateway->whenReady(
        m_labels, this,
        [this, guard, done](const ContainerSpec::Egress &where, const QString &error) {
            m_waiting = false;
            if (!guard)
                return;
            if (!error.isEmpty() || !m_gateway) {
                done({}, error.isEmpty() ? QStringLiteral("no egress gateway") : error);
                return;
            }
            ContainerSpec::Egress egress = where;
            egress.credential = m_credential = m_gateway->grant(m_patterns, m_ask);
            connect(m_gateway, &EgressGateway::event, this, &EgressLease::onEvent,
                    Qt::UniqueConnection);
            done(egress, QString());
        });
}

void EgressLease::revoke()
{
    if (m_gateway && !m_credential.isEmpty())
        m_gateway->revoke(m_credential);
    m_credential.clear();
}

void EgressLease::onEvent(const QJsonObject &event)
{
    // A connection is this sandbox's by the credential it came with; its end says only its id.
    const qint64 id = qint64(event.value(u"id").toDouble());
    if (event.value(u"ev").toString() == u"end") {
        if (m_connections.remove(id))
            Q_EMIT networkEvent(event);
        return;
    }
    if (m_credential.isEmpty() || event.value(u"cred").toString() != m_credential)
        return;
    if (event.value(u"ev").toString() == u"conn" && event.value(u"verdict").toString() == u"allow")
        m_connections.insert(id);
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
