#include "janitor.h"

#include "sandboxbackend.h"
#include "sandboxlayout.h"
#include "sandboxlog.h"

#include <QTimer>
#include <cerrno>
#include <csignal>

Janitor::Janitor(SandboxBackend *backend, const QString &instanceId,
                 std::function<QSet<QString>()> known, QObject *parent)
    : QObject(parent), m_backend(backend), m_instanceId(instanceId), m_known(std::move(known))
{}

void Janitor::reapOrphans()
{
    m_backend->list(
        {QString::fromLatin1(SandboxLayout::kLabelHost) + u'=' + SandboxLayout::hostId()}, this,
        [this](const QList<SandboxBackend::Listed> &found, const QString &) {
            int reaped = 0;
            for (const SandboxBackend::Listed &c : found) {
                if (c.labels.value(QLatin1String(SandboxLayout::kLabelOwner)).toString() ==
                    m_instanceId)
                    continue;
                bool ok = false;
                const qint64 pid = c.labels.value(QLatin1String(SandboxLayout::kLabelPid))
                                       .toString()
                                       .toLongLong(&ok);
                // Alive (or not ours to judge): leave it. kill(pid, 0) fails with ESRCH only
                // when no such process exists.
                if (!ok || pid <= 0 || ::kill(pid_t(pid), 0) == 0 || errno != ESRCH)
                    continue;
                ++reaped;
                remove(c.id);
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
    ++m_pending;
    m_backend
        ->list({QString::fromLatin1(SandboxLayout::kLabelOwner) + u'=' + m_instanceId}, this,
               [this](const QList<SandboxBackend::Listed> &found, const QString &) {
                   --m_pending;
                   const QSet<QString> known = m_known();
                   int strays = 0;
                   for (const SandboxBackend::Listed &c : found) {
                       if (known.contains(c.name))
                           continue;
                       ++strays;
                       remove(c.id);
                   }
                   if (strays > 0)
                       qCInfo(lcSandbox)
                           << "removed" << strays
                           << "container(s) the engine created after their request was given up";
                   settle();
               });
}

void Janitor::remove(const QString &id)
{
    ++m_pending;
    m_backend->removeById(id, this, [this](const QString &) {
        --m_pending;
        settle();
    });
}

void Janitor::settle()
{
    if (m_pending == 0)
        Q_EMIT idle();
}
