#include "historystore.h"

#include "journallog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QUuid>

namespace {
constexpr int kSchemaVersion = 2; // 2: session_id
constexpr int kBusyTimeoutMs = 5000;
constexpr qint64 kMsPerDay = 24 * 60 * 60 * 1000;

// Every column but output, in the order readScalars expects them.
const char kScalarColumns[] =
    "id, instance_id, instance_pid, source, tool, language, code, status, created_at, "
    "finished_at, duration_ms, exit_code, timeout_sec, out_of_memory, compile_error, truncated, "
    "error, notes, image, container_id, memory_bytes, cpus, pids_limit, network, "
    "peak_memory_bytes, cpu_time_ms, env_names, session_id";

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
    " session_id TEXT"
    ")",
    "CREATE INDEX IF NOT EXISTS runs_created_at ON runs(created_at)",
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

// Reads the columns of kScalarColumns, in that order, from the current row.
RunRecord readScalars(const QSqlQuery &q)
{
    const RunRecord defaults;
    RunRecord r;
    r.id = q.value(0).toString();
    r.instanceId = q.value(1).toString();
    r.instancePid = int64Or(q.value(2), defaults.instancePid);
    r.source = q.value(3).toString();
    r.tool = q.value(4).toString();
    r.language = q.value(5).toString();
    r.code = q.value(6).toString();
    r.status = RunRecord::statusFromName(q.value(7).toString());
    r.createdAt = dateFromMs(q.value(8));
    r.finishedAt = dateFromMs(q.value(9));
    r.durationMs = int64Or(q.value(10), defaults.durationMs);
    r.exitCode = intOr(q.value(11), defaults.exitCode);
    r.timeoutSec = intOr(q.value(12), defaults.timeoutSec);
    r.outOfMemory = q.value(13).toBool();
    r.compileError = q.value(14).toBool();
    r.truncated = q.value(15).toBool();
    r.error = q.value(16).toString();
    r.notes = fromJsonText(q.value(17).toString());
    r.image = q.value(18).toString();
    r.containerId = q.value(19).toString();
    r.memoryBytes = int64Or(q.value(20), defaults.memoryBytes);
    r.cpus = q.value(21).isNull() ? defaults.cpus : q.value(21).toDouble();
    r.pidsLimit = intOr(q.value(22), defaults.pidsLimit);
    r.network = q.value(23).toBool();
    r.peakMemoryBytes = int64Or(q.value(24), defaults.peakMemoryBytes);
    r.cpuTimeMs = int64Or(q.value(25), defaults.cpuTimeMs);
    r.envNames = fromJsonText(q.value(26).toString());
    r.sessionId = q.value(27).toString();
    return r;
}

void bindScalars(QSqlQuery &q, const RunRecord &run)
{
    // A record without a creation time still needs a place in the order; "now" is where the
    // caller is.
    const QDateTime created =
        run.createdAt.isValid() ? run.createdAt : QDateTime::currentDateTimeUtc();
    q.bindValue(QStringLiteral(":id"), run.id);
    q.bindValue(QStringLiteral(":instance_id"), run.instanceId);
    q.bindValue(QStringLiteral(":instance_pid"), run.instancePid);
    q.bindValue(QStringLiteral(":source"), run.source);
    q.bindValue(QStringLiteral(":tool"), run.tool);
    q.bindValue(QStringLiteral(":language"), run.language);
    q.bindValue(QStringLiteral(":code"), run.code);
    q.bindValue(QStringLiteral(":status"), RunRecord::statusName(run.status));
    q.bindValue(QStringLiteral(":created_at"), created.toMSecsSinceEpoch());
    q.bindValue(QStringLiteral(":finished_at"), msSinceEpoch(run.finishedAt));
    q.bindValue(QStringLiteral(":duration_ms"), run.durationMs);
    q.bindValue(QStringLiteral(":exit_code"), run.exitCode);
    q.bindValue(QStringLiteral(":timeout_sec"), run.timeoutSec);
    q.bindValue(QStringLiteral(":out_of_memory"), int(run.outOfMemory));
    q.bindValue(QStringLiteral(":compile_error"), int(run.compileError));
    q.bindValue(QStringLiteral(":truncated"), int(run.truncated));
    q.bindValue(QStringLiteral(":error"), run.error);
    q.bindValue(QStringLiteral(":notes"), toJsonText(run.notes));
    q.bindValue(QStringLiteral(":image"), run.image);
    q.bindValue(QStringLiteral(":container_id"), run.containerId);
    q.bindValue(QStringLiteral(":memory_bytes"), run.memoryBytes);
    q.bindValue(QStringLiteral(":cpus"), run.cpus);
    q.bindValue(QStringLiteral(":pids_limit"), run.pidsLimit);
    q.bindValue(QStringLiteral(":network"), int(run.network));
    q.bindValue(QStringLiteral(":peak_memory_bytes"), run.peakMemoryBytes);
    q.bindValue(QStringLiteral(":cpu_time_ms"), run.cpuTimeMs);
    q.bindValue(QStringLiteral(":env_names"), toJsonText(run.envNames));
    q.bindValue(QStringLiteral(":session_id"), run.sessionId);
}

QString placeholders(const char *columns)
{
    QStringList names = QString::fromLatin1(columns).split(QLatin1String(", "));
    for (QString &name : names)
        name.prepend(u':');
    return names.join(QLatin1String(", "));
}

QString assignments(const char *columns)
{
    QStringList names = QString::fromLatin1(columns).split(QLatin1String(", "));
    for (QString &name : names)
        name = name + QLatin1String(" = :") + name;
    return names.join(QLatin1String(", "));
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

// Settings of the connection and the schema; an error message, empty on success.
QString initialize(const QSqlDatabase &db)
{
    QString sqlError;
    QSqlQuery q(db);
    // The busy timeout first: switching to WAL and creating the schema take locks that another
    // process opening the same file at the same moment may hold.
    if (!exec(db, QStringLiteral("PRAGMA busy_timeout = %1").arg(kBusyTimeoutMs), &sqlError))
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
        !exec(db, QStringLiteral("PRAGMA foreign_keys = ON"), &sqlError))
        return sqlError;

    // In one transaction so that two processes creating the file at once do not interleave.
    if (!begin(db, &sqlError))
        return sqlError;
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
    // Schema 1 had no session_id (runs in sessions came later).
    if (version == 1 &&
        !exec(db, QStringLiteral("ALTER TABLE runs ADD COLUMN session_id TEXT"), &sqlError)) {
        rollback(db);
        return sqlError;
    }
    for (const char *statement : kSchema) {
        if (!exec(db, QString::fromLatin1(statement), &sqlError)) {
            rollback(db);
            return sqlError;
        }
    }
    if (!exec(db, QStringLiteral("PRAGMA user_version = %1").arg(kSchemaVersion), &sqlError)) {
        rollback(db);
        return sqlError;
    }
    if (!commit(db, &sqlError))
        return sqlError;
    return {};
}
} // namespace

HistoryStore::~HistoryStore()
{
    close();
}

QString HistoryStore::defaultPath()
{
    const QString fromEnv = qEnvironmentVariable("CODE_SANDBOX_HISTORY");
    if (!fromEnv.isEmpty())
        return fromEnv;
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) +
           QLatin1String("/code-sandbox/history.sqlite");
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

    m_connection = QStringLiteral("history-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
    m_path = path;
    QString sqlError;
    {
        // Scoped: close() must not find a QSqlDatabase or QSqlQuery of the connection alive.
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connection);
        db.setDatabaseName(path);
        db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=%1").arg(kBusyTimeoutMs));
        sqlError = db.open() ? initialize(db) : db.lastError().text();
    }
    if (!sqlError.isEmpty())
        return fail(sqlError);
    return true;
}

bool HistoryStore::isOpen() const
{
    return !m_connection.isEmpty() && QSqlDatabase::database(m_connection, false).isOpen();
}

void HistoryStore::close()
{
    if (m_connection.isEmpty())
        return;
    {
        QSqlDatabase db = QSqlDatabase::database(m_connection, false);
        db.close();
    }
    // Only once no QSqlDatabase copy of the connection is left, or Qt warns it is still in use.
    QSqlDatabase::removeDatabase(m_connection);
    m_connection.clear();
    m_path.clear();
}

bool HistoryStore::save(const RunRecord &run)
{
    if (!isOpen()) {
        qCWarning(lcJournal) << "Cannot save run" << run.id << "to the history: not open";
        return false;
    }
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    QString sqlError;
    auto fail = [&]() {
        qCWarning(lcJournal).noquote()
            << QStringLiteral("Cannot save run %1 to the history '%2': %3")
                   .arg(run.id, m_path, sqlError);
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
                          .arg(assignments(kScalarColumns)));
            bindScalars(q, run);
            if (!exec(q, &sqlError))
                return false;
            if (q.numRowsAffected() > 0)
                return true;
        }
        q.prepare(QStringLiteral("INSERT OR REPLACE INTO runs (%1, output) VALUES (%2, :output)")
                      .arg(QString::fromLatin1(kScalarColumns), placeholders(kScalarColumns)));
        bindScalars(q, run);
        q.bindValue(QStringLiteral(":output"), RunRecord::packOutput(run.output));
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

QList<RunRecord> HistoryStore::recent(int limit, const QString &text) const
{
    QList<RunRecord> runs;
    if (!isOpen())
        return runs;
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    q.setForwardOnly(true);
    QString sql = QStringLiteral("SELECT %1 FROM runs").arg(QString::fromLatin1(kScalarColumns));
    if (!text.isEmpty()) {
        // The output blob holds binary chunk headers (a length starts with a NUL byte), and LIKE
        // stops at the first NUL; instr() compares the whole of it. lower() on both sides: the
        // same ASCII-only case folding as LIKE.
        sql += QStringLiteral(" WHERE code LIKE :like ESCAPE '\\' OR source LIKE :like ESCAPE '\\'"
                              " OR language LIKE :like ESCAPE '\\' OR tool LIKE :like ESCAPE '\\'"
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
            << QStringLiteral("Cannot read the history '%1': %2").arg(m_path, q.lastError().text());
        return runs;
    }
    while (q.next()) {
        RunRecord r = readScalars(q);
        r.complete = false;
        runs.append(r);
    }
    return runs;
}

std::optional<RunRecord> HistoryStore::load(const QString &id) const
{
    if (!isOpen())
        return std::nullopt;
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    auto fail = [&](const QSqlQuery &q) {
        qCWarning(lcJournal).noquote() << QStringLiteral("Cannot read run %1 from the history "
                                                         "'%2': %3")
                                              .arg(id, m_path, q.lastError().text());
        return std::nullopt;
    };
    // One snapshot for the run and its files, so a concurrent save cannot mix two versions.
    QSqlQuery q(db);
    if (!q.exec(QStringLiteral("BEGIN")))
        return fail(q);
    const std::optional<RunRecord> run = [&]() -> std::optional<RunRecord> {
        q.setForwardOnly(true);
        q.prepare(QStringLiteral("SELECT %1, output FROM runs WHERE id = ?")
                      .arg(QString::fromLatin1(kScalarColumns)));
        q.addBindValue(id);
        if (!q.exec())
            return fail(q);
        if (!q.next())
            return std::nullopt;
        RunRecord r = readScalars(q);
        // Output comes after the scalar columns.
        const int outputColumn = int(QByteArray(kScalarColumns).count(',')) + 1;
        r.output = RunRecord::unpackOutput(q.value(outputColumn).toByteArray());
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

int HistoryStore::count() const
{
    if (!isOpen())
        return 0;
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    if (!q.exec(QStringLiteral("SELECT COUNT(*) FROM runs")) || !q.next()) {
        qCWarning(lcJournal).noquote() << QStringLiteral("Cannot count the history '%1': %2")
                                              .arg(m_path, q.lastError().text());
        return 0;
    }
    return q.value(0).toInt();
}

bool HistoryStore::contains(const QString &id) const
{
    if (!isOpen())
        return false;
    QSqlQuery q(QSqlDatabase::database(m_connection, false));
    q.prepare(QStringLiteral("SELECT 1 FROM runs WHERE id = ?"));
    q.addBindValue(id);
    return q.exec() && q.next();
}

int HistoryStore::prune(int days, int maxRuns)
{
    if (!isOpen() || (days <= 0 && maxRuns <= 0))
        return 0;
    QSqlDatabase db = QSqlDatabase::database(m_connection, false);
    QString sqlError;
    auto fail = [&]() {
        qCWarning(lcJournal).noquote()
            << QStringLiteral("Cannot prune the history '%1': %2").arg(m_path, sqlError);
        return 0;
    };
    if (!begin(db, &sqlError))
        return fail();
    int deleted = 0;
    QSqlQuery q(db);
    // The files go with their runs by the foreign key's ON DELETE CASCADE.
    if (days > 0) {
        q.prepare(QStringLiteral("DELETE FROM runs WHERE created_at < ?"));
        q.addBindValue(QDateTime::currentMSecsSinceEpoch() - qint64(days) * kMsPerDay);
        if (!exec(q, &sqlError)) {
            rollback(db);
            return fail();
        }
        deleted += q.numRowsAffected();
    }
    if (maxRuns > 0) {
        q.prepare(QStringLiteral("DELETE FROM runs WHERE id IN (SELECT id FROM runs ORDER BY "
                                 "created_at DESC, rowid DESC LIMIT -1 OFFSET ?)"));
        q.addBindValue(maxRuns);
        if (!exec(q, &sqlError)) {
            rollback(db);
            return fail();
        }
        deleted += q.numRowsAffected();
    }
    q.finish();
    if (!commit(db, &sqlError))
        return fail();
    return deleted;
}
