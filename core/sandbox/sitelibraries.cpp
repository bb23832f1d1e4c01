#include "sitelibraries.h"

#include "execution.h"
#include "executionrequest.h"
#include "language.h"
#include "librarycache.h"
#include "runnetwork.h"
#include "sandboxbackend.h"
#include "sandboxconfig.h"
#include "sandboxsite.h"

#include <QJsonObject>
#include <QPointer>

SiteLibraries::SiteLibraries(const SandboxConfig &config, const SitePlacement &placement, Runs runs,
                             QObject *parent)
    : QObject(parent), m_config(config), m_placement(placement), m_runs(std::move(runs))
{}

LibraryCache *SiteLibraries::makeCache(SandboxSite *site)
{
    return new LibraryCache(
        {[this, site](const Language &language, const QString &volume, const QString &script) {
             return install(site, language, volume, script);
         },
         [site](const QString &volume) { site->backend()->removeVolume(volume); }},
        site);
}

QString SiteLibraries::refusal(const Language &language, const QStringList &libraries) const
{
    const QString preinstalled = language.preinstalled.isEmpty()
                                     ? QStringLiteral("the standard library")
                                     : language.preinstalled.join(QStringLiteral(", "));
    if (!m_config.allowInstall)
        return QStringLiteral(
                   "installing libraries needs network access, and this server was started "
                   "without --allow-network-for-install. Use the preinstalled libraries (%1), "
                   "or ask the operator to restart the server with that flag.")
            .arg(preinstalled);
    if (language.installCommand.isEmpty())
        return QStringLiteral("%1 has no package manager in this sandbox; use the "
                              "preinstalled libraries (%2)")
            .arg(language.name, preinstalled);
    return LibraryCache::validate(libraries);
}

void SiteLibraries::ensure(const Language &language, const QStringList &libraries,
                           const std::function<void(const QString &)> &progress,
                           const std::function<void(const QString &, const QString &)> &done,
                           const RunNetwork &network)
{
    if (m_placement.settlingSite()) {
        m_placement.whenSettled(this, [this, language, libraries, progress, done, network] {
            ensure(language, libraries, progress, done, network);
        });
        return;
    }
    // Libraries live in a volume on one engine: where one already has them, else where a run
    // would go now.
    const QString volume = LibraryCache::volumeName(language, libraries);
    const SpecFor runs = m_runs.specFor(language, network, volume);
    SandboxSite *site = m_placement.place(runs, m_volumeSites.value(volume));
    if (!site)
        site = m_placement.place(runs);
    if (!site) {
        done(QString(), m_placement.noSiteMessage(runs));
        return;
    }
    QPointer<SandboxSite> where(site);
    site->libraries()->ensure(
        language, libraries, progress, [this, where, done](const QString &v, const QString &error) {
            if (error.isEmpty() && where && !m_volumeSites.value(v).contains(where))
                m_volumeSites[v].append(where);
            done(v, error);
        });
}

void SiteLibraries::start(Execution *execution, const Language &language,
                          const QStringList &libraries, const RunNetwork &network)
{
    const QString refused = refusal(language, libraries);
    if (!refused.isEmpty()) {
        execution->failEarly(refused, language.image);
        return;
    }
    QPointer<Execution> guard(execution);
    ensure(
        language, libraries,
        [guard](const QString &message) {
            if (guard)
                guard->reportProgress(message);
        },
        [this, guard, language, network](const QString &volume, const QString &error) {
            if (!guard)
                return;
            if (!error.isEmpty()) {
                guard->fail(error);
                return;
            }
            // Where the volume is (the least loaded of them, if several have it).
            const SpecFor spec = m_runs.specFor(language, network, volume);
            SandboxSite *site = m_placement.place(spec, m_volumeSites.value(volume));
            if (!site) {
                guard->fail(m_placement.noSiteMessage(spec));
                return;
            }
            m_runs.submit(guard, spec, language.image, site);
        },
        network);
}

Execution *SiteLibraries::install(SandboxSite *site, const Language &language,
                                  const QString &volume, const QString &script)
{
    // Package managers download and unpack into /tmp: more room than a run gets.
    SandboxConfig config = m_config;
    config.tmpfsBytes = qMax(config.tmpfsBytes, qint64(1024) * 1024 * 1024);
    Language installer = language;
    installer.preloadCommand.clear();
    installer.compileCommand.clear();
    ExecutionRequest request;
    request.language = language.name;
    request.code = script;
    Execution *execution = m_runs.create(installer, request, m_config.installTimeoutSec);
    const QJsonObject labels{{QStringLiteral("code-sandbox"), QStringLiteral("1")},
                             {QStringLiteral("code-sandbox.libraries"), language.name}};
    // Created with labels first, so the cache can be listed and pruned.
    QPointer<Execution> guard(execution);
    QPointer<SandboxSite> where(site);
    site->backend()->createVolume(
        volume, labels, this, [this, guard, where, language, volume, config](const QString &error) {
            if (!guard)
                return;
            if (!where) {
                guard->fail(QStringLiteral("the engine went away"));
                return;
            }
            if (!error.isEmpty()) {
                guard->fail(QStringLiteral("could not create the library volume: %1").arg(error));
                return;
            }
            m_runs.submit(
                guard,
                [language, config, volume](const SandboxBackend &backend) {
                    return backend.installSpec(language, language.image, config, volume);
                },
                language.image, where);
        });
    return execution;
}
