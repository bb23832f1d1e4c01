#pragma once

#include "siteplacement.h"

#include <QHash>
#include <QObject>
#include <QStringList>
#include <functional>

class Execution;
class LibraryCache;
class SandboxSite;
struct ExecutionRequest;
struct Language;
struct RunNetwork;
struct SandboxConfig;

// Libraries across the service's sites. Each site's LibraryCache is the cache on one engine
// (a set installed once, one install of it at a time); this is the layer above it: whether a
// language's libraries may be installed here at all, which engine installs them (one that has
// them already, else where a run would go now), which engines hold each volume (a volume is on
// one engine, so the runs and sessions that mount it go there), and the install sandbox (its
// labelled volume, its larger /tmp, its spec).
class SiteLibraries : public QObject
{
    Q_OBJECT
public:
    using SpecFor = SitePlacement::SpecFor;
    // What it needs of the service's executions, and no more. An execution is the service's from
    // its creation to its end (the queue, shutdown cancelling it, the preloads it teaches), so
    // installs and runs with libraries are made and submitted there, not here: this class decides
    // what is installed and where, never how a run goes.
    struct Runs
    {
        // What a run of `language` with `network` that mounts `volume` is on each backend
        // (SandboxService::runSpecFor).
        std::function<SpecFor(const Language &language, const RunNetwork &network,
                              const QString &volume)>
            specFor;
        // A new execution, tracked until it finishes (SandboxService::create).
        std::function<Execution *(const Language &language, const ExecutionRequest &request,
                                  int timeoutSec)>
            create;
        // Runs or queues it on `site` (SandboxService::submit).
        std::function<void(Execution *execution, const SpecFor &spec, const QString &image,
                           SandboxSite *site)>
            submit;
    };

    // `config` and `placement` are the service's, and outlive this (its child).
    SiteLibraries(const SandboxConfig &config, const SitePlacement &placement, Runs runs,
                  QObject *parent = nullptr);

    // The cache on `site`'s engine, which installs through install().
    LibraryCache *makeCache(SandboxSite *site);
    // Why `libraries` cannot be installed for `language` here ("" when they can).
    QString refusal(const Language &language, const QStringList &libraries) const;
    // Installs (or finds cached) `libraries`; `done` gets the volume to mount, or an error. On
    // an engine that can run the runs that mount it (with `network`: theirs, which holds what
    // their runtime must be).
    void ensure(const Language &language, const QStringList &libraries,
                const std::function<void(const QString &)> &progress,
                const std::function<void(const QString &, const QString &)> &done,
                const RunNetwork &network);
    // Takes a new run whose request names `libraries` on from there: refused at once if they
    // cannot be installed, else submitted, once they are, where their volume is.
    void start(Execution *execution, const Language &language, const QStringList &libraries,
               const RunNetwork &network);
    // Runs `script` with sh in an install container on `site` that writes into `volume` there
    // (see LibraryCache).
    Execution *install(SandboxSite *site, const Language &language, const QString &volume,
                       const QString &script);
    // The sites `volume` was installed on (none known: empty).
    QList<SandboxSite *> sitesOf(const QString &volume) const
    {
        return m_volumeSites.value(volume);
    }

private:
    const SandboxConfig &m_config;
    const SitePlacement &m_placement;
    Runs m_runs;
    // Where each library volume was installed (a volume is on one engine).
    QHash<QString, QList<SandboxSite *>> m_volumeSites;
};
