// The monitor socket's lines: every message survives the trip through text, each is the line the
// instances wrote before MonitorProtocol existed (old and new instances and windows talk to each
// other), and what another process writes that is not one of them is rejected with a reason.

#include "monitorprotocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using P = MonitorProtocol;
Q_DECLARE_METATYPE(P::Direction)
Q_DECLARE_METATYPE(P::Message)

namespace {
ApprovalRequest question()
{
    ApprovalRequest r;
    r.id = QStringLiteral("q-1");
    r.client = QStringLiteral("an assistant");
    r.tool = QStringLiteral("execute_code");
    r.language = QStringLiteral("python");
    r.code = QStringLiteral("print('hi')\n");
    r.timeoutSec = 30;
    r.libraries = {QStringLiteral("numpy")};
    r.files = {{QStringLiteral("data.csv"), 12}};
    r.memoryBytes = 512 * 1024 * 1024;
    r.cpus = 1.5;
    r.network = true;
    r.mode = QStringLiteral("stdio");
    r.waitSec = 120;
    return r;
}

RunRecord run()
{
    RunRecord r;
    r.id = QStringLiteral("run-1");
    r.language = QStringLiteral("python");
    r.code = QStringLiteral("print(1)");
    return r;
}

JournalEvent journalEvent(JournalEvent::Type type)
{
    JournalEvent e{type, run(), 1, {}, {}};
    if (type == JournalEvent::Type::Output) {
        e.stream = 2;
        e.data = QByteArray("\x00\xff line\n", 8);
    } else if (type == JournalEvent::Type::Session) {
        e.run.sessionId = QStringLiteral("s-1");
        e.sessionState = QStringLiteral("busy");
    } else if (type == JournalEvent::Type::Sample) {
        e.sample = {250, 1 << 20, 12};
    } else if (type == JournalEvent::Type::Connection) {
        e.connection.id = 7;
        e.connection.host = QStringLiteral("api.example.com");
        e.connection.port = 443;
        e.connection.verdict = NetworkAttempt::Verdict::Allowed;
        e.connection.rule = QStringLiteral("api.example.com");
        e.connection.secrets = {QStringLiteral("API_KEY")};
    }
    return e;
}

// A finished run with a secret bound to a host, and the connection it was added to.
JournalEvent finishedWithSecret()
{
    JournalEvent e = journalEvent(JournalEvent::Type::Finished);
    e.run.secrets = {{QStringLiteral("API_KEY"),
                      {QStringLiteral("api.example.com"), QStringLiteral("*.example.org")}}};
    e.run.connections = {journalEvent(JournalEvent::Type::Connection).connection};
    e.run.connections.first().id = 0; // not carried in a record
    return e;
}

// What the lines were built from before: a compact JSON object and a newline.
QByteArray line(const QJsonObject &json)
{
    return QJsonDocument(json).toJson(QJsonDocument::Compact) + '\n';
}

QByteArray chomp(QByteArray bytes)
{
    bytes.chop(1);
    return bytes;
}
} // namespace

class tst_MonitorProtocol : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrip_data();
    void roundTrip();
    void linesAreAsBefore_data();
    void linesAreAsBefore();
    void fieldsArriveWhole();
    void secretsArriveByName();
    void theWhyIsCut();
    void garbageIsRejected_data();
    void garbageIsRejected();
    void hugeLines();
};

void tst_MonitorProtocol::roundTrip_data()
{
    QTest::addColumn<P::Message>("message");
    QTest::addColumn<P::Direction>("direction");
    const P::Direction toWindow = P::Direction::ToWindow;
    QTest::newRow("hello") << P::Message(P::Hello{QStringLiteral("i-1"), 4242,
                                                  QStringLiteral("http"), QStringLiteral("1.0")})
                           << toWindow;
    QTest::newRow("show") << P::Message(P::Show{}) << toWindow;
    QTest::newRow("created") << P::Message(journalEvent(JournalEvent::Type::Created)) << toWindow;
    QTest::newRow("started") << P::Message(journalEvent(JournalEvent::Type::Started)) << toWindow;
    QTest::newRow("output") << P::Message(journalEvent(JournalEvent::Type::Output)) << toWindow;
    QTest::newRow("finished") << P::Message(journalEvent(JournalEvent::Type::Finished)) << toWindow;
    QTest::newRow("session") << P::Message(journalEvent(JournalEvent::Type::Session)) << toWindow;
    QTest::newRow("sample") << P::Message(journalEvent(JournalEvent::Type::Sample)) << toWindow;
    QTest::newRow("connection with a secret")
        << P::Message(journalEvent(JournalEvent::Type::Connection)) << toWindow;
    QTest::newRow("finished with a secret") << P::Message(finishedWithSecret()) << toWindow;
    QTest::newRow("approve") << P::Message(P::Approve{question()}) << toWindow;
    QTest::newRow("withdraw") << P::Message(P::Withdraw{QStringLiteral("q-1"),
                                                        QStringLiteral("the client cancelled")})
                              << toWindow;
    QTest::newRow("stop") << P::Message(P::Stop{QStringLiteral("run-1")})
                          << P::Direction::ToInstance;
    QTest::newRow("answer") << P::Message(P::Answer{QStringLiteral("q-1"), QStringLiteral("deny"),
                                                    QStringLiteral("not now")})
                            << P::Direction::ToInstance;
}

void tst_MonitorProtocol::roundTrip()
{
    QFETCH(P::Message, message);
    QFETCH(P::Direction, direction);
    const QByteArray bytes = P::encode(message);
    QVERIFY(bytes.endsWith('\n'));
    QCOMPARE(bytes.count('\n'), 1); // one line, whatever the values hold
    const P::Decoded decoded = P::decode(chomp(bytes), direction);
    QVERIFY2(decoded.message, qPrintable(decoded.error));
    QCOMPARE(decoded.error, QString());
    QCOMPARE(decoded.message->index(), message.index());
    // Every field came back: the same line again.
    QCOMPARE(P::encode(*decoded.message), bytes);
    // And the other side does not take it.
    const P::Direction other =
        direction == P::Direction::ToWindow ? P::Direction::ToInstance : P::Direction::ToWindow;
    QVERIFY(!P::decode(chomp(bytes), other).message);
}

void tst_MonitorProtocol::linesAreAsBefore_data()
{
    QTest::addColumn<P::Message>("message");
    QTest::addColumn<QByteArray>("expected");
    QTest::newRow("hello") << P::Message(P::Hello{QStringLiteral("i-1"), 4242,
                                                  QStringLiteral("stdio"), QStringLiteral("0.9")})
                           << QByteArray(R"({"instance":"i-1","mode":"stdio","pid":4242,)"
                                         R"("type":"hello","version":"0.9"})"
                                         "\n");
    QTest::newRow("show") << P::Message(P::Show{}) << QByteArray("{\"type\":\"show\"}\n");
    QTest::newRow("stop") << P::Message(P::Stop{QStringLiteral("run-1")})
                          << QByteArray("{\"run\":\"run-1\",\"type\":\"stop\"}\n");
    QTest::newRow("answer") << P::Message(P::Answer{QStringLiteral("q-1"), QStringLiteral("allow"),
                                                    QStringLiteral("")})
                            << QByteArray(R"({"answer":"allow","id":"q-1","reason":"",)"
                                          R"("type":"approval"})"
                                          "\n");
    QTest::newRow("withdraw") << P::Message(P::Withdraw{QStringLiteral("q-1"),
                                                        QStringLiteral("timed out")})
                              << QByteArray(R"({"id":"q-1","type":"withdraw","why":"timed out"})"
                                            "\n");
    QTest::newRow("approve") << P::Message(P::Approve{question()})
                             << line({{QStringLiteral("type"), QStringLiteral("approve")},
                                      {QStringLiteral("request"), question().toJson()}});
    const JournalEvent output = journalEvent(JournalEvent::Type::Output);
    QTest::newRow("output") << P::Message(output) << line(output.toJson());
    const JournalEvent finished = journalEvent(JournalEvent::Type::Finished);
    QTest::newRow("finished") << P::Message(finished) << line(finished.toJson());
}

void tst_MonitorProtocol::linesAreAsBefore()
{
    QFETCH(P::Message, message);
    QFETCH(QByteArray, expected);
    QCOMPARE(P::encode(message), expected);
}

void tst_MonitorProtocol::fieldsArriveWhole()
{
    // As an old instance wrote them.
    P::Decoded d =
        P::decode(R"({"instance":"i-7","mode":"http","pid":99,"type":"hello","version":"2.1"})",
                  P::Direction::ToWindow);
    QVERIFY(d.message);
    const auto *hello = std::get_if<P::Hello>(&*d.message);
    QVERIFY(hello);
    QCOMPARE(hello->instance, QStringLiteral("i-7"));
    QCOMPARE(hello->pid, qint64(99));
    QCOMPARE(hello->mode, QStringLiteral("http"));
    QCOMPARE(hello->version, QStringLiteral("2.1"));
    QCOMPARE(hello->toJson().value(u"mode").toString(), QStringLiteral("http"));
    // A newer instance may say more; what this one knows still counts.
    d = P::decode(R"({"type":"hello","instance":"i-8","colour":"blue"})", P::Direction::ToWindow);
    QVERIFY(d.message);
    QCOMPARE(std::get<P::Hello>(*d.message).instance, QStringLiteral("i-8"));

    d = P::decode(R"({"type":"approval","id":"q-1","answer":"always","reason":"fine"})",
                  P::Direction::ToInstance);
    QVERIFY(d.message);
    const auto &answer = std::get<P::Answer>(*d.message);
    QCOMPARE(answer.id, QStringLiteral("q-1"));
    QCOMPARE(answer.answer, QStringLiteral("always"));
    QCOMPARE(answer.reason, QStringLiteral("fine"));

    d = P::decode(line({{QStringLiteral("type"), QStringLiteral("approve")},
                        {QStringLiteral("request"), question().toJson()}}),
                  P::Direction::ToWindow);
    QVERIFY(d.message);
    QCOMPARE(std::get<P::Approve>(*d.message).request.toJson(), question().toJson());

    d = P::decode(R"({"type":"stop","run":"run-9"})", P::Direction::ToInstance);
    QVERIFY(d.message);
    QCOMPARE(std::get<P::Stop>(*d.message).run, QStringLiteral("run-9"));
}

void tst_MonitorProtocol::secretsArriveByName()
{
    // What the window reads of a run with a bound secret: the name and hosts, and which
    // connection the gateway added it to.
    P::Decoded d = P::decode(chomp(P::encode(finishedWithSecret())), P::Direction::ToWindow);
    QVERIFY2(d.message, qPrintable(d.error));
    const JournalEvent &finished = std::get<JournalEvent>(*d.message);
    QCOMPARE(finished.run.secrets, finishedWithSecret().run.secrets);
    QCOMPARE(finished.run.connections.size(), 1);
    QCOMPARE(finished.run.connections.first().secrets, QStringList{QStringLiteral("API_KEY")});
    d = P::decode(chomp(P::encode(journalEvent(JournalEvent::Type::Connection))),
                  P::Direction::ToWindow);
    QVERIFY2(d.message, qPrintable(d.error));
    QCOMPARE(std::get<JournalEvent>(*d.message).connection,
             journalEvent(JournalEvent::Type::Connection).connection);
    // An instance from before bound secrets says nothing of them: none.
    QJsonObject old = finishedWithSecret().toJson();
    QJsonObject run = old.value(u"run").toObject();
    run.remove(QStringLiteral("secrets"));
    old.insert(QStringLiteral("run"), run);
    d = P::decode(chomp(line(old)), P::Direction::ToWindow);
    QVERIFY2(d.message, qPrintable(d.error));
    QVERIFY(std::get<JournalEvent>(*d.message).run.secrets.isEmpty());
}

void tst_MonitorProtocol::theWhyIsCut()
{
    const QString why(500, u'w');
    const QByteArray bytes = P::encode(P::Withdraw{QStringLiteral("q-1"), why});
    // Sent whole, as before; the window keeps what it shows.
    QVERIFY(bytes.contains(why.toLatin1()));
    const P::Decoded d = P::decode(chomp(bytes), P::Direction::ToWindow);
    QVERIFY(d.message);
    QCOMPARE(std::get<P::Withdraw>(*d.message).why, why.left(P::kMaxWhy));
}

void tst_MonitorProtocol::garbageIsRejected_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<P::Direction>("direction");
    const P::Direction w = P::Direction::ToWindow;
    const P::Direction i = P::Direction::ToInstance;
    const auto row = [](const char *name, const QByteArray &bytes, P::Direction d) {
        QTest::newRow(name) << bytes << d;
    };
    // Not JSON, or not an object.
    row("empty", "", w);
    row("empty to instance", "", i);
    row("text", "show", w);
    row("cut short", R"({"type":"show")", w);
    row("trailing bytes", R"({"type":"show"}x)", w);
    row("two objects", R"({"type":"show"}{"type":"show"})", w);
    row("array", R"([{"type":"show"}])", w);
    row("string", R"("show")", w);
    row("number", "42", i);
    row("null", "null", i);
    row("nul byte", QByteArray("{\"type\":\"show\"\0}", 16), w);
    row("deep nesting", R"({"type":"show","x":)" + QByteArray(100000, '['), w);
    // Objects without a type, or of no type of ours.
    row("no type", "{}", w);
    row("no type to instance", R"({"run":"run-1"})", i);
    row("type a number", R"({"type":5})", w);
    row("type an object", R"({"type":{"name":"show"}})", w);
    row("type null", R"({"type":null})", i);
    row("unknown type", R"({"type":"reboot"})", w);
    row("unknown type to instance", R"({"type":"reboot"})", i);
    row("case matters", R"({"type":"SHOW"})", w);
    // The window's messages are not the window's to read, and the other way round.
    row("stop to window", R"({"type":"stop","run":"run-1"})", w);
    row("answer to window", R"({"type":"approval","id":"q","answer":"allow"})", w);
    row("hello to instance", R"({"type":"hello","instance":"i"})", i);
    row("show to instance", R"({"type":"show"})", i);
    row("event to instance", R"({"type":"started","id":"run-1"})", i);
    // Missing or empty fields.
    row("hello without instance", R"({"type":"hello","pid":1})", w);
    row("hello empty instance", R"({"type":"hello","instance":""})", w);
    row("withdraw without id", R"({"type":"withdraw","why":"x"})", w);
    row("approve without request", R"({"type":"approve"})", w);
    row("approve empty request", R"({"type":"approve","request":{}})", w);
    row("stop without run", R"({"type":"stop"})", i);
    row("stop empty run", R"({"type":"stop","run":""})", i);
    row("answer without id", R"({"type":"approval","answer":"allow"})", i);
    row("created without run", R"({"type":"created"})", w);
    row("output without id", R"({"type":"output","data":""})", w);
    row("session without state", R"({"type":"session","session":"s"})", w);
    row("sample without counts", R"({"type":"sample","id":"run-1"})", w);
    // Wrong types.
    row("hello instance a number", R"({"type":"hello","instance":7})", w);
    row("hello pid a string", R"({"type":"hello","instance":"i","pid":"7"})", w);
    row("hello mode a number", R"({"type":"hello","instance":"i","mode":3})", w);
    row("hello version an array", R"({"type":"hello","instance":"i","version":[]})", w);
    row("withdraw id an object", R"({"type":"withdraw","id":{}})", w);
    row("withdraw why a number", R"({"type":"withdraw","id":"q","why":1})", w);
    row("approve request a string", R"({"type":"approve","request":"q"})", w);
    row("approve request an array", R"({"type":"approve","request":[{"id":"q"}]})", w);
    row("approve id too long",
        R"({"type":"approve","request":{"id":")" + QByteArray(65, 'q') + R"("}})", w);
    row("created run a string", R"({"type":"created","run":"run-1"})", w);
    row("sample count a string",
        R"({"type":"sample","id":"r","elapsed_ms":"1","memory_bytes":1,"cpu_time_ms":1})", w);
    row("sample count negative",
        R"({"type":"sample","id":"r","elapsed_ms":-1,"memory_bytes":1,"cpu_time_ms":1})", w);
    row("stop run a number", R"({"type":"stop","run":5})", i);
    row("stop run true", R"({"type":"stop","run":true})", i);
    row("answer id a number", R"({"type":"approval","id":1,"answer":"allow"})", i);
    row("answer answer a number", R"({"type":"approval","id":"q","answer":1})", i);
    row("answer reason null", R"({"type":"approval","id":"q","answer":"deny","reason":null})", i);
}

void tst_MonitorProtocol::garbageIsRejected()
{
    QFETCH(QByteArray, bytes);
    QFETCH(P::Direction, direction);
    const P::Decoded decoded = P::decode(bytes, direction);
    QVERIFY(!decoded.message);
    QVERIFY(!decoded.error.isEmpty());
    QVERIFY(decoded.type.size() <= 40);
}

void tst_MonitorProtocol::hugeLines()
{
    // Longer than the window ever says: not read at all, even if it would parse.
    const QString reason(P::kMaxLineToInstance, u'r');
    const QByteArray longAnswer =
        chomp(P::encode(P::Answer{QStringLiteral("q-1"), QStringLiteral("deny"), reason}));
    QVERIFY(longAnswer.size() > P::maxLine(P::Direction::ToInstance));
    P::Decoded d = P::decode(longAnswer, P::Direction::ToInstance);
    QVERIFY(!d.message);
    QVERIFY2(d.error.contains(QString::number(P::kMaxLineToInstance)), qPrintable(d.error));
    // Just within it, it is an answer.
    const QString fits(P::kMaxLineToInstance - 100, u'r');
    d = P::decode(chomp(P::encode(P::Answer{QStringLiteral("q-1"), QStringLiteral("deny"), fits})),
                  P::Direction::ToInstance);
    QVERIFY2(d.message, qPrintable(d.error));
    QCOMPARE(std::get<P::Answer>(*d.message).reason, fits);

    // The window reads large events (a finished run with its output), and large garbage is
    // still garbage.
    JournalEvent big = journalEvent(JournalEvent::Type::Output);
    big.data = QByteArray(16 * 1024 * 1024, 'x');
    d = P::decode(chomp(P::encode(big)), P::Direction::ToWindow);
    QVERIFY2(d.message, qPrintable(d.error));
    QCOMPARE(std::get<JournalEvent>(*d.message).data.size(), big.data.size());
    d = P::decode(QByteArray(16 * 1024 * 1024, '{'), P::Direction::ToWindow);
    QVERIFY(!d.message);
    d = P::decode(R"({"type":")" + QByteArray(16 * 1024 * 1024, 't') + R"("})",
                  P::Direction::ToWindow);
    QVERIFY(!d.message);
    QCOMPARE(d.type.size(), 40); // a log line names it, shortly
    QVERIFY(P::maxLine(P::Direction::ToWindow) >= 256 * 1024 * 1024);
}

QTEST_GUILESS_MAIN(tst_MonitorProtocol)
#include "tst_monitorprotocol.moc"
