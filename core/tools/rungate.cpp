#include "rungate.h"

#include "credentialstore.h"
#include "execution.h"
#include "sandboxconfig.h"
#include "toolcall.h"
#include "toolslog.h"

#include <QTimer>
#include <QUuid>

struct RunGate::Waiting
{
    QPointer<ToolCall> call;
    ExecutionRequest request;
    Admitted admitted;
    // A held connection's question instead of a run's: its answer goes to each connection of
    // the run to that host and port held meanwhile (one question for them all), once.
    QList<HostVerdict> hostVerdicts;
    ApprovalRequest question;
    bool allowed = false;
    QString widenTo;
    QMetaObject::Connection runEnded;
    QString client;
    QTimer deadline;
    QTimer progress;
    QMetaObject::Connection cancelled;
    QMetaObject::Connection destroyed;
};

RunGate::RunGate(const SandboxConfig &config, QObject *parent) : QObject(parent), m_config(config)
{}

RunGate::~RunGate()
{
    qDeleteAll(m_waiting);
}

void RunGate::setPolicies(const AssistantPolicies &policies)
{
    m_policies = policies;
}

void RunGate::setApprover(RunApprover *approver)
{
    if (m_approver)
        disconnect(m_approver, nullptr, this, nullptr);
    m_approver = approver;
    if (approver) {
        connect(approver, &RunApprover::answered, this, &RunGate::onAnswered);
        connect(approver, &RunApprover::lost, this, &RunGate::onLost);
    }
}

namespace {
// What a session's run is checked with: the hosts its session reaches, as a call that asked for
// them (none: no network; the open network: it did not say).
std::optional<QStringList> sessionHosts(const RunNetwork &network)
{
    switch (network.mode) {
    case SandboxSpec::Network::None:
        return QStringList();
    case SandboxSpec::Network::Open:
        return std::nullopt;
    case SandboxSpec::Network::Allowlist:
        break;
    }
    return network.hosts;
}
} // namespace

void RunGate::admit(ToolCall *call, const ExecutionRequest &asked,
                    const std::optional<QStringList> &askedHosts, const Admitted &admitted)
{
    const AssistantPolicy &policy = policyFor(call);
    ExecutionRequest request = asked;
    // A session's run has its session's network already: the policy still checks it (a policy
    // may have changed since), but nothing decides it again.
    std::optional<QStringList> hosts =
        request.network ? sessionHosts(*request.network) : askedHosts;
    QString broken =
        policy.check(request.language, &request.timeoutSec, request.libraries, m_config, &hosts);
    if (broken.isEmpty())
        broken = policy.checkWorkspaces(request.workspaces);
    if (!broken.isEmpty()) {
        qCInfo(lcTools).noquote() << "refused a call of" << call->assistant() << "by policy";
        admitted(request, broken);
        return;
    }
    if (!request.network)
        request.network = RunNetwork::decide(m_config, hosts, &policy);
    switch (policy.action) {
    case AssistantPolicy::Action::Run:
        admitted(request, QString());
        return;
    case AssistantPolicy::Action::Refuse:
        admitted(request, refusedText(policy));
        return;
    case AssistantPolicy::Action::Ask:
        break;
    }
    if (!m_approver || !m_approver->isAvailable()) {
        if (m_policies.runWhenNoWindow) {
            admitted(request, QString());
            return;
        }
        admitted(request,
                 QStringLiteral("Refused: %1 in Code Sandbox asks a person to approve each run, "
                                "and no Code Sandbox window is open to ask. Open the Code Sandbox "
                                "app and call again, or change 'When no window is open' in its "
                                "Settings → Assistants.")
                     .arg(policy.describe()));
        return;
    }
    ask(call, request, admitted);
}

const AssistantPolicy &RunGate::policyFor(const ToolCall *call, QString *demoted) const
{
    AssistantPolicies::Caller caller;
    caller.name = call->assistant();
    caller.credential = call->identity().hasCredential();
    caller.launcher = call->identity().launcher;
    caller.nameHeld = !caller.credential && m_credentials && m_credentials->holdsName(caller.name);
    return m_policies.forCaller(caller, demoted);
}

QString RunGate::screen(const ToolCall *call, const QString &language, int timeoutSec,
                        const QStringList &libraries, std::optional<QStringList> *egress,
                        const QStringList &workspaces) const
{
    const AssistantPolicy &policy = policyFor(call);
    QString broken = policy.check(language, &timeoutSec, libraries, m_config, egress);
    if (broken.isEmpty())
        broken = policy.checkWorkspaces(workspaces);
    if (!broken.isEmpty() || policy.action != AssistantPolicy::Action::Refuse)
        return broken;
    return refusedText(policy);
}

RunNetwork RunGate::networkFor(const ToolCall *call,
                               const std::optional<QStringList> &askedHosts) const
{
    return RunNetwork::decide(m_config, askedHosts, &policyFor(call));
}

QString RunGate::refusedText(const AssistantPolicy &policy)
{
    return QStringLiteral("Refused by %1 in Code Sandbox: its runs are refused. A person can "
                          "change this in Code Sandbox's Settings → Assistants.")
        .arg(policy.describe());
}

ApprovalRequest RunGate::question(ToolCall *call, const ExecutionRequest &request) const
{
    ApprovalRequest question;
    question.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    question.client = call->assistant();
    question.identity = call->identity().describe();
    if (call->assistant() != call->clientName())
        question.identity += (question.identity.isEmpty() ? QString() : QStringLiteral(", ")) +
                             QStringLiteral("claims '%1'").arg(call->clientName());
    question.tool = call->tool();
    question.language = request.language;
    question.code = request.code;
    question.timeoutSec = request.timeoutSec > 0 ? request.timeoutSec : m_config.defaultTimeoutSec;
    question.libraries = request.libraries;
    for (const QString &name : request.workspaces)
        if (const Workspace *w = m_config.workspace(name))
            question.workspaces.append(
                QStringLiteral("%1 (%2)").arg(name, Workspace::modeName(w->mode)));
    for (const InputFile &f : request.files)
        question.files.append({f.path, f.content.size()});
    question.sessionId = call->arguments().value(u"session_id").toString();
    question.memoryBytes = m_config.memoryBytes;
    question.cpus = m_config.cpus;
    // What the run will reach, as decided (admit() decides before it asks).
    const RunNetwork network = request.network ? *request.network : RunNetwork::decide(m_config);
    question.egress = network.hosts;
    question.network = network.reachesNetwork();
    question.instanceId = m_config.instanceId;
    question.mode = m_mode;
    question.waitSec = m_policies.approvalTimeoutSec;
    return question;
}

RunGate::Waiting *RunGate::wait(ToolCall *call, const ApprovalRequest &question,
                                const QString &waitingText)
{
    auto *w = new Waiting;
    w->call = call;
    w->question = question;
    // Whose policy "always" changes: its own, or one made for it from the default. Nobody's
    // for a caller kept from the policy its name points to: "always" must not hand it that.
    QString demoted;
    const AssistantPolicy &policy = policyFor(call, &demoted);
    w->client = !demoted.isEmpty()   ? QString()
                : policy.isDefault() ? call->assistant()
                                     : policy.client;
    const QString id = question.id;
    m_waiting.insert(id, w);
    Q_EMIT waitingChanged(waiting());

    w->deadline.setSingleShot(true);
    w->deadline.setInterval(m_policies.approvalTimeoutSec * 1000);
    const int waitSec = m_policies.approvalTimeoutSec;
    const QString what =
        question.isConnection()
            ? QStringLiteral("the connection to %1 was refused").arg(question.hostPort())
            : QStringLiteral("the run did not start");
    connect(&w->deadline, &QTimer::timeout, this, [this, id, waitSec, what] {
        settle(id,
               QStringLiteral("Denied: nobody answered in the Code Sandbox window within %1 s, so "
                              "%2.")
                   .arg(waitSec)
                   .arg(what),
               QStringLiteral("no answer within %1 s").arg(waitSec));
    });
    w->deadline.start();
    w->progress.setInterval(kProgressEveryMs);
    connect(&w->progress, &QTimer::timeout, this, [w, waitingText] {
        if (w->call)
            w->call->progress(waitingText);
    });
    w->progress.start();
    // The call's end (the client cancelled it, its session closed) withdraws the question.
    w->cancelled = connect(call, &ToolCall::cancelRequested, this, [this, id] {
        settle(id, QString(), QStringLiteral("the assistant cancelled the call"));
    });
    w->destroyed = connect(call, &QObject::destroyed, this, [this, id] {
        settle(id, QString(), QStringLiteral("the assistant went away"));
    });
    call->progress(waitingText);
    return w;
}

void RunGate::ask(ToolCall *call, const ExecutionRequest &request, const Admitted &admitted)
{
    const ApprovalRequest q = question(call, request);
    Waiting *w = wait(call, q, QStringLiteral("waiting for approval in the Code Sandbox window"));
    w->request = request;
    w->admitted = admitted;
    qCInfo(lcTools).noquote() << "run of" << q.client << "waits for approval" << q.id.left(8);
    Q_EMIT asking(call);
    m_approver->ask(q);
}

void RunGate::askHost(ToolCall *call, Execution *execution, const QString &host, int port,
                      const HostVerdict &verdict)
{
    if (!m_approver || !m_approver->isAvailable()) {
        qCInfo(lcTools).noquote() << "refused" << host << "for" << call->assistant()
                                  << ": no window to ask";
        verdict(false, QString());
        return;
    }
    // The same run reaching for the same place again (a retry, parallel downloads) waits for
    // the question already asked.
    for (Waiting *open : std::as_const(m_waiting)) {
        if (!open->hostVerdicts.isEmpty() && open->question.runId == execution->runId() &&
            open->question.host == host && open->question.port == port) {
            open->hostVerdicts.append(verdict);
            return;
        }
    }
    ApprovalRequest q = question(call, execution->request());
    q.host = host;
    q.port = port;
    q.runId = execution->runId();
    Waiting *w = wait(call, q,
                      QStringLiteral("waiting in the Code Sandbox window: may the run reach %1?")
                          .arg(q.hostPort()));
    w->request = execution->request();
    w->hostVerdicts.append(verdict);
    const QString id = q.id;
    // A run that ended (timed out, cancelled, finished without the connection) asks no more.
    w->runEnded = connect(execution, &Execution::finished, this,
                          [this, id] { settle(id, QString(), QStringLiteral("the run ended")); });
    qCInfo(lcTools).noquote() << "run of" << q.client << "asks to reach" << q.hostPort()
                              << id.left(8);
    m_approver->ask(q);
}

void RunGate::onAnswered(const QString &id, RunApprover::Answer answer, const QString &reason)
{
    Waiting *w = m_waiting.value(id);
    if (!w)
        return; // answered twice, or after the deadline: the first word stands
    if (!w->hostVerdicts.isEmpty()) {
        if (answer == RunApprover::Answer::Deny) {
            settle(id, QStringLiteral("denied"), QString());
            return;
        }
        w->allowed = true;
        if (answer == RunApprover::Answer::AllowAlways) {
            // Its list gains the host (seeded with the run's hosts when it had none of its
            // own); the run reaches it from now on without asking again. A client without a
            // name has no list of its own to gain it (only everyone's default): once.
            const QString pattern = w->question.hostPattern();
            const AssistantPolicies::HostAdded added =
                m_policies.allowHost(w->client, pattern, w->question.egress);
            if (added == AssistantPolicies::HostAdded::Added)
                Q_EMIT policiesChanged(m_policies);
            if (added == AssistantPolicies::HostAdded::Added ||
                added == AssistantPolicies::HostAdded::AlreadyListed)
                w->widenTo = pattern;
        }
        settle(id, QString(), QString());
        return;
    }
    switch (answer) {
    case RunApprover::Answer::AllowAlways:
        // A client without a name cannot be allowed always (its only policy is everyone's
        // default): this run goes ahead, and the policies stay as they are.
        if (m_policies.allowAlways(w->client))
            Q_EMIT policiesChanged(m_policies);
        [[fallthrough]];
    case RunApprover::Answer::AllowOnce:
        settle(id, QString(), QString());
        return;
    case RunApprover::Answer::Deny: {
        const QString why = reason.trimmed().left(2000);
        settle(id,
               why.isEmpty() ? QStringLiteral("Denied in the Code Sandbox window: a person did "
                                              "not allow this run (no reason given).")
                             : QStringLiteral("Denied in the Code Sandbox window: %1").arg(why),
               QString());
        return;
    }
    }
}

void RunGate::onLost()
{
    const QStringList ids = m_waiting.keys();
    for (const QString &id : ids)
        settle(id,
               QStringLiteral("Denied: the Code Sandbox window closed before anyone answered, so "
                              "the run did not start."),
               QString());
}

void RunGate::settle(const QString &id, const QString &refusal, const QString &withdrawWhy)
{
    Waiting *w = m_waiting.take(id);
    if (!w)
        return;
    disconnect(w->cancelled);
    disconnect(w->destroyed);
    disconnect(w->runEnded);
    if (!withdrawWhy.isEmpty() && m_approver)
        m_approver->withdraw(id, withdrawWhy);
    if (!w->hostVerdicts.isEmpty()) {
        const QList<HostVerdict> verdicts = w->hostVerdicts;
        const bool allowed = w->allowed;
        const QString widenTo = w->widenTo;
        qCInfo(lcTools).noquote() << "connection to" << w->question.hostPort()
                                  << (allowed ? "allowed" : "refused") << id.left(8);
        delete w;
        Q_EMIT waitingChanged(waiting());
        for (const HostVerdict &verdict : verdicts)
            verdict(allowed, widenTo);
        return;
    }
    const QPointer<ToolCall> call = w->call;
    const Admitted admitted = w->admitted;
    const ExecutionRequest request = w->request;
    delete w;
    Q_EMIT waitingChanged(waiting());
    // A cancelled call is answered by its session; nothing more to say to it.
    if (call && !call->isCancelled() && !call->isFinished())
        admitted(request, refusal);
}
