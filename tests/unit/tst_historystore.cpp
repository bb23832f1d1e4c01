#include "historystore.h"
#include "runrecordcompare.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <QUuid>
#include <cstdio>
#include <utility>

namespace {
// The test executable doubles as the second writer: with this variable set to a history file it
// saves kChildRuns runs into it and exits with the number of failed saves.
const char kWriterVariable[] = "TST_HISTORYSTORE_WRITER";
constexpr int kChildRuns = 200;

QDateTime at(qint64 msAgo)
{
    // Milliseconds: what the history keeps.
    const QDateTime now =
        QDateTime::fromMSecsSinceEpoch(QDateTime::currentMSecsSinceEpoch(), Qt::UTC);
    return now.addMSecs(-msAgo);
}

RunRecord makeRun(const QString &id, const QDateTime &createdAt = at(0))
{
    RunRecord r;
    r.id = id;
    r.instanceId = QStringLiteral("instance-") + id;
    r.instancePid = 1000;
    r.source = QStringLiteral("test");
    r.tool = QStringLiteral("manual");
    r.language = QStringLiteral("python");
    r.code = QStringLiteral("print(%1)").arg(id);
    r.status = RunRecord::Status::Ok;
    r.createdAt = createdAt;
    r.finishedAt = createdAt.addMSecs(250);
    r.durationMs = 200;
    r.exitCode = 0;
    r.appendOutput(1, id.toUtf8() + '\n');
    return r;
}

OutputFile makeFile(OutputFile::Kind kind, const QString &name, const QByteArray &data)
{
    OutputFile f;
    f.kind = kind;
    f.name = name;
    f.data = data;
    f.size = data.size();
    f.mimeType = kind == OutputFile::Kind::Plot ? QStringLiteral("image/png")
                                                : QStringLiteral("application/octet-stream");
    return f;
}

RunRecord fullRecord()
{
    // The shared record, with what these tests look for: a fresh id per save, a code marker for
    // search, secret values that must never reach the file, more output and an empty file.
    RunRecord r = everyFieldSet();
    r.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    r.code = QStringLiteral("print('héllo 😀')  # MARKER_CODE_8731\n\0after nul");
    r.envValues = {{QStringLiteral("API_KEY"), QStringLiteral("TopSecretValue-5521")},
                   {QStringLiteral("HOME"), QStringLiteral("/home/TopSecretHome")}};
    r.output = QList<OutputChunk>{
        {1, QByteArray("out\0put\n", 8)}, {2, everyByte()}, {1, QByteArray(100000, 'x')}};
    r.files.append(makeFile(OutputFile::Kind::Output, QStringLiteral("empty.txt"), {}));
    return r;
}

// What recent() gives for a saved record: the scalar fields only.
RunRecord withoutBulk(RunRecord r)
{
    r.envValues.clear();
    r.output.clear();
    r.files.clear();
    r.complete = false;
    return r;
}

// One value from the file through a connection of its own, as another reader would see it.
QVariant queryValue(const QString &path, const QString &sql)
{
    const QString name = QStringLiteral("raw-") + QUuid::createUuid().toString();
    QVariant value;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        if (db.open()) {
            QSqlQuery q(db);
            if (q.exec(sql) && q.next())
                value = q.value(0);
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return value;
}

QStringList ids(const QList<RunRecord> &runs)
{
    QStringList list;
    for (const RunRecord &r : runs)
        list.append(r.id);
    return list;
}

// Every byte of every file in `dir` (the database, its WAL and shared memory files).
QByteArray allBytes(const QString &dir)
{
    QByteArray bytes;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        QFile f(it.next());
        if (f.open(QIODevice::ReadOnly))
            bytes += f.readAll();
    }
    return bytes;
}

int runWriter(const QString &path)
{
    HistoryStore store;
    QString error;
    if (!store.open(path, &error)) {
        std::fprintf(stderr, "writer: %s\n", qPrintable(error));
        return 255;
    }
    std::fputs("ready\n", stdout);
    std::fflush(stdout);
    int failures = 0;
    for (int i = 0; i < kChildRuns; ++i) {
        RunRecord r = makeRun(QStringLiteral("child-%1").arg(i));
        r.files = {makeFile(OutputFile::Kind::Output, QStringLiteral("f.bin"), everyByte())};
        if (!store.save(r))
            ++failures;
    }
    return failures;
}
} // namespace

class tst_HistoryStore : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void defaultPath();
    void openCreatesFolderAndSchema();
    void openMigratesSchemaOne();
    void openUnusable_data();
    void openUnusable();
    void notOpen();
    void reopen();
    void roundTrip();
    void roundTripMinimal();
    void envValuesNeverStored();
    void loadMissing();
    void recentOrderAndLimit();
    void recentFillsScalars();
    void search_data();
    void search();
    void upsertReplaces();
    void saveIncompleteKeepsOutputAndFiles();
    void pruneByDays();
    void pruneByMaxRuns();
    void pruneNothing();
    void twoStoresOnOneFile();
    void secondProcessWritesConcurrently();

private:
    QString newPath() { return m_dir.filePath(QStringLiteral("sub/%1/history.sqlite").arg(++m_n)); }

    QTemporaryDir m_dir;
    int m_n = 0;
};

void tst_HistoryStore::init()
{
    QVERIFY(m_dir.isValid());
    // A Qt Sql warning ("connection still in use", a failed statement) is a bug here.
    QTest::failOnWarning(QRegularExpression(QStringLiteral(".*")));
}

void tst_HistoryStore::defaultPath()
{
    const QByteArray saved = qgetenv("CODE_SANDBOX_HISTORY");
    qputenv("CODE_SANDBOX_HISTORY", "/somewhere/else.sqlite");
    QCOMPARE(HistoryStore::defaultPath(), QStringLiteral("/somewhere/else.sqlite"));
    qunsetenv("CODE_SANDBOX_HISTORY");
    const QString path = HistoryStore::defaultPath();
    QVERIFY2(path.endsWith(QLatin1String("/code-sandbox/history.sqlite")), qPrintable(path));
    QVERIFY2(QDir::isAbsolutePath(path), qPrintable(path));
    if (!saved.isNull())
        qputenv("CODE_SANDBOX_HISTORY", saved);
}

void tst_HistoryStore::openMigratesSchemaOne()
{
    // A file of the first schema (no session_id), with a run in it.
    const QString path = newPath();
    {
        HistoryStore store;
        QVERIFY(store.open(path));
        RunRecord old = makeRun(QStringLiteral("old"));
        old.sessionId.clear();
        QVERIFY(store.save(old));
    }
    QVERIFY(queryValue(path, QStringLiteral("SELECT 1 FROM pragma_table_info('runs') WHERE name "
                                            "= 'session_id'"))
                .isValid());
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN session_id"));
    queryValue(path, QStringLiteral("PRAGMA user_version = 1"));
    QVERIFY(!queryValue(path, QStringLiteral("SELECT 1 FROM pragma_table_info('runs') WHERE name "
                                             "= 'session_id'"))
                 .isValid());

    HistoryStore store;
    QString error;
    QVERIFY2(store.open(path, &error), qPrintable(error));
    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 2);
    QVERIFY(store.load(QStringLiteral("old")).has_value());
    QCOMPARE(store.load(QStringLiteral("old"))->sessionId, QString());
    RunRecord fresh = makeRun(QStringLiteral("new"));
    fresh.sessionId = QStringLiteral("s-0123456789ab");
    QVERIFY(store.save(fresh));
    QCOMPARE(store.load(QStringLiteral("new"))->sessionId, QStringLiteral("s-0123456789ab"));
}

void tst_HistoryStore::openCreatesFolderAndSchema()
{
    const QString path = newPath();
    QVERIFY(!QFileInfo::exists(QFileInfo(path).absolutePath()));
    HistoryStore store;
    QVERIFY(!store.isOpen());
    QString error;
    QVERIFY2(store.open(path, &error), qPrintable(error));
    QVERIFY(error.isEmpty());
    QVERIFY(store.isOpen());
    QCOMPARE(store.path(), path);
    QVERIFY(QFileInfo::exists(path));
    QCOMPARE(store.count(), 0);
    QVERIFY(store.recent(10).isEmpty());

    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA journal_mode")).toString(),
             QStringLiteral("wal"));
    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 2);
    QCOMPARE(queryValue(path, QStringLiteral("SELECT COUNT(*) FROM sqlite_master WHERE name IN "
                                             "('runs', 'files')"))
                 .toInt(),
             2);
    QCOMPARE(queryValue(path, QStringLiteral("SELECT COUNT(*) FROM sqlite_master WHERE "
                                             "type = 'index' AND sql LIKE '%created_at%'"))
                 .toInt(),
             1);

    store.close();
    QVERIFY(!store.isOpen());
    // Opening an existing file keeps its schema and rows.
    QVERIFY(store.open(path));
    QVERIFY(store.save(makeRun(QStringLiteral("a"))));
    store.close();
    QVERIFY(store.open(path));
    QCOMPARE(store.count(), 1);
}

void tst_HistoryStore::openUnusable_data()
{
    QTest::addColumn<QString>("path");

    QFile file(m_dir.filePath(QStringLiteral("a-file")));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not a folder");
    file.close();
    QFile garbage(m_dir.filePath(QStringLiteral("garbage.sqlite")));
    QVERIFY(garbage.open(QIODevice::WriteOnly));
    garbage.write(QByteArray(8192, 'g'));
    garbage.close();
    QVERIFY(QDir(m_dir.path()).mkpath(QStringLiteral("a-folder")));

    QTest::newRow("folder under a file") << m_dir.filePath(QStringLiteral("a-file/x/h.sqlite"));
    QTest::newRow("file under a file") << m_dir.filePath(QStringLiteral("a-file/h.sqlite"));
    QTest::newRow("a folder") << m_dir.filePath(QStringLiteral("a-folder"));
    QTest::newRow("not a database") << m_dir.filePath(QStringLiteral("garbage.sqlite"));
    // Unwritable even for root.
    QTest::newRow("in /proc") << QStringLiteral("/proc/code-sandbox-history-test.sqlite");
    QTest::newRow("empty") << QString();
}

void tst_HistoryStore::openUnusable()
{
    QFETCH(QString, path);

    HistoryStore store;
    QString error;
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("^Cannot open")));
    QVERIFY(!store.open(path, &error));
    QVERIFY(!store.isOpen());
    QVERIFY(!error.isEmpty());
    QVERIFY2(error.contains(u'\'' + path + u'\''), qPrintable(error));
    // Failing again without an error string is as quiet about it.
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("^Cannot open")));
    QVERIFY(!store.open(path));
}

void tst_HistoryStore::notOpen()
{
    HistoryStore store;
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("not open")));
    QVERIFY(!store.save(makeRun(QStringLiteral("a"))));
    QVERIFY(store.recent(10).isEmpty());
    QVERIFY(!store.load(QStringLiteral("a")).has_value());
    QCOMPARE(store.count(), 0);
    QCOMPARE(store.prune(1, 1), 0);
    store.close();
    store.close();
}

void tst_HistoryStore::reopen()
{
    const QString first = newPath();
    const QString second = newPath();
    HistoryStore store;
    QVERIFY(store.open(first));
    QVERIFY(store.save(makeRun(QStringLiteral("a"))));
    QVERIFY(store.open(second));
    QCOMPARE(store.path(), second);
    QCOMPARE(store.count(), 0);
    QVERIFY(store.open(first));
    QCOMPARE(store.count(), 1);
}

void tst_HistoryStore::roundTrip()
{
    HistoryStore store;
    QVERIFY(store.open(newPath()));
    const RunRecord original = fullRecord();
    QVERIFY(store.save(original));
    QCOMPARE(store.count(), 1);

    const std::optional<RunRecord> loaded = store.load(original.id);
    QVERIFY(loaded.has_value());
    RunRecord expected = original;
    expected.envValues.clear();
    compareRecords(*loaded, expected);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(loaded->createdAt.timeSpec(), Qt::UTC);
    QCOMPARE(loaded->code.size(), original.code.size()); // past the NUL

    // A store on the same file reads the same.
    HistoryStore other;
    QVERIFY(other.open(store.path()));
    compareRecords(*other.load(original.id), expected);
}

void tst_HistoryStore::roundTripMinimal()
{
    HistoryStore store;
    QVERIFY(store.open(newPath()));
    RunRecord r;
    r.id = QStringLiteral("minimal");
    r.createdAt = at(5000);
    QVERIFY(store.save(r));
    const std::optional<RunRecord> loaded = store.load(QStringLiteral("minimal"));
    QVERIFY(loaded.has_value());
    compareRecords(*loaded, r);
    QVERIFY(!loaded->finishedAt.isValid());

    // Without a creation time the run still sorts: it gets the time it was saved.
    RunRecord undated;
    undated.id = QStringLiteral("undated");
    QVERIFY(store.save(undated));
    const std::optional<RunRecord> u = store.load(QStringLiteral("undated"));
    QVERIFY(u.has_value());
    QVERIFY(u->createdAt.isValid());
    QVERIFY(qAbs(u->createdAt.msecsTo(QDateTime::currentDateTimeUtc())) < 60000);
    QCOMPARE(ids(store.recent(10)),
             (QStringList{QStringLiteral("undated"), QStringLiteral("minimal")}));
}

void tst_HistoryStore::envValuesNeverStored()
{
    const QString folder = m_dir.filePath(QStringLiteral("secret"));
    const QString path = folder + QStringLiteral("/history.sqlite");
    const RunRecord run = fullRecord();
    {
        HistoryStore store;
        QVERIFY(store.open(path));
        QVERIFY(store.save(run));
        RunRecord again = fullRecord();
        QVERIFY(store.save(again));
        // While open (the rows are in the WAL file) ...
        const QByteArray live = allBytes(folder);
        QVERIFY(live.contains("MARKER_CODE_8731")); // the check can see stored text
        QVERIFY(live.contains("API_KEY"));          // names are kept
        QVERIFY(!live.contains("TopSecretValue-5521"));
        QVERIFY(!live.contains("TopSecretHome"));
    }
    // ... and once checkpointed into the database file.
    const QByteArray closed = allBytes(folder);
    QVERIFY(closed.contains("MARKER_CODE_8731"));
    QVERIFY(!closed.contains("TopSecretValue-5521"));
    QVERIFY(!closed.contains("TopSecretHome"));
    QVERIFY(!closed.contains(QStringLiteral("TopSecretValue-5521").toUtf8().toBase64()));

    HistoryStore store;
    QVERIFY(store.open(path));
    QVERIFY(store.load(run.id)->envValues.isEmpty());
    QCOMPARE(store.load(run.id)->envNames, run.envNames);
}

void tst_HistoryStore::loadMissing()
{
    HistoryStore store;
    QVERIFY(store.open(newPath()));
    QVERIFY(!store.load(QStringLiteral("nope")).has_value());
    QVERIFY(!store.load(QString()).has_value());
    QVERIFY(store.save(makeRun(QStringLiteral("yes"))));
    QVERIFY(!store.load(QStringLiteral("YES")).has_value());
    QVERIFY(store.load(QStringLiteral("yes")).has_value());
}

void tst_HistoryStore::recentOrderAndLimit()
{
    HistoryStore store;
    QVERIFY(store.open(newPath()));
    // Saved out of order; minutes ago as the name says.
    const QList<int> minutesAgo{5, 1, 9, 3, 7, 0, 8, 2, 6, 4};
    for (int m : minutesAgo)
        QVERIFY(store.save(makeRun(QStringLiteral("m%1").arg(m), at(m * 60000))));
    QCOMPARE(store.count(), 10);

    QStringList newestFirst;
    for (int m = 0; m < 10; ++m)
        newestFirst.append(QStringLiteral("m%1").arg(m));
    QCOMPARE(ids(store.recent(100)), newestFirst);
    QCOMPARE(ids(store.recent(10)), newestFirst);
    QCOMPARE(ids(store.recent(3)), newestFirst.mid(0, 3));
    QCOMPARE(ids(store.recent(1)), newestFirst.mid(0, 1));
    QVERIFY(store.recent(0).isEmpty());

    // Same millisecond: the later save first.
    const QDateTime same = at(-60000);
    QVERIFY(store.save(makeRun(QStringLiteral("tie-1"), same)));
    QVERIFY(store.save(makeRun(QStringLiteral("tie-2"), same)));
    QCOMPARE(ids(store.recent(2)), (QStringList{QStringLiteral("tie-2"), QStringLiteral("tie-1")}));
}

void tst_HistoryStore::recentFillsScalars()
{
    HistoryStore store;
    QVERIFY(store.open(newPath()));
    const RunRecord full = fullRecord();
    QVERIFY(store.save(full));
    const QList<RunRecord> runs = store.recent(10);
    QCOMPARE(runs.size(), 1);
    QVERIFY(!runs.at(0).complete);
    QVERIFY(runs.at(0).output.isEmpty());
    QVERIFY(runs.at(0).files.isEmpty());
    compareRecords(runs.at(0), withoutBulk(full));
}

void tst_HistoryStore::search_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("expected"); // newest first

    const auto list = [](std::initializer_list<const char *> names) {
        QStringList l;
        for (const char *n : names)
            l.append(QString::fromLatin1(n));
        return l;
    };
    QTest::newRow("empty: all") << QString() << list({"r4", "r3", "r2", "r1"});
    QTest::newRow("code") << QStringLiteral("hello") << list({"r1"});
    QTest::newRow("code, other case") << QStringLiteral("WORLD") << list({"r1"});
    QTest::newRow("stdout") << QStringLiteral("alpha") << list({"r1"});
    QTest::newRow("stdout, other case") << QStringLiteral("ALPHA") << list({"r1"});
    QTest::newRow("stderr") << QStringLiteral("boom") << list({"r2"});
    QTest::newRow("second chunk of output") << QStringLiteral("second chunk") << list({"r1"});
    QTest::newRow("source") << QStringLiteral("cursor") << list({"r2"});
    QTest::newRow("language") << QStringLiteral("RUST") << list({"r3"});
    QTest::newRow("tool") << QStringLiteral("exec") << list({"r2"});
    QTest::newRow("source or tool") << QStringLiteral("manual") << list({"r4", "r3"});
    QTest::newRow("percent is literal") << QStringLiteral("%") << list({"r1"});
    QTest::newRow("percent in a word") << QStringLiteral("100% done") << list({"r1"});
    QTest::newRow("underscore is literal") << QStringLiteral("_") << list({"r2", "r1"});
    QTest::newRow("underscore in a word") << QStringLiteral("x_y") << list({"r2"});
    QTest::newRow("underscore matches no other character") << QStringLiteral("log_x") << list({});
    QTest::newRow("percent matches no other text") << QStringLiteral("50%percent") << list({});
    QTest::newRow("backslash") << QStringLiteral("a\\b") << list({"r3"});
    QTest::newRow("backslash and percent") << QStringLiteral("\\%") << list({});
    QTest::newRow("quote") << QStringLiteral("'") << list({"r1"});
    QTest::newRow("non-ascii") << QStringLiteral("Grüße") << list({"r3"});
    QTest::newRow("not the error") << QStringLiteral("kaboom") << list({});
    QTest::newRow("not the env names") << QStringLiteral("SOME_NAME") << list({});
    QTest::newRow("nothing") << QStringLiteral("no such text anywhere") << list({});
}

void tst_HistoryStore::search()
{
    QFETCH(QString, text);
    QFETCH(QStringList, expected);

    HistoryStore store;
    QVERIFY(store.open(newPath()));
    RunRecord r1 = makeRun(QStringLiteral("r1"), at(40000));
    r1.code = QStringLiteral("print('Hello World')");
    r1.source = QStringLiteral("claude");
    r1.tool = QStringLiteral("run_code");
    r1.output.clear();
    r1.appendOutput(1, "alpha 100% done\n");
    r1.appendOutput(2, "warn\n");
    r1.appendOutput(1, "second chunk\n");
    RunRecord r2 = makeRun(QStringLiteral("r2"), at(30000));
    r2.code = QStringLiteral("console.log(x_y)");
    r2.source = QStringLiteral("Cursor");
    r2.language = QStringLiteral("javascript");
    r2.tool = QStringLiteral("exec");
    r2.output.clear();
    r2.appendOutput(2, "TypeError: BOOM\n");
    r2.error = QStringLiteral("kaboom");
    r2.envNames = QStringList{QStringLiteral("SOME_NAME")};
    RunRecord r3 = makeRun(QStringLiteral("r3"), at(20000));
    r3.code = QStringLiteral("fn main() {}");
    r3.source = QStringLiteral("manual");
    r3.language = QStringLiteral("rust");
    r3.tool = QStringLiteral("manual");
    r3.output.clear();
    r3.appendOutput(1, "a\\b\n");
    r3.appendOutput(2, QStringLiteral("Grüße\n").toUtf8());
    RunRecord r4 = makeRun(QStringLiteral("r4"), at(10000));
    r4.code = QStringLiteral("x = 50 # percent");
    r4.source = QStringLiteral("claude");
    r4.tool = QStringLiteral("manual");
    r4.output.clear();
    for (const RunRecord &r : {r1, r2, r3, r4})
        QVERIFY(store.save(r));

    const QList<RunRecord> found = store.recent(100, text);
    QCOMPARE(ids(found), expected);
    for (const RunRecord &r : found)
        QVERIFY(!r.complete);
    // The limit applies after the filter.
    QCOMPARE(ids(store.recent(1, text)), expected.mid(0, 1));
}

void tst_HistoryStore::upsertReplaces()
{
    HistoryStore store;
    QVERIFY(store.open(newPath()));
    RunRecord r = makeRun(QStringLiteral("same"));
    r.status = RunRecord::Status::Running;
    r.files = {makeFile(OutputFile::Kind::Plot, QStringLiteral("a.png"), "A"),
               makeFile(OutputFile::Kind::Output, QStringLiteral("b.txt"), "B"),
               makeFile(OutputFile::Kind::Output, QStringLiteral("c.txt"), "C")};
    QVERIFY(store.save(r));

    r.status = RunRecord::Status::Ok;
    r.output.clear();
    r.appendOutput(2, "replaced");
    r.files = {makeFile(OutputFile::Kind::Output, QStringLiteral("z.txt"), "Z")};
    QVERIFY(store.save(r));

    QCOMPARE(store.count(), 1);
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 1);
    const std::optional<RunRecord> loaded = store.load(r.id);
    QVERIFY(loaded.has_value());
    compareRecords(*loaded, r);

    // And down to no files at all.
    r.files.clear();
    QVERIFY(store.save(r));
    QCOMPARE(store.load(r.id)->files.size(), 0);
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 0);
}

void tst_HistoryStore::saveIncompleteKeepsOutputAndFiles()
{
    HistoryStore store;
    QVERIFY(store.open(newPath()));
    const RunRecord full = fullRecord();
    QVERIFY(store.save(full));

    // A record from recent() has no output and files: saving it must not erase them.
    RunRecord partial = store.recent(1).at(0);
    partial.status = RunRecord::Status::Cancelled;
    partial.notes = QStringList{QStringLiteral("edited")};
    QVERIFY(store.save(partial));

    RunRecord expected = full;
    expected.envValues.clear();
    expected.status = RunRecord::Status::Cancelled;
    expected.notes = partial.notes;
    compareRecords(*store.load(full.id), expected);

    // An incomplete record that is not stored yet is inserted as it is.
    RunRecord fresh = makeRun(QStringLiteral("fresh"));
    fresh.complete = false;
    QVERIFY(store.save(fresh));
    QCOMPARE(store.count(), 2);
    QCOMPARE(store.load(QStringLiteral("fresh"))->output.size(), 1);
}

void tst_HistoryStore::pruneByDays()
{
    HistoryStore store;
    QVERIFY(store.open(newPath()));
    constexpr qint64 day = 24 * 3600 * 1000LL;
    for (const auto &[name, ago] :
         {std::pair{"d400", 400 * day}, std::pair{"d40", 40 * day}, std::pair{"d31", 31 * day},
          std::pair{"d29", 29 * day}, std::pair{"d1", 1 * day}, std::pair{"now", qint64(0)}}) {
        RunRecord r = makeRun(QString::fromLatin1(name), at(ago));
        r.files = {makeFile(OutputFile::Kind::Output, QStringLiteral("f"), "data"),
                   makeFile(OutputFile::Kind::Output, QStringLiteral("g"), "data")};
        QVERIFY(store.save(r));
    }
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 12);

    QCOMPARE(store.prune(0), 0);
    QCOMPARE(store.prune(-5), 0);
    QCOMPARE(store.count(), 6);
    QCOMPARE(store.prune(30), 3);
    QCOMPARE(ids(store.recent(10)),
             (QStringList{QStringLiteral("now"), QStringLiteral("d1"), QStringLiteral("d29")}));
    // The files went with their runs.
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 6);
    QCOMPARE(store.prune(30), 0);
    QCOMPARE(store.prune(2), 1);
    QCOMPARE(store.count(), 2);
}

void tst_HistoryStore::pruneByMaxRuns()
{
    HistoryStore store;
    QVERIFY(store.open(newPath()));
    for (int m : {3, 9, 0, 5, 7, 1, 8, 2, 6, 4}) {
        RunRecord r = makeRun(QStringLiteral("m%1").arg(m), at(m * 60000));
        r.files = {makeFile(OutputFile::Kind::Plot, QStringLiteral("p.png"), everyByte())};
        QVERIFY(store.save(r));
    }
    QCOMPARE(store.prune(0, 20), 0);
    QCOMPARE(store.prune(0, 10), 0);
    QCOMPARE(store.prune(0, 7), 3);
    QCOMPARE(ids(store.recent(100)).last(), QStringLiteral("m6"));
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 7);

    // Both limits: the age first, then the cap on what is left.
    RunRecord old = makeRun(QStringLiteral("old"), at(100LL * 24 * 3600 * 1000));
    QVERIFY(store.save(old));
    QCOMPARE(store.prune(30, 3), 1 + 4);
    QCOMPARE(ids(store.recent(100)),
             (QStringList{QStringLiteral("m0"), QStringLiteral("m1"), QStringLiteral("m2")}));
    QCOMPARE(store.prune(0, 1), 2);
    QCOMPARE(ids(store.recent(100)), QStringList{QStringLiteral("m0")});
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 1);
}

void tst_HistoryStore::pruneNothing()
{
    HistoryStore store;
    QVERIFY(store.open(newPath()));
    QCOMPARE(store.prune(30, 10), 0);
    QVERIFY(store.save(makeRun(QStringLiteral("a"))));
    QCOMPARE(store.prune(0, 0), 0);
    QCOMPARE(store.count(), 1);
}

void tst_HistoryStore::twoStoresOnOneFile()
{
    const QString path = newPath();
    HistoryStore a;
    HistoryStore b;
    QVERIFY(a.open(path));
    QVERIFY(b.open(path));
    QSet<QString> expected;
    for (int i = 0; i < 50; ++i) {
        HistoryStore &store = i % 2 ? b : a;
        const QString id = QStringLiteral("%1-%2").arg(i % 2 ? 'b' : 'a').arg(i);
        QVERIFY(store.save(makeRun(id)));
        expected.insert(id);
        // Each sees the other's writes at once.
        QCOMPARE(a.count(), i + 1);
        QCOMPARE(b.count(), i + 1);
        QVERIFY(a.load(id).has_value());
        QVERIFY(b.load(id).has_value());
    }
    const QStringList fromA = ids(a.recent(1000));
    const QStringList fromB = ids(b.recent(1000));
    QCOMPARE(fromA, fromB);
    QCOMPARE(QSet<QString>(fromA.begin(), fromA.end()), expected);

    // One replaces what the other wrote.
    RunRecord r = *a.load(QStringLiteral("b-1"));
    r.status = RunRecord::Status::Cancelled;
    QVERIFY(a.save(r));
    QCOMPARE(b.load(QStringLiteral("b-1"))->status, RunRecord::Status::Cancelled);
    QCOMPARE(b.count(), 50);
}

void tst_HistoryStore::secondProcessWritesConcurrently()
{
    const QString path = newPath();
    HistoryStore store;
    QVERIFY(store.open(path));

    QProcess child;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QString::fromLatin1(kWriterVariable), path);
    child.setProcessEnvironment(env);
    child.start(QCoreApplication::applicationFilePath(), QStringList());
    QVERIFY2(child.waitForStarted(10000), qPrintable(child.errorString()));
    // Start writing together with the child, not before it has the file open.
    while (!child.canReadLine()) {
        QVERIFY2(child.waitForReadyRead(20000), child.readAllStandardError().constData());
    }
    QCOMPARE(child.readLine(), QByteArray("ready\n"));

    int failures = 0;
    QDateTime firstSave;
    for (int i = 0; i < kChildRuns; ++i) {
        RunRecord r = makeRun(QStringLiteral("parent-%1").arg(i));
        r.files = {makeFile(OutputFile::Kind::Plot, QStringLiteral("p.png"), everyByte())};
        if (!store.save(r))
            ++failures;
        if (i == 0)
            firstSave = r.createdAt;
    }
    const bool childFinished = child.waitForFinished(50000);
    const QByteArray childErrors = child.readAllStandardError();
    QVERIFY2(childFinished, childErrors.constData());
    QCOMPARE(child.exitStatus(), QProcess::NormalExit);
    QVERIFY2(child.exitCode() == 0, qPrintable(QStringLiteral("the child failed %1 saves: %2")
                                                   .arg(child.exitCode())
                                                   .arg(QString::fromLocal8Bit(childErrors))));
    QCOMPARE(failures, 0);
    QCOMPARE(store.count(), 2 * kChildRuns);

    const QList<RunRecord> runs = store.recent(10 * kChildRuns);
    QCOMPARE(runs.size(), 2 * kChildRuns);
    int fromChild = 0;
    bool interleaved = false;
    for (const RunRecord &r : runs) {
        if (r.id.startsWith(QLatin1String("child-"))) {
            ++fromChild;
            interleaved = interleaved || r.createdAt >= firstSave;
        }
    }
    QCOMPARE(fromChild, kChildRuns);
    QVERIFY(store.load(QStringLiteral("child-199"))->files.at(0).data == everyByte());
    // On a busy machine one process may have finished before the other began; that proves
    // less, but is no failure.
    if (!interleaved)
        qInfo("the two writers did not overlap in time");
}

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    const QString writerPath = qEnvironmentVariable(kWriterVariable);
    if (!writerPath.isEmpty())
        return runWriter(writerPath);
    tst_HistoryStore tc;
    QTEST_SET_MAIN_SOURCE_PATH
    return QTest::qExec(&tc, argc, argv);
}

#include "tst_historystore.moc"
