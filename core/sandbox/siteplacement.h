#pragma once

#include "sandboxspec.h"

#include <QList>
#include <QString>
#include <functional>

class QObject;
class SandboxBackend;
class SandboxSite;

// Which of the service's sites a new sandbox goes to, and why none can take it. It only reads
// the sites (their state, load, warm sandboxes, what each backend makes of a spec): making,
// queueing and running sandboxes stay with SandboxService, so that placement can change without
// touching an execution's way through.
class SitePlacement
{
public:
    // A sandbox as each backend would make it, or why that backend cannot (SandboxBackend::runSpec,
    // installSpec): placement asks every candidate, so it needs the spec per backend, not one.
    using SpecFor = std::function<SandboxSpec::Result(const SandboxBackend &)>;

    // `sites`: the service's, read at every call (they are all made before the first one).
    explicit SitePlacement(const QList<SandboxSite *> &sites);

    // The usable site a new sandbox of `spec` goes to, among `among` (all sites when empty); null
    // when none answers or every one that answers refuses the spec.
    SandboxSite *place(const SpecFor &spec, const QList<SandboxSite *> &among = {}) const;
    // Why no site can take a run: each engine and what is wrong with it.
    // With `spec`: the engines that answer but refuse it, and why.
    QString noSiteMessage(const SpecFor &spec = {}) const;
    // A usable site whose backend is still learning what it adds to specs; null when none.
    SandboxSite *settlingSite() const;
    // Calls `f` once no usable engine is still learning what it adds to specs (its runtimes,
    // just after start): at once nearly always. Never after `context` is gone.
    void whenSettled(QObject *context, const std::function<void()> &f) const;

private:
    const QList<SandboxSite *> &m_sites;
};
