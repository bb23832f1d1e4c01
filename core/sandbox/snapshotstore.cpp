#include "snapshotstore.h"

#include "keptsessions.h"
#include "sandboxlog.h"
#include "tararchive.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSaveFile>

namespace {
constexpr int kFormatVersion = 1;
const char *const kFormat = "code-sandbox-snapshot";

QByteArray sha256(const QByteArray &bytes)
{
    return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256);
}
} // namespace

SnapshotStore::SnapshotStore(const QString &folder, const Limits &limits)
    : m_folder(folder), m_limits(limits)
{}

QString SnapshotStore::contentHash(const QByteArray &state, const QByteArray &files)
{
    return QString::fromLatin1(sha256(sha256(state) + sha256(files)).toHex());
}

QByteArray SnapshotStore::pack(const SessionSnapshot &snapshot, const QByteArray &state,
                               const QByteArray &files, QString *error)
{
    QJsonObject manifest = snapshot.toJson();
    manifest.insert(QStringLiteral("format"), QString::fromLatin1(kFormat));
    manifest.insert(QStringLiteral("version"), kFormatVersion);
    manifest.insert(QStringLiteral("language"), snapshot.language);
    QList<TarArchive::Entry> entries;
    const auto entry = [&entries](const QString &path, const QByteArray &data) {
        TarArchive::Entry e;
        e.path = path;
        e.data = data;
        e.mode = 0600;
        e.mtimeMs = QDateTime::currentMSecsSinceEpoch();
        entries.append(e);
    };
    entry(QStringLiteral("manifest.json"), QJsonDocument(manifest).toJson());
    entry(QStringLiteral("state"), state);
    entry(QStringLiteral("files.tar"), files);
    return TarArchive::pack(entries, error);
}

QString SnapshotStore::unpack(const QByteArray &csnap, qint64 maxBytes, SessionSnapshot *snapshot,
                              QByteArray *state, QByteArray *files)
{
    QString error;
    const QList<TarArchive::Entry> entries = TarArchive::unpack(csnap, maxBytes + 65536, &error);
    if (!error.isEmpty())
        return QStringLiteral("the snapshot is not a readable archive: ") + error;
    QHash<QString, QByteArray> found;
    for (const TarArchive::Entry &e : entries) {
        if (e.isDirectory || found.contains(e.path))
            return QStringLiteral("the snapshot holds an entry it should not: %1").arg(e.path);
        found.insert(e.path, e.data);
    }
    const QStringList expected = {QStringLiteral("manifest.json"), QStringLiteral("state"),
                                  QStringLiteral("files.tar")};
    for (const QString &name : found.keys())
        if (!expected.contains(name))
            return QStringLiteral("the snapshot holds an entry it should not: %1").arg(name);
    for (const QString &name : expected)
        if (!found.contains(name))
            return QStringLiteral("the snapshot lacks its %1").arg(name);
    QJsonParseError parse;
    const QJsonObject m = QJsonDocument::fromJson(found.value(expected[0]), &parse).object();
    if (parse.error != QJsonParseError::NoError ||
        m.value(u"format").toString() != QLatin1String(kFormat) ||
        m.value(u"version").toInt() != kFormatVersion)
        return QStringLiteral("the snapshot's manifest is not a code-sandbox-snapshot version %1")
            .arg(kFormatVersion);
    *state = found.value(expected[1]);
    *files = found.value(expected[2]);
    const QString hash = contentHash(*state, *files);
    if (m.value(u"sha256").toString() != hash)
        return QStringLiteral("the snapshot's content does not match its hash: it was changed or "
                              "damaged");
    // The manifest is the record, as SessionSnapshot::toJson wrote it; size and hash are the
    // content's as read.
    SessionSnapshot s = SessionSnapshot::fromJson(m);
    s.bytes = state->size() + files->size();
    s.sha256 = hash;
    if (s.language.isEmpty() || !QStringList{QStringLiteral("python"), QStringLiteral("javascript"),
                                             QStringLiteral("files")}
                                     .contains(s.kind))
        return QStringLiteral("the snapshot's manifest names no language or an unknown kind");
    *snapshot = s;
    return QString();
}

QString SnapshotStore::pathOf(const SessionSnapshot &snapshot) const
{
    return QStringLiteral("%1/%2/%3.csnap").arg(m_folder, snapshot.sessionId).arg(snapshot.number);
}

QString SnapshotStore::add(SessionSnapshot *snapshot, const QByteArray &state,
                           const QByteArray &files)
{
    const qint64 bytes = state.size() + files.size();
    if (bytes > m_limits.perSessionBytes)
        return QStringLiteral("the session's state and files are %1 MiB, more than a session's "
                              "snapshots may hold (%2 MiB, --snapshot-max)")
            .arg(double(bytes) / (1 << 20), 0, 'f', 1)
            .arg(double(m_limits.perSessionBytes) / (1 << 20), 0, 'f', 0);
    snapshot->number = m_numbers.value(snapshot->sessionId) + 1;
    snapshot->id = QStringLiteral("%1.%2").arg(snapshot->sessionId).arg(snapshot->number);
    snapshot->bytes = bytes;
    snapshot->sha256 = contentHash(state, files);
    QString error;
    const QByteArray csnap = pack(*snapshot, state, files, &error);
    if (!error.isEmpty())
        return QStringLiteral("the snapshot could not be packed: ") + error;
    const QString path = pathOf(*snapshot);
    if (!QDir().mkpath(QFileInfo(path).path()))
        return QStringLiteral("cannot make the folder %1").arg(QFileInfo(path).path());
    QSaveFile file(path);
    file.setDirectWriteFallback(false);
    if (!file.open(QIODevice::WriteOnly) || file.write(csnap) != csnap.size() || !file.commit())
        return QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
    m_numbers.insert(snapshot->sessionId, snapshot->number);
    m_snapshots.append(*snapshot);
    m_total += bytes;
    enforceCaps(snapshot->sessionId);
    return QString();
}

void SnapshotStore::enforceCaps(const QString &sessionId)
{
    qint64 ofSession = 0;
    for (const SessionSnapshot &s : std::as_const(m_snapshots))
        if (s.sessionId == sessionId)
            ofSession += s.bytes;
    // The newest is never dropped: it is within the caps by itself (add() checked).
    for (int i = 0; i < m_snapshots.size() - 1 && ofSession > m_limits.perSessionBytes;) {
        if (m_snapshots[i].sessionId != sessionId) {
            ++i;
            continue;
        }
        ofSession -= m_snapshots[i].bytes;
        remove(m_snapshots[i].id);
    }
    while (m_snapshots.size() > 1 && m_total > m_limits.totalBytes)
        remove(m_snapshots.first().id);
}

void SnapshotStore::adopt(const SessionSnapshot &snapshot)
{
    if (find(snapshot.id))
        return;
    m_snapshots.append(snapshot);
    m_total += snapshot.bytes;
    m_numbers.insert(snapshot.sessionId,
                     qMax(m_numbers.value(snapshot.sessionId), snapshot.number));
}

QList<SessionSnapshot> SnapshotStore::of(const QString &sessionId) const
{
    QList<SessionSnapshot> list;
    for (const SessionSnapshot &s : m_snapshots)
        if (s.sessionId == sessionId)
            list.append(s);
    return list;
}

const SessionSnapshot *SnapshotStore::find(const QString &id) const
{
    for (const SessionSnapshot &s : m_snapshots)
        if (s.id == id)
            return &s;
    return nullptr;
}

const SessionSnapshot *SnapshotStore::afterRun(const QString &runId) const
{
    if (runId.isEmpty())
        return nullptr;
    for (const SessionSnapshot &s : m_snapshots)
        if (s.afterRun == runId)
            return &s;
    return nullptr;
}

QString SnapshotStore::load(const QString &id, QByteArray *state, QByteArray *files) const
{
    const SessionSnapshot *s = find(id);
    if (!s)
        return QStringLiteral("no snapshot '%1' is kept").arg(id);
    QFile file(pathOf(*s));
    if (!file.open(QIODevice::ReadOnly))
        return QStringLiteral("cannot read %1: %2").arg(file.fileName(), file.errorString());
    SessionSnapshot read;
    const QString error = unpack(file.readAll(), s->bytes, &read, state, files);
    if (!error.isEmpty())
        return error;
    if (read.sha256 != s->sha256)
        return QStringLiteral("the snapshot's file was replaced: its hash is not the one kept");
    return QString();
}

QString SnapshotStore::exportTo(const QString &id, const QString &path) const
{
    const SessionSnapshot *s = find(id);
    if (!s)
        return QStringLiteral("no snapshot '%1' is kept").arg(id);
    QFile from(pathOf(*s));
    if (!from.open(QIODevice::ReadOnly))
        return QStringLiteral("cannot read %1: %2").arg(from.fileName(), from.errorString());
    QSaveFile to(path);
    if (!to.open(QIODevice::WriteOnly) || to.write(from.readAll()) < 0 || !to.commit())
        return QStringLiteral("cannot write %1: %2").arg(path, to.errorString());
    // It holds what the program held: the user's to share, no one else's to read.
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
    return QString();
}

void SnapshotStore::remove(const QString &id)
{
    for (int i = 0; i < m_snapshots.size(); ++i) {
        if (m_snapshots[i].id != id)
            continue;
        const SessionSnapshot s = m_snapshots.takeAt(i);
        m_total -= s.bytes;
        QFile::remove(pathOf(s));
        QDir().rmdir(QFileInfo(pathOf(s)).path()); // once it is empty
        qCDebug(lcSandbox).noquote() << "snapshot" << id << "dropped";
        return;
    }
}

void SnapshotStore::removeSession(const QString &sessionId)
{
    for (const SessionSnapshot &s : of(sessionId))
        remove(s.id);
    QDir(QStringLiteral("%1/%2").arg(m_folder, sessionId)).removeRecursively();
}

void SnapshotStore::sweepStale(qint64 olderThanSec)
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QFileInfoList folders =
        QDir(m_folder).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::NoSymLinks);
    for (const QFileInfo &info : folders) {
        if (m_numbers.contains(info.fileName()) || info.lastModified().secsTo(now) < olderThanSec)
            continue;
        QDir(info.filePath()).removeRecursively();
        qCInfo(lcSandbox).noquote()
            << "removed the snapshots of a gone session:" << info.fileName();
    }
}
