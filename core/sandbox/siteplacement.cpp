#include "siteplacement.h"

#include "containerpool.h"
#include "sandboxbackend.h"
#include "sandboxsite.h"

#include <QObject>

SitePlacement::SitePlacement(const QList<SandboxSite *> &sites) : m_sites(sites) {}

SandboxSite *SitePlacement::place(const SpecFor &spec, const QList<SandboxSite *> &among) const
{
    const QList<SandboxSite *> &candidates = among.isEmpty() ? m_sites : among;
    // One engine takes every run, answering or not: the run then says what is wrong with it.
    if (m_sites.size() == 1)
        return candidates.isEmpty() ? nullptr : candidates.first();
    SandboxSite *best = nullptr;
    int bestWarm = 0;
    for (SandboxSite *site : candidates) {
        if (!site->isUsable())
            continue;
        // An engine that cannot run the spec (no runtime the run requires, a cluster and a
        // library volume) is not a place for it.
        const SandboxSpec::Result made = spec(*site->backend());
        if (!made.ok())
            continue;
        const int warm = site->pool() && made.ok() ? site->pool()->warmCount(*made.spec) : 0;
        if (!best) {
            best = site;
            bestWarm = warm;
            continue;
        }
        // Lowest load first; then a warm sandbox; then whoever was given fewest (spreads a burst
        // evenly while loads are equal).
        const double a = site->load();
        const double b = best->load();
        if (a < b - 1e-9 ||
            (qAbs(a - b) <= 1e-9 &&
             (warm > bestWarm || (warm == bestWarm && site->placed() < best->placed())))) {
            best = site;
            bestWarm = warm;
        }
    }
    return best;
}

QString SitePlacement::noSiteMessage(const SpecFor &spec) const
{
    // Engines that answer but cannot run it: their reasons (one engine's is the run's error).
    QStringList refused;
    if (spec)
        for (SandboxSite *site : m_sites) {
            if (!site->isUsable())
                continue;
            const SandboxSpec::Result made = spec(*site->backend());
            if (!made.ok())
                refused.append(made.error);
        }
    if (!refused.isEmpty())
        return QStringLiteral("no engine can run this: %1").arg(refused.join(QStringLiteral("; ")));
    QStringList why;
    for (SandboxSite *site : m_sites)
        why.append(QStringLiteral("%1: %2").arg(site->endpoint(), site->error()));
    return QStringLiteral("no container engine answers, so nothing can run now (%1); calls run "
                          "again as soon as one of them is back")
        .arg(why.join(QStringLiteral("; ")));
}

SandboxSite *SitePlacement::settlingSite() const
{
    for (SandboxSite *site : std::as_const(m_sites))
        if (site->isUsable() && site->backend()->isSettling())
            return site;
    return nullptr;
}

void SitePlacement::whenSettled(QObject *context, const std::function<void()> &f) const
{
    if (SandboxSite *site = settlingSite()) {
        // Asked again after this one: another may still be learning.
        QObject::connect(
            site->backend(), &SandboxBackend::settled, context,
            [this, context, f] { whenSettled(context, f); }, Qt::SingleShotConnection);
        return;
    }
    f();
}
