#pragma once

#include "sandboxbackend.h"

#include <QObject>
#include <QSet>
#include <QString>
#include <functional>

// Removes the containers nobody stands for any more: those of instances on this machine that
// died (kill -9, a crash), found by the pid in their labels; and this instance's own that the
// engine created after their create request was given up on (timed out, connection lost), found
// by the name they were given. Also the work volumes that sandboxes removed from outside
// (docker rm -f, without -v) left: the dead instances' at start, this instance's own at the end.
// The service reports every removal in flight, so that shutdown can wait for them.
class Janitor : public QObject
{
    Q_OBJECT
public:
    // `known`: the names of this instance's containers that are accounted for (tracked, being
    // created or removed).
    Janitor(SandboxBackend *backend, const QString &instanceId,
            std::function<QSet<QString>()> known, QObject *parent = nullptr);

    void reapOrphans();
    // A create's outcome is unknown: sweeps follow a few seconds, half a minute and two minutes
    // later (the engine may finish it that late).
    void createOutcomeUnknown();
    // One sweep of this instance's strays now, if any create's outcome was ever unknown.
    void finalSweep();
    void stop() { m_stopped = true; }

    // Engine requests of the janitor still under way.
    int pending() const { return m_pending; }

Q_SIGNALS:
    void orphansReaped(int count);
    void idle();

private:
    void sweepStrays();
    // Another instance's, and that instance no longer runs.
    bool isOrphan(const QJsonObject &labels) const;
    // Removes the leftovers (see SandboxBackend::listLeftovers) with `labels` that `which` picks.
    void removeLeftovers(const QStringList &labels,
                         const std::function<bool(const SandboxBackend::Listed &)> &which);
    void remove(const QString &id);
    void settle();

    SandboxBackend *m_backend;
    QString m_instanceId;
    std::function<QSet<QString>()> m_known;
    int m_pending = 0;
    int m_strayCreates = 0;
    bool m_stopped = false;
};
