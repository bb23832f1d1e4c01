#include "historystore.h"
#include "runrecordcompare.h"

#include <QDir>
#include <QDirIterator>
#include <QEventLoop>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
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
    r.workspaces = QJsonArray(); // like output and files: load() has them, recent() not
    r.complete = false;
    return r;
}

// Another process's connection holding the write lock of the file until it is destroyed.
class WriteLock
{
public:
    explicit WriteLock(const QString &path)
        : m_name(QStringLiteral("lock-") + QUuid::createUuid().toString())
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
        db.setDatabaseName(path);
        m_held = db.open() && QSqlQuery(db).exec(QStringLiteral("BEGIN IMMEDIATE"));
    }
    ~WriteLock() { release(); }
    bool held() const { return m_held; }
    void release()
    {
        if (m_name.isEmpty())
            return;
        {
            QSqlDatabase db = QSqlDatabase::database(m_name, false);
            if (m_held)
                QSqlQuery(db).exec(QStringLiteral("ROLLBACK"));
            db.close();
        }
        QSqlDatabase::removeDatabase(m_name);
        m_name.clear();
        m_held = false;
    }

private:
    QString m_name;
    bool m_held = false;
};

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

// No automatic pruning: these tests put runs of any age in and say when to prune.
constexpr HistoryStore::Retention kKeepAll{0, 0, 0};

bool openStore(HistoryStore &store, const QString &path, QString *error = nullptr)
{
    store.setRetention(kKeepAll);
    return store.open(path, error);
}

// Saves and waits for the worker to have written it: true when it was.
bool put(HistoryStore &store, const RunRecord &run)
{
    QSignalSpy saved(&store, &HistoryStore::saved);
    if (!store.save(run))
        return false;
    if (!saved.wait(60000))
        return false;
    return saved.last().at(0).toString() == run.id && saved.last().at(1).toBool();
}

QList<RunRecord> recentOf(HistoryStore &store, int limit, const QString &text = QString())
{
    QList<RunRecord> result;
    QEventLoop loop;
    store.recent(limit, text, &loop, [&](const QList<RunRecord> &runs) {
        result = runs;
        loop.quit();
    });
    loop.exec();
    return result;
}

int pruneOf(HistoryStore &store, int days, int maxRuns = 0, qint64 maxBytes = 0)
{
    int removed = -1;
    QEventLoop loop;
    store.prune({days, maxBytes, maxRuns}, &loop, [&](int n) {
        removed = n;
        loop.quit();
    });
    loop.exec();
    return removed;
}

int runWriter(const QString &path)
{
    HistoryStore store;
    QString error;
    if (!openStore(store, path, &error)) {
        std::fprintf(stderr, "writer: %s\n", qPrintable(error));
        return 255;
    }
    std::fputs("ready\n", stdout);
    std::fflush(stdout);
    int failures = 0;
    for (int i = 0; i < kChildRuns; ++i) {
        RunRecord r = makeRun(QStringLiteral("child-%1").arg(i));
        r.files = {makeFile(OutputFile::Kind::Output, QStringLiteral("f.bin"), everyByte())};
        if (!put(store, r))
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
    void openMigratesSchemaThree();
    void openMigratesSchemaFour();
    void openMigratesSchemaFive();
    void openMigratesSchemaSix();
    void openMigratesSchemaEight();
    void openMigratesSchemaNine();
    void workspacesKeptAndDecided();
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
    void saveReturnsWhileAnotherProcessHoldsTheLock();
    void failedWriteIsLoggedAndTold();
    void pendingWritesAreBounded();
    void defaultRetention();
    void retentionAppliedAtOpen();
    void retentionSetRightAfterOpenIsTheOneApplied();
    void sizeCapKeepsTheNewest();
    void closeFinishesQueuedWrites();

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
    // A file of the first schema (no session_id, no size_bytes, no engine, the old index), with
    // a run in it.
    const QString path = newPath();
    const RunRecord old = [&] {
        HistoryStore store;
        openStore(store, path);
        RunRecord r = makeRun(QStringLiteral("old"));
        r.sessionId.clear();
        r.files = {makeFile(OutputFile::Kind::Output, QStringLiteral("f"), QByteArray(1000, 'f'))};
        put(store, r);
        return r;
    }();
    QVERIFY(queryValue(path, QStringLiteral("SELECT 1 FROM pragma_table_info('runs') WHERE name "
                                            "= 'session_id'"))
                .isValid());
    queryValue(path, QStringLiteral("DROP INDEX runs_created_size"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN session_id"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN size_bytes"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN engine"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN connections"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN runtime"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN secrets"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN preloaded"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN workspaces"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN claimed_name"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN identity"));
    queryValue(path, QStringLiteral("CREATE INDEX runs_created_at ON runs(created_at)"));
    queryValue(path, QStringLiteral("PRAGMA user_version = 1"));
    QVERIFY(!queryValue(path, QStringLiteral("SELECT 1 FROM pragma_table_info('runs') WHERE name "
                                             "= 'session_id'"))
                 .isValid());

    HistoryStore store;
    QString error;
    QVERIFY2(openStore(store, path, &error), qPrintable(error));
    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 10);
    QVERIFY(store.load(QStringLiteral("old")).has_value());
    QCOMPARE(store.load(QStringLiteral("old"))->sessionId, QString());
    RunRecord fresh = makeRun(QStringLiteral("new"));
    fresh.sessionId = QStringLiteral("s-0123456789ab");
    QVERIFY(put(store, fresh));
    QCOMPARE(store.load(QStringLiteral("new"))->sessionId, QStringLiteral("s-0123456789ab"));
    // The old index made way for the one the size cap reads.
    QCOMPARE(queryValue(path, QStringLiteral("SELECT group_concat(name) FROM sqlite_master WHERE "
                                             "type = 'index' AND sql LIKE '%created_at%'"))
                 .toString(),
             QStringLiteral("runs_created_size"));
    // The old run's size is filled in by the first pass with a size cap.
    QVERIFY(
        queryValue(path, QStringLiteral("SELECT size_bytes FROM runs WHERE id = 'old'")).isNull());
    QCOMPARE(pruneOf(store, 0, 0, 1024 * 1024), 0);
    QCOMPARE(queryValue(path, QStringLiteral("SELECT size_bytes FROM runs WHERE id = 'old'"))
                 .toLongLong(),
             qint64(old.code.toUtf8().size() + RunRecord::packOutput(old.output).size() + 1000));
}

void tst_HistoryStore::openMigratesSchemaThree()
{
    // A file of schema 3, before runs named their engine: a run in it, then the column removed.
    const QString path = newPath();
    {
        HistoryStore store;
        QVERIFY(openStore(store, path));
        QVERIFY(put(store, makeRun(QStringLiteral("before"))));
    }
    const QString hasEngine =
        QStringLiteral("SELECT 1 FROM pragma_table_info('runs') WHERE name = 'engine'");
    QVERIFY(queryValue(path, hasEngine).isValid());
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN engine"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN connections"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN runtime"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN secrets"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN preloaded"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN workspaces"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN claimed_name"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN identity"));
    queryValue(path, QStringLiteral("PRAGMA user_version = 3"));
    QVERIFY(!queryValue(path, hasEngine).isValid());

    HistoryStore store;
    QString error;
    QVERIFY2(openStore(store, path, &error), qPrintable(error));
    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 10);
    QVERIFY(queryValue(path, hasEngine).isValid());
    // The old run is all there, without an engine.
    const std::optional<RunRecord> before = store.load(QStringLiteral("before"));
    QVERIFY(before.has_value());
    QCOMPARE(before->engine, QString());
    QCOMPARE(before->stdoutText(), QByteArray("before\n"));
    // A new one keeps its engine, in the whole record and in the list.
    RunRecord after = makeRun(QStringLiteral("after"), at(-10));
    after.engine = QStringLiteral("tcp://10.0.0.7:2376 (TLS)");
    QVERIFY(put(store, after));
    QCOMPARE(store.load(QStringLiteral("after"))->engine, after.engine);
    const QList<RunRecord> runs = recentOf(store, 10);
    QCOMPARE(runs.size(), 2);
    QCOMPARE(runs.at(0).engine, after.engine);
    QCOMPARE(runs.at(1).engine, QString());
}

void tst_HistoryStore::openMigratesSchemaFour()
{
    // A file of schema 4, before the allow-list mode: its runs read with no connections, and a
    // new run keeps every connection it tried, verdicts, rules and bytes.
    const QString path = newPath();
    {
        HistoryStore store;
        QVERIFY(openStore(store, path));
        QVERIFY(put(store, makeRun(QStringLiteral("before"))));
    }
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN connections"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN runtime"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN secrets"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN preloaded"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN workspaces"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN claimed_name"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN identity"));
    queryValue(path, QStringLiteral("PRAGMA user_version = 4"));

    HistoryStore store;
    QString error;
    QVERIFY2(openStore(store, path, &error), qPrintable(error));
    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 10);
    QVERIFY(store.load(QStringLiteral("before"))->connections.isEmpty());
    RunRecord after = makeRun(QStringLiteral("after"), at(-10));
    NetworkAttempt allowed;
    allowed.host = QStringLiteral("pypi.org");
    allowed.port = 443;
    allowed.verdict = NetworkAttempt::Verdict::Allowed;
    allowed.rule = QStringLiteral("pypi.org");
    allowed.bytesUp = 517;
    allowed.bytesDown = 4096;
    allowed.ms = 80;
    NetworkAttempt refused;
    refused.host = QStringLiteral("evil.example");
    refused.port = 80;
    refused.rule = QStringLiteral("not on the allow-list");
    after.connections = {allowed, refused};
    QVERIFY(put(store, after));
    QCOMPARE(store.load(QStringLiteral("after"))->connections, after.connections);
    // Runs without connections store nothing for them.
    QVERIFY(queryValue(path, QStringLiteral("SELECT connections FROM runs WHERE id = 'before'"))
                .isNull());
}

void tst_HistoryStore::openMigratesSchemaFive()
{
    // A file of schema 5, before runs named their container runtime: its runs read without one,
    // and a new run keeps its runtime in the whole record and in the list.
    const QString path = newPath();
    {
        HistoryStore store;
        QVERIFY(openStore(store, path));
        QVERIFY(put(store, makeRun(QStringLiteral("before"))));
    }
    const QString hasRuntime =
        QStringLiteral("SELECT 1 FROM pragma_table_info('runs') WHERE name = 'runtime'");
    QVERIFY(queryValue(path, hasRuntime).isValid());
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN runtime"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN secrets"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN preloaded"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN workspaces"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN claimed_name"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN identity"));
    queryValue(path, QStringLiteral("PRAGMA user_version = 5"));
    QVERIFY(!queryValue(path, hasRuntime).isValid());

    HistoryStore store;
    QString error;
    QVERIFY2(openStore(store, path, &error), qPrintable(error));
    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 10);
    QVERIFY(queryValue(path, hasRuntime).isValid());
    QCOMPARE(store.load(QStringLiteral("before"))->runtime, QString());
    QCOMPARE(store.load(QStringLiteral("before"))->stdoutText(), QByteArray("before\n"));
    RunRecord after = makeRun(QStringLiteral("after"), at(-10));
    after.runtime = QStringLiteral("runsc");
    QVERIFY(put(store, after));
    QCOMPARE(store.load(QStringLiteral("after"))->runtime, QStringLiteral("runsc"));
    const QList<RunRecord> runs = recentOf(store, 10);
    QCOMPARE(runs.size(), 2);
    QCOMPARE(runs.at(0).runtime, QStringLiteral("runsc"));
    QCOMPARE(runs.at(1).runtime, QString());
}

void tst_HistoryStore::openCreatesFolderAndSchema()
{
    const QString path = newPath();
    QVERIFY(!QFileInfo::exists(QFileInfo(path).absolutePath()));
    HistoryStore store;
    QVERIFY(!store.isOpen());
    QString error;
    QVERIFY2(openStore(store, path, &error), qPrintable(error));
    QVERIFY(error.isEmpty());
    QVERIFY(store.isOpen());
    QCOMPARE(store.path(), path);
    QVERIFY(QFileInfo::exists(path));
    QCOMPARE(store.count(), 0);
    QVERIFY(recentOf(store, 10).isEmpty());

    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA journal_mode")).toString(),
             QStringLiteral("wal"));
    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 10);
    // A new file gives pruned space back to the file system.
    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA auto_vacuum")).toInt(), 2);
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
    QVERIFY(openStore(store, path));
    QVERIFY(put(store, makeRun(QStringLiteral("a"))));
    store.close();
    QVERIFY(openStore(store, path));
    QCOMPARE(store.count(), 1);
}

void tst_HistoryStore::openMigratesSchemaSix()
{
    // A file of schema 6, before bound secrets: its runs read with none, and a new run keeps its
    // secrets' names and hosts, and which connection the gateway added one to.
    const QString path = newPath();
    {
        HistoryStore store;
        QVERIFY(openStore(store, path));
        QVERIFY(put(store, makeRun(QStringLiteral("before"))));
    }
    const QString hasSecrets =
        QStringLiteral("SELECT 1 FROM pragma_table_info('runs') WHERE name = 'secrets'");
    QVERIFY(queryValue(path, hasSecrets).isValid());
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN secrets"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN preloaded"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN workspaces"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN claimed_name"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN identity"));
    queryValue(path, QStringLiteral("PRAGMA user_version = 6"));
    QVERIFY(!queryValue(path, hasSecrets).isValid());

    HistoryStore store;
    QString error;
    QVERIFY2(openStore(store, path, &error), qPrintable(error));
    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 10);
    QVERIFY(queryValue(path, hasSecrets).isValid());
    QVERIFY(store.load(QStringLiteral("before"))->secrets.isEmpty());
    QCOMPARE(store.load(QStringLiteral("before"))->stdoutText(), QByteArray("before\n"));
    RunRecord after = makeRun(QStringLiteral("after"), at(-10));
    after.secrets = {{QStringLiteral("API_KEY"), {QStringLiteral("api.example.com")}}};
    NetworkAttempt added;
    added.host = QStringLiteral("api.example.com");
    added.port = 443;
    added.verdict = NetworkAttempt::Verdict::Allowed;
    added.rule = QStringLiteral("api.example.com");
    added.secrets = {QStringLiteral("API_KEY")};
    after.connections = {added};
    QVERIFY(put(store, after));
    QCOMPARE(store.load(QStringLiteral("after"))->secrets, after.secrets);
    QCOMPARE(store.load(QStringLiteral("after"))->connections, after.connections);
    const QList<RunRecord> runs = recentOf(store, 10);
    QCOMPARE(runs.size(), 2);
    QCOMPARE(runs.at(0).secrets, after.secrets);
    QCOMPARE(runs.at(0).connections.at(0).secrets, QStringList{QStringLiteral("API_KEY")});
    QVERIFY(runs.at(1).secrets.isEmpty());
    // Runs without secrets store nothing for them.
    QVERIFY(
        queryValue(path, QStringLiteral("SELECT secrets FROM runs WHERE id = 'before'")).isNull());
}

void tst_HistoryStore::openMigratesSchemaEight()
{
    // A file of schema 8, before workspaces: it opens, its runs read with none, and a new run
    // keeps its own.
    const QString path = newPath();
    {
        HistoryStore store;
        QVERIFY(openStore(store, path));
        QVERIFY(put(store, makeRun(QStringLiteral("before"))));
    }
    const QString hasWorkspaces =
        QStringLiteral("SELECT 1 FROM pragma_table_info('runs') WHERE name = 'workspaces'");
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN workspaces"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN claimed_name"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN identity"));
    queryValue(path, QStringLiteral("PRAGMA user_version = 8"));
    QVERIFY(!queryValue(path, hasWorkspaces).isValid());

    HistoryStore store;
    QString error;
    QVERIFY2(openStore(store, path, &error), qPrintable(error));
    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 10);
    QVERIFY(queryValue(path, hasWorkspaces).isValid());
    QVERIFY(store.load(QStringLiteral("before"))->workspaces.isEmpty());
    QCOMPARE(store.load(QStringLiteral("before"))->stdoutText(), QByteArray("before\n"));
    RunRecord after = makeRun(QStringLiteral("after"), at(-10));
    after.workspaces = fullRecord().workspaces;
    QVERIFY(put(store, after));
    QCOMPARE(store.load(QStringLiteral("after"))->workspaces, after.workspaces);
    // Runs without workspaces store nothing for them.
    QVERIFY(queryValue(path, QStringLiteral("SELECT workspaces FROM runs WHERE id = 'before'"))
                .isNull());
}

void tst_HistoryStore::openMigratesSchemaNine()
{
    // A file of schema 9, before runs told claims from credentials: its runs read with neither,
    // and a new run keeps both.
    const QString path = newPath();
    {
        HistoryStore store;
        QVERIFY(openStore(store, path));
        QVERIFY(put(store, makeRun(QStringLiteral("before"))));
    }
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN claimed_name"));
    queryValue(path, QStringLiteral("ALTER TABLE runs DROP COLUMN identity"));
    queryValue(path, QStringLiteral("PRAGMA user_version = 9"));

    HistoryStore store;
    QString error;
    QVERIFY2(openStore(store, path, &error), qPrintable(error));
    QCOMPARE(queryValue(path, QStringLiteral("PRAGMA user_version")).toInt(), 10);
    QVERIFY(store.load(QStringLiteral("before"))->claimedName.isEmpty());
    QVERIFY(store.load(QStringLiteral("before"))->identity.isEmpty());
    RunRecord after = makeRun(QStringLiteral("after"), at(-10));
    after.claimedName = QStringLiteral("claude-code");
    after.identity = QStringLiteral("credential c-0011aabb (alpha)");
    QVERIFY(put(store, after));
    QCOMPARE(store.load(QStringLiteral("after"))->claimedName, after.claimedName);
    QCOMPARE(store.load(QStringLiteral("after"))->identity, after.identity);
}

void tst_HistoryStore::workspacesKeptAndDecided()
{
    // The workspaces go with the whole run (load), not with the list (recent), count against
    // the size cap by the content they keep, and a decision replaces them and nothing else.
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    const RunRecord run = fullRecord();
    QVERIFY(put(store, run));
    QCOMPARE(store.load(run.id)->workspaces, run.workspaces);
    QVERIFY(recentOf(store, 10).at(0).workspaces.isEmpty());
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT size_bytes FROM runs")).toLongLong(),
             queryValue(store.path(), QStringLiteral("SELECT length(CAST(code AS BLOB)) + "
                                                     "length(output) FROM runs"))
                     .toLongLong() +
                 pngish().size() + 3); // the plot's bytes, the workspace's 3 bytes of content

    QJsonArray decided = run.workspaces;
    QJsonObject repo = decided.at(1).toObject();
    repo.insert(QStringLiteral("decision"), QStringLiteral("applied"));
    repo.insert(QStringLiteral("applied"),
                QJsonObject{{QStringLiteral("files"), QJsonArray{QStringLiteral("a.txt")}}});
    decided[1] = repo;
    QSignalSpy updated(&store, &HistoryStore::workspacesUpdated);
    store.updateWorkspaces(run.id, decided);
    QVERIFY(updated.wait(10000));
    QCOMPARE(updated.last().at(0).toString(), run.id);
    QVERIFY(updated.last().at(1).toBool());
    RunRecord expected = run;
    expected.envValues.clear();
    expected.workspaces = decided;
    compareRecords(*store.load(run.id), expected);

    // A run the history does not have: told so.
    store.updateWorkspaces(QStringLiteral("not-there"), decided);
    QVERIFY(updated.wait(10000));
    QCOMPARE(updated.last().at(0).toString(), QStringLiteral("not-there"));
    QVERIFY(!updated.last().at(1).toBool());
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
    QVERIFY(!openStore(store, path, &error));
    QVERIFY(!store.isOpen());
    QVERIFY(!error.isEmpty());
    QVERIFY2(error.contains(u'\'' + path + u'\''), qPrintable(error));
    // Failing again without an error string is as quiet about it.
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("^Cannot open")));
    QVERIFY(!openStore(store, path));
}

void tst_HistoryStore::notOpen()
{
    HistoryStore store;
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral("not open")));
    QVERIFY(!store.save(makeRun(QStringLiteral("a"))));
    QVERIFY(recentOf(store, 10).isEmpty());
    QVERIFY(!store.load(QStringLiteral("a")).has_value());
    QCOMPARE(store.count(), 0);
    QCOMPARE(pruneOf(store, 1, 1), 0);
    store.close();
    store.close();
}

void tst_HistoryStore::reopen()
{
    const QString first = newPath();
    const QString second = newPath();
    HistoryStore store;
    QVERIFY(openStore(store, first));
    QVERIFY(put(store, makeRun(QStringLiteral("a"))));
    QVERIFY(openStore(store, second));
    QCOMPARE(store.path(), second);
    QCOMPARE(store.count(), 0);
    QVERIFY(openStore(store, first));
    QCOMPARE(store.count(), 1);
}

void tst_HistoryStore::roundTrip()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    const RunRecord original = fullRecord();
    QVERIFY(put(store, original));
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
    QVERIFY(openStore(other, store.path()));
    compareRecords(*other.load(original.id), expected);
}

void tst_HistoryStore::roundTripMinimal()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    RunRecord r;
    r.id = QStringLiteral("minimal");
    r.createdAt = at(5000);
    QVERIFY(put(store, r));
    const std::optional<RunRecord> loaded = store.load(QStringLiteral("minimal"));
    QVERIFY(loaded.has_value());
    compareRecords(*loaded, r);
    QVERIFY(!loaded->finishedAt.isValid());

    // Without a creation time the run still sorts: it gets the time it was saved.
    RunRecord undated;
    undated.id = QStringLiteral("undated");
    QVERIFY(put(store, undated));
    const std::optional<RunRecord> u = store.load(QStringLiteral("undated"));
    QVERIFY(u.has_value());
    QVERIFY(u->createdAt.isValid());
    QVERIFY(qAbs(u->createdAt.msecsTo(QDateTime::currentDateTimeUtc())) < 60000);
    QCOMPARE(ids(recentOf(store, 10)),
             (QStringList{QStringLiteral("undated"), QStringLiteral("minimal")}));
}

void tst_HistoryStore::envValuesNeverStored()
{
    const QString folder = m_dir.filePath(QStringLiteral("secret"));
    const QString path = folder + QStringLiteral("/history.sqlite");
    const RunRecord run = fullRecord();
    {
        HistoryStore store;
        QVERIFY(openStore(store, path));
        QVERIFY(put(store, run));
        RunRecord again = fullRecord();
        QVERIFY(put(store, again));
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
    QVERIFY(openStore(store, path));
    QVERIFY(store.load(run.id)->envValues.isEmpty());
    QCOMPARE(store.load(run.id)->envNames, run.envNames);
}

void tst_HistoryStore::loadMissing()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    QVERIFY(!store.load(QStringLiteral("nope")).has_value());
    QVERIFY(!store.load(QString()).has_value());
    QVERIFY(put(store, makeRun(QStringLiteral("yes"))));
    QVERIFY(!store.load(QStringLiteral("YES")).has_value());
    QVERIFY(store.load(QStringLiteral("yes")).has_value());
}

void tst_HistoryStore::recentOrderAndLimit()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    // Saved out of order; minutes ago as the name says.
    const QList<int> minutesAgo{5, 1, 9, 3, 7, 0, 8, 2, 6, 4};
    for (int m : minutesAgo)
        QVERIFY(put(store, makeRun(QStringLiteral("m%1").arg(m), at(m * 60000))));
    QCOMPARE(store.count(), 10);

    QStringList newestFirst;
    for (int m = 0; m < 10; ++m)
        newestFirst.append(QStringLiteral("m%1").arg(m));
    QCOMPARE(ids(recentOf(store, 100)), newestFirst);
    QCOMPARE(ids(recentOf(store, 10)), newestFirst);
    QCOMPARE(ids(recentOf(store, 3)), newestFirst.mid(0, 3));
    QCOMPARE(ids(recentOf(store, 1)), newestFirst.mid(0, 1));
    QVERIFY(recentOf(store, 0).isEmpty());

    // Same millisecond: the later save first.
    const QDateTime same = at(-60000);
    QVERIFY(put(store, makeRun(QStringLiteral("tie-1"), same)));
    QVERIFY(put(store, makeRun(QStringLiteral("tie-2"), same)));
    QCOMPARE(ids(recentOf(store, 2)),
             (QStringList{QStringLiteral("tie-2"), QStringLiteral("tie-1")}));
}

void tst_HistoryStore::recentFillsScalars()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    const RunRecord full = fullRecord();
    QVERIFY(put(store, full));
    const QList<RunRecord> runs = recentOf(store, 10);
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
    QTest::newRow("engine") << QStringLiteral("BUILD-HOST") << list({"r4"});
    QTest::newRow("not the error") << QStringLiteral("kaboom") << list({});
    QTest::newRow("not the env names") << QStringLiteral("SOME_NAME") << list({});
    QTest::newRow("nothing") << QStringLiteral("no such text anywhere") << list({});
}

void tst_HistoryStore::search()
{
    QFETCH(QString, text);
    QFETCH(QStringList, expected);

    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
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
    r4.engine = QStringLiteral("ssh://build-host");
    r4.output.clear();
    for (const RunRecord &r : {r1, r2, r3, r4})
        QVERIFY(put(store, r));

    const QList<RunRecord> found = recentOf(store, 100, text);
    QCOMPARE(ids(found), expected);
    for (const RunRecord &r : found)
        QVERIFY(!r.complete);
    // The limit applies after the filter.
    QCOMPARE(ids(recentOf(store, 1, text)), expected.mid(0, 1));
}

void tst_HistoryStore::upsertReplaces()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    RunRecord r = makeRun(QStringLiteral("same"));
    r.status = RunRecord::Status::Running;
    r.files = {makeFile(OutputFile::Kind::Plot, QStringLiteral("a.png"), "A"),
               makeFile(OutputFile::Kind::Output, QStringLiteral("b.txt"), "B"),
               makeFile(OutputFile::Kind::Output, QStringLiteral("c.txt"), "C")};
    QVERIFY(put(store, r));

    r.status = RunRecord::Status::Ok;
    r.output.clear();
    r.appendOutput(2, "replaced");
    r.files = {makeFile(OutputFile::Kind::Output, QStringLiteral("z.txt"), "Z")};
    QVERIFY(put(store, r));

    QCOMPARE(store.count(), 1);
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 1);
    const std::optional<RunRecord> loaded = store.load(r.id);
    QVERIFY(loaded.has_value());
    compareRecords(*loaded, r);

    // And down to no files at all.
    r.files.clear();
    QVERIFY(put(store, r));
    QCOMPARE(store.load(r.id)->files.size(), 0);
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 0);
}

void tst_HistoryStore::saveIncompleteKeepsOutputAndFiles()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    const RunRecord full = fullRecord();
    QVERIFY(put(store, full));

    // A record from recent() has no output and files: saving it must not erase them.
    RunRecord partial = recentOf(store, 1).at(0);
    partial.status = RunRecord::Status::Cancelled;
    partial.notes = QStringList{QStringLiteral("edited")};
    QVERIFY(put(store, partial));

    RunRecord expected = full;
    expected.envValues.clear();
    expected.status = RunRecord::Status::Cancelled;
    expected.notes = partial.notes;
    compareRecords(*store.load(full.id), expected);

    // An incomplete record that is not stored yet is inserted as it is.
    RunRecord fresh = makeRun(QStringLiteral("fresh"));
    fresh.complete = false;
    QVERIFY(put(store, fresh));
    QCOMPARE(store.count(), 2);
    QCOMPARE(store.load(QStringLiteral("fresh"))->output.size(), 1);
}

void tst_HistoryStore::pruneByDays()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    constexpr qint64 day = 24 * 3600 * 1000LL;
    for (const auto &[name, ago] :
         {std::pair{"d400", 400 * day}, std::pair{"d40", 40 * day}, std::pair{"d31", 31 * day},
          std::pair{"d29", 29 * day}, std::pair{"d1", 1 * day}, std::pair{"now", qint64(0)}}) {
        RunRecord r = makeRun(QString::fromLatin1(name), at(ago));
        r.files = {makeFile(OutputFile::Kind::Output, QStringLiteral("f"), "data"),
                   makeFile(OutputFile::Kind::Output, QStringLiteral("g"), "data")};
        QVERIFY(put(store, r));
    }
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 12);

    QCOMPARE(pruneOf(store, 0), 0);
    QCOMPARE(pruneOf(store, -5), 0);
    QCOMPARE(store.count(), 6);
    QCOMPARE(pruneOf(store, 30), 3);
    QCOMPARE(ids(recentOf(store, 10)),
             (QStringList{QStringLiteral("now"), QStringLiteral("d1"), QStringLiteral("d29")}));
    // The files went with their runs.
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 6);
    QCOMPARE(pruneOf(store, 30), 0);
    QCOMPARE(pruneOf(store, 2), 1);
    QCOMPARE(store.count(), 2);
}

void tst_HistoryStore::pruneByMaxRuns()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    for (int m : {3, 9, 0, 5, 7, 1, 8, 2, 6, 4}) {
        RunRecord r = makeRun(QStringLiteral("m%1").arg(m), at(m * 60000));
        r.files = {makeFile(OutputFile::Kind::Plot, QStringLiteral("p.png"), everyByte())};
        QVERIFY(put(store, r));
    }
    QCOMPARE(pruneOf(store, 0, 20), 0);
    QCOMPARE(pruneOf(store, 0, 10), 0);
    QCOMPARE(pruneOf(store, 0, 7), 3);
    QCOMPARE(ids(recentOf(store, 100)).last(), QStringLiteral("m6"));
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 7);

    // Both limits: the age first, then the cap on what is left.
    RunRecord old = makeRun(QStringLiteral("old"), at(100LL * 24 * 3600 * 1000));
    QVERIFY(put(store, old));
    QCOMPARE(pruneOf(store, 30, 3), 1 + 4);
    QCOMPARE(ids(recentOf(store, 100)),
             (QStringList{QStringLiteral("m0"), QStringLiteral("m1"), QStringLiteral("m2")}));
    QCOMPARE(pruneOf(store, 0, 1), 2);
    QCOMPARE(ids(recentOf(store, 100)), QStringList{QStringLiteral("m0")});
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 1);
}

void tst_HistoryStore::pruneNothing()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    QCOMPARE(pruneOf(store, 30, 10), 0);
    QVERIFY(put(store, makeRun(QStringLiteral("a"))));
    QCOMPARE(pruneOf(store, 0, 0), 0);
    QCOMPARE(store.count(), 1);
}

void tst_HistoryStore::twoStoresOnOneFile()
{
    const QString path = newPath();
    HistoryStore a;
    HistoryStore b;
    QVERIFY(openStore(a, path));
    QVERIFY(openStore(b, path));
    QSet<QString> expected;
    for (int i = 0; i < 50; ++i) {
        HistoryStore &store = i % 2 ? b : a;
        const QString id = QStringLiteral("%1-%2").arg(i % 2 ? 'b' : 'a').arg(i);
        QVERIFY(put(store, makeRun(id)));
        expected.insert(id);
        // Each sees the other's writes at once.
        QCOMPARE(a.count(), i + 1);
        QCOMPARE(b.count(), i + 1);
        QVERIFY(a.load(id).has_value());
        QVERIFY(b.load(id).has_value());
    }
    const QStringList fromA = ids(recentOf(a, 1000));
    const QStringList fromB = ids(recentOf(b, 1000));
    QCOMPARE(fromA, fromB);
    QCOMPARE(QSet<QString>(fromA.begin(), fromA.end()), expected);

    // One replaces what the other wrote.
    RunRecord r = *a.load(QStringLiteral("b-1"));
    r.status = RunRecord::Status::Cancelled;
    QVERIFY(put(a, r));
    QCOMPARE(b.load(QStringLiteral("b-1"))->status, RunRecord::Status::Cancelled);
    QCOMPARE(b.count(), 50);
}

void tst_HistoryStore::secondProcessWritesConcurrently()
{
    const QString path = newPath();
    HistoryStore store;
    QVERIFY(openStore(store, path));

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
        if (!put(store, r))
            ++failures;
        if (i == 0)
            firstSave = r.createdAt;
    }
    // The parent's waits run the event loop: the child may have been seen ending already.
    const bool childFinished =
        child.state() == QProcess::NotRunning || child.waitForFinished(50000);
    const QByteArray childErrors = child.readAllStandardError();
    QVERIFY2(childFinished, childErrors.constData());
    QCOMPARE(child.exitStatus(), QProcess::NormalExit);
    QVERIFY2(child.exitCode() == 0, qPrintable(QStringLiteral("the child failed %1 saves: %2")
                                                   .arg(child.exitCode())
                                                   .arg(QString::fromLocal8Bit(childErrors))));
    QCOMPARE(failures, 0);
    QCOMPARE(store.count(), 2 * kChildRuns);

    const QList<RunRecord> runs = recentOf(store, 10 * kChildRuns);
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

void tst_HistoryStore::saveReturnsWhileAnotherProcessHoldsTheLock()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    QVERIFY(put(store, makeRun(QStringLiteral("before"))));
    WriteLock lock(store.path());
    QVERIFY(lock.held());

    QSignalSpy saved(&store, &HistoryStore::saved);
    RunRecord big = makeRun(QStringLiteral("big"));
    big.files = {makeFile(OutputFile::Kind::Output, QStringLiteral("big.bin"),
                          QByteArray(20 * 1024 * 1024, 'b'))};
    // Queued: it returns with the lock still held (a write on this thread would have waited for
    // it, then failed).
    QVERIFY(store.save(big));
    QVERIFY(!store.contains(QStringLiteral("big")));
    // Reads on the calling thread do not wait for the writer either.
    QVERIFY(store.contains(QStringLiteral("before")));
    QCOMPARE(store.count(), 1);
    // Longer than a reader's busy timeout (5 s): the worker's is longer, nothing waits on it.
    QTest::qWait(6000);
    QCOMPARE(saved.count(), 0); // the worker still waits for the lock

    lock.release();
    QVERIFY(saved.wait(60000));
    QCOMPARE(saved.at(0).at(0).toString(), QStringLiteral("big"));
    QVERIFY(saved.at(0).at(1).toBool());
    QCOMPARE(store.load(QStringLiteral("big"))->files.at(0).data.size(), 20 * 1024 * 1024);
}

void tst_HistoryStore::failedWriteIsLoggedAndTold()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    // Another process broke the file under it: the write fails on the worker.
    queryValue(store.path(), QStringLiteral("DROP TABLE files"));
    QSignalSpy saved(&store, &HistoryStore::saved);
    RunRecord r = makeRun(QStringLiteral("lost"));
    r.files = {makeFile(OutputFile::Kind::Output, QStringLiteral("f"), "data")};
    QTest::ignoreMessage(
        QtWarningMsg, QRegularExpression(QStringLiteral("^Cannot save run lost to the history")));
    QVERIFY(store.save(r));
    QVERIFY(saved.wait(60000));
    QCOMPARE(saved.at(0).at(0).toString(), QStringLiteral("lost"));
    QVERIFY(!saved.at(0).at(1).toBool());
    QVERIFY(!store.contains(QStringLiteral("lost"))); // rolled back whole
}

void tst_HistoryStore::pendingWritesAreBounded()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    WriteLock lock(store.path());
    QVERIFY(lock.held());
    constexpr int kMiB = 1024 * 1024;
    const int perRun = 20 * kMiB;
    const int fit = int(HistoryStore::kMaxPendingBytes / (perRun + kMiB));
    QVERIFY(fit >= 1);
    QSignalSpy saved(&store, &HistoryStore::saved);
    for (int i = 0; i < fit; ++i) {
        RunRecord r = makeRun(QStringLiteral("q%1").arg(i));
        r.files = {
            makeFile(OutputFile::Kind::Output, QStringLiteral("f"), QByteArray(perRun, 'q'))};
        QVERIFY(store.save(r));
    }
    RunRecord over = makeRun(QStringLiteral("over"));
    over.files = {makeFile(OutputFile::Kind::Output, QStringLiteral("f"), QByteArray(perRun, 'o'))};
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("^Cannot save run over to the history.*"
                                                           "still waiting to be written")));
    QVERIFY(!store.save(over));

    lock.release();
    QTRY_COMPARE_WITH_TIMEOUT(saved.count(), fit, 60000);
    for (const QList<QVariant> &s : saved)
        QVERIFY(s.at(1).toBool());
    QCOMPARE(store.count(), fit);
    QVERIFY(!store.contains(QStringLiteral("over")));
    // With the queue empty again, a run is taken.
    QVERIFY(put(store, over));
}

void tst_HistoryStore::defaultRetention()
{
    const QByteArray days = qgetenv("CODE_SANDBOX_HISTORY_DAYS");
    const QByteArray mb = qgetenv("CODE_SANDBOX_HISTORY_MAX_MB");
    qunsetenv("CODE_SANDBOX_HISTORY_DAYS");
    qunsetenv("CODE_SANDBOX_HISTORY_MAX_MB");
    QCOMPARE(HistoryStore::defaultRetention().days, 30);
    QCOMPARE(HistoryStore::defaultRetention().maxBytes, 1024LL * 1024 * 1024);
    QCOMPARE(HistoryStore::defaultRetention().maxRuns, 0);
    QCOMPARE(HistoryStore().retention(), HistoryStore::defaultRetention());

    qputenv("CODE_SANDBOX_HISTORY_DAYS", "7");
    qputenv("CODE_SANDBOX_HISTORY_MAX_MB", "3");
    QCOMPARE(HistoryStore::defaultRetention().days, 7);
    QCOMPARE(HistoryStore::defaultRetention().maxBytes, 3LL * 1024 * 1024);
    QCOMPARE(HistoryStore().retention().days, 7);
    qputenv("CODE_SANDBOX_HISTORY_DAYS", "0");
    qputenv("CODE_SANDBOX_HISTORY_MAX_MB", "0");
    QCOMPARE(HistoryStore::defaultRetention().days, 0);
    QCOMPARE(HistoryStore::defaultRetention().maxBytes, 0);

    qputenv("CODE_SANDBOX_HISTORY_DAYS", "soon");
    qputenv("CODE_SANDBOX_HISTORY_MAX_MB", "-1");
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(QStringLiteral("CODE_SANDBOX_HISTORY_DAYS.*ignored")));
    QTest::ignoreMessage(
        QtWarningMsg, QRegularExpression(QStringLiteral("CODE_SANDBOX_HISTORY_MAX_MB.*ignored")));
    QCOMPARE(HistoryStore::defaultRetention().days, 30);

    qunsetenv("CODE_SANDBOX_HISTORY_DAYS");
    qunsetenv("CODE_SANDBOX_HISTORY_MAX_MB");
    if (!days.isNull())
        qputenv("CODE_SANDBOX_HISTORY_DAYS", days);
    if (!mb.isNull())
        qputenv("CODE_SANDBOX_HISTORY_MAX_MB", mb);
}

void tst_HistoryStore::retentionAppliedAtOpen()
{
    const QString path = newPath();
    constexpr qint64 day = 24 * 3600 * 1000LL;
    {
        HistoryStore writer;
        QVERIFY(openStore(writer, path));
        QVERIFY(put(writer, makeRun(QStringLiteral("d40"), at(40 * day))));
        QVERIFY(put(writer, makeRun(QStringLiteral("d2"), at(2 * day))));
    }
    // A store with the defaults, as every instance opens it, and nothing else asked of it.
    HistoryStore store;
    QCOMPARE(store.retention().days, 30);
    QSignalSpy pruned(&store, &HistoryStore::pruned);
    QVERIFY(store.open(path));
    QVERIFY(pruned.wait(60000));
    QCOMPARE(pruned.at(0).at(0).toInt(), 1);
    QVERIFY(!store.contains(QStringLiteral("d40")));
    QVERIFY(store.contains(QStringLiteral("d2")));
}

void tst_HistoryStore::retentionSetRightAfterOpenIsTheOneApplied()
{
    const QString path = newPath();
    constexpr qint64 day = 24 * 3600 * 1000LL;
    {
        HistoryStore writer;
        QVERIFY(openStore(writer, path));
        QVERIFY(put(writer, makeRun(QStringLiteral("d400"), at(400 * day))));
        QVERIFY(put(writer, makeRun(QStringLiteral("d40"), at(40 * day))));
    }
    // The window opens with the defaults, then sets its own "keep a year" before its loop runs.
    HistoryStore store;
    QSignalSpy pruned(&store, &HistoryStore::pruned);
    QVERIFY(store.open(path));
    store.setRetentionDays(365);
    QVERIFY(pruned.wait(60000));
    QCOMPARE(pruned.at(0).at(0).toInt(), 1);
    QVERIFY(!store.contains(QStringLiteral("d400")));
    QVERIFY(store.contains(QStringLiteral("d40")));
    // 0 keeps every age.
    store.setRetentionDays(0);
    QVERIFY(store.waitForIdle());
    QVERIFY(store.contains(QStringLiteral("d40")));
}

void tst_HistoryStore::sizeCapKeepsTheNewest()
{
    HistoryStore store;
    QVERIFY(openStore(store, newPath()));
    // About 4 KiB a run: two fit in 10000 bytes, three do not.
    store.setRetention({0, 10000, 0});
    QSignalSpy pruned(&store, &HistoryStore::pruned);
    for (int i = 0; i < 5; ++i) {
        RunRecord r = makeRun(QStringLiteral("s%1").arg(i), at((10 - i) * 1000));
        r.files = {makeFile(OutputFile::Kind::Output, QStringLiteral("f"), QByteArray(4000, 'x'))};
        QVERIFY(put(store, r));
        QCOMPARE(store.count(), qMin(i + 1, 2));
    }
    QTRY_COMPARE(pruned.count(), 3);
    QCOMPARE(ids(recentOf(store, 10)), (QStringList{QStringLiteral("s4"), QStringLiteral("s3")}));
    QCOMPARE(queryValue(store.path(), QStringLiteral("SELECT COUNT(*) FROM files")).toInt(), 2);
    // Newer by time, not by save: an older run saved last is the one that goes.
    RunRecord ancient = makeRun(QStringLiteral("ancient"), at(3600 * 1000));
    ancient.files = {
        makeFile(OutputFile::Kind::Output, QStringLiteral("f"), QByteArray(4000, 'x'))};
    QVERIFY(put(store, ancient));
    QCOMPARE(ids(recentOf(store, 10)), (QStringList{QStringLiteral("s4"), QStringLiteral("s3")}));
    // An explicit pass with a smaller cap.
    QCOMPARE(pruneOf(store, 0, 0, 5000), 1);
    QCOMPARE(ids(recentOf(store, 10)), QStringList{QStringLiteral("s4")});
    // A cap smaller than the newest run alone: that run stays (it was just stored).
    QCOMPARE(pruneOf(store, 0, 0, 100), 0);
    QCOMPARE(ids(recentOf(store, 10)), QStringList{QStringLiteral("s4")});
}

void tst_HistoryStore::closeFinishesQueuedWrites()
{
    const QString path = newPath();
    {
        HistoryStore store;
        QVERIFY(openStore(store, path));
        for (int i = 0; i < 20; ++i)
            QVERIFY(store.save(makeRun(QStringLiteral("c%1").arg(i))));
        // Destroyed at once, as a headless instance is when its input ends.
    }
    QCOMPARE(queryValue(path, QStringLiteral("SELECT COUNT(*) FROM runs")).toInt(), 20);
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
