#include "historystore.h"

#include "journallog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QUuid>
#include <future>

namespace {
constexpr int kSchemaVersion = 10; // 2: session_id; 3: size_bytes; 4: engine; 5: connections;
                                   // 6: runtime; 7: secrets; 8: preloaded; 9: workspaces;
                                   // 10: claimed_name, identity
// Readers on the owner's thread: in WAL mode they wait only in rare cases (recovery).
constexpr int kBusyTimeoutMs = 5000;
// The worker may wait long for another process's write lock: nothing waits on it but the queue.
constexpr int kWriterBusyTimeoutMs = 30000;
// The -wal file is truncated to this after a checkpoint (a 20 MiB run grows it past that).
constexpr qint64 kJournalSizeLimit = 64LL * 1024 * 1024;
constexpr qint64 kMsPerDay = 24 * 60 * 60 * 1000;

const char *const kSchema[] = {
    "CREATE TABLE IF NOT EXISTS runs ("
    " id TEXT PRIMARY KEY,"
    " instance_id TEXT,"
    " instance_pid INTEGER,"
    " source TEXT,"
    " tool TEXT,"
    " language TEXT,"
    " code TEXT,"
    " status TEXT,"
    " created_at INTEGER NOT NULL," // ms since the epoch, UTC
    " finished_at INTEGER,"         // ms since the epoch, UTC; NULL while unknown
    " duration_ms INTEGER,"
    " exit_code INTEGER,"
    " timeout_sec INTEGER,"
    " out_of_memory INTEGER,"
    " compile_error INTEGER,"
    " truncated INTEGER,"
    " error TEXT,"
    " notes TEXT," // JSON array
    " image TEXT,"
    " container_id TEXT,"
    " memory_bytes INTEGER,"
    " cpus REAL,"
    " pids_limit INTEGER,"
    " network INTEGER,"
    " peak_memory_bytes INTEGER,"
    " cpu_time_ms INTEGER,"
    " env_names TEXT," // JSON array; the values are never stored
    " output BLOB,"    // RunRecord::packOutput
    " session_id TEXT,"
    " size_bytes INTEGER," // code, output and files: what the size cap counts
    " engine TEXT,"        // the engine that ran it, with several; NULL/'' with one
    " connections TEXT,"   // JSON array: the allow-list mode's connections; NULL/'' for none
    " runtime TEXT,"       // the container runtime; NULL/'' where not known
    " secrets TEXT,"       // JSON array of bound secrets' names and hosts (never values); NULL
                           // for none
    " preloaded TEXT,"     // JSON array: the modules imported ahead; NULL/'' for none
    " workspaces TEXT,"    // JSON array: RunRecord::workspaces (with the change sets' content,
                           // so not a scalar: read by load() only); NULL for none
    " claimed_name TEXT,"  // the clientInfo name when it is not the source's; NULL/''
    " identity TEXT"       // what identified the caller (a credential, a launcher); NULL/''
    ")",
    // Covers the size cap's queries (sum and running total, newest first) without reading the
    // rows, whose output can be megabytes. Replaces runs_created_at of schema 1 and 2.
    "DROP INDEX IF EXISTS runs_created_at",
    "CREATE INDEX IF NOT EXISTS runs_created_size ON runs(created_at, size_bytes)",
    "CREATE TABLE IF NOT EXISTS files ("
    " run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " seq INTEGER NOT NULL,"
    " kind TEXT,"
    " name TEXT,"
    " mime TEXT,"
    " size INTEGER,"
    " included INTEGER,"
    " data BLOB,"
    " PRIMARY KEY (run_id, seq)"
    ")",
};

QString toJsonText(const QStringList &list)
{
    return QString::fromUtf8(
        QJsonDocument(QJsonArray::fromStringList(list)).toJson(QJsonDocument::Compact));
}

QStringList fromJsonText(const QString &text)
{
    QStringList list;
    for (const QJsonValue v : QJsonDocument::fromJson(text.toUtf8()).array()) {
        if (v.isString())
            list.append(v.toString());
    }
    return list;
}

QVariant msSinceEpoch(const QDateTime &date)
{
    return date.isValid() ? QVariant(date.toMSecsSinceEpoch()) : QVariant();
}

QDateTime dateFromMs(const QVariant &v)
{
    return v.isNull() ? QDateTime() : QDateTime::fromMSecsSinceEpoch(v.toLongLong(), Qt::UTC);
}

qint64 int64Or(const QVariant &v, qint64 fallback)
{
    bool ok = false;
    const qint64 n = v.toLongLong(&ok);
    return v.isNull() || !ok ? fallback : n;
}

int intOr(const QVariant &v, int fallback)
{
    bool ok = false;
    const int n = v.toInt(&ok);
    return v.isNull() || !ok ? fallback : n;
}

// LIKE with '\' as the escape character: the user's text is a substring, not a pattern.
QString likePattern(const QString &text)
{
    QString escaped = text;
    escaped.replace(u'\\', QLatin1String("\\\\"));
    escaped.replace(u'%', QLatin1String("\\%"));
    escaped.replace(u'_', QLatin1String("\\_"));
    return u'%' + escaped + u'%';
}

QVariant sqlValue(const QString &v)
{
    return v;
}
QVariant sqlValue(qint64 v)
{
    return v;
}
QVariant sqlValue(int v)
{
    return v;
}
QVariant sqlValue(double v)
{
    return v;
}
QVariant sqlValue(bool v)
{
    return int(v);
}
QVariant sqlValue(const QDateTime &v)
{
    return msSinceEpoch(v);
}
QVariant sqlValue(const QStringList &v)
{
    return toJsonText(v);
}
QVariant sqlValue(RunRecord::Status v)
{
    return RunRecord::statusName(v);
}
QVariant sqlValue(const QList<NetworkAttempt> &v)
{
    // Most runs have none: nothing stored for them.
    return v.isEmpty()
               ? QVariant()
               : QVariant(QString::fromUtf8(
                     QJsonDocument(RunRecord::connectionsJson(v)).toJson(QJsonDocument::Compact)));
}

QVariant sqlValue(const QList<BoundSecret> &v)
{
    // As for connections: most runs have none.
    return v.isEmpty()
               ? QVariant()
               : QVariant(QString::fromUtf8(
                     QJsonDocument(RunRecord::secretsJson(v)).toJson(QJsonDocument::Compact)));
}

// A NULL or unreadable number keeps the default record's value.
void readSql(const QVariant &v, QString *out)
{
    *out = v.toString();
}
void readSql(const QVariant &v, qint64 *out)
{
    *out = int64Or(v, *out);
}
void readSql(const QVariant &v, int *out)
{
    *out = intOr(v, *out);
}
void readSql(const QVariant &v, double *out)
{
    if (!v.isNull())
        *out = v.toDouble();
}
void readSql(const QVariant &v, bool *out)
{
    *out = v.toBool();
}
void readSql(const QVariant &v, QDateTime *out)
{
    *out = dateFromMs(v);
}
void readSql(const QVariant &v, QStringList *out)
{
    *out = fromJsonText(v.toString());
}
void readSql(const QVariant &v, RunRecord::Status *out)
{
    *out = RunRecord::statusFromName(v.toString());
}
void readSql(const QVariant &v, QList<NetworkAttempt> *out)
{
    *out = RunRecord::connectionsFromJson(QJsonDocument::fromJson(v.toString().toUtf8()).array());
}
void readSql(const QVariant &v, QList<BoundSecret> *out)
{
    *out = RunRecord::secretsFromJson(QJsonDocument::fromJson(v.toString().toUtf8()).array());
}

QVariant workspacesText(const QJsonArray &workspaces)
{
    return workspaces.isEmpty() ? QVariant()
                                : QVariant(QString::fromUtf8(
                                      QJsonDocument(workspaces).toJson(QJsonDocument::Compact)));
}

// Every column but output, in RunRecord::fields()' order, the order readScalars expects.
QString scalarColumns()
{
    QStringList names;
    for (const RunRecordField &field : RunRecord::fields())
        names.append(QString::fromLatin1(field.column));
    return names.join(QLatin1String(", "));
}

// Reads the columns of scalarColumns(), in that order, from the current row.
RunRecord readScalars(const QSqlQuery &q)
{
    RunRecord r;
    int i = 0;
    for (const RunRecordField &field : RunRecord::fields()) {
        const QVariant v = q.value(i++);
        std::visit([&](auto member) { readSql(v, &(r.*member)); }, field.member);
    }
    return r;
}

void bindScalars(QSqlQuery &q, const RunRecord &run)
{
    for (const RunRecordField &field : RunRecord::fields())
        std::visit(
            [&](auto member) {
                q.bindValue(u':' + QString::fromLatin1(field.column), sqlValue(run.*member));
            },
            field.member);
    // A record without a creation time still needs a place in the order; "now" is where the
    // caller is.
    if (!run.createdAt.isValid())
        q.bindValue(QStringLiteral(":created_at"),
                    QDateTime::currentDateTimeUtc().toMSecsSinceEpoch());
}

QString placeholders(const QString &columns)
{
    QStringList names = columns.split(QLatin1String(", "));
    for (QString &name : names)
        name.prepend(u':');
    return names.join(QLatin1String(", "));
}

QString assignments(const QString &columns)
{
    QStringList names = columns.split(QLatin1String(", "));
    for (QString &name : names)
        name = name + QLatin1String(" = :") + name;
    return names.join(QLatin1String(", "));
}

// What a run weighs against the size cap: its code, output, files and the content its
// workspaces' change sets keep, as stored.
qint64 storedBytes(const RunRecord &run)
{
    qint64 bytes = run.code.toUtf8().size() + RunRecord::workspaceContentBytes(run.workspaces);
    for (const OutputChunk &c : run.output)
        bytes += c.data.size() + 5; // packOutput's header per chunk
    for (const OutputFile &f : run.files)
        bytes += f.data.size();
    return bytes;
}

bool exec(QSqlQuery &q, QString *error = nullptr)
{
    if (q.exec())
        return true;
    if (error)
        *error = q.lastError().text();
    return false;
}

bool exec(const QSqlDatabase &db, const QString &sql, QString *error = nullptr)
{
    QSqlQuery q(db);
    if (q.exec(sql))
        return true;
    if (error)
        *error = q.lastError().text();
    return false;
}

// IMMEDIATE takes the write lock at BEGIN, where the busy timeout waits for it. A deferred
// transaction that reads first and writes later fails at once with SQLITE_BUSY when another
// process wrote in between, whatever the timeout.
bool begin(const QSqlDatabase &db, QString *error)
{
    return exec(db, QStringLiteral("BEGIN IMMEDIATE"), error);
}

bool commit(const QSqlDatabase &db, QString *error)
{
    if (exec(db, QStringLiteral("COMMIT"), error))
        return true;
    exec(db, QStringLiteral("ROLLBACK"));
    return false;
}

void rollback(const QSqlDatabase &db)
{
    exec(db, QStringLiteral("ROLLBACK"));
}

// The connection's settings; an error message, empty on success.
QString configure(const QSqlDatabase &db, int busyTimeoutMs)
{
    QString sqlError;
    QSqlQuery q(db);
    // The busy timeout first: switching to WAL and creating the schema take locks that another
    // process opening the same file at the same moment may hold.
    if (!exec(db, QStringLiteral("PRAGMA busy_timeout = %1").arg(busyTimeoutMs), &sqlError))
        return sqlError;
    // Only takes effect on a file without tables yet: then pruning gives the space back to the
    // file system (incremental_vacuum after each pass) instead of keeping it as free pages.
    if (!exec(db, QStringLiteral("PRAGMA auto_vacuum = INCREMENTAL"), &sqlError))
        return sqlError;
    if (!q.exec(QStringLiteral("PRAGMA journal_mode = WAL")) || !q.next())
        return q.lastError().text();
    const QString mode = q.value(0).toString();
    q.finish();
    if (mode.compare(QLatin1String("wal"), Qt::CaseInsensitive) != 0)
        return QStringLiteral("the file does not support WAL mode (journal mode %1)").arg(mode);
    // NORMAL is durable in WAL mode except for the last transactions on a power cut, and
    // saves an fsync per run.
    if (!exec(db, QStringLiteral("PRAGMA synchronous = NORMAL"), &sqlError) ||
        !exec(db, QStringLiteral("PRAGMA foreign_keys = ON"), &sqlError) ||
        !exec(db, QStringLiteral("PRAGMA journal_size_limit = %1").arg(kJournalSizeLimit),
              &sqlError))
        return sqlError;
    return {};
}

// The columns later schemas added, each with the last schema that lacked it. Schema 1 had no
// session_id (runs in sessions came later); 1 and 2 no size_bytes (the size cap came later; the
// first retention pass fills it in, off the opening); 1 to 3 did not know which engine ran a run
// (there was one; their runs read as ""); 1 to 4 had no allow-list mode (their runs tried no
// connections); 1 to 5 did not name the container runtime (""); 1 to 6 had no bound secrets;
// 1 to 7 did not preload; 1 to 8 had no workspaces; 1 to 9 did not tell claims from
// credentials. Their runs read with none.
struct AddedColumn
{
    int lastWithout;
    const char *statement;
};
constexpr AddedColumn kAddedColumns[] = {
    {1, "ALTER TABLE runs ADD COLUMN session_id TEXT"},
    {2, "ALTER TABLE runs ADD COLUMN size_bytes INTEGER"},
    {3, "ALTER TABLE runs ADD COLUMN engine TEXT"},
    {4, "ALTER TABLE runs ADD COLUMN connections TEXT"},
    {5, "ALTER TABLE runs ADD COLUMN runtime TEXT"},
    {6, "ALTER TABLE runs ADD COLUMN secrets TEXT"},
    {7, "ALTER TABLE runs ADD COLUMN preloaded TEXT"},
    {8, "ALTER TABLE runs ADD COLUMN workspaces TEXT"},
    {9, "ALTER TABLE runs ADD COLUMN claimed_name TEXT"},
    {9, "ALTER TABLE runs ADD COLUMN identity TEXT"},
};

// Brings a file of schema `version` (0: new) to this one, inside the caller's transaction; an
// error message, empty on success.
QString migrate(const QSqlDatabase &db, int version)
{
    QString sqlError;
    for (const AddedColumn &c : kAddedColumns) {
        if (version >= 1 && version <= c.lastWithout &&
            !exec(db, QString::fromLatin1(c.statement), &sqlError))
            return sqlError;
    }
    for (const char *statement : kSchema) {
        if (!exec(db, QString::fromLatin1(statement), &sqlError))
            return sqlError;
    }
    if (!exec(db, QStringLiteral("PRAGMA user_version = %1").arg(kSchemaVersion), &sqlError))
        return sqlError;
    return {};
}

// Settings of the connection and the schema; an error message, empty on success.
QString initialize(const QSqlDatabase &db, int busyTimeoutMs)
{
    QString sqlError = configure(db, busyTimeoutMs);
    if (!sqlError.isEmpty())
        return sqlError;
    // In one transaction so that two processes creating the file at once do not interleave.
    if (!begin(db, &sqlError))
        return sqlError;
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next()) {
        sqlError = q.lastError().text();
        q.finish();
        rollback(db);
        return sqlError;
    }
    const int version = q.value(0).toInt();
    q.finish();
    if (version > kSchemaVersion) {
        rollback(db);
        return QStringLiteral("written by a newer version (schema %1, this one knows %2)")
            .arg(version)
            .arg(kSchemaVersion);
    }
    sqlError = migrate(db, version);
    if (!sqlError.isEmpty()) {
        rollback(db);
        return sqlError;
    }
    if (!commit(db, &sqlError))
        return sqlError;
    return {};
}

// Opens a connection of the calling thread to `path`; empty on success, else the error. The
// writer sets the file up (WAL, schema); a reader only reads, so it takes no write lock.
QString openConnection(const QString &connection, const QString &path, int busyTimeoutMs,
                       bool writer)
{
    // Scoped: closeConnection() must not find a QSqlDatabase or QSqlQuery of it alive.
    QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), connection);
    db.setDatabaseName(path);
    db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(busyTimeoutMs));
    if (!db.open())
        return db.lastError().text();
    return writer ? initialize(db, busyTimeoutMs) : QString();
}

void closeConnection(QString &connection)
{
    if (connection.isEmpty())
        return;
    {
        QSqlDatabase db = QSqlDatabase::database(connection, false);
        db.close();
    }
    // Only once no QSqlDatabase copy of the connection is left, or Qt warns it is still in use.
    QSqlDatabase::removeDatabase(connection);
    connection.clear();
}

bool saveRun(const QSqlDatabase &db, const QString &path, const RunRecord &run)
{
    QString sqlError;
    auto fail = [&]() {
        qCWarning(lcJournal).noquote()
            << QStringLiteral("Cannot save run %1 to the history '%2': %3")
                   .arg(run.id, path, sqlError);
        return false;
    };
    if (!begin(db, &sqlError))
        return fail();
    const bool written = [&]() {
        QSqlQuery q(db);
        if (!run.complete) {
            // A record from recent() lacks its output and files: replacing the row would erase
            // them, so only the scalar fields change (or the row is inserted without them).
            q.prepare(QStringLiteral("UPDATE runs SET %1 WHERE id = :id")
                          .arg(assignments(scalarColumns())));
            bindScalars(q, run);
            if (!exec(q, &sqlError))
                return false;
            if (q.numRowsAffected() > 0)
                return true;
        }
        q.prepare(QStringLiteral("INSERT OR REPLACE INTO runs (%1, output, workspaces, "
                                 "size_bytes) VALUES (%2, :output, :workspaces, :size_bytes)")
                      .arg(scalarColumns(), placeholders(scalarColumns())));
        bindScalars(q, run);
        q.bindValue(QStringLiteral(":output"), RunRecord::packOutput(run.output));
        q.bindValue(QStringLiteral(":workspaces"), workspacesText(run.workspaces));
        q.bindValue(QStringLiteral(":size_bytes"), storedBytes(run));
        if (!exec(q, &sqlError))
            return false;
        if (!run.complete)
            return true;

        // REPLACE already cascaded to the old files; explicit all the same, so that a
        // connection without foreign_keys cannot leave stale ones behind.
        q.prepare(QStringLiteral("DELETE FROM files WHERE run_id = ?"));
        q.addBindValue(run.id);
        if (!exec(q, &sqlError))
            return false;
        q.prepare(QStringLiteral("INSERT INTO files (run_id, seq, kind, name, mime, size, "
                                 "included, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"));
        for (int seq = 0; seq < run.files.size(); ++seq) {
            const OutputFile &f = run.files.at(seq);
            q.addBindValue(run.id);
            q.addBindValue(seq);
            q.addBindValue(f.kind == OutputFile::Kind::Plot ? QStringLiteral("plot")
                                                            : QStringLiteral("output"));
            q.addBindValue(f.name);
            q.addBindValue(f.mimeType);
            q.addBindValue(f.size);
            q.addBindValue(int(f.included));
            q.addBindValue(f.data);
            if (!exec(q, &sqlError))
                return false;
        }
        return true;
    }();
    if (!written) {
        rollback(db);
        return fail();
    }
    if (!commit(db, &sqlError))
        return fail();
    return true;
}

QList<RunRecord> readRecent(const QSqlDatabase &db, const QString &path, int limit,
                            const QString &text)
{
    QList<RunRecord> runs;
    QSqlQuery q(db);
    q.setForwardOnly(true);
    QString sql = QStringLiteral("SELECT %1 FROM runs").arg(scalarColumns());
    if (!text.isEmpty()) {
        // The output blob holds binary chunk headers (a length starts with a NUL byte), and LIKE
        // stops at the first NUL; instr() compares the whole of it. lower() on both sides: the
        // same ASCII-only case folding as LIKE.
        sql += QStringLiteral(" WHERE code LIKE :like ESCAPE '\\' OR source LIKE :like ESCAPE '\\'"
                              " OR language LIKE :like ESCAPE '\\' OR tool LIKE :like ESCAPE '\\'"
                              " OR engine LIKE :like ESCAPE '\\'"
                              " OR instr(lower(CAST(output AS TEXT)), lower(:text)) > 0");
    }
    // rowid breaks ties between runs of the same millisecond: the later save is the newer.
    sql += QStringLiteral(" ORDER BY created_at DESC, rowid DESC LIMIT :limit");
    q.prepare(sql);
    if (!text.isEmpty()) {
        q.bindValue(QStringLiteral(":like"), likePattern(text));
        q.bindValue(QStringLiteral(":text"), text);
    }
    q.bindValue(QStringLiteral(":limit"), limit);
    if (!q.exec()) {
        qCWarning(lcJournal).noquote()
            << QStringLiteral("Cannot read the history '%1': %2").arg(path, q.lastError().text());
        return runs;
    }
    while (q.next()) {
        RunRecord r = readScalars(q);
        r.complete = false;
        runs.append(r);
    }
    return runs;
}

std::optional<RunRecord> loadRun(const QSqlDatabase &db, const QString &path, const QString &id)
{
    auto fail = [&](const QSqlQuery &q) {
        qCWarning(lcJournal).noquote() << QStringLiteral("Cannot read run %1 from the history "
                                                         "'%2': %3")
                                              .arg(id, path, q.lastError().text());
        return std::nullopt;
    };
    // One snapshot for the run and its files, so a concurrent save cannot mix two versions.
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("BEGIN")))
        return fail(q);
    const std::optional<RunRecord> run = [&]() -> std::optional<RunRecord> {
        q.setForwardOnly(true);
        q.prepare(QStringLiteral("SELECT %1, output, workspaces FROM runs WHERE id = ?")
                      .arg(scalarColumns()));
        q.addBindValue(id);
        if (!q.exec())
            return fail(q);
        if (!q.next())
            return std::nullopt;
        RunRecord r = readScalars(q);
        // Output comes after the scalar columns.
        const int outputColumn = int(RunRecord::fields().size());
        r.output = RunRecord::unpackOutput(q.value(outputColumn).toByteArray());
        r.workspaces = RunRecord::workspacesFromJson(
            QJsonDocument::fromJson(q.value(outputColumn + 1).toString().toUtf8()).array());
        q.finish();

        q.prepare(QStringLiteral("SELECT kind, name, mime, size, included, data FROM files "
                                 "WHERE run_id = ? ORDER BY seq"));
        q.addBindValue(id);
        if (!q.exec())
            return fail(q);
        while (q.next()) {
            OutputFile f;
            f.kind = q.value(0).toString() == QLatin1String("plot") ? OutputFile::Kind::Plot
                                                                    : OutputFile::Kind::Output;
            f.name = q.value(1).toString();
            f.mimeType = q.value(2).toString();
            f.size = int64Or(q.value(3), 0);
            f.included = q.value(4).toBool();
            f.data = q.value(5).toByteArray();
            r.files.append(f);
        }
        r.complete = true;
        return r;
    }();
    q.finish();
    exec(db, QStringLiteral("COMMIT"));
    return run;
}

// Runs of schema 1 and 2 get their size (once; a file with many runs takes a while).
bool fillMissingSizes(const QSqlDatabase &db, QString *sqlError)
{
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("SELECT 1 FROM runs WHERE size_bytes IS NULL LIMIT 1")))
        return false;
    const bool missing = q.next();
    q.finish();
    if (!missing)
        return true;
    if (!begin(db, sqlError))
        return false;
    if (!exec(db,
              QStringLiteral(
                  "UPDATE runs SET size_bytes = ifnull(length(CAST(code AS BLOB)), 0) + "
                  "ifnull(length(output), 0) + (SELECT ifnull(sum(length(data)), 0) FROM files "
                  "WHERE run_id = runs.id) WHERE size_bytes IS NULL"),
              sqlError)) {
        rollback(db);
        return false;
    }
    return commit(db, sqlError);
}

int pruneRuns(const QSqlDatabase &db, const QString &path, const HistoryStore::Retention &keep)
{
    if (keep.days <= 0 && keep.maxRuns <= 0 && keep.maxBytes <= 0)
        return 0;
    QString sqlError;
    auto fail = [&]() {
        qCWarning(lcJournal).noquote()
            << QStringLiteral("Cannot prune the history '%1': %2").arg(path, sqlError);
        return 0;
    };
    if (keep.maxBytes > 0 && !fillMissingSizes(db, &sqlError))
        return fail();
    if (!begin(db, &sqlError))
        return fail();
    int deleted = 0;
    QSqlQuery q(db);
    // The files go with their runs by the foreign key's ON DELETE CASCADE.
    if (keep.days > 0) {
        q.prepare(QStringLiteral("DELETE FROM runs WHERE created_at < ?"));
        q.addBindValue(QDateTime::currentMSecsSinceEpoch() - qint64(keep.days) * kMsPerDay);
        if (!exec(q, &sqlError)) {
            rollback(db);
            return fail();
        }
        deleted += q.numRowsAffected();
    }
    if (keep.maxRuns > 0) {
        q.prepare(QStringLiteral("DELETE FROM runs WHERE id IN (SELECT id FROM runs ORDER BY "
                                 "created_at DESC, rowid DESC LIMIT -1 OFFSET ?)"));
        q.addBindValue(keep.maxRuns);
        if (!exec(q, &sqlError)) {
            rollback(db);
            return fail();
        }
        deleted += q.numRowsAffected();
    }
    if (keep.maxBytes > 0) {
        // Newest first, a run stays while the running total, itself included, fits. The newest
        // stays whatever its size: a run just stored must not vanish at once.
        q.prepare(QStringLiteral(
            "DELETE FROM runs WHERE rowid IN (SELECT rowid FROM (SELECT rowid, sum(size_bytes) "
            "OVER (ORDER BY created_at DESC, rowid DESC ROWS UNBOUNDED PRECEDING) AS total, "
            "row_number() OVER (ORDER BY created_at DESC, rowid DESC) AS n "
            "FROM runs) WHERE total > ? AND n > 1)"));
        q.addBindValue(keep.maxBytes);
        if (!exec(q, &sqlError)) {
            rollback(db);
            return fail();
        }
        deleted += q.numRowsAffected();
    }
    q.finish();
    if (!commit(db, &sqlError))
        return fail();
    // Gives the freed pages back to the file system where the file allows it (auto_vacuum).
    if (deleted > 0)
        exec(db, QStringLiteral("PRAGMA incremental_vacuum"));
    return deleted;
}

// Whether what is stored exceeds `maxBytes` (read from the index alone).
bool overSizeCap(const QSqlDatabase &db, qint64 maxBytes)
{
    if (maxBytes <= 0)
        return false;
    QSqlQuery q(db);
    return q.exec(QStringLiteral("SELECT total(size_bytes) FROM runs")) && q.next() &&
           q.value(0).toDouble() > double(maxBytes);
}

qint64 environmentNumber(const char *name, qint64 fallback)
{
    if (!qEnvironmentVariableIsSet(name))
        return fallback;
    bool ok = false;
    const qint64 n = qEnvironmentVariable(name).trimmed().toLongLong(&ok);
    if (!ok || n < 0) {
        qCWarning(lcJournal).noquote() << name << "is not a number of 0 or more; ignored";
        return fallback;
    }
    return n;
}
} // namespace

// The worker's side: used only on its thread.
struct HistoryStore::Worker
{
    QString connection;
    QString path;
    Retention retention;
    QSqlDatabase db() const { return QSqlDatabase::database(connection, false); }
};

HistoryStore::HistoryStore(QObject *parent)
    : QObject(parent), m_context(new QObject), m_worker(std::make_shared<Worker>()),
      m_retention(defaultRetention()), m_pendingBytes(std::make_shared<std::atomic<qint64>>(0))
{
    qRegisterMetaType<RunRecord>();
    m_thread.setObjectName(QStringLiteral("history"));
    m_context->moveToThread(&m_thread);
    m_retentionTimer.setInterval(kRetentionIntervalMs);
    connect(&m_retentionTimer, &QTimer::timeout, this, &HistoryStore::scheduleRetention);
}

HistoryStore::~HistoryStore()
{
    close();
    delete m_context; // its thread has finished
}

QString HistoryStore::defaultPath()
{
    const QString fromEnv = qEnvironmentVariable("CODE_SANDBOX_HISTORY");
    if (!fromEnv.isEmpty())
        return fromEnv;
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) +
           QLatin1String("/code-sandbox/history.sqlite");
}

HistoryStore::Retention HistoryStore::defaultRetention()
{
    Retention r;
    r.days = int(qMin<qint64>(environmentNumber("CODE_SANDBOX_HISTORY_DAYS", r.days), 36500));
    const qint64 mib = environmentNumber("CODE_SANDBOX_HISTORY_MAX_MB", r.maxBytes / (1024 * 1024));
    r.maxBytes = qMin<qint64>(mib, qint64(1) << 30) * 1024 * 1024;
    return r;
}

void HistoryStore::post(std::function<void(Worker &)> job) const
{
    QMetaObject::invokeMethod(
        m_context, [worker = m_worker, job = std::move(job)] { job(*worker); },
        Qt::QueuedConnection);
}

bool HistoryStore::open(const QString &path, QString *error)
{
    close();
    auto fail = [&](const QString &message) {
        close();
        const QString text = QStringLiteral("Cannot open the history '%1': %2").arg(path, message);
        qCWarning(lcJournal).noquote() << text;
        if (error)
            *error = text;
        return false;
    };

    if (path.isEmpty())
        return fail(QStringLiteral("no path"));
    if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QSQLITE")))
        return fail(QStringLiteral("the Qt SQLite driver (QSQLITE) is not installed"));
    const QString folder = QFileInfo(path).absolutePath();
    const bool newFolder = !QFileInfo::exists(folder);
    if (!QDir().mkpath(folder))
        return fail(QStringLiteral("cannot create the folder '%1'").arg(folder));
    // Code and output may hold secrets a program printed: the history is for this user only.
    // SQLite gives its -wal and -shm files the database file's permissions.
    const QFile::Permissions owner = QFile::ReadOwner | QFile::WriteOwner;
    if (newFolder)
        QFile::setPermissions(folder, owner | QFile::ExeOwner);
    if (!QFileInfo::exists(path)) {
        QFile file(path);
        if (file.open(QIODevice::WriteOnly))
            file.close();
        QFile::setPermissions(path, owner);
    }

    m_thread.start();
    // The connection is the worker's (Qt's connections belong to the thread that made them).
    // Waiting for it here keeps open()'s answer: once, before the owner serves anything.
    auto opened = std::make_shared<std::promise<QString>>();
    std::future<QString> result = opened->get_future();
    const Retention retention = m_retention;
    post([opened, path, retention](Worker &w) {
        w.path = path;
        w.retention = retention;
        w.connection =
            QStringLiteral("history-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
        // open() waits for this: the short timeout while setting the file up, the long one for
        // the writes, which nothing waits for.
        QString sqlError = openConnection(w.connection, path, kBusyTimeoutMs, true);
        if (sqlError.isEmpty())
            exec(w.db(), QStringLiteral("PRAGMA busy_timeout = %1").arg(kWriterBusyTimeoutMs),
                 &sqlError);
        if (!sqlError.isEmpty())
            closeConnection(w.connection);
        opened->set_value(sqlError);
    });
    const QString sqlError = result.get();
    if (!sqlError.isEmpty())
        return fail(sqlError);
    m_path = path;
    m_open = true;
    m_retentionTimer.start();
    scheduleRetention();
    return true;
}

void HistoryStore::close()
{
    m_retentionTimer.stop();
    closeConnection(m_readConnection);
    if (m_thread.isRunning()) {
        // Last in the queue: what was queued before is done first.
        post([](Worker &w) {
            closeConnection(w.connection);
            QThread::currentThread()->quit();
        });
        m_thread.wait();
    }
    m_open = false;
    m_path.clear();
}

void HistoryStore::setRetention(const Retention &retention)
{
    m_retention = retention;
    if (!m_open)
        return;
    post([retention](Worker &w) { w.retention = retention; });
    scheduleRetention();
}

void HistoryStore::setRetentionDays(int days)
{
    Retention r = m_retention;
    r.days = qMax(0, days);
    setRetention(r);
}

void HistoryStore::scheduleRetention()
{
    // Through the owner's event loop: a pass asked for at open() sees a retention that the owner
    // sets right after it, and several asked for at once make one.
    if (m_retentionScheduled)
        return;
    m_retentionScheduled = true;
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_retentionScheduled = false;
            if (!m_open)
                return;
            const Retention keep = m_retention;
            post([this, keep](Worker &w) {
                if (w.connection.isEmpty())
                    return;
                const int removed = pruneRuns(w.db(), w.path, keep);
                if (removed <= 0)
                    return;
                qCInfo(lcJournal).noquote() << "history:" << removed << "runs removed (kept: days"
                                            << keep.days << ", bytes" << keep.maxBytes << ")";
                QMetaObject::invokeMethod(
                    this, [this, removed] { Q_EMIT pruned(removed); }, Qt::QueuedConnection);
            });
        },
        Qt::QueuedConnection);
}

bool HistoryStore::save(const RunRecord &run)
{
    if (!m_open) {
        qCWarning(lcJournal) << "Cannot save run" << run.id << "to the history: not open";
        return false;
    }
    const qint64 bytes = storedBytes(run);
    const qint64 pending = m_pendingBytes->load();
    if (pending > 0 && pending + bytes > kMaxPendingBytes) {
        qCWarning(lcJournal).noquote()
            << QStringLiteral("Cannot save run %1 to the history '%2': %3 bytes are still "
                              "waiting to be written (the disk or another process is slow)")
                   .arg(run.id, m_path)
                   .arg(pending);
        return false;
    }
    m_pendingBytes->fetch_add(bytes);
    post([this, run, bytes, pendingBytes = m_pendingBytes](Worker &w) {
        bool ok = false;
        int removed = 0;
        if (w.connection.isEmpty()) {
            qCWarning(lcJournal) << "Cannot save run" << run.id << "to the history: not open";
        } else {
            ok = saveRun(w.db(), w.path, run);
            // The cap is kept after every write that passed it, not only once an hour.
            if (ok && overSizeCap(w.db(), w.retention.maxBytes)) {
                Retention sizeOnly;
                sizeOnly.days = 0;
                sizeOnly.maxBytes = w.retention.maxBytes;
                removed = pruneRuns(w.db(), w.path, sizeOnly);
            }
        }
        pendingBytes->fetch_sub(bytes);
        const QString id = run.id;
        QMetaObject::invokeMethod(
            this,
            [this, id, ok, removed] {
                Q_EMIT saved(id, ok);
                if (removed > 0)
                    Q_EMIT pruned(removed);
            },
            Qt::QueuedConnection);
    });
    return true;
}

void HistoryStore::updateWorkspaces(const QString &id, const QJsonArray &workspaces)
{
    const auto told = [this, id](bool ok) {
        QMetaObject::invokeMethod(
            this, [this, id, ok] { Q_EMIT workspacesUpdated(id, ok); }, Qt::QueuedConnection);
    };
    if (!m_open) {
        told(false);
        return;
    }
    post([id, workspaces, told](Worker &w) {
        if (w.connection.isEmpty()) {
            told(false);
            return;
        }
        QSqlQuery q(w.db());
        q.prepare(QStringLiteral("UPDATE runs SET workspaces = ? WHERE id = ?"));
        q.addBindValue(workspacesText(workspaces));
        q.addBindValue(id);
        QString sqlError;
        const bool written = exec(q, &sqlError);
        if (!written)
            qCWarning(lcJournal).noquote()
                << QStringLiteral("Cannot save the workspaces of run %1 to the history '%2': %3")
                       .arg(id, w.path, sqlError);
        told(written && q.numRowsAffected() > 0);
    });
}

void HistoryStore::recent(int limit, const QString &text, QObject *context,
                          std::function<void(const QList<RunRecord> &)> done)
{
    QPointer<QObject> receiver(context);
    if (!m_open) {
        QMetaObject::invokeMethod(
            this,
            [receiver, done] {
                if (receiver && done)
                    done({});
            },
            Qt::QueuedConnection);
        return;
    }
    post([this, limit, text, receiver, done](Worker &w) {
        QList<RunRecord> runs;
        if (!w.connection.isEmpty())
            runs = readRecent(w.db(), w.path, limit, text);
        // Back through the store, which outlives the worker: `receiver` is checked on its own
        // thread, where it can be deleted.
        QMetaObject::invokeMethod(
            this,
            [receiver, done, runs] {
                if (receiver && done)
                    done(runs);
            },
            Qt::QueuedConnection);
    });
}

void HistoryStore::prune(const Retention &retention, QObject *context,
                         std::function<void(int)> done)
{
    QPointer<QObject> receiver(context);
    const auto answer = [this, receiver, done](int removed) {
        QMetaObject::invokeMethod(
            this,
            [receiver, done, removed] {
                if (receiver && done)
                    done(removed);
            },
            Qt::QueuedConnection);
    };
    if (!m_open) {
        answer(0);
        return;
    }
    post([retention, answer](Worker &w) {
        answer(w.connection.isEmpty() ? 0 : pruneRuns(w.db(), w.path, retention));
    });
}

QString HistoryStore::readConnection() const
{
    if (!m_open)
        return {};
    if (m_readConnection.isEmpty()) {
        const QString name =
            QStringLiteral("history-read-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
        const QString sqlError = openConnection(name, m_path, kBusyTimeoutMs, false);
        if (!sqlError.isEmpty()) {
            QString failed = name;
            closeConnection(failed);
            qCWarning(lcJournal).noquote()
                << QStringLiteral("Cannot read the history '%1': %2").arg(m_path, sqlError);
            return {};
        }
        m_readConnection = name;
    }
    return m_readConnection;
}

std::optional<RunRecord> HistoryStore::load(const QString &id) const
{
    const QString connection = readConnection();
    if (connection.isEmpty())
        return std::nullopt;
    return loadRun(QSqlDatabase::database(connection, false), m_path, id);
}

int HistoryStore::count() const
{
    const QString connection = readConnection();
    if (connection.isEmpty())
        return 0;
    QSqlQuery q(QSqlDatabase::database(connection, false));
    if (!q.exec(QStringLiteral("SELECT COUNT(*) FROM runs")) || !q.next()) {
        qCWarning(lcJournal).noquote() << QStringLiteral("Cannot count the history '%1': %2")
                                              .arg(m_path, q.lastError().text());
        return 0;
    }
    return q.value(0).toInt();
}

bool HistoryStore::contains(const QString &id) const
{
    const QString connection = readConnection();
    if (connection.isEmpty())
        return false;
    QSqlQuery q(QSqlDatabase::database(connection, false));
    q.prepare(QStringLiteral("SELECT 1 FROM runs WHERE id = ?"));
    q.addBindValue(id);
    return q.exec() && q.next();
}

bool HistoryStore::waitForIdle(int timeoutMs) const
{
    if (!m_thread.isRunning())
        return true;
    auto idle = std::make_shared<std::promise<void>>();
    std::future<void> done = idle->get_future();
    post([idle](Worker &) { idle->set_value(); });
    return done.wait_for(std::chrono::milliseconds(timeoutMs)) == std::future_status::ready;
}
