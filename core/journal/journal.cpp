#include "journal.h"

#include "execution.h"
#include "historystore.h"
#include "journallog.h"
#include "monitorpublisher.h"
#include "sandboxservice.h"
#include "sandboxsession.h"
#include "sessionmanager.h"

#include <QUuid>
#include <unistd.h>

Journal::Journal(SandboxService *sandbox, QObject *parent) : QObject(parent), m_sandbox(sandbox)
{
    qRegisterMetaType<JournalEvent>();
    connect(sandbox, &SandboxService::executionCreated, this, &Journal::track);
}

void Journal::setPublisher(MonitorPublisher *publisher)
{
    m_publisher = publisher;
    // A window that opens while runs are going gets them from their start.
    if (m_publisher)
        m_publisher->setGreeting([this] { return inFlight(); });
}

QList<RunRecord> Journal::inFlight() const
{
    return m_inFlight.values();
}

void Journal::track(Execution *execution)
{
    const RunRecord run = queuedRecord(execution);
    const QString id = run.id;
    m_inFlight.insert(id, run);
    publish({JournalEvent::Type::Created, run, 1, {}, {}});

    // Each handler finds the run by id: one that is no longer in flight is told no more.
    connect(execution, &Execution::started, this,
            [this, id, execution] { runStarted(id, execution); });
    connect(execution, &Execution::output, this,
            [this, id](int stream, const QByteArray &bytes) { runOutput(id, stream, bytes); });
    connect(execution, &Execution::usageSampled, this,
            [this, id](qint64 elapsedMs, qint64 memoryBytes, qint64 cpuTimeMs) {
                runSampled(id, {elapsedMs, memoryBytes, cpuTimeMs});
            });
    connect(execution, &Execution::networkAttempt, this,
            [this, id](const NetworkAttempt &attempt) { runConnected(id, attempt); });
    connect(execution, &Execution::finished, this,
            [this, id](const ExecutionResult &result) { runFinished(id, result); });
}

RunRecord Journal::queuedRecord(const Execution *execution) const
{
    const SandboxConfig &config = m_sandbox->config();
    const ExecutionRequest &request = execution->request();
    RunRecord run;
    run.id = execution->runId();
    run.instanceId = config.instanceId;
    run.instancePid = ::getpid();
    run.source = request.source.isEmpty() ? QStringLiteral("unknown") : request.source;
    run.tool = request.tool;
    run.claimedName = request.claimedName;
    run.identity = request.identity;
    if (!request.identityNote.isEmpty())
        run.notes.append(request.identityNote);
    run.sessionId = request.sessionId;
    run.language = execution->result().language;
    run.code = request.code;
    run.status = RunRecord::Status::Queued;
    run.createdAt = QDateTime::currentDateTimeUtc();
    run.timeoutSec = execution->result().timeoutSec;
    // Known here for a session's run (its container's engine); other runs learn it at start.
    run.engine = execution->engine();
    run.memoryBytes = config.memoryBytes;
    run.cpus = config.cpus;
    run.pidsLimit = config.pidsLimit;
    // As decided for the run (SandboxService::execute gives every run one): allow-listed hosts
    // are network.
    const RunNetwork network = request.network.value_or(RunNetwork());
    run.network = network.reachesNetwork();
    for (const auto &[name, value] : config.passThroughEnv) {
        run.envNames.append(name);
        run.envValues.append({name, value});
    }
    // Names and hosts only: the value stays with the sandbox service and its gateway.
    for (const SandboxSpec::Secret &secret : network.secrets)
        run.secrets.append({secret.name, secret.hosts});
    return run;
}

void Journal::runStarted(const QString &id, const Execution *execution)
{
    auto it = m_inFlight.find(id);
    if (it == m_inFlight.end())
        return;
    it->status = RunRecord::Status::Running;
    // Placed when it left the queue, just before it started.
    it->engine = execution->engine();
    it->runtime = execution->runtime();
    JournalEvent e;
    e.type = JournalEvent::Type::Started;
    e.run.id = id;
    e.run.status = RunRecord::Status::Running;
    e.run.engine = it->engine;
    e.run.runtime = it->runtime;
    publish(e);
}

void Journal::runOutput(const QString &id, int stream, const QByteArray &bytes)
{
    auto it = m_inFlight.find(id);
    if (it == m_inFlight.end())
        return;
    it->appendOutput(stream, bytes);
    JournalEvent e;
    e.type = JournalEvent::Type::Output;
    e.run.id = id;
    e.stream = stream;
    e.data = bytes;
    publish(e);
}

void Journal::runSampled(const QString &id, const UsageSample &sample)
{
    // Samples only pass through: the chart is for watching a run, the history keeps its peak
    // memory and CPU time from the result.
    if (!m_inFlight.contains(id))
        return;
    JournalEvent e;
    e.type = JournalEvent::Type::Sample;
    e.run.id = id;
    e.sample = sample;
    publish(e);
}

void Journal::runConnected(const QString &id, const NetworkAttempt &attempt)
{
    // Live, for the window's Network tab; the history gets all of them with the finished
    // record (the result's `network`).
    if (!m_inFlight.contains(id))
        return;
    JournalEvent e;
    e.type = JournalEvent::Type::Connection;
    e.run.id = id;
    e.connection = attempt;
    publish(e);
}

void Journal::runFinished(const QString &id, const ExecutionResult &result)
{
    RunRecord run = m_inFlight.take(id);
    if (run.id.isEmpty())
        return;
    run.applyResult(result);
    // The output streamed in chunks is what the window showed; the result holds the same
    // bytes, but only per stream, so the interleaving is kept from the chunks.
    if (run.output.isEmpty() && (!result.stdoutData.isEmpty() || !result.stderrData.isEmpty())) {
        run.appendOutput(1, result.stdoutData);
        run.appendOutput(2, result.stderrData);
    }
    qCInfo(lcJournal).noquote() << "run" << id.left(8) << run.language
                                << RunRecord::statusName(run.status) << "in" << run.durationMs
                                << "ms, from" << run.source;
    publish({JournalEvent::Type::Finished, run, 1, {}, {}});
    // Queued for the history's worker thread: a write that waits on another process's lock
    // or a slow disk holds up nothing here. A run that cannot be queued is logged there.
    if (m_history)
        m_history->save(run);
}

void Journal::watchSessions(SessionManager *sessions)
{
    const auto tell = [this](const QString &id, const QString &language, const QString &state) {
        JournalEvent e;
        e.type = JournalEvent::Type::Session;
        e.run.sessionId = id;
        e.run.language = language;
        e.sessionState = state;
        publish(e);
    };
    connect(sessions, &SessionManager::sessionCreated, this, [this, tell](SandboxSession *session) {
        const QString id = session->id();
        const QString language = session->language().name;
        tell(id, language, SandboxSession::stateName(session->state()));
        // The journal as context: it may go before the sessions do (at exit).
        QObject::connect(session, &SandboxSession::stateChanged, this,
                         [tell, id, language, session](SandboxSession::State state) {
                             const bool expired = state == SandboxSession::State::Ended &&
                                                  session->endReason().startsWith(u"expired");
                             tell(id, language,
                                  expired ? QStringLiteral("expired")
                                          : SandboxSession::stateName(state));
                         });
    });
}

void Journal::publish(const JournalEvent &event)
{
    Q_EMIT recorded(event);
    if (m_publisher)
        m_publisher->send(event);
}
