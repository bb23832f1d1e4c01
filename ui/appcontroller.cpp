#include "appcontroller.h"

#include "appsettings.h"
#include "execution.h"
#include "historystore.h"
#include "journal.h"
#include "mcpsession.h"
#include "monitorserver.h"
#include "runcontrol.h"
#include "rungate.h"
#include "runlistmodel.h"
#include "runstopreason.h"
#include "sandboxbackend.h"
#include "sandboxservice.h"
#include "sandboxsite.h"
#include "streamablehttpserver.h"
#include "uilog.h"
#include "windowapprover.h"

#include <QJsonArray>
#include <memory>

AppController::AppController(SandboxService *sandbox, Journal *journal, HistoryStore *history,
                             MonitorServer *monitor, QObject *parent)
    : QObject(parent), m_sandbox(sandbox), m_journal(journal), m_history(history),
      m_monitor(monitor), m_model(new RunListModel(this))
{
    connect(journal, &Journal::recorded, this, [this](const JournalEvent &event) {
        onEvent(event);
        // A run of this process started or ended: its engine's running count moved.
        if (event.type == JournalEvent::Type::Started || event.type == JournalEvent::Type::Finished)
            m_engineUpdate.start();
    });
    if (m_history) {
        m_model->setLoader(
            [this](const QString &id) -> std::optional<RunRecord> { return m_history->load(id); },
            [this](const QString &id) { return m_history->contains(id); });
    }
    if (m_monitor) {
        connect(m_monitor, &MonitorServer::eventReceived, this, &AppController::onEvent);
        connect(m_monitor, &MonitorServer::approvalRequested, this, &AppController::addApproval);
        connect(m_monitor, &MonitorServer::approvalWithdrawn, this,
                [this](const QString &instance, const QString &id, const QString &why) {
                    const qsizetype i = approvalIndex(id);
                    if (i >= 0 && m_approvals.at(i).instanceId == instance)
                        closeApproval(id, why);
                });
        connect(m_monitor, &MonitorServer::instanceConnected, this,
                [this] { Q_EMIT serverStatusChanged(serverStatus()); });
        connect(m_monitor, &MonitorServer::instanceDisconnected, this,
                [this](const QString &instance) {
                    m_model->markInstanceGone(instance);
                    // Its questions went with it (it denies them itself when the window goes).
                    const QList<ApprovalRequest> open = m_approvals;
                    for (const ApprovalRequest &r : open) {
                        if (r.instanceId == instance)
                            closeApproval(r.id, QStringLiteral("its server ended"));
                    }
                    Q_EMIT serverStatusChanged(serverStatus());
                });
    }
    // Several engines are watched by the sandbox, which says when one goes or comes back.
    connect(m_sandbox, &SandboxService::sitesChanged, this, &AppController::updateEngines);
    // After the sandbox's own bookkeeping of a run that started or ended (its running counts).
    m_engineUpdate.setSingleShot(true);
    m_engineUpdate.setInterval(0);
    connect(&m_engineUpdate, &QTimer::timeout, this, &AppController::updateEngines);
    updateEngines();
    // The engine can stop or come back at any time; the HTTP sessions come and go.
    m_poll.setInterval(5000);
    connect(&m_poll, &QTimer::timeout, this, [this] {
        refreshEngine();
        Q_EMIT serverStatusChanged(serverStatus());
        // An image on its way is worth a look each time; ready ones only now and then (they
        // are rarely removed).
        bool allReady = !m_images.isEmpty();
        for (const SandboxBackend::ImageStatus &s : std::as_const(m_images))
            allReady = allReady && s.state == SandboxBackend::ImageStatus::State::Ready;
        if (!allReady || ++m_imagePolls % 12 == 0)
            refreshImages();
    });
    m_poll.start();
    QTimer::singleShot(0, this, &AppController::refreshImages);
}

void AppController::refreshImages()
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

QHash<QString, QString> AppController::imageNotes() const
{
    using State = SandboxBackend::ImageStatus::State;
    QHash<QString, QString> notes;
    for (auto it = m_images.cbegin(); it != m_images.cend(); ++it) {
        const Language *language = m_sandbox->languages().find(it.key());
        if (!language || it->state == State::Ready || it->state == State::Unknown)
            continue;
        notes.insert(it.key(),
                     it->state == State::Missing
                         ? QStringLiteral("the image %1 is not on the engine; build it with "
                                          "containers/build-images.sh %2 (Code Sandbox source "
                                          "tree)")
                               .arg(language->image, language->buildName)
                         : it->describe(it.key()));
    }
    return notes;
}

AppController::~AppController() = default;

QStringList AppController::languages() const
{
    return m_sandbox->languages().names();
}

int AppController::defaultTimeoutSec() const
{
    return m_sandbox->config().defaultTimeoutSec;
}

void AppController::setHttpServer(StreamableHttpServer *server, const ServerStatus &status)
{
    m_http = server;
    m_server = status;
    if (m_http) {
        connect(m_http, &StreamableHttpServer::sessionStarted, this,
                [this] { Q_EMIT serverStatusChanged(serverStatus()); });
    }
    Q_EMIT serverStatusChanged(serverStatus());
}

ServerStatus AppController::serverStatus() const
{
    ServerStatus s = m_server;
    s.httpSessions = m_http ? m_http->sessionCount() : 0;
    s.instances = m_monitor ? m_monitor->instanceCount() : 0;
    return s;
}

QString AppController::runManual(const QString &language, const QString &code, int timeoutSec)
{
    if (m_manual)
        return QString();
    ExecutionRequest request(language, code, timeoutSec);
    request.source = QStringLiteral("manual");
    request.tool = QStringLiteral("manual");
    Execution *execution = m_sandbox->execute(request);
    m_manual = execution;
    connect(execution, &Execution::finished, this, [this] {
        m_manual.clear();
        Q_EMIT manualRunningChanged(false);
    });
    Q_EMIT manualRunningChanged(true);
    return execution->runId();
}

void AppController::stopManual()
{
    if (m_manual)
        m_manual->cancel();
}

void AppController::loadHistory(int limit)
{
    if (!m_history)
        return;
    const QString path = m_history->path();
    m_history->recent(limit, QString(), this, [this, path](const QList<RunRecord> &runs) {
        qCInfo(lcUi).noquote() << "history:" << runs.size() << "runs loaded from" << path;
        m_model->addHistory(runs);
        Q_EMIT historyLoaded(int(runs.size()));
    });
}

void AppController::searchHistory(const QString &text, int limit)
{
    const QString wanted = text.trimmed();
    if (!m_history || wanted.isEmpty())
        return;
    const quint64 search = ++m_search;
    m_history->recent(limit, wanted, this, [this, search, wanted](const QList<RunRecord> &runs) {
        // Typing makes searches faster than a big history answers them: only the last counts.
        if (search != m_search)
            return;
        m_model->addHistory(runs, true);
        Q_EMIT historySearched(wanted, int(runs.size()));
    });
}

void AppController::pruneHistory(int retentionDays)
{
    if (!m_history)
        return;
    m_history->setRetentionDays(qMax(0, retentionDays));
    qCInfo(lcUi) << "history: keeping runs for"
                 << (retentionDays > 0 ? QString::number(retentionDays) + QStringLiteral(" days")
                                       : QStringLiteral("ever"))
                 << "and" << m_history->retention().maxBytes / (1024 * 1024) << "MiB at most";
}

void AppController::refreshEngine()
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

void AppController::updateEngines()
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
            if (site->state() == SandboxSite::State::Down) {
                s.error = site->error();
                s.fix = QStringLiteral("New runs go to the other engines meanwhile; it is asked "
                                       "again every few seconds. Start it, or change the list in "
                                       "Settings → Engines.");
            }
        }
        s.address = site->endpoint();
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

void AppController::onEvent(const JournalEvent &event)
{
    const bool remote = event.run.instanceId != m_sandbox->config().instanceId;
    // A headless instance's Started carries the id alone: its record says whose it is.
    if (event.type == JournalEvent::Type::Started) {
        const RunRecord *known = m_model->run(event.run.id);
        if (known && !isOwn(known->instanceId))
            qCInfo(lcUi).noquote() << "run" << event.run.id.left(8) << "of instance pid"
                                   << known->instancePid << "(" << known->source << ")"
                                   << "started";
    }
    if (remote && event.type == JournalEvent::Type::Finished)
        qCInfo(lcUi).noquote() << "run" << event.run.id.left(8) << "of instance pid"
                               << event.run.instancePid << "(" << event.run.source << ")"
                               << RunRecord::statusName(event.run.status);
    m_model->apply(event);
}

bool AppController::isOwn(const QString &instanceId) const
{
    return instanceId == m_sandbox->config().instanceId;
}

void AppController::setRunGate(RunGate *gate)
{
    m_gate = gate;
    if (!gate)
        return;
    if (!m_approver) {
        m_approver = new WindowApprover(this);
        connect(m_approver, &WindowApprover::asked, this, &AppController::addApproval);
        connect(m_approver, &WindowApprover::withdrawn, this, &AppController::closeApproval);
    }
    gate->setApprover(m_approver);
    // A local run approved "always": the gate changed its own policies; keep and save them.
    connect(gate, &RunGate::policiesChanged, this, [this](const AssistantPolicies &policies) {
        AppSettings::savePolicies(policies);
        Q_EMIT policiesChanged(policies);
    });
}

void AppController::setRunControl(RunControl *control)
{
    m_runControl = control;
}

void AppController::setPolicies(const AssistantPolicies &policies)
{
    if (m_gate)
        m_gate->setPolicies(policies);
}

bool AppController::canStop(const QString &runId) const
{
    const RunRecord *run = m_model->run(runId);
    if (!run || run->isFinished())
        return false;
    if (isOwn(run->instanceId))
        return m_runControl != nullptr;
    return m_monitor && m_monitor->hasInstance(run->instanceId);
}

bool AppController::stopRun(const QString &runId)
{
    if (!canStop(runId))
        return false;
    const RunRecord *run = m_model->run(runId);
    qCInfo(lcUi).noquote() << "stopping run" << runId.left(8) << "from the window";
    if (isOwn(run->instanceId))
        return m_runControl->stop(runId, RunStopReason::fromWindow());
    return m_monitor->requestStop(run->instanceId, runId);
}

QList<ApprovalRequest> AppController::pendingApprovals() const
{
    return m_approvals;
}

qsizetype AppController::approvalIndex(const QString &id) const
{
    for (qsizetype i = 0; i < m_approvals.size(); ++i) {
        if (m_approvals.at(i).id == id)
            return i;
    }
    return -1;
}

bool AppController::deliver(const ApprovalRequest &request, RunApprover::Answer answer,
                            const QString &reason)
{
    if (isOwn(request.instanceId)) {
        if (!m_approver)
            return false;
        m_approver->deliver(request.id, answer, reason);
        return true;
    }
    return m_monitor && m_monitor->answerApproval(request.instanceId, request.id,
                                                  RunApprover::answerName(answer), reason);
}

void AppController::addApproval(const ApprovalRequest &request)
{
    if (approvalIndex(request.id) >= 0)
        return;
    // Bounded like everything a headless instance can send: the oldest stay, as they expire first.
    if (m_approvals.size() >= kMaxApprovals) {
        qCWarning(lcUi) << "too many approvals waiting; one was not shown";
        deliver(request, RunApprover::Answer::Deny,
                QStringLiteral("too many runs are waiting for approval"));
        return;
    }
    m_approvals.append(request);
    Q_EMIT approvalRequested(request);
}

void AppController::closeApproval(const QString &id, const QString &why)
{
    const qsizetype i = approvalIndex(id);
    if (i < 0)
        return;
    m_approvals.removeAt(i);
    Q_EMIT approvalClosed(id, why);
}

bool AppController::answerApproval(const QString &id, RunApprover::Answer answer,
                                   const QString &reason)
{
    const qsizetype i = approvalIndex(id);
    if (i < 0)
        return false;
    const ApprovalRequest request = m_approvals.at(i);
    if (answer == RunApprover::Answer::AllowAlways && request.client.trimmed().isEmpty()) {
        // A rule for no name would be the default, everyone's: this run only (the dialog does
        // not offer it; the asking gate, ours or a headless one, must not hear "always" either).
        qCWarning(lcUi) << "\"always\" for an assistant without a name is allowed once";
        answer = RunApprover::Answer::AllowOnce;
    }
    qCInfo(lcUi).noquote() << "approval" << id.left(8) << "of" << request.client << ":"
                           << RunApprover::answerName(answer);
    // "Always" for a run of this window: its gate changes its own policies, and policiesChanged
    // saves them. For a headless instance's, this window's policies change here (and the file
    // it reads with them).
    if (answer == RunApprover::Answer::AllowAlways && !isOwn(request.instanceId)) {
        AssistantPolicies policies = m_gate ? m_gate->policies() : AppSettings::loadPolicies();
        policies.allowAlways(request.client);
        if (m_gate)
            m_gate->setPolicies(policies);
        AppSettings::savePolicies(policies);
        Q_EMIT policiesChanged(policies);
    }
    const bool delivered = deliver(request, answer, reason);
    closeApproval(id, QString());
    return delivered;
}
