// The journal's events as they cross the monitor socket: the engine a run was placed on reaches
// the window with the run's start (it is only known then) and with its end, and an event
// without one looks as it always did. Usage samples cross it whole, and a line from another
// process that is not a plain sample is no sample.

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
    void sampleCrossesWhole();
    void badSampleIsRefused_data();
    void badSampleIsRefused();
    void connectionCrossesWhole();
    void badConnectionIsRefused_data();
    void badConnectionIsRefused();
};

void tst_JournalEvent::startedCarriesTheEngine()
{
    JournalEvent e;
    e.type = JournalEvent::Type::Started;
    e.run.id = QStringLiteral("run-1");
    e.run.engine = QStringLiteral("ssh://ci@build-host");
    e.run.runtime = QStringLiteral("runsc");
    QCOMPARE(e.toJson().value(u"engine").toString(), QStringLiteral("ssh://ci@build-host"));
    QCOMPARE(e.toJson().value(u"runtime").toString(), QStringLiteral("runsc"));
    const JournalEvent back = throughText(e);
    QCOMPARE(back.type, JournalEvent::Type::Started);
    QCOMPARE(back.run.id, QStringLiteral("run-1"));
    QCOMPARE(back.run.status, RunRecord::Status::Running);
    QCOMPARE(back.run.engine, QStringLiteral("ssh://ci@build-host"));
    QCOMPARE(back.run.runtime, QStringLiteral("runsc"));
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

void tst_JournalEvent::sampleCrossesWhole()
{
    JournalEvent e;
    e.type = JournalEvent::Type::Sample;
    e.run.id = QStringLiteral("run-5");
    e.sample = {1750, 48 * 1024 * 1024 + 17, 1234};
    QCOMPARE(e.toJson(), (QJsonObject{{"type", "sample"},
                                      {"id", "run-5"},
                                      {"elapsed_ms", 1750},
                                      {"memory_bytes", 48 * 1024 * 1024 + 17},
                                      {"cpu_time_ms", 1234}}));
    const JournalEvent back = throughText(e);
    QCOMPARE(back.type, JournalEvent::Type::Sample);
    QCOMPARE(back.run.id, QStringLiteral("run-5"));
    QCOMPARE(back.sample.elapsedMs, qint64(1750));
    QCOMPARE(back.sample.memoryBytes, qint64(48 * 1024 * 1024 + 17));
    QCOMPARE(back.sample.cpuTimeMs, qint64(1234));
    // A sandbox near 2^40 bytes (large hosts) is still exact.
    e.sample.memoryBytes = qint64(1) << 40;
    QCOMPARE(throughText(e).sample.memoryBytes, qint64(1) << 40);
    // Zero is a reading (an idle sandbox at its first sample).
    e.sample = {0, 0, 0};
    QVERIFY(JournalEvent::fromJson(e.toJson()).has_value());
}

void tst_JournalEvent::badSampleIsRefused_data()
{
    QTest::addColumn<QJsonObject>("json");
    const QJsonObject good{{"type", "sample"},
                           {"id", "run-6"},
                           {"elapsed_ms", 500},
                           {"memory_bytes", 1048576},
                           {"cpu_time_ms", 20}};
    QVERIFY(JournalEvent::fromJson(good).has_value());
    const auto with = [&good](const char *key, const QJsonValue &value) {
        QJsonObject o = good;
        o.insert(QLatin1String(key), value);
        return o;
    };
    const auto without = [&good](const char *key) {
        QJsonObject o = good;
        o.remove(QLatin1String(key));
        return o;
    };
    QTest::newRow("no id") << without("id");
    QTest::newRow("empty id") << with("id", "");
    QTest::newRow("id not a string") << with("id", 7);
    QTest::newRow("no elapsed") << without("elapsed_ms");
    QTest::newRow("no memory") << without("memory_bytes");
    QTest::newRow("no cpu") << without("cpu_time_ms");
    QTest::newRow("negative memory") << with("memory_bytes", -1);
    QTest::newRow("negative elapsed") << with("elapsed_ms", -500);
    QTest::newRow("negative cpu") << with("cpu_time_ms", -3);
    QTest::newRow("memory as text") << with("memory_bytes", "1048576");
    QTest::newRow("memory as object") << with("memory_bytes", QJsonObject{{"v", 1}});
    QTest::newRow("fractional cpu") << with("cpu_time_ms", 20.5);
    QTest::newRow("memory past 2^53") << with("memory_bytes", 1e300);
    QTest::newRow("cpu null") << with("cpu_time_ms", QJsonValue::Null);
    QTest::newRow("elapsed bool") << with("elapsed_ms", true);
}

void tst_JournalEvent::badSampleIsRefused()
{
    QFETCH(QJsonObject, json);
    QVERIFY(!JournalEvent::fromJson(json).has_value());
}

void tst_JournalEvent::connectionCrossesWhole()
{
    JournalEvent e;
    e.type = JournalEvent::Type::Connection;
    e.run.id = QStringLiteral("run-7");
    e.connection.id = 42;
    e.connection.host = QStringLiteral("api.github.com");
    e.connection.port = 443;
    e.connection.verdict = NetworkAttempt::Verdict::Allowed;
    e.connection.rule = QStringLiteral("*.github.com");
    JournalEvent back = throughText(e);
    QCOMPARE(back.type, JournalEvent::Type::Connection);
    QCOMPARE(back.run.id, QStringLiteral("run-7"));
    QCOMPARE(back.connection, e.connection);
    // Once it ended: bytes each way and its duration.
    e.connection.bytesUp = 517;
    e.connection.bytesDown = qint64(1) << 33;
    e.connection.ms = 1200;
    back = throughText(e);
    QCOMPARE(back.connection, e.connection);
    // Held while a person is asked: "asking", with no rule yet.
    JournalEvent held = e;
    held.connection.id = 43;
    held.connection.verdict = NetworkAttempt::Verdict::Held;
    held.connection.rule.clear();
    held.connection.bytesUp = held.connection.bytesDown = held.connection.ms = -1;
    QCOMPARE(held.toJson().value(u"connection").toObject().value(u"verdict").toString(),
             QStringLiteral("asking"));
    QCOMPARE(throughText(held).connection, held.connection);
    // The gateway added a secret to its request: named, live and in the record.
    JournalEvent withSecret = e;
    withSecret.connection.secrets = {QStringLiteral("API_KEY"), QStringLiteral("OTHER")};
    QCOMPARE(throughText(withSecret).connection, withSecret.connection);
    // And in a finished record (the history's and a late window's copy), all of them.
    JournalEvent finished;
    finished.type = JournalEvent::Type::Finished;
    finished.run.id = QStringLiteral("run-7");
    finished.run.status = RunRecord::Status::Ok;
    NetworkAttempt refused;
    refused.host = QStringLiteral("evil.example");
    refused.port = 80;
    refused.rule = QStringLiteral("not on the allow-list");
    NetworkAttempt added = withSecret.connection;
    added.id = 0; // a record's attempts carry no gateway id
    finished.run.connections = {e.connection, refused, added};
    finished.run.secrets = {{QStringLiteral("API_KEY"), {QStringLiteral("api.github.com")}},
                            {QStringLiteral("OTHER"), {QStringLiteral("*.github.com")}}};
    const QList<NetworkAttempt> kept = throughText(finished).run.connections;
    QCOMPARE(kept.size(), 3);
    QCOMPARE(kept.at(1), refused);
    QCOMPARE(kept.at(2), added);
    QCOMPARE(throughText(finished).run.secrets, finished.run.secrets);
    QCOMPARE(kept.at(0).bytesDown, qint64(1) << 33);
}

void tst_JournalEvent::badConnectionIsRefused_data()
{
    QTest::addColumn<QJsonObject>("json");
    const QJsonObject attempt{
        {"host", "pypi.org"}, {"port", 443}, {"verdict", "refused"}, {"rule", "not listed"}};
    const QJsonObject good{
        {"type", "connection"}, {"id", "run-8"}, {"connection", attempt}, {"connection_id", 3}};
    QVERIFY(JournalEvent::fromJson(good).has_value());
    const auto with = [&good](const char *key, const QJsonValue &value) {
        QJsonObject o = good;
        o.insert(QLatin1String(key), value);
        return o;
    };
    const auto withAttempt = [&good, &attempt](const char *key, const QJsonValue &value) {
        QJsonObject a = attempt;
        if (value.isUndefined())
            a.remove(QLatin1String(key));
        else
            a.insert(QLatin1String(key), value);
        QJsonObject o = good;
        o.insert(QStringLiteral("connection"), a);
        return o;
    };
    QTest::newRow("no id") << with("id", "");
    QTest::newRow("no connection") << with("connection", QJsonValue::Undefined);
    QTest::newRow("connection not an object") << with("connection", "pypi.org:443");
    QTest::newRow("no connection id") << with("connection_id", QJsonValue::Undefined);
    QTest::newRow("negative connection id") << with("connection_id", -1);
    QTest::newRow("no host") << withAttempt("host", QJsonValue::Undefined);
    QTest::newRow("empty host") << withAttempt("host", "");
    QTest::newRow("a host too long") << withAttempt("host", QString(300, u'a'));
    QTest::newRow("port 0") << withAttempt("port", 0);
    QTest::newRow("port past 65535") << withAttempt("port", 70000);
    QTest::newRow("port as text") << withAttempt("port", "443");
    QTest::newRow("an unknown verdict") << withAttempt("verdict", "maybe");
    QTest::newRow("no verdict") << withAttempt("verdict", QJsonValue::Undefined);
}

void tst_JournalEvent::badConnectionIsRefused()
{
    QFETCH(QJsonObject, json);
    QVERIFY(!JournalEvent::fromJson(json).has_value());
}

QTEST_GUILESS_MAIN(tst_JournalEvent)
#include "tst_journalevent.moc"
