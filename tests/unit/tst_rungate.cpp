// RunGate: what each policy does to a tool call before anything starts, and an approval's whole
// life (allowed, denied with a reason, no answer in time, the client cancelling, the window going
// away), with an approver that records the questions it is asked. And create_session with
// libraries through the whole server: its install (a container with network) waits for the same
// approval, on an engine that records what it is asked to make.
#include "execution.h"
#include "jsonrpcmessage.h"
#include "languageregistry.h"
#include "mcpserver.h"
#include "mcptransport.h"
#include "rungate.h"
#include "sandboxbackend.h"
#include "sandboxconfig.h"
#include "sandboxservice.h"
#include "sandboxtools.h"
#include "sessionmanager.h"
#include "toolcall.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>
#include <memory>

namespace {
// Stands for the window: keeps the questions; the test answers them.
class RecordingApprover : public RunApprover
{
public:
    bool available = true;
    QList<ApprovalRequest> asked;
    QStringList withdrawn;
    bool isAvailable() const override { return available; }
    void ask(const ApprovalRequest &request) override { asked.append(request); }
    void withdraw(const QString &id, const QString &why) override
    {
        withdrawn.append(id + u':' + why);
    }
    void answer(const QString &id, Answer answer, const QString &reason = QString())
    {
        Q_EMIT answered(id, answer, reason);
    }
    void goAway() { Q_EMIT lost(); }
};

// An engine that makes nothing: it counts the library volumes an install asks for (the install's
// first step; refused, so the install ends there) and any sandbox.
class RecordingEngine : public SandboxBackend
{
public:
    int volumes = 0;
    int sandboxes = 0;

    QString endpoint() const override { return QStringLiteral("unix:///recording.sock"); }
    int capacity() const override { return 4; }
    SandboxContainer *createSandbox(const SandboxSpec &, const QString &, QObject *) override
    {
        ++sandboxes;
        return nullptr;
    }
    void createVolume(const QString &, const QJsonObject &, QObject *context,
                      const SandboxContainer::Done &done) override
    {
        ++volumes;
        QTimer::singleShot(0, context, [done] { done(QStringLiteral("not on this engine")); });
    }
    void removeVolume(const QString &) override {}
    void list(const QStringList &, QObject *context,
              const std::function<void(const QList<Listed> &, const QString &)> &done) override
    {
        QTimer::singleShot(0, context, [done] { done({}, QString()); });
    }
    void removeById(const QString &, QObject *, const SandboxContainer::Done &) override {}
    void health(bool, QObject *context, const std::function<void(const Health &)> &done) override
    {
        Health h;
        h.reachable = true;
        QTimer::singleShot(0, context, [done, h] { done(h); });
    }
};

// A client's end of an MCP session: what the server sends is kept for the test to read.
class ClientTransport : public McpTransport
{
public:
    void respond(const QJsonValue &, const QJsonObject &response) override
    {
        sent.append(response);
    }
    void notify(const QJsonObject &message, const QJsonValue &) override { sent.append(message); }
    void receive(const QJsonObject &message)
    {
        Q_EMIT messageReceived(
            McpMessage::parse(QJsonDocument(message).toJson(QJsonDocument::Compact)));
    }
    // The answer to request `id`, once the server sent it (empty until then).
    QJsonObject answerTo(int id) const
    {
        for (const QJsonObject &m : sent)
            if (m.value(u"id").toInt() == id && !m.contains(u"method"))
                return m;
        return {};
    }
    QList<QJsonObject> sent;
};

// The product's tools with sessions and the gate, over the recording engine, and one client
// session ("claude-code") on them.
struct GatedServer
{
    explicit GatedServer(const AssistantPolicies &policies)
    {
        SandboxConfig config;
        config.poolSize = 0;
        config.allowInstall = true;
        sandbox = std::make_unique<SandboxService>(&engine, LanguageRegistry::builtIn(), config);
        sessions = std::make_unique<SessionManager>(sandbox.get(), SessionManager::Limits());
        gate = std::make_unique<RunGate>(sandbox->config());
        gate->setPolicies(policies);
        server = std::make_unique<McpServer>(ServerInfo{QStringLiteral("code-sandbox"),
                                                        QStringLiteral("Code Sandbox"),
                                                        QStringLiteral("9.9.9"), QString()});
        SandboxTools::registerAll(*server, *sandbox, sessions.get(), gate.get());
        transport = new ClientTransport;
        server->openSession(transport);
        transport->receive(JsonRpcMessage::makeRequest(
            ++lastId, QStringLiteral("initialize"),
            {{"protocolVersion", "2025-11-25"},
             {"capabilities", QJsonObject()},
             {"clientInfo", QJsonObject{{"name", "claude-code"}, {"version", "1"}}}}));
        transport->receive(
            JsonRpcMessage::makeNotification(QStringLiteral("notifications/initialized")));
    }

    // Sends create_session for Python with `libraries`; its request id.
    int createSession(const QStringList &libraries)
    {
        transport->receive(JsonRpcMessage::makeRequest(
            ++lastId, QStringLiteral("tools/call"),
            {{"name", "create_session"},
             {"arguments", QJsonObject{{"language", "python"},
                                       {"libraries", QJsonArray::fromStringList(libraries)}}}}));
        return lastId;
    }
    QJsonObject resultOf(int id) const
    {
        return transport->answerTo(id).value(u"result").toObject();
    }
    static QString textOf(const QJsonObject &result)
    {
        return result.value(u"content").toArray().at(0).toObject().value(u"text").toString();
    }

    RecordingEngine engine;
    std::unique_ptr<SandboxService> sandbox;
    std::unique_ptr<SessionManager> sessions;
    std::unique_ptr<RunGate> gate;
    std::unique_ptr<McpServer> server;
    ClientTransport *transport = nullptr; // owned by its session
    int lastId = 0;
};

// A gate on a server whose runs may reach the npm registry (an allow-list, so a gateway that
// holds connections), with `policies` and the approver standing for the window.
struct HostGate
{
    explicit HostGate(const AssistantPolicies &policies)
    {
        gate.setPolicies(policies);
        gate.setApprover(&approver);
    }
    static SandboxConfig listed()
    {
        SandboxConfig c;
        c.egress = {QStringLiteral("registry.npmjs.org")};
        return c;
    }
    SandboxConfig config = listed();
    RunGate gate{config}; // (holds a reference to config, declared before it)
    RecordingApprover approver;
    QObject owner;
};

struct Outcome
{
    bool decided = false;
    ExecutionRequest request;
    QString refusal;
};
} // namespace

class TestRunGate : public QObject
{
    Q_OBJECT

private:
    SandboxConfig m_config;

    static AssistantPolicies asking(int waitSec = 60)
    {
        AssistantPolicies p;
        p.fallback.action = AssistantPolicy::Action::Ask;
        p.approvalTimeoutSec = waitSec;
        return p;
    }
    // Whether the admitted run's network, as the gate decided it, holds connections beyond its
    // list for a person.
    static bool asksOthers(const Outcome &o)
    {
        return o.request.network && o.request.network->askOtherHosts;
    }
    static ToolCall *call(const QString &client, QObject *parent)
    {
        ToolCall::Context context;
        context.progressToken = 7;
        context.clientName = client;
        auto *c = new ToolCall(QStringLiteral("run_python_code"), {}, context, parent);
        return c;
    }
    static void admit(RunGate &gate, ToolCall *c, Outcome *out,
                      const ExecutionRequest &request = {QStringLiteral("python"),
                                                         QStringLiteral("print(1)")},
                      const std::optional<QStringList> &hosts = std::nullopt)
    {
        gate.admit(c, request, hosts, [out](const ExecutionRequest &r, const QString &refusal) {
            out->decided = true;
            out->request = r;
            out->refusal = refusal;
        });
    }

private Q_SLOTS:
    void runPolicyAdmitsAtOnce()
    {
        RunGate gate(m_config);
        QObject owner;
        Outcome out;
        admit(gate, call(QStringLiteral("x"), &owner), &out);
        QVERIFY(out.decided);
        QVERIFY(out.refusal.isEmpty());
        QCOMPARE(out.request.code, QStringLiteral("print(1)"));
    }

    void refusePolicyAndLimitsRefuseAtOnce()
    {
        RunGate gate(m_config);
        AssistantPolicies p;
        AssistantPolicy bad;
        bad.client = QStringLiteral("badbot");
        bad.action = AssistantPolicy::Action::Refuse;
        p.assistants.append(bad);
        p.fallback.languages = {QStringLiteral("python")};
        gate.setPolicies(p);
        QObject owner;
        Outcome refused;
        admit(gate, call(QStringLiteral("BadBot"), &owner), &refused);
        QVERIFY(refused.refusal.contains(u"the policy for assistant 'badbot'"));
        QVERIFY(refused.refusal.contains(u"its runs are refused"));
        Outcome language;
        admit(gate, call(QStringLiteral("other"), &owner), &language,
              {QStringLiteral("ruby"), QStringLiteral("puts 1")});
        QVERIFY(language.refusal.contains(u"ruby is not among the languages it allows"));
    }

    void askWithoutWindowFollowsTheFallback()
    {
        RunGate gate(m_config);
        gate.setPolicies(asking());
        QObject owner;
        Outcome noApprover;
        admit(gate, call(QStringLiteral("x"), &owner), &noApprover);
        QVERIFY(noApprover.refusal.contains(u"no Code Sandbox window is open"));
        RecordingApprover away;
        away.available = false;
        gate.setApprover(&away);
        Outcome unavailable;
        admit(gate, call(QStringLiteral("x"), &owner), &unavailable);
        QVERIFY(unavailable.refusal.contains(u"no Code Sandbox window is open"));
        QVERIFY(away.asked.isEmpty());
        AssistantPolicies run = asking();
        run.runWhenNoWindow = true;
        gate.setPolicies(run);
        Outcome ran;
        admit(gate, call(QStringLiteral("x"), &owner), &ran);
        QVERIFY(ran.decided);
        QVERIFY(ran.refusal.isEmpty());
    }

    void allowOnceRunsAfterTheAnswer()
    {
        RunGate gate(m_config);
        gate.setPolicies(asking());
        RecordingApprover approver;
        gate.setApprover(&approver);
        QObject owner;
        ToolCall *c = call(QStringLiteral("claude-code"), &owner);
        QSignalSpy progress(c, &ToolCall::progressReady);
        Outcome out;
        admit(gate, c, &out);
        QVERIFY(!out.decided);
        QCOMPARE(gate.waiting(), 1);
        QCOMPARE(approver.asked.size(), 1);
        const ApprovalRequest &q = approver.asked.first();
        QCOMPARE(q.client, QStringLiteral("claude-code"));
        QCOMPARE(q.code, QStringLiteral("print(1)"));
        QCOMPARE(q.waitSec, 60);
        QCOMPARE(q.timeoutSec, m_config.defaultTimeoutSec);
        QVERIFY(!progress.isEmpty());
        QVERIFY(progress.first()
                    .first()
                    .toJsonObject()
                    .value(u"message")
                    .toString()
                    .contains(u"waiting for approval in the Code Sandbox window"));
        approver.answer(q.id, RunApprover::Answer::AllowOnce);
        QVERIFY(out.decided);
        QVERIFY(out.refusal.isEmpty());
        QCOMPARE(gate.waiting(), 0);
        // Once: the next call asks again.
        Outcome next;
        admit(gate, call(QStringLiteral("claude-code"), &owner), &next);
        QVERIFY(!next.decided);
        QCOMPARE(approver.asked.size(), 2);
    }

    void allowAlwaysChangesThePolicy()
    {
        RunGate gate(m_config);
        gate.setPolicies(asking());
        RecordingApprover approver;
        gate.setApprover(&approver);
        QSignalSpy changed(&gate, &RunGate::policiesChanged);
        QObject owner;
        Outcome out;
        admit(gate, call(QStringLiteral("cursor"), &owner), &out);
        approver.answer(approver.asked.first().id, RunApprover::Answer::AllowAlways);
        QVERIFY(out.decided && out.refusal.isEmpty());
        QCOMPARE(changed.size(), 1);
        Outcome next;
        admit(gate, call(QStringLiteral("cursor"), &owner), &next);
        QVERIFY(next.decided && next.refusal.isEmpty());
        QCOMPARE(approver.asked.size(), 1);
        Outcome other;
        admit(gate, call(QStringLiteral("other"), &owner), &other);
        QVERIFY(!other.decided);
    }

    void allowAlwaysNeedsAName()
    {
        // "Always" for a client that gave no name would make the default policy, everyone's,
        // run unasked: the run goes ahead once and nothing changes.
        RunGate gate(m_config);
        gate.setPolicies(asking());
        RecordingApprover approver;
        gate.setApprover(&approver);
        QSignalSpy changed(&gate, &RunGate::policiesChanged);
        QObject owner;
        Outcome out;
        admit(gate, call(QString(), &owner), &out);
        approver.answer(approver.asked.first().id, RunApprover::Answer::AllowAlways);
        QVERIFY(out.decided && out.refusal.isEmpty());
        QCOMPARE(changed.size(), 0);
        QCOMPARE(gate.policies().fallback.action, AssistantPolicy::Action::Ask);
        Outcome other;
        admit(gate, call(QStringLiteral("other"), &owner), &other);
        QVERIFY(!other.decided);
        QCOMPARE(approver.asked.size(), 2);
    }

    void denyCarriesTheReason()
    {
        RunGate gate(m_config);
        gate.setPolicies(asking());
        RecordingApprover approver;
        gate.setApprover(&approver);
        QObject owner;
        Outcome out;
        admit(gate, call(QStringLiteral("x"), &owner), &out);
        approver.answer(approver.asked.first().id, RunApprover::Answer::Deny,
                        QStringLiteral("  do not touch /etc  "));
        QCOMPARE(out.refusal,
                 QStringLiteral("Denied in the Code Sandbox window: do not touch /etc"));
        Outcome silent;
        admit(gate, call(QStringLiteral("x"), &owner), &silent);
        approver.answer(approver.asked.last().id, RunApprover::Answer::Deny);
        QVERIFY(silent.refusal.contains(u"no reason given"));
        // A second answer to a settled question changes nothing.
        approver.answer(approver.asked.first().id, RunApprover::Answer::AllowOnce);
        QCOMPARE(out.refusal,
                 QStringLiteral("Denied in the Code Sandbox window: do not touch /etc"));
    }

    void noAnswerInTimeDenies()
    {
        RunGate gate(m_config);
        gate.setPolicies(asking(1));
        RecordingApprover approver;
        gate.setApprover(&approver);
        QObject owner;
        Outcome out;
        admit(gate, call(QStringLiteral("x"), &owner), &out);
        QTRY_VERIFY_WITH_TIMEOUT(out.decided, 5000);
        QVERIFY(out.refusal.contains(u"nobody answered in the Code Sandbox window within 1 s"));
        QCOMPARE(approver.withdrawn.size(), 1);
        QVERIFY(approver.withdrawn.first().contains(u"no answer within 1 s"));
    }

    void cancelWithdrawsTheQuestion()
    {
        RunGate gate(m_config);
        gate.setPolicies(asking());
        RecordingApprover approver;
        gate.setApprover(&approver);
        QObject owner;
        ToolCall *c = call(QStringLiteral("x"), &owner);
        Outcome out;
        admit(gate, c, &out);
        c->cancel();
        QCOMPARE(gate.waiting(), 0);
        QVERIFY(!out.decided); // the session answers a cancelled call; the run never starts
        QCOMPARE(approver.withdrawn.size(), 1);
        QVERIFY(approver.withdrawn.first().contains(u"cancelled"));
        // A call that goes away (its session closed) withdraws too.
        ToolCall *gone = call(QStringLiteral("x"), &owner);
        admit(gate, gone, &out);
        delete gone;
        QCOMPARE(gate.waiting(), 0);
        QCOMPARE(approver.withdrawn.size(), 2);
    }

    void windowGoingAwayDenies()
    {
        RunGate gate(m_config);
        gate.setPolicies(asking());
        RecordingApprover approver;
        gate.setApprover(&approver);
        QObject owner;
        Outcome a, b;
        admit(gate, call(QStringLiteral("x"), &owner), &a);
        admit(gate, call(QStringLiteral("y"), &owner), &b);
        approver.goAway();
        QVERIFY(a.refusal.contains(u"window closed before anyone answered"));
        QVERIFY(b.refusal.contains(u"window closed before anyone answered"));
        QCOMPARE(gate.waiting(), 0);
    }

    void askOtherHostsOnlyWithAnAllowList()
    {
        AssistantPolicies p;
        p.fallback.otherHosts = AssistantPolicy::OtherHosts::Ask;
        SandboxConfig listed;
        listed.egress = {QStringLiteral("registry.npmjs.org")};
        QObject owner;
        RunGate withList(listed);
        withList.setPolicies(p);
        Outcome asks;
        admit(withList, call(QStringLiteral("x"), &owner), &asks);
        QVERIFY(asks.decided && asks.refusal.isEmpty());
        QVERIFY(asksOthers(asks));
        // No allow-list (no network, or the open one): no gateway, nothing to hold.
        RunGate without(m_config);
        without.setPolicies(p);
        Outcome none;
        admit(without, call(QStringLiteral("x"), &owner), &none);
        QVERIFY(!asksOthers(none));
        // A call that asked for no network has nothing to ask about either.
        Outcome noNetwork;
        admit(withList, call(QStringLiteral("x"), &owner), &noNetwork,
              {QStringLiteral("python"), QStringLiteral("print(1)")}, QStringList());
        QVERIFY(noNetwork.decided && noNetwork.request.network);
        QVERIFY(!asksOthers(noNetwork));
        p.fallback.otherHosts = AssistantPolicy::OtherHosts::Refuse;
        withList.setPolicies(p);
        Outcome refuses;
        admit(withList, call(QStringLiteral("x"), &owner), &refuses);
        QVERIFY(!asksOthers(refuses));
    }

    void heldConnectionAllowedOnce()
    {
        HostGate h(asking());
        RunGate &gate = h.gate;
        RecordingApprover &approver = h.approver;
        QObject &owner = h.owner;
        ToolCall *c = call(QStringLiteral("claude-code"), &owner);
        QSignalSpy progress(c, &ToolCall::progressReady);
        Execution run({QStringLiteral("python"), QStringLiteral("import urllib")},
                      QStringLiteral("python"), 30, 1024);
        QList<QPair<bool, QString>> verdicts;
        gate.askHost(c, &run, QStringLiteral("api.github.com"), 443,
                     [&verdicts](bool allow, const QString &widen) {
                         verdicts.append({allow, widen});
                     });
        QVERIFY(verdicts.isEmpty());
        QCOMPARE(approver.asked.size(), 1);
        const ApprovalRequest q = approver.asked.first();
        QVERIFY(q.isConnection());
        QCOMPARE(q.hostPort(), QStringLiteral("api.github.com:443"));
        QCOMPARE(q.runId, run.runId());
        QCOMPARE(q.code, QStringLiteral("import urllib"));
        QCOMPARE(q.egress, h.config.egress);
        QCOMPARE(q.client, QStringLiteral("claude-code"));
        QVERIFY(progress.last()
                    .first()
                    .toJsonObject()
                    .value(u"message")
                    .toString()
                    .contains(u"may the run reach api.github.com:443?"));
        approver.answer(q.id, RunApprover::Answer::AllowOnce);
        QCOMPARE(verdicts, (QList<QPair<bool, QString>>{{true, QString()}}));
        QCOMPARE(gate.waiting(), 0);
        QVERIFY(gate.policies().forClient(QStringLiteral("claude-code")).egress.isEmpty());
        // Answered once: a second word changes nothing.
        approver.answer(q.id, RunApprover::Answer::Deny);
        QCOMPARE(verdicts.size(), 1);
    }

    void heldConnectionAlwaysListsTheHost()
    {
        AssistantPolicies p = asking();
        p.fallback.action = AssistantPolicy::Action::Run;
        HostGate h(p);
        RunGate &gate = h.gate;
        RecordingApprover &approver = h.approver;
        QSignalSpy changed(&gate, &RunGate::policiesChanged);
        QObject owner;
        Execution run({QStringLiteral("python"), QStringLiteral("x")}, QStringLiteral("python"), 30,
                      1024);
        QString widened;
        bool allowed = false;
        gate.askHost(call(QStringLiteral("claude-code"), &owner), &run,
                     QStringLiteral("api.github.com"), 8443, [&](bool allow, const QString &widen) {
                         allowed = allow;
                         widened = widen;
                     });
        approver.answer(approver.asked.first().id, RunApprover::Answer::AllowAlways);
        QVERIFY(allowed);
        QCOMPARE(widened, QStringLiteral("api.github.com:8443"));
        QCOMPARE(changed.size(), 1);
        // Its own policy now: the run's hosts and this one. Its runs still go unasked (as
        // before), and the default is untouched.
        const AssistantPolicy &own = gate.policies().forClient(QStringLiteral("claude-code"));
        QCOMPARE(own.client, QStringLiteral("claude-code"));
        QCOMPARE(own.egress, (QStringList{QStringLiteral("registry.npmjs.org"),
                                          QStringLiteral("api.github.com:8443")}));
        QCOMPARE(own.action, AssistantPolicy::Action::Run);
        QVERIFY(gate.policies().fallback.egress.isEmpty());
    }

    void heldConnectionsToOnePlaceShareAQuestion()
    {
        // pip and npm open several connections at once: one question for the host and port of
        // a run, its answer for all of them; another port, or another run, is asked anew.
        HostGate h(asking());
        RunGate &gate = h.gate;
        RecordingApprover &approver = h.approver;
        QObject &owner = h.owner;
        ToolCall *c = call(QStringLiteral(""), &owner);
        Execution run({QStringLiteral("python"), QStringLiteral("x")}, QStringLiteral("python"), 30,
                      1024);
        Execution other({QStringLiteral("python"), QStringLiteral("y")}, QStringLiteral("python"),
                        30, 1024);
        QStringList verdicts;
        const auto record = [&verdicts](const QString &which) {
            return [&verdicts, which](bool allow, const QString &widen) {
                verdicts.append(
                    which + (allow ? QStringLiteral(" allow ") : QStringLiteral(" deny ")) + widen);
            };
        };
        gate.askHost(c, &run, QStringLiteral("pypi.org"), 443, record(QStringLiteral("a")));
        gate.askHost(c, &run, QStringLiteral("pypi.org"), 443, record(QStringLiteral("b")));
        gate.askHost(c, &run, QStringLiteral("pypi.org"), 80, record(QStringLiteral("c")));
        gate.askHost(c, &other, QStringLiteral("pypi.org"), 443, record(QStringLiteral("d")));
        QCOMPARE(approver.asked.size(), 3);
        QCOMPARE(gate.waiting(), 3);
        // "Always" from a client without a name: its only policy is everyone's, so this is
        // once (the run's grant is not widened, the policies do not change).
        approver.answer(approver.asked.first().id, RunApprover::Answer::AllowAlways);
        QCOMPARE(verdicts, (QStringList{QStringLiteral("a allow "), QStringLiteral("b allow ")}));
        QVERIFY(gate.policies().assistants.isEmpty());
        approver.answer(approver.asked.at(1).id, RunApprover::Answer::Deny);
        approver.answer(approver.asked.at(2).id, RunApprover::Answer::AllowOnce);
        QCOMPARE(verdicts.mid(2),
                 (QStringList{QStringLiteral("c deny "), QStringLiteral("d allow ")}));
        QCOMPARE(gate.waiting(), 0);
    }

    void heldConnectionRefusedOtherwise()
    {
        SandboxConfig config;
        config.egress = {QStringLiteral("registry.npmjs.org")};
        QObject owner;
        Execution run({QStringLiteral("python"), QStringLiteral("x")}, QStringLiteral("python"), 30,
                      1024);
        QList<bool> verdicts;
        const auto record = [&verdicts](bool allow, const QString &) { verdicts.append(allow); };
        // No window: refused at once, nobody asked.
        RunGate alone(config);
        alone.askHost(call(QStringLiteral("x"), &owner), &run, QStringLiteral("a.test"), 443,
                      record);
        QCOMPARE(verdicts, QList<bool>{false});
        // Denied.
        RunGate gate(config);
        gate.setPolicies(asking(1));
        RecordingApprover approver;
        gate.setApprover(&approver);
        gate.askHost(call(QStringLiteral("x"), &owner), &run, QStringLiteral("a.test"), 443,
                     record);
        approver.answer(approver.asked.last().id, RunApprover::Answer::Deny);
        QCOMPARE(verdicts, (QList<bool>{false, false}));
        // No answer in time.
        gate.askHost(call(QStringLiteral("x"), &owner), &run, QStringLiteral("b.test"), 80, record);
        QTRY_COMPARE_WITH_TIMEOUT(verdicts.size(), 3, 5000);
        QVERIFY(!verdicts.last());
        QVERIFY(approver.withdrawn.last().contains(u"no answer within 1 s"));
        // The call cancelled.
        ToolCall *cancelled = call(QStringLiteral("x"), &owner);
        gate.askHost(cancelled, &run, QStringLiteral("c.test"), 443, record);
        cancelled->cancel();
        QCOMPARE(verdicts.size(), 4);
        QVERIFY(!verdicts.last());
        // The run ended first: the question is withdrawn.
        gate.askHost(call(QStringLiteral("x"), &owner), &run, QStringLiteral("d.test"), 443,
                     record);
        run.failEarly(QStringLiteral("gone"), QStringLiteral("img"));
        QTRY_COMPARE_WITH_TIMEOUT(verdicts.size(), 5, 5000);
        QVERIFY(!verdicts.last());
        QVERIFY(approver.withdrawn.last().contains(u"the run ended"));
        QCOMPARE(gate.waiting(), 0);
    }

    void sessionLibrariesWaitForApproval()
    {
        GatedServer s(asking());
        RecordingApprover approver;
        s.gate->setApprover(&approver);
        const QStringList libs{QStringLiteral("rich"), QStringLiteral("numpy")};

        // Asked with the language and the libraries, no code; nothing is installed meanwhile.
        const int denied = s.createSession(libs);
        QTRY_COMPARE_WITH_TIMEOUT(approver.asked.size(), 1, 10000);
        const ApprovalRequest q = approver.asked.first();
        QCOMPARE(q.client, QStringLiteral("claude-code"));
        QCOMPARE(q.tool, QStringLiteral("create_session"));
        QCOMPARE(q.language, QStringLiteral("python"));
        QCOMPARE(q.libraries, libs);
        QCOMPARE(q.code, QString());
        QVERIFY(s.resultOf(denied).isEmpty());
        QCOMPARE(s.engine.volumes, 0);
        approver.answer(q.id, RunApprover::Answer::Deny, QStringLiteral("not today"));
        QTRY_VERIFY_WITH_TIMEOUT(!s.resultOf(denied).isEmpty(), 10000);
        QVERIFY(s.resultOf(denied).value(u"isError").toBool());
        QCOMPARE(GatedServer::textOf(s.resultOf(denied)),
                 QStringLiteral("Denied in the Code Sandbox window: not today. No session was "
                                "created and nothing was installed."));
        QCOMPARE(s.engine.volumes, 0);
        QCOMPARE(s.engine.sandboxes, 0);
        QCOMPARE(s.sessions->count(), 0);

        // The window going away denies too.
        const int lost = s.createSession(libs);
        QTRY_COMPARE_WITH_TIMEOUT(approver.asked.size(), 2, 10000);
        approver.goAway();
        QTRY_VERIFY_WITH_TIMEOUT(!s.resultOf(lost).isEmpty(), 10000);
        QVERIFY(GatedServer::textOf(s.resultOf(lost))
                    .contains(u"window closed before anyone answered"));
        QCOMPARE(s.engine.volumes, 0);

        // Allowed: the install starts (this engine refuses its volume, so the session fails).
        const int allowed = s.createSession(libs);
        QTRY_COMPARE_WITH_TIMEOUT(approver.asked.size(), 3, 10000);
        QCOMPARE(s.engine.volumes, 0);
        approver.answer(approver.asked.last().id, RunApprover::Answer::AllowOnce);
        QTRY_VERIFY_WITH_TIMEOUT(!s.resultOf(allowed).isEmpty(), 10000);
        QCOMPARE(s.engine.volumes, 1);
        QVERIFY2(GatedServer::textOf(s.resultOf(allowed)).contains(u"not on this engine"),
                 qPrintable(GatedServer::textOf(s.resultOf(allowed))));
    }

    void sessionLibrariesUnderRunAndRefuse()
    {
        // Under "run" the install starts at once, as before.
        GatedServer run{AssistantPolicies()};
        RecordingApprover approver;
        run.gate->setApprover(&approver);
        const int ran = run.createSession({QStringLiteral("rich")});
        QTRY_VERIFY_WITH_TIMEOUT(!run.resultOf(ran).isEmpty(), 10000);
        QCOMPARE(run.engine.volumes, 1);
        QVERIFY(approver.asked.isEmpty());

        AssistantPolicies refuse;
        refuse.fallback.action = AssistantPolicy::Action::Refuse;
        GatedServer refused(refuse);
        refused.gate->setApprover(&approver);
        const int id = refused.createSession({QStringLiteral("rich")});
        QTRY_VERIFY_WITH_TIMEOUT(!refused.resultOf(id).isEmpty(), 10000);
        QVERIFY(refused.resultOf(id).value(u"isError").toBool());
        QVERIFY(GatedServer::textOf(refused.resultOf(id)).contains(u"its runs are refused"));
        QCOMPARE(refused.engine.volumes, 0);
        QVERIFY(approver.asked.isEmpty());

        // With no window to ask, "ask" follows the fallback (refused here): nothing installed.
        GatedServer alone(asking());
        const int nobody = alone.createSession({QStringLiteral("rich")});
        QTRY_VERIFY_WITH_TIMEOUT(!alone.resultOf(nobody).isEmpty(), 10000);
        QVERIFY(GatedServer::textOf(alone.resultOf(nobody))
                    .contains(u"no Code Sandbox window is open"));
        QCOMPARE(alone.engine.volumes, 0);
    }
};

QTEST_GUILESS_MAIN(TestRunGate)
#include "tst_rungate.moc"
