// The journal's events as they cross the monitor socket: the engine a run was placed on reaches
// the window with the run's start (it is only known then) and with its end, and an event
// without one looks as it always did.

#include "journalevent.h"

#include <QJsonDocument>
#include <QTest>

namespace {
// Through text, as the monitor socket carries it.
JournalEvent throughText(const JournalEvent &event)
{
    const QByteArray line = QJsonDocument(event.toJson()).toJson(QJsonDocument::Compact);
    const std::optional<JournalEvent> back =
        JournalEvent::fromJson(QJsonDocument::fromJson(line).object());
    return back ? *back : JournalEvent{};
}
} // namespace

class tst_JournalEvent : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void startedCarriesTheEngine();
    void startedWithoutEngineIsUnchanged();
    void createdAndFinishedCarryTheEngine();
};

void tst_JournalEvent::startedCarriesTheEngine()
{
    JournalEvent e;
    e.type = JournalEvent::Type::Started;
    e.run.id = QStringLiteral("run-1");
    e.run.engine = QStringLiteral("ssh://ci@build-host");
    QCOMPARE(e.toJson().value(u"engine").toString(), QStringLiteral("ssh://ci@build-host"));
    const JournalEvent back = throughText(e);
    QCOMPARE(back.type, JournalEvent::Type::Started);
    QCOMPARE(back.run.id, QStringLiteral("run-1"));
    QCOMPARE(back.run.status, RunRecord::Status::Running);
    QCOMPARE(back.run.engine, QStringLiteral("ssh://ci@build-host"));
}

void tst_JournalEvent::startedWithoutEngineIsUnchanged()
{
    // One engine: nothing to name, and the line is what older windows read.
    JournalEvent e;
    e.type = JournalEvent::Type::Started;
    e.run.id = QStringLiteral("run-2");
    QCOMPARE(e.toJson(), (QJsonObject{{"type", "started"}, {"id", "run-2"}}));
    QCOMPARE(throughText(e).run.engine, QString());
    // A start from another process that names something else than a string is no engine.
    const std::optional<JournalEvent> odd =
        JournalEvent::fromJson({{"type", "started"}, {"id", "run-3"}, {"engine", 42}});
    QVERIFY(odd.has_value());
    QCOMPARE(odd->run.engine, QString());
}

void tst_JournalEvent::createdAndFinishedCarryTheEngine()
{
    for (const JournalEvent::Type type :
         {JournalEvent::Type::Created, JournalEvent::Type::Finished}) {
        JournalEvent e;
        e.type = type;
        e.run.id = QStringLiteral("run-4");
        e.run.engine = QStringLiteral("tcp://10.1.2.3:2376 (TLS)");
        QCOMPARE(throughText(e).run.engine, QStringLiteral("tcp://10.1.2.3:2376 (TLS)"));
    }
}

QTEST_GUILESS_MAIN(tst_JournalEvent)
#include "tst_journalevent.moc"
