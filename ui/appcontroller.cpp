#include "appcontroller.h"

#include "journal.h"
#include "mcpsession.h" // StreamableHttpServer::sessionStarted carries one
#include "monitorserver.h"
#include "runcontrol.h"
#include "runlistmodel.h"
#include "runstopreason.h"
#include "sandboxservice.h"
#include "sessionsnapshots.h"
#include "streamablehttpserver.h"
#include "uilog.h"
#include "workspacedecisions.h"

AppController::AppController(SandboxService *sandbox, Journal *journal, HistoryStore *history,
                             MonitorServer *monitor, QObject *parent)
    : QObject(parent), m_sandbox(sandbox), m_monitor(monitor), m_model(new RunListModel(this)),
      m_feed(
          new HistoryFeed(m_model, journal, history, monitor, sandbox->config().instanceId, this)),
      m_engineWatch(new EngineWatch(sandbox, this)),
      m_approvals(new ApprovalQueue(sandbox->config().instanceId, monitor, this)),
      m_manual(new ManualRunner(sandbox, this)),
      m_workspaces(new WorkspaceDecisions(m_model, history, this)),
      m_snapshots(new SessionSnapshots(sandbox->config().instanceId, m_model, monitor, this))
{
    // A run of this process started or ended (the feed has it already): its engine's running
    // count moved.
    connect(journal, &Journal::recorded, this, [this](const JournalEvent &event) {
        if (event.type == JournalEvent::Type::Started || event.type == JournalEvent::Type::Finished)
            m_engineWatch->runsMoved();
    });
    // The parts' signals are this class's: the window and the tests know only AppController.
    connect(m_feed, &HistoryFeed::loaded, this, &AppController::historyLoaded);
    connect(m_feed, &HistoryFeed::searched, this, &AppController::historySearched);
    connect(m_engineWatch, &EngineWatch::enginesChanged, this, &AppController::enginesChanged);
    connect(m_engineWatch, &EngineWatch::imagesChanged, this, &AppController::imagesChanged);
    connect(m_approvals, &ApprovalQueue::approvalRequested, this,
            &AppController::approvalRequested);
    connect(m_approvals, &ApprovalQueue::approvalClosed, this, &AppController::approvalClosed);
    connect(m_approvals, &ApprovalQueue::policiesChanged, this, &AppController::policiesChanged);
    connect(m_manual, &ManualRunner::runningChanged, this, &AppController::manualRunningChanged);
    if (m_monitor) {
        connect(m_monitor, &MonitorServer::instanceConnected, this,
                [this] { Q_EMIT serverStatusChanged(serverStatus()); });
        connect(m_monitor, &MonitorServer::instanceDisconnected, this,
                [this](const QString &instance) {
                    m_model->markInstanceGone(instance);
                    m_approvals->instanceGone(instance);
                    Q_EMIT serverStatusChanged(serverStatus());
                });
    }
    // The engine can stop or come back at any time; the HTTP sessions come and go.
    m_poll.setInterval(5000);
    connect(&m_poll, &QTimer::timeout, this, [this] {
        m_engineWatch->refreshEngine();
        Q_EMIT serverStatusChanged(serverStatus());
        m_engineWatch->pollImages();
    });
    m_poll.start();
}

AppController::~AppController() = default;

void AppController::setSessions(SessionManager *sessions)
{
    m_snapshots->setSessions(sessions);
}

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
    return m_manual->run(language, code, timeoutSec);
}

void AppController::stopManual()
{
    m_manual->stop();
}

void AppController::loadHistory(int limit)
{
    m_feed->load(limit);
}

void AppController::searchHistory(const QString &text, int limit)
{
    m_feed->search(text, limit);
}

void AppController::pruneHistory(int retentionDays)
{
    m_feed->prune(retentionDays);
}

void AppController::refreshEngine()
{
    m_engineWatch->refreshEngine();
}

void AppController::refreshImages()
{
    m_engineWatch->refreshImages();
}

QHash<QString, QString> AppController::imageNotes() const
{
    return m_engineWatch->imageNotes();
}

bool AppController::isOwn(const QString &instanceId) const
{
    return instanceId == m_sandbox->config().instanceId;
}

void AppController::setRunGate(RunGate *gate)
{
    m_approvals->setRunGate(gate);
}

void AppController::setRunControl(RunControl *control)
{
    m_runControl = control;
}

void AppController::setPolicies(const AssistantPolicies &policies)
{
    m_approvals->setPolicies(policies);
}

AssistantPolicies::HostAdded AppController::allowHost(const QString &client, const QString &pattern)
{
    return m_approvals->allowHost(client, pattern);
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

bool AppController::answerApproval(const QString &id, RunApprover::Answer answer,
                                   const QString &reason)
{
    return m_approvals->answer(id, answer, reason);
}
