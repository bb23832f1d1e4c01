// RunGate: what each policy does to a tool call before anything starts, and an approval's whole
// life (allowed, denied with a reason, no answer in time, the client cancelling, the window going
// away), with an approver that records the questions it is asked.
#include "rungate.h"
#include "sandboxconfig.h"
#include "toolcall.h"

#include <QSignalSpy>
#include <QTest>

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
    static ToolCall *call(const QString &client, QObject *parent)
    {
        auto *c = new ToolCall(QStringLiteral("run_python_code"), {}, QJsonValue(7), parent);
        c->setClientName(client);
        return c;
    }
    static void admit(RunGate &gate, ToolCall *c, Outcome *out,
                      const ExecutionRequest &request = {QStringLiteral("python"),
                                                         QStringLiteral("print(1)")})
    {
        gate.admit(c, request, [out](const ExecutionRequest &r, const QString &refusal) {
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
};

QTEST_GUILESS_MAIN(TestRunGate)
#include "tst_rungate.moc"
