// The monitor socket's way back, window → headless instance: stop requests and approvals, between
// a real MonitorServer and MonitorPublisher on a socket in a temporary folder; and how an instance
// finds its window: one opened later or again, and never one that is not this user's own.
#include "foreignpeer.h"
#include "monitorapprover.h"
#include "monitorpublisher.h"
#include "monitorserver.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QLocalServer>
#include <QLocalSocket>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

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
    // An instance started before the window: its first connection fails, and it keeps trying.
    void aWindowOpenedLaterIsReached()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("m.sock"));
        MonitorPublisher publisher(path, QStringLiteral("inst-late"), QStringLiteral("stdio"));
        MonitorApprover approver(&publisher);
        QVERIFY(!approver.isAvailable());
        // Its first try is over (a local connect to no socket fails within the call).
        QCoreApplication::processEvents();
        QVERIFY(!publisher.isConnected());

        MonitorServer server;
        QVERIFY(server.listen(path));
        QTRY_VERIFY_WITH_TIMEOUT(server.hasInstance(QStringLiteral("inst-late")), 15000);
        // And its approvals go to that window now, not to the "no window open" setting.
        QTRY_VERIFY(approver.isAvailable());
    }

    void theWindowIsReachedAgainAfterItRestarts()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("m.sock"));
        auto server = std::make_unique<MonitorServer>();
        QVERIFY(server->listen(path));
        MonitorPublisher publisher(path, QStringLiteral("inst-again"), QStringLiteral("http"));
        QTRY_VERIFY(server->hasInstance(QStringLiteral("inst-again")));

        server.reset();
        QTRY_VERIFY(!publisher.isConnected());
        // The scenario, not a synchronisation: the window stays closed for longer than the
        // longest pause between tries, so that several tries fail before it is back.
        QTest::qWait(2 * MonitorPublisher::kRetryMs);
        QVERIFY(!publisher.isConnected());

        server = std::make_unique<MonitorServer>();
        QVERIFY(server->listen(path));
        QTRY_VERIFY_WITH_TIMEOUT(server->hasInstance(QStringLiteral("inst-again")), 15000);
        QTRY_VERIFY(publisher.isConnected());
    }

    // The folder is looked at before every connection, not once at start: open to others, or
    // another user's, it is not used, whoever listens there.
    void anUnsafeFolderIsRefusedAtEachConnection()
    {
        QTemporaryDir dir;
        const QByteArray folder = QFile::encodeName(dir.path());
        const QString path = dir.filePath(QStringLiteral("m.sock"));
        MonitorPublisher publisher(path, QStringLiteral("inst-folder"), QStringLiteral("stdio"));
        QSignalSpy refused(&publisher, &MonitorPublisher::refused);
        QCoreApplication::processEvents();
        QCOMPARE(refused.size(), 0); // private but empty: simply no window yet

        QVERIFY(::chmod(folder.constData(), 0755) == 0);
        QLocalServer listener;
        QVERIFY(listener.listen(path));
        QSignalSpy accepted(&listener, &QLocalServer::newConnection);
        QTRY_VERIFY_WITH_TIMEOUT(refused.size() >= 2, 15000);
        QVERIFY2(refused.last().first().toString().contains(QStringLiteral("0755")),
                 qPrintable(refused.last().first().toString()));
        QCOMPARE(accepted.size(), 0);

        if (::geteuid() == 0) {
            // Mode 0700, but another user's folder.
            QVERIFY(::chmod(folder.constData(), 0700) == 0);
            QVERIFY(::chown(folder.constData(), 65534, 65534) == 0);
            const int before = int(refused.size());
            QTRY_VERIFY_WITH_TIMEOUT(refused.size() >= before + 2, 15000);
            QVERIFY2(refused.last().first().toString().contains(QStringLiteral("65534")),
                     qPrintable(refused.last().first().toString()));
            QCOMPARE(accepted.size(), 0);
            QVERIFY(::chown(folder.constData(), 0, 0) == 0);
        }
        // This user's alone again: the same instance connects.
        QVERIFY(::chmod(folder.constData(), 0700) == 0);
        QTRY_VERIFY_WITH_TIMEOUT(accepted.size() == 1, 15000);
    }

    // Another user listens where the window would (a folder it made first, say): the instance
    // sends it nothing (no hello, no code, no question), hears nothing from it, and counts it as
    // no window.
    void anotherUsersListenerGetsNothing()
    {
        if (::geteuid() != 0)
            QSKIP("needs root, to listen as another user");
        QTemporaryDir dir;
        const QByteArray folder = QFile::encodeName(dir.path());
        const QString path = dir.filePath(QStringLiteral("m.sock"));
        // Open for the other user to make its socket, then this user's alone again: the folder
        // check passes, only the listener's user is wrong.
        QVERIFY(::chmod(folder.constData(), 0777) == 0);
        const QByteArray forgedStop = R"({"type":"stop","run":"r1"})"
                                      "\n";
        ForeignPeer listener(ForeignPeer::Role::Listener, path, forgedStop);
        QVERIFY(listener.started());
        QTRY_VERIFY2(listener.count(QStringLiteral("listening")) == 1,
                     qPrintable(listener.reports().join(u'|')));
        QVERIFY(::chmod(folder.constData(), 0700) == 0);

        MonitorPublisher publisher(path, QStringLiteral("inst-foreign"), QStringLiteral("stdio"));
        MonitorApprover approver(&publisher);
        QSignalSpy refused(&publisher, &MonitorPublisher::refused);
        QSignalSpy stops(&publisher, &MonitorPublisher::stopRequested);
        QSignalSpy changes(&publisher, &MonitorPublisher::connectedChanged);
        // Dropped, and tried again later (still refused): two connections ended.
        QTRY_VERIFY2_WITH_TIMEOUT(listener.count(QStringLiteral("closed")) >= 2,
                                  qPrintable(listener.reports().join(u'|')), 15000);
        QCOMPARE(listener.bytesReceived(), 0);
        QVERIFY(!publisher.isConnected());
        QVERIFY(!approver.isAvailable());
        QVERIFY(!publisher.sendControl(MonitorProtocol::Approve{question(QStringLiteral("q"))}));
        QCOMPARE(changes.size(), 0);
        QCOMPARE(stops.size(), 0);
        QVERIFY(refused.size() >= 1); // the first came within the constructor
        QVERIFY2(refused.first().first().toString().contains(QString::number(listener.uid())),
                 qPrintable(refused.first().first().toString()));
    }
};

QTEST_GUILESS_MAIN(TestMonitorControl)
#include "tst_monitorcontrol.moc"
