// The monitor socket's way back, window → headless instance: stop requests and approvals, between
// a real MonitorServer and MonitorPublisher on a socket in a temporary folder.
#include "monitorapprover.h"
#include "monitorpublisher.h"
#include "monitorserver.h"

#include <QJsonDocument>
#include <QLocalSocket>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

class TestMonitorControl : public QObject
{
    Q_OBJECT

private:
    static ApprovalRequest question(const QString &id)
    {
        ApprovalRequest r;
        r.id = id;
        r.client = QStringLiteral("claude-code");
        r.language = QStringLiteral("python");
        r.code = QStringLiteral("print(1)");
        r.instanceId = QStringLiteral("forged"); // the server takes the connection's own
        return r;
    }

private Q_SLOTS:
    void stopReachesTheInstance()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("m.sock"));
        MonitorServer server;
        QVERIFY(server.listen(path));
        MonitorPublisher publisher(path, QStringLiteral("inst-1"), QStringLiteral("stdio"));
        QTRY_VERIFY(server.hasInstance(QStringLiteral("inst-1")));
        QSignalSpy stops(&publisher, &MonitorPublisher::stopRequested);
        QVERIFY(server.requestStop(QStringLiteral("inst-1"), QStringLiteral("run-42")));
        QTRY_COMPARE(stops.size(), 1);
        QCOMPARE(stops.first().first().toString(), QStringLiteral("run-42"));
        QVERIFY(!server.requestStop(QStringLiteral("no-such-instance"), QStringLiteral("x")));
    }

    void approvalRoundTrip()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("m.sock"));
        MonitorServer server;
        QVERIFY(server.listen(path));
        MonitorPublisher publisher(path, QStringLiteral("inst-2"), QStringLiteral("stdio"));
        MonitorApprover approver(&publisher);
        QTRY_VERIFY(approver.isAvailable());
        QTRY_VERIFY(server.hasInstance(QStringLiteral("inst-2")));

        QSignalSpy asked(&server, &MonitorServer::approvalRequested);
        QSignalSpy answered(&approver, &RunApprover::answered);
        approver.ask(question(QStringLiteral("q1")));
        QTRY_COMPARE(asked.size(), 1);
        const auto request = asked.first().first().value<ApprovalRequest>();
        QCOMPARE(request.id, QStringLiteral("q1"));
        QCOMPARE(request.instanceId, QStringLiteral("inst-2"));
        QCOMPARE(request.code, QStringLiteral("print(1)"));

        // An answer to a question never asked, and a word that is no answer, are ignored.
        server.answerApproval(QStringLiteral("inst-2"), QStringLiteral("nope"),
                              QStringLiteral("allow"), QString());
        server.answerApproval(QStringLiteral("inst-2"), QStringLiteral("q1"),
                              QStringLiteral("maybe"), QString());
        server.answerApproval(QStringLiteral("inst-2"), QStringLiteral("q1"),
                              QStringLiteral("deny"), QStringLiteral("not now"));
        QTRY_COMPARE(answered.size(), 1);
        QCOMPARE(answered.first().at(0).toString(), QStringLiteral("q1"));
        QCOMPARE(answered.first().at(1).value<RunApprover::Answer>(), RunApprover::Answer::Deny);
        QCOMPARE(answered.first().at(2).toString(), QStringLiteral("not now"));
        // Answered once: a second answer is ignored.
        server.answerApproval(QStringLiteral("inst-2"), QStringLiteral("q1"),
                              QStringLiteral("allow"), QString());
        QTest::qWait(200);
        QCOMPARE(answered.size(), 1);

        QSignalSpy withdrawn(&server, &MonitorServer::approvalWithdrawn);
        approver.ask(question(QStringLiteral("q2")));
        approver.withdraw(QStringLiteral("q2"), QStringLiteral("no answer within 5 s"));
        QTRY_COMPARE(withdrawn.size(), 1);
        QCOMPARE(withdrawn.first().at(0).toString(), QStringLiteral("inst-2"));
        QCOMPARE(withdrawn.first().at(1).toString(), QStringLiteral("q2"));
    }

    void theWindowGoingLosesOpenQuestions()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("m.sock"));
        auto server = std::make_unique<MonitorServer>();
        QVERIFY(server->listen(path));
        MonitorPublisher publisher(path, QStringLiteral("inst-3"), QStringLiteral("http"));
        MonitorApprover approver(&publisher);
        QTRY_VERIFY(approver.isAvailable());
        QTRY_VERIFY(server->hasInstance(QStringLiteral("inst-3")));
        QSignalSpy lost(&approver, &RunApprover::lost);
        QSignalSpy asked(server.get(), &MonitorServer::approvalRequested);
        approver.ask(question(QStringLiteral("q3")));
        QTRY_COMPARE(asked.size(), 1);
        server.reset();
        QTRY_COMPARE(lost.size(), 1);
        QVERIFY(!approver.isAvailable());
    }

    void anUnnamedPeerCannotAsk()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("m.sock"));
        MonitorServer server;
        QVERIFY(server.listen(path));
        QSignalSpy asked(&server, &MonitorServer::approvalRequested);
        QLocalSocket raw;
        raw.connectToServer(path);
        QVERIFY(raw.waitForConnected(2000));
        const QJsonObject message{
            {QStringLiteral("type"), QStringLiteral("approve")},
            {QStringLiteral("request"), question(QStringLiteral("q")).toJson()}};
        raw.write(QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n');
        QVERIFY(raw.waitForBytesWritten(2000));
        QTest::qWait(300);
        QCOMPARE(asked.size(), 0);
        // Once it says who it is, it may.
        raw.write(QJsonDocument(QJsonObject{{QStringLiteral("type"), QStringLiteral("hello")},
                                            {QStringLiteral("instance"), QStringLiteral("raw")}})
                      .toJson(QJsonDocument::Compact) +
                  '\n');
        raw.write(QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n');
        QVERIFY(raw.waitForBytesWritten(2000));
        QTRY_COMPARE(asked.size(), 1);
        QCOMPARE(asked.first().first().value<ApprovalRequest>().instanceId, QStringLiteral("raw"));
    }
};

QTEST_GUILESS_MAIN(TestMonitorControl)
#include "tst_monitorcontrol.moc"
