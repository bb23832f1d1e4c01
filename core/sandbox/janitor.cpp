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

namespace {
// Whether `labels` name an instance on this machine that no longer runs. kill(pid, 0) fails
// with ESRCH only when no such process exists; anything else (alive, or not ours to judge)
// leaves the thing alone.
bool ownerIsDead(const QJsonObject &labels)
{
    bool ok = false;
    const qint64 pid =
        labels.value(QLatin1String(SandboxLayout::kLabelPid)).toString().toLongLong(&ok);
    return ok && pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH;
}
} // namespace

void Janitor::reapOrphans()
{
    const QStringList onThisHost{QString::fromLatin1(SandboxLayout::kLabelHost) + u'=' +
                                 SandboxLayout::hostId()};
    m_backend->list(onThisHost, this,
                    [this](const QList<SandboxBackend::Listed> &found, const QString &) {
                        int reaped = 0;
                        for (const SandboxBackend::Listed &c : found) {
                            if (!isOrphan(c.labels))
                                continue;
                            ++reaped;
                            remove(c.id);
                        }
                        if (reaped > 0)
                            qCInfo(lcSandbox) << "removed" << reaped
                                              << "container(s) left behind by instances that no "
                                                 "longer run";
                        Q_EMIT orphansReaped(reaped);
                    });
    // Their work volumes too, when their containers went without them (removed from outside).
    // Named volumes such as the libraries' carry no pid and stay.
    removeLeftovers(onThisHost,
                    [this](const SandboxBackend::Listed &v) { return isOrphan(v.labels); });
}

bool Janitor::isOrphan(const QJsonObject &labels) const
{
    return labels.value(QLatin1String(SandboxLayout::kLabelOwner)).toString() != m_instanceId &&
           ownerIsDead(labels);
}

void Janitor::removeLeftovers(const QStringList &labels,
                              const std::function<bool(const SandboxBackend::Listed &)> &which)
{
    ++m_pending;
    m_backend->listLeftovers(
        labels, this, [this, which](const QList<SandboxBackend::Listed> &found, const QString &) {
            --m_pending;
            int removed = 0;
            for (const SandboxBackend::Listed &v : found) {
                if (!which(v))
                    continue;
                ++removed;
                ++m_pending;
                m_backend->removeLeftover(v.id, this, [this](const QString &) {
                    --m_pending;
                    settle();
                });
            }
            if (removed > 0)
                qCInfo(lcSandbox) << "removed" << removed
                                  << "leftover(s) whose sandbox or server is gone (work volumes, "
                                     "a gateway's networks or Service)";
            settle();
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
    // This instance's sandboxes that were removed from outside (docker rm -f) left their work
    // volumes; the ones still in use go with their containers' removal (v=1).
    removeLeftovers({QString::fromLatin1(SandboxLayout::kLabelOwner) + u'=' + m_instanceId},
                    [](const SandboxBackend::Listed &) { return true; });
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
