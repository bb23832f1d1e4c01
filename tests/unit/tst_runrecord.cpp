#include "runrecord.h"
#include "runrecordcompare.h"
#include "workspacefixture.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

using Chunks = QList<OutputChunk>;
Q_DECLARE_METATYPE(OutputChunk)
Q_DECLARE_METATYPE(RunRecord::Status)

namespace {
// Every field set, `complete` too (false is not its default).
RunRecord fullRecord()
{
    RunRecord r = everyFieldSet();
    r.complete = false;
    return r;
}

QJsonObject parse(const char *json)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError)
        qFatal("bad test JSON: %s", qPrintable(error.errorString()));
    return doc.object();
}
} // namespace

class tst_RunRecord : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void defaults();
    void jsonRoundTrip();
    void jsonRoundTripThroughText();
    void jsonRoundTripOfDefaults();
    void jsonWithoutEnvValues();
    void jsonFormat();
    void fromJsonGarbage_data();
    void fromJsonGarbage();
    void fromJsonSkipsBadElements();
    void statusNames_data();
    void statusNames();
    void statusFromUnknownName_data();
    void statusFromUnknownName();
    void appendOutput();
    void streamTexts();
    void applyResult_data();
    void applyResult();
    void applyResultFields();
    void applyResultKeepsImageAndContainer();
    void applyResultKeepsWorkspaces();
    void workspacesWithinTheContentBudget();
    void workspacesFromJsonSkipsBadElements();
    void packRoundTrip_data();
    void packRoundTrip();
    void packFormat();
    void packSkipsInvalidStreams();
    void unpackTruncated();
    void unpackGarbage_data();
    void unpackGarbage();
};

void tst_RunRecord::defaults()
{
    const RunRecord r;
    QCOMPARE(r.status, RunRecord::Status::Queued);
    QVERIFY(!r.isFinished());
    QCOMPARE(r.durationMs, -1);
    QCOMPARE(r.exitCode, -1);
    QCOMPARE(r.peakMemoryBytes, -1);
    QCOMPARE(r.cpuTimeMs, -1);
    QVERIFY(r.complete);
    QVERIFY(r.stdoutText().isEmpty());
    QVERIFY(r.stderrText().isEmpty());
}

void tst_RunRecord::jsonRoundTrip()
{
    const RunRecord original = fullRecord();
    compareRecords(RunRecord::fromJson(original.toJson()), original);
}

void tst_RunRecord::jsonRoundTripThroughText()
{
    // What the monitor socket does: the object as bytes and back.
    const RunRecord original = fullRecord();
    const QByteArray text = QJsonDocument(original.toJson()).toJson(QJsonDocument::Compact);
    compareRecords(RunRecord::fromJson(QJsonDocument::fromJson(text).object()), original);
}

void tst_RunRecord::jsonRoundTripOfDefaults()
{
    const RunRecord original;
    const RunRecord copy = RunRecord::fromJson(original.toJson());
    compareRecords(copy, original);
    QVERIFY(!copy.createdAt.isValid());
    QVERIFY(!copy.finishedAt.isValid());
}

void tst_RunRecord::jsonWithoutEnvValues()
{
    const RunRecord original = fullRecord();
    const QJsonObject json = original.toJson(false);
    QVERIFY(!json.contains(QLatin1String("envValues")));
    const QByteArray text = QJsonDocument(json).toJson();
    QVERIFY2(!text.contains("s3cr3t"), text.constData());

    const RunRecord copy = RunRecord::fromJson(json);
    QCOMPARE(copy.envNames, original.envNames);
    QVERIFY(copy.envValues.isEmpty());
    // Bound secrets are names and hosts: kept in what is stored.
    QCOMPARE(copy.secrets, original.secrets);
    RunRecord expected = original;
    expected.envValues.clear();
    compareRecords(copy, expected);
}

void tst_RunRecord::jsonFormat()
{
    const QJsonObject json = fullRecord().toJson();
    QCOMPARE(json.value(QLatin1String("status")).toString(), QStringLiteral("timed out"));
    QCOMPARE(json.value(QLatin1String("createdAt")).toString(),
             QStringLiteral("2024-02-29T23:59:58.123Z"));
    QCOMPARE(json.value(QLatin1String("finishedAt")).toString(),
             QStringLiteral("2024-03-01T00:00:01.007Z"));
    const QJsonArray output = json.value(QLatin1String("output")).toArray();
    QCOMPARE(output.size(), 3);
    QCOMPARE(output.at(0).toObject().value(QLatin1String("stream")).toInt(), 1);
    QCOMPARE(output.at(0).toObject().value(QLatin1String("data")).toString(),
             QString::fromLatin1(QByteArray("out\0put\n", 8).toBase64()));
    const QJsonObject plot = json.value(QLatin1String("files")).toArray().at(0).toObject();
    QCOMPARE(plot.value(QLatin1String("kind")).toString(), QStringLiteral("plot"));
    QCOMPARE(plot.value(QLatin1String("mime")).toString(), QStringLiteral("image/png"));
    QCOMPARE(plot.value(QLatin1String("data")).toString(),
             QString::fromLatin1(pngish().toBase64()));
    const QJsonObject other = json.value(QLatin1String("files")).toArray().at(1).toObject();
    QCOMPARE(other.value(QLatin1String("kind")).toString(), QStringLiteral("output"));
    QCOMPARE(other.value(QLatin1String("included")).toBool(), false);
    QCOMPARE(json.value(QLatin1String("envValues")).toArray().at(0).toArray(),
             (QJsonArray{QStringLiteral("API_KEY"), QStringLiteral("s3cr3t")}));
    QCOMPARE(json.value(QLatin1String("envNames")).toArray().size(), 2);
    const QJsonArray secrets = json.value(QLatin1String("secrets")).toArray();
    QCOMPARE(secrets.size(), 2);
    QCOMPARE(secrets.at(0).toObject(),
             (QJsonObject{{QStringLiteral("name"), QStringLiteral("API_KEY")},
                          {QStringLiteral("hosts"), QJsonArray{QStringLiteral("api.example.com"),
                                                               QStringLiteral("*.example.org")}}}));
    QCOMPARE(secrets.at(1).toObject().value(QLatin1String("hosts")).toArray(), QJsonArray());
    // The attempt the gateway added a secret to says which, by name.
    QCOMPARE(json.value(QLatin1String("connections"))
                 .toArray()
                 .at(0)
                 .toObject()
                 .value(QLatin1String("secrets_added"))
                 .toArray(),
             QJsonArray{QStringLiteral("API_KEY")});
    QVERIFY(!json.value(QLatin1String("connections"))
                 .toArray()
                 .at(1)
                 .toObject()
                 .contains(QLatin1String("secrets_added")));
}

void tst_RunRecord::fromJsonGarbage_data()
{
    QTest::addColumn<QByteArray>("json");

    QTest::newRow("empty object") << QByteArray("{}");
    QTest::newRow("unknown keys") << QByteArray(R"({"foo": 1, "bar": [1, 2, {"x": null}]})");
    QTest::newRow("nulls everywhere") << QByteArray(
        R"({"id": null, "instancePid": null, "status": null, "createdAt": null,
            "durationMs": null, "exitCode": null, "cpus": null, "envNames": null,
            "envValues": null, "output": null, "files": null, "complete": null})");
    QTest::newRow("wrong types") << QByteArray(
        R"({"id": 12, "instanceId": true, "instancePid": "12", "source": [], "tool": {},
            "language": 1.5, "code": false, "status": 2, "createdAt": 1700000000000,
            "finishedAt": [], "durationMs": "5", "exitCode": "0", "timeoutSec": true,
            "outOfMemory": "yes", "compileError": 1, "truncated": "true", "error": 0,
            "notes": "a note", "image": null, "containerId": 7, "memoryBytes": "1G",
            "cpus": "2", "pidsLimit": {}, "network": "on", "peakMemoryBytes": [],
            "cpuTimeMs": false, "envNames": "A,B", "envValues": {"A": "x"}, "output": "text",
            "files": {"name": "x"}, "complete": "no", "secrets": {"name": "A"},
            "connections": "pypi.org", "workspaces": {"name": "repo"}})");
    QTest::newRow("out of range numbers") << QByteArray(
        R"({"exitCode": 1e300, "timeoutSec": -1e20, "pidsLimit": 3000000000,
            "durationMs": 1e300, "instancePid": -1e300, "memoryBytes": 1.5e19,
            "cpuTimeMs": 0.5, "peakMemoryBytes": 1e-300})");
    QTest::newRow("bad dates") << QByteArray(
        R"({"createdAt": "yesterday", "finishedAt": "2024-13-45T99:99:99.999Z"})");
    QTest::newRow("unknown status") << QByteArray(R"({"status": "exploded"})");
    QTest::newRow("nested nonsense") << QByteArray(
        R"({"output": [1, "x", null, [], [[{}]], {"stream": "1"}, {"stream": 3, "data": "eA=="},
                       {"stream": 1.5, "data": "eA=="}, {"stream": -1, "data": "eA=="}],
            "files": [1, "x", null, [[]], {"data": 5}, {"kind": 9}],
            "envValues": [1, [], ["A"], ["A", 1], [null, "x"], ["A", "B", "C"], "AB", {}],
            "notes": [1, null, {}, []], "envNames": [[], {}, 2],
            "secrets": [1, "A", null, [], {}, {"name": 5}, {"name": ""}, {"hosts": ["h"]}]})");
    QTest::newRow("deeply nested") << QByteArray(R"({"output": [[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]],
                                                     "files": {"files": {"files": {}}}})");
}

void tst_RunRecord::fromJsonGarbage()
{
    QFETCH(QByteArray, json);

    QJsonParseError error;
    const QJsonObject object = QJsonDocument::fromJson(json, &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);

    // Whatever came in: plain defaults for what was unusable, never a crash.
    const RunRecord r = RunRecord::fromJson(object);
    const RunRecord defaults;
    QVERIFY(r.id.isEmpty());
    QVERIFY(r.instanceId.isEmpty());
    QCOMPARE(r.instancePid, defaults.instancePid);
    QVERIFY(r.source.isEmpty());
    QVERIFY(r.tool.isEmpty());
    QVERIFY(r.language.isEmpty());
    QVERIFY(r.code.isEmpty());
    QCOMPARE(r.status, RunRecord::Status::Queued);
    QVERIFY(!r.createdAt.isValid());
    QVERIFY(!r.finishedAt.isValid());
    QCOMPARE(r.durationMs, defaults.durationMs);
    QCOMPARE(r.exitCode, defaults.exitCode);
    QCOMPARE(r.timeoutSec, defaults.timeoutSec);
    QCOMPARE(r.outOfMemory, false);
    QCOMPARE(r.compileError, false);
    QCOMPARE(r.truncated, false);
    QVERIFY(r.error.isEmpty());
    QVERIFY(r.notes.isEmpty());
    QVERIFY(r.image.isEmpty());
    QVERIFY(r.containerId.isEmpty());
    QCOMPARE(r.memoryBytes, defaults.memoryBytes);
    QCOMPARE(r.cpus, defaults.cpus);
    QCOMPARE(r.pidsLimit, defaults.pidsLimit);
    QCOMPARE(r.network, false);
    QCOMPARE(r.peakMemoryBytes, defaults.peakMemoryBytes);
    QCOMPARE(r.cpuTimeMs, defaults.cpuTimeMs);
    QVERIFY(r.envNames.isEmpty());
    QVERIFY(r.envValues.isEmpty());
    QVERIFY(r.secrets.isEmpty());
    QVERIFY(r.connections.isEmpty());
    QVERIFY(r.workspaces.isEmpty());
    QVERIFY(r.output.isEmpty());
    QCOMPARE(r.complete, true);
    // Files: only objects count, and an object of nonsense is a default file.
    for (const OutputFile &f : r.files) {
        QVERIFY(f.name.isEmpty());
        QVERIFY(f.data.isEmpty());
        QCOMPARE(f.size, 0);
        QCOMPARE(f.kind, OutputFile::Kind::Output);
        QVERIFY(f.included);
    }
}

void tst_RunRecord::fromJsonSkipsBadElements()
{
    // The good elements among bad ones survive.
    const RunRecord r = RunRecord::fromJson(parse(
        R"({"output": [7, {"stream": 2, "data": "aGk="}, {"stream": 9, "data": "aGk="},
                       {"stream": 1, "data": "not base64!"}, {"stream": 1}],
            "files": ["x", {"kind": "plot", "name": "a.png", "data": "AAE="}],
            "envValues": [["A", "1"], ["B"], ["C", "3"]],
            "secrets": [{"name": "K", "hosts": ["a.example", 7, null, "b.example"]}, {"hosts": []},
                        "L", {"name": "M"}],
            "notes": ["one", 2, "three"]})"));
    QCOMPARE(r.output.size(), 3);
    QCOMPARE(r.output.at(0).stream, 2);
    QCOMPARE(r.output.at(0).data, QByteArray("hi"));
    QCOMPARE(r.output.at(1).data, QByteArray()); // undecodable data: empty, not half of it
    QCOMPARE(r.output.at(2).data, QByteArray());
    QCOMPARE(r.files.size(), 1);
    QCOMPARE(r.files.at(0).kind, OutputFile::Kind::Plot);
    QCOMPARE(r.files.at(0).data, QByteArray("\0\1", 2));
    QCOMPARE(r.files.at(0).size, 2); // no size given: the data's
    QCOMPARE(r.envValues.size(), 2);
    QCOMPARE(r.envValues.at(1).first, QStringLiteral("C"));
    QCOMPARE(r.notes, (QStringList{QStringLiteral("one"), QStringLiteral("three")}));
    const QList<BoundSecret> secrets{
        {QStringLiteral("K"), {QStringLiteral("a.example"), QStringLiteral("b.example")}},
        {QStringLiteral("M"), {}}};
    QCOMPARE(r.secrets, secrets);
}

void tst_RunRecord::statusNames_data()
{
    QTest::addColumn<RunRecord::Status>("status");
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("finished");

    QTest::newRow("queued") << RunRecord::Status::Queued << QStringLiteral("queued") << false;
    QTest::newRow("running") << RunRecord::Status::Running << QStringLiteral("running") << false;
    QTest::newRow("ok") << RunRecord::Status::Ok << QStringLiteral("ok") << true;
    QTest::newRow("error") << RunRecord::Status::Error << QStringLiteral("error") << true;
    QTest::newRow("timed out") << RunRecord::Status::TimedOut << QStringLiteral("timed out")
                               << true;
    QTest::newRow("cancelled") << RunRecord::Status::Cancelled << QStringLiteral("cancelled")
                               << true;
}

void tst_RunRecord::statusNames()
{
    QFETCH(RunRecord::Status, status);
    QFETCH(QString, name);
    QFETCH(bool, finished);

    QCOMPARE(RunRecord::statusName(status), name);
    bool ok = false;
    QCOMPARE(RunRecord::statusFromName(name, &ok), status);
    QVERIFY(ok);
    QCOMPARE(RunRecord::statusFromName(name), status);
    RunRecord r;
    r.status = status;
    QCOMPARE(r.isFinished(), finished);
    QCOMPARE(RunRecord::fromJson(r.toJson()).status, status);
}

void tst_RunRecord::statusFromUnknownName_data()
{
    QTest::addColumn<QString>("name");

    QTest::newRow("empty") << QString();
    QTest::newRow("unknown") << QStringLiteral("exploded");
    QTest::newRow("enum spelling") << QStringLiteral("TimedOut");
    QTest::newRow("trailing space") << QStringLiteral("ok ");
}

void tst_RunRecord::statusFromUnknownName()
{
    QFETCH(QString, name);

    bool ok = true;
    QCOMPARE(RunRecord::statusFromName(name, &ok), RunRecord::Status::Queued);
    QVERIFY(!ok);
}

void tst_RunRecord::appendOutput()
{
    RunRecord r;
    r.appendOutput(1, "a");
    r.appendOutput(1, "b");
    r.appendOutput(2, QByteArray());
    r.appendOutput(2, "c");
    r.appendOutput(1, QByteArray());
    r.appendOutput(2, QByteArray("\0d", 2));
    r.appendOutput(1, "e");

    QCOMPARE(r.output.size(), 3);
    QCOMPARE(r.output.at(0).stream, 1);
    QCOMPARE(r.output.at(0).data, QByteArray("ab"));
    QCOMPARE(r.output.at(1).stream, 2);
    QCOMPARE(r.output.at(1).data, QByteArray("c\0d", 3));
    QCOMPARE(r.output.at(2).stream, 1);
    QCOMPARE(r.output.at(2).data, QByteArray("e"));

    RunRecord empty;
    empty.appendOutput(1, QByteArray());
    QVERIFY(empty.output.isEmpty());
}

void tst_RunRecord::streamTexts()
{
    const RunRecord r = fullRecord();
    QCOMPARE(r.stdoutText(), QByteArray("out\0put\nmore", 12));
    QCOMPARE(r.stderrText(), everyByte());
}

void tst_RunRecord::applyResult_data()
{
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<bool>("timedOut");
    QTest::addColumn<bool>("cancelled");
    QTest::addColumn<QString>("error");
    QTest::addColumn<RunRecord::Status>("status");

    QTest::newRow("exit 0") << 0 << false << false << QString() << RunRecord::Status::Ok;
    QTest::newRow("exit 1") << 1 << false << false << QString() << RunRecord::Status::Error;
    QTest::newRow("killed") << 137 << false << false << QString() << RunRecord::Status::Error;
    QTest::newRow("no exit code") << -1 << false << false << QString() << RunRecord::Status::Error;
    QTest::newRow("timed out") << -1 << true << false << QString() << RunRecord::Status::TimedOut;
    QTest::newRow("timed out with exit 0")
        << 0 << true << false << QString() << RunRecord::Status::TimedOut;
    QTest::newRow("cancelled") << -1 << false << true << QString() << RunRecord::Status::Cancelled;
    QTest::newRow("cancelled with exit 0")
        << 0 << false << true << QString() << RunRecord::Status::Cancelled;
    QTest::newRow("timed out and cancelled")
        << -1 << true << true << QString() << RunRecord::Status::TimedOut;
    QTest::newRow("sandbox error")
        << -1 << false << false << QStringLiteral("engine down") << RunRecord::Status::Error;
    QTest::newRow("sandbox error beats everything")
        << 0 << true << true << QStringLiteral("image missing") << RunRecord::Status::Error;
}

void tst_RunRecord::applyResult()
{
    QFETCH(int, exitCode);
    QFETCH(bool, timedOut);
    QFETCH(bool, cancelled);
    QFETCH(QString, error);
    QFETCH(RunRecord::Status, status);

    ExecutionResult result;
    result.exitCode = exitCode;
    result.timedOut = timedOut;
    result.cancelled = cancelled;
    result.error = error;

    RunRecord r;
    r.status = RunRecord::Status::Running;
    r.applyResult(result);
    QCOMPARE(r.status, status);
    QCOMPARE(r.exitCode, exitCode);
    QCOMPARE(r.error, error);
    QVERIFY(r.isFinished());
}

void tst_RunRecord::applyResultFields()
{
    ExecutionResult result;
    result.exitCode = 3;
    result.durationMs = 1234;
    result.outOfMemory = true;
    result.compileError = true;
    result.stderrTruncated = true;
    result.notes = QStringList{QStringLiteral("a note")};
    result.image = QStringLiteral("img:1");
    result.containerId = QStringLiteral("c0ffee");
    result.engine = QStringLiteral("tcp://127.0.0.1:23760 (TLS)");
    result.runtime = QStringLiteral("runsc");
    result.preloaded = QStringList{QStringLiteral("numpy")};
    result.timeoutSec = 45;
    OutputFile f;
    f.name = QStringLiteral("out.csv");
    f.data = "x,y\n";
    f.size = 4;
    result.files = {f};

    RunRecord r;
    r.timeoutSec = 10;
    r.output = Chunks{{1, "kept"}};
    const QDateTime before = QDateTime::currentDateTimeUtc();
    r.applyResult(result);
    const QDateTime after = QDateTime::currentDateTimeUtc();

    QCOMPARE(r.status, RunRecord::Status::Error);
    QCOMPARE(r.exitCode, 3);
    QCOMPARE(r.durationMs, 1234);
    QVERIFY(r.outOfMemory);
    QVERIFY(r.compileError);
    QVERIFY(r.truncated);
    QCOMPARE(r.notes, result.notes);
    QCOMPARE(r.image, QStringLiteral("img:1"));
    QCOMPARE(r.containerId, QStringLiteral("c0ffee"));
    QCOMPARE(r.engine, QStringLiteral("tcp://127.0.0.1:23760 (TLS)"));
    QCOMPARE(r.runtime, QStringLiteral("runsc"));
    QCOMPARE(r.preloaded, QStringList{QStringLiteral("numpy")});
    QCOMPARE(r.timeoutSec, 45);
    QCOMPARE(r.files.size(), 1);
    QCOMPARE(r.files.at(0).data, QByteArray("x,y\n"));
    QVERIFY(r.finishedAt.isValid());
    QCOMPARE(r.finishedAt.timeSpec(), Qt::UTC);
    QVERIFY(r.finishedAt >= before && r.finishedAt <= after);
    // The output came live, chunk by chunk: the result's copy of it does not double it.
    QCOMPARE(r.output.size(), 1);

    // stdout truncated counts as well; a result without a timeout keeps the record's.
    ExecutionResult second;
    second.exitCode = 0;
    second.stdoutTruncated = true;
    RunRecord s;
    s.timeoutSec = 10;
    s.applyResult(second);
    QVERIFY(s.truncated);
    QCOMPARE(s.timeoutSec, 10);
    QCOMPARE(s.status, RunRecord::Status::Ok);
    QVERIFY(!s.outOfMemory);
}

void tst_RunRecord::applyResultKeepsImageAndContainer()
{
    // A sandbox error before the container existed knows neither.
    RunRecord r;
    r.image = QStringLiteral("img:2");
    r.containerId = QStringLiteral("abc");
    r.engine = QStringLiteral("ssh://gpu-box");
    r.notes = QStringList{QStringLiteral("old")};
    ExecutionResult result;
    result.error = QStringLiteral("engine down");
    r.applyResult(result);
    QCOMPARE(r.image, QStringLiteral("img:2"));
    QCOMPARE(r.containerId, QStringLiteral("abc"));
    QCOMPARE(r.engine, QStringLiteral("ssh://gpu-box"));
    QVERIFY(r.notes.isEmpty());
    QCOMPARE(r.error, QStringLiteral("engine down"));
}

void tst_RunRecord::packRoundTrip_data()
{
    QTest::addColumn<Chunks>("chunks");

    QTest::newRow("none") << Chunks{};
    QTest::newRow("one") << Chunks{{1, "hello\n"}};
    QTest::newRow("empty chunk") << Chunks{{2, QByteArray()}};
    QTest::newRow("both streams") << Chunks{{1, "a"}, {2, "b"}, {1, "c"}, {2, QByteArray()}};
    QTest::newRow("binary") << Chunks{{2, everyByte()}, {1, QByteArray(10, '\0')}};
    QTest::newRow("large") << Chunks{{1, QByteArray(1 << 20, 'x')}, {2, QByteArray(70000, 'y')}};
    QTest::newRow("full record") << fullRecord().output;
}

void tst_RunRecord::packRoundTrip()
{
    QFETCH(Chunks, chunks);

    const QByteArray blob = RunRecord::packOutput(chunks);
    qsizetype expectedSize = 0;
    for (const OutputChunk &c : chunks)
        expectedSize += 5 + c.data.size();
    QCOMPARE(blob.size(), expectedSize);

    const Chunks back = RunRecord::unpackOutput(blob);
    QCOMPARE(back.size(), chunks.size());
    for (int i = 0; i < back.size(); ++i) {
        QCOMPARE(back.at(i).stream, chunks.at(i).stream);
        QCOMPARE(back.at(i).data, chunks.at(i).data);
    }
}

void tst_RunRecord::packFormat()
{
    const QByteArray blob = RunRecord::packOutput(Chunks{{1, "hi"}, {2, QByteArray(258, 'z')}});
    QCOMPARE(blob.left(7), QByteArray("\x01\x00\x00\x00\x02hi", 7));
    QCOMPARE(blob.mid(7, 5), QByteArray("\x02\x00\x00\x01\x02", 5));
    QCOMPARE(blob.size(), 7 + 5 + 258);
}

void tst_RunRecord::packSkipsInvalidStreams()
{
    // A stream byte unpackOutput would take for garbage must not hide the chunks after it.
    const Chunks back = RunRecord::unpackOutput(
        RunRecord::packOutput(Chunks{{1, "a"}, {0, "x"}, {258, "y"}, {-1, "z"}, {2, "b"}}));
    QCOMPARE(back.size(), 2);
    QCOMPARE(back.at(0).data, QByteArray("a"));
    QCOMPARE(back.at(1).data, QByteArray("b"));
}

void tst_RunRecord::unpackTruncated()
{
    const Chunks chunks{
        {1, "first"}, {2, QByteArray("\0\0\0\0", 4)}, {1, QByteArray()}, {2, "last chunk"}};
    const QByteArray blob = RunRecord::packOutput(chunks);
    // Where each chunk ends: a cut at or beyond it keeps it whole.
    QList<qsizetype> ends;
    qsizetype end = 0;
    for (const OutputChunk &c : chunks) {
        end += 5 + c.data.size();
        ends.append(end);
    }
    for (qsizetype cut = 0; cut <= blob.size(); ++cut) {
        const Chunks back = RunRecord::unpackOutput(blob.left(cut));
        qsizetype complete = 0;
        while (complete < ends.size() && ends.at(complete) <= cut)
            ++complete;
        QVERIFY2(back.size() == complete,
                 qPrintable(QStringLiteral("cut at %1: %2 chunks").arg(cut).arg(back.size())));
        for (qsizetype i = 0; i < back.size(); ++i) {
            QCOMPARE(back.at(i).stream, chunks.at(i).stream);
            QCOMPARE(back.at(i).data, chunks.at(i).data);
        }
    }
}

void tst_RunRecord::unpackGarbage_data()
{
    QTest::addColumn<QByteArray>("blob");
    QTest::addColumn<int>("chunks"); // the complete chunks before the garbage

    const QByteArray good = RunRecord::packOutput(Chunks{{1, "ok"}});
    QTest::newRow("empty") << QByteArray() << 0;
    QTest::newRow("text") << QByteArray("hello world, not a blob") << 0;
    QTest::newRow("huge length") << QByteArray("\x01\xff\xff\xff\xffxyz", 8) << 0;
    QTest::newRow("length one past the end") << QByteArray("\x01\x00\x00\x00\x04xyz", 8) << 0;
    QTest::newRow("stream zero") << QByteArray("\x00\x00\x00\x00\x01x", 6) << 0;
    QTest::newRow("stream three") << QByteArray("\x03\x00\x00\x00\x01x", 6) << 0;
    QTest::newRow("good then huge length") << good + QByteArray("\x02\x7f\xff\xff\xff", 5) << 1;
    QTest::newRow("good then bad stream") << good + QByteArray("\xff\x00\x00\x00\x00", 5) << 1;
    QTest::newRow("good then stray bytes") << good + QByteArray("\x01\x00", 2) << 1;
    QTest::newRow("every byte") << everyByte() << 0;
    QTest::newRow("all 0xff") << QByteArray(64, '\xff') << 0;
}

void tst_RunRecord::unpackGarbage()
{
    QFETCH(QByteArray, blob);
    QFETCH(int, chunks);

    const Chunks back = RunRecord::unpackOutput(blob);
    QCOMPARE(back.size(), chunks);
    if (chunks > 0)
        QCOMPARE(back.at(0).data, QByteArray("ok"));
}

void tst_RunRecord::applyResultKeepsWorkspaces()
{
    // The finished run's workspaces, as the server made them, reach the record; through the
    // record's JSON as text (the monitor socket) each is a WorkspaceRun again, with what a later
    // Apply needs.
    QTemporaryDir dir;
    QVERIFY(
        writeFiles(dir.path() + QStringLiteral("/repo"), {{QStringLiteral("main.py"), "print(1)\n"},
                                                          {QStringLiteral("old.txt"), "old\n"}}));
    QVERIFY(writeFiles(dir.path() + QStringLiteral("/data"), {{QStringLiteral("a.csv"), "x\n"}}));
    ExecutionResult result;
    result.exitCode = 0;
    result.workspaces = {
        readOnlyWorkspace(QStringLiteral("data"), dir.path() + QStringLiteral("/data")),
        changedWorkspace(QStringLiteral("repo"), dir.path() + QStringLiteral("/repo"),
                         Workspace::Apply::Ask,
                         {{QStringLiteral("main.py"), "print(2)\n"},
                          {QStringLiteral("old.txt"), QByteArray()},
                          {QStringLiteral("new.txt"), "new\n"}})};
    RunRecord r;
    r.applyResult(result);
    QCOMPARE(r.workspaces.size(), 2);
    QCOMPARE(r.workspaces.at(0).toObject(), result.workspaces.at(0).recordJson());
    QCOMPARE(r.workspaces.at(1).toObject(), result.workspaces.at(1).recordJson());

    const QByteArray line = QJsonDocument(r.toJson(false)).toJson(QJsonDocument::Compact);
    const RunRecord back = RunRecord::fromJson(QJsonDocument::fromJson(line).object());
    QCOMPARE(back.workspaces, r.workspaces);
    QString error;
    const std::optional<WorkspaceRun> repo =
        WorkspaceRun::fromRecordJson(back.workspaces.at(1).toObject(), &error);
    QVERIFY2(repo.has_value(), qPrintable(error));
    QVERIFY(repo->changes.has_value());
    QCOMPARE(repo->changes->changes.size(), 3);
    QCOMPARE(repo->workspace.apply, Workspace::Apply::Ask);
    QCOMPARE(repo->workspace.path, result.workspaces.at(1).workspace.path);
    // A run without workspaces has no key for them: its line is what it was.
    RunRecord plain;
    plain.applyResult(ExecutionResult());
    QVERIFY(!plain.toJson().contains(QLatin1String("workspaces")));
}

void tst_RunRecord::workspacesWithinTheContentBudget()
{
    // Three workspaces that each keep 7 MiB for a later Apply: the first two fit within the
    // run's 16 MiB, the third is kept without its content (its list and diffs stay).
    QList<WorkspaceRun> runs;
    for (const char *name : {"one", "two", "three"}) {
        WorkspaceRun w;
        w.workspace.name = QString::fromLatin1(name);
        w.workspace.path = QStringLiteral("/tmp/") + w.workspace.name;
        w.workspace.mode = Workspace::Mode::CopyOnWrite;
        w.scan = std::make_shared<WorkspaceScan>();
        WorkspaceChangeSet changes;
        changes.workspace = w.workspace.name;
        WorkspaceChange c;
        c.path = QStringLiteral("big.bin");
        c.content = "stands for 7 MiB";
        c.size = c.content.size();
        c.diff = QStringLiteral("+stands for 7 MiB\n");
        changes.changes.append(c);
        changes.bytes = 7LL * 1024 * 1024;
        w.changes = changes;
        runs.append(w);
    }
    const QJsonArray json = RunRecord::workspacesJson(runs);
    QCOMPARE(json.size(), 3);
    const auto content = [&json](int i) {
        return json.at(i)
            .toObject()
            .value(u"changes")
            .toObject()
            .value(u"added")
            .toArray()
            .at(0)
            .toObject()
            .value(u"content");
    };
    QVERIFY(json.at(0).toObject().value(u"content_kept").toBool());
    QVERIFY(json.at(1).toObject().value(u"content_kept").toBool());
    QVERIFY(content(0).isString());
    QVERIFY(!json.at(2).toObject().value(u"content_kept").toBool());
    QVERIFY(content(2).isUndefined());
    QCOMPARE(json.at(2).toObject().value(u"changes").toObject().value(u"added").toArray().size(),
             1);
    QCOMPARE(RunRecord::workspaceContentBytes(json), 14LL * 1024 * 1024);
}

void tst_RunRecord::workspacesFromJsonSkipsBadElements()
{
    const RunRecord r = RunRecord::fromJson(parse(
        R"({"workspaces": [1, "repo", null, [], {}, {"name": ""}, {"name": "../x"},
                           {"name": 5}, {"name": "ok", "mode": "read-only"}]})"));
    QCOMPARE(r.workspaces.size(), 1);
    QCOMPARE(r.workspaces.at(0).toObject().value(u"name").toString(), QStringLiteral("ok"));
}

QTEST_GUILESS_MAIN(tst_RunRecord)
#include "tst_runrecord.moc"
