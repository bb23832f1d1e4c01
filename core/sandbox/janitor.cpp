#include "janitor.h"

#include "containersapi.h"
#include "containerspec.h"
#include "engineclient.h"
#include "enginereply.h"
#include "sandboxlog.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTimer>
#include <cerrno>
#include <csignal>

Janitor::Janitor(EngineClient *engine, const QString &instanceId,
                 std::function<QSet<QString>()> known, QObject *parent)
    : QObject(parent), m_engine(engine), m_instanceId(instanceId), m_known(std::move(known))
{}

void Janitor::reapOrphans()
{
    EngineReply *list = m_engine->containers().list(
        {QString::fromLatin1(ContainerSpec::kLabelHost) + u'=' + ContainerSpec::hostId()});
    connect(list, &EngineReply::finished, this, [this, list] {
        list->deleteLater();
        int reaped = 0;
        for (const QJsonValue &v : QJsonDocument::fromJson(list->body()).array()) {
            const QJsonObject c = v.toObject();
            const QJsonObject labels = c.value(u"Labels").toObject();
            if (labels.value(QLatin1String(ContainerSpec::kLabelOwner)).toString() == m_instanceId)
                continue;
            bool ok = false;
            const qint64 pid =
                labels.value(QLatin1String(ContainerSpec::kLabelPid)).toString().toLongLong(&ok);
            // Alive (or not ours to judge): leave it. kill(pid, 0) fails with ESRCH only when
            // no such process exists.
            if (!ok || pid <= 0 || ::kill(pid_t(pid), 0) == 0 || errno != ESRCH)
                continue;
            ++reaped;
            remove(c.value(u"Id").toString());
        }
        if (reaped > 0)
            qCInfo(lcSandbox) << "removed" << reaped
                              << "container(s) left behind by instances that no longer run";
        Q_EMIT orphansReaped(reaped);
    });
}

void Janitor::createOutcomeUnknown()
{
    ++m_strayCreates;
    for (const int delayMs : {3000, 30000, 120000})
        QTimer::singleShot(delayMs, this, [this] {
            if (!m_stopped)
                sweepStrays();
        });
}

void Janitor::finalSweep()
{
    if (m_strayCreates > 0)
        sweepStrays();
}

void Janitor::sweepStrays()
{
    EngineReply *list = m_engine->containers().list(
        {QString::fromLatin1(ContainerSpec::kLabelOwner) + u'=' + m_instanceId});
    ++m_pending;
    connect(list, &EngineReply::finished, this, [this, list] {
        list->deleteLater();
        --m_pending;
        const QSet<QString> known = m_known();
        int strays = 0;
        for (const QJsonValue &v : QJsonDocument::fromJson(list->body()).array()) {
            const QJsonObject c = v.toObject();
            // Docker and Podman list names with a leading slash.
            QString name = c.value(u"Names").toArray().at(0).toString();
            if (name.startsWith(u'/'))
                name.remove(0, 1);
            if (known.contains(name))
                continue;
            ++strays;
            remove(c.value(u"Id").toString());
        }
        if (strays > 0)
            qCInfo(lcSandbox) << "removed" << strays
                              << "container(s) the engine created after their request was given up";
        settle();
    });
}

void Janitor::remove(const QString &id)
{
    ++m_pending;
    EngineReply *del = m_engine->containers().remove(id);
    connect(del, &EngineReply::finished, this, [this, del] {
        del->deleteLater();
        --m_pending;
        settle();
    });
}

void Janitor::settle()
{
    if (m_pending == 0)
        Q_EMIT idle();
}
