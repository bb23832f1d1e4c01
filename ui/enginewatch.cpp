#include "enginewatch.h"

#include "imagewording.h"
#include "sandboxservice.h"
#include "sandboxsite.h"

#include <memory>

EngineWatch::EngineWatch(SandboxService *sandbox, QObject *parent)
    : QObject(parent), m_sandbox(sandbox)
{
    // Several engines are watched by the sandbox, which says when one goes or comes back.
    connect(m_sandbox, &SandboxService::sitesChanged, this, &EngineWatch::updateEngines);
    // After the sandbox's own bookkeeping of a run that started or ended (its running counts).
    m_engineUpdate.setSingleShot(true);
    m_engineUpdate.setInterval(0);
    connect(&m_engineUpdate, &QTimer::timeout, this, &EngineWatch::updateEngines);
    updateEngines();
    QTimer::singleShot(0, this, &EngineWatch::refreshImages);
}

void EngineWatch::pollImages()
{
    bool allReady = !m_images.isEmpty();
    for (const SandboxBackend::ImageStatus &s : std::as_const(m_images))
        allReady = allReady && s.state == SandboxBackend::ImageStatus::State::Ready;
    if (!allReady || ++m_imagePolls % 12 == 0)
        refreshImages();
}

void EngineWatch::refreshImages()
{
    if (m_imagesAsking > 0 || m_sandbox->sites().isEmpty())
        return;
    SandboxBackend *backend = m_sandbox->sites().first()->backend();
    const QStringList names = m_sandbox->languages().names();
    auto answers = std::make_shared<QHash<QString, SandboxBackend::ImageStatus>>();
    for (const QString &name : names) {
        const Language *language = m_sandbox->languages().find(name);
        if (!language)
            continue;
        ++m_imagesAsking;
        backend->imageStatus(language->image, this,
                             [this, name, answers](const SandboxBackend::ImageStatus &status) {
                                 answers->insert(name, status);
                                 if (--m_imagesAsking > 0)
                                     return;
                                 m_images = *answers;
                                 Q_EMIT imagesChanged();
                             });
    }
}

QHash<QString, QString> EngineWatch::imageNotes() const
{
    using State = SandboxBackend::ImageStatus::State;
    QHash<QString, QString> notes;
    for (auto it = m_images.cbegin(); it != m_images.cend(); ++it) {
        const Language *language = m_sandbox->languages().find(it.key());
        if (!language || it->state == State::Ready || it->state == State::Unknown)
            continue;
        notes.insert(it.key(),
                     ImageWording::listing(*it, it.key(), language->image, language->buildName));
    }
    return notes;
}

void EngineWatch::refreshEngine()
{
    if (m_sandbox->sites().size() != 1) {
        updateEngines();
        return;
    }
    if (m_asking)
        return;
    m_asking = true;
    // Once the engine is known to answer, a ping tells that it still does: Podman takes about a
    // second to answer /version, which every five seconds would cost it a fifth of a core.
    const bool pingOnly = m_lone.known && m_lone.reachable && !m_lone.version.isEmpty();
    m_sandbox->backend()->health(pingOnly, this, [this, pingOnly](const SandboxBackend::Health &h) {
        m_asking = false;
        EngineStatus s;
        s.known = true;
        if (h.reachable && pingOnly) {
            s = m_lone;
        } else if (h.reachable) {
            s.reachable = true;
            s.version = h.version;
            s.apiVersion = h.apiVersion;
            s.product = h.product;
            s.cpus = h.cpus;
            s.memoryBytes = h.memoryBytes;
            s.runtimes = h.runtimes;
        } else {
            s.error = h.error;
            s.fix = QStringLiteral("Start the engine (sudo systemctl start docker, or dockerd), "
                                   "make sure you may use its socket (the docker group), or "
                                   "choose another engine in Settings → Engines.");
        }
        m_lone = s;
        updateEngines();
    });
}

void EngineWatch::updateEngines()
{
    const QList<SandboxSite *> &sites = m_sandbox->sites();
    QList<EngineStatus> engines;
    for (const SandboxSite *site : sites) {
        EngineStatus s;
        if (sites.size() == 1) {
            s = m_lone;
        } else {
            s.known = site->state() != SandboxSite::State::Unknown;
            s.reachable = site->state() == SandboxSite::State::Up;
            const SandboxBackend::Health &h = site->health();
            s.product = h.product;
            s.version = h.version;
            s.apiVersion = h.apiVersion;
            s.cpus = h.cpus;
            s.memoryBytes = h.memoryBytes;
            s.runtimes = h.runtimes;
            if (site->state() == SandboxSite::State::Down) {
                s.error = site->error();
                s.fix = QStringLiteral("New runs go to the other engines meanwhile; it is asked "
                                       "again every few seconds. Start it, or change the list in "
                                       "Settings → Engines.");
            }
        }
        s.address = site->endpoint();
        s.runtime = site->backend()->runtime();
        s.running = site->running();
        s.capacity = site->capacity();
        s.placed = site->placed();
        engines.append(s);
    }
    if (engines == m_engines)
        return;
    m_engines = engines;
    Q_EMIT enginesChanged(m_engines);
}
