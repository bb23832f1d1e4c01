// One run against a scripted sandbox: what the result holds when the sandbox's streams and the
// egress gateway's events come in an order a real engine gives only under load (the gateway's
// last events after the program's end; they come on another stream).

#include "execution.h"
#include "sandboxcontainer.h"

#include <QSignalSpy>
#include <QTest>
#include <QTimer>

namespace {

// A sandbox that runs nothing: on the program's hand-over it prints a line and both end lines,
// with the gateway's events before and after as the test sets them, and answers settleNetwork()
// as the gateway would: after the events it had written before the question.
class ScriptedContainer : public SandboxContainer
{
public:
    explicit ScriptedContainer(QObject *parent)
        : SandboxContainer(QStringLiteral("scripted"), QStringLiteral("image"), parent)
    {
        m_state = State::Ready;
        m_id = QStringLiteral("scripted-id");
    }

    QList<GatewayProtocol::NetworkEvent> before; // events sent before the end lines
    QList<GatewayProtocol::NetworkEvent> late;   // events that come only after them
    int lateAfterMs = 50;                        // when the late ones come
    bool settles = true;                         // settleNetwork() answers (after the late events)
    int settleCalls = 0;

    void prepare() override {}
    void write(const QByteArray &bytes) override
    {
        const QByteArray nonce = bytes.left(bytes.indexOf(' '));
        for (const GatewayProtocol::NetworkEvent &event : std::as_const(before))
            Q_EMIT networkEvent(event);
        Q_EMIT output(1, "fetched\n" + nonce + " 0 mem=1000 cpu=5\n");
        Q_EMIT output(2, nonce + " 0\n");
        QTimer::singleShot(lateAfterMs, this, [this] {
            for (const GatewayProtocol::NetworkEvent &event : std::as_const(late))
                Q_EMIT networkEvent(event);
            m_lateSent = true;
            if (m_settled)
                std::exchange(m_settled, nullptr)();
        });
    }
    void settleNetwork(QObject *context, const std::function<void()> &done) override
    {
        Q_UNUSED(context);
        ++settleCalls;
        if (!settles)
            return;
        if (m_lateSent)
            done();
        else
            m_settled = done;
    }
    void putFiles(const QString &, const QByteArray &, QObject *, const Done &done) override
    {
        done({});
    }
    void fetchFiles(const QString &, qint64, QObject *, const Fetched &done) override { done({}); }
    void exitStatus(QObject *, const Exited &done) override { done(0, {}); }
    void interrupt() override {}

protected:
    void closeStream() override {}
    void sendRemove() override { confirmRemoved(); }

private:
    bool m_lateSent = false;
    std::function<void()> m_settled;
};

GatewayProtocol::NetworkEvent connection(int id, const QString &host, const QString &verdict)
{
    using Outcome = GatewayProtocol::Connection::Outcome;
    return GatewayProtocol::Connection{quint64(id),
                                       {},
                                       host.toStdString(),
                                       443,
                                       verdict == u"allow" ? Outcome::Allow : Outcome::Deny,
                                       "rule"};
}

} // namespace

class tst_Execution : public QObject
{
    Q_OBJECT

private:
    Execution *start(ScriptedContainer *container)
    {
        auto *run = new Execution({QStringLiteral("python"), QStringLiteral("print(1)")},
                                  QStringLiteral("python"), 30, 1024, this);
        run->run(container);
        return run;
    }

private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<ExecutionResult>(); }

    // The gateway's report of the last connection comes after the program's end line: the
    // result waits for it (the gateway answers settleNetwork() after it) and holds all of them.
    void theResultHoldsConnectionsReportedAfterTheEnd()
    {
        auto *container = new ScriptedContainer(this);
        container->before = {connection(1, QStringLiteral("a.example"), QStringLiteral("allow"))};
        container->late = {connection(2, QStringLiteral("b.example"), QStringLiteral("deny")),
                           connection(3, QStringLiteral("c.example"), QStringLiteral("allow"))};
        container->lateAfterMs = 200;
        Execution *run = start(container);
        QSignalSpy finished(run, &Execution::finished);
        QVERIFY(finished.wait(5000));
        const ExecutionResult r = run->result();
        QCOMPARE(r.network.size(), 3);
        QCOMPARE(container->settleCalls, 1);
        QCOMPARE(r.stdoutData, QByteArray("fetched\n"));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.network.at(1).host, QStringLiteral("b.example"));
        QCOMPARE(r.network.at(1).verdict, NetworkAttempt::Verdict::Refused);
        QCOMPARE(r.network.at(2).verdict, NetworkAttempt::Verdict::Allowed);
    }

    // A cancel while the result waits for the gateway ends the run at once.
    void aCancelDoesNotWaitForTheGateway()
    {
        auto *container = new ScriptedContainer(this);
        container->settles = false;
        Execution *run = start(container);
        QSignalSpy finished(run, &Execution::finished);
        QTRY_COMPARE(container->settleCalls, 1);
        QVERIFY(finished.isEmpty());
        run->cancel();
        QCOMPARE(finished.size(), 1);
        QVERIFY(run->result().cancelled);
        QCOMPARE(run->result().stdoutData, QByteArray("fetched\n"));
    }
};

QTEST_GUILESS_MAIN(tst_Execution)
#include "tst_execution.moc"
