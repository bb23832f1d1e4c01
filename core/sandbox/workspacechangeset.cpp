#include "workspacechangeset.h"

#include "tararchive.h"
#include "unifieddiff.h"

#include <QCryptographicHash>
#include <QDir>
#include <QHash>
#include <QJsonArray>
#include <QRegularExpression>
#include <QSet>
#include <algorithm>
#include <optional>

namespace {
using Kind = WorkspaceChange::Kind;
using TarType = TarArchive::Entry::Type;

// Old texts larger than this are not read back for a diff (its 5000 lines are long gone).
constexpr qint64 kMaxDiffInput = 4 * 1024 * 1024;
constexpr int kMaxPathLength = 4096;

QString shown(const QString &path)
{
    return WorkspaceScanner::shownPath(path);
}

QByteArray sha256Hex(QByteArrayView data)
{
    return QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex();
}

// A diff as kept: at most kMaxDiffBytes (UTF-8), cut at a line's end, with a note.
QString capped(const QString &diff)
{
    if (diff.toUtf8().size() <= WorkspaceChangeSet::kMaxDiffBytes)
        return diff;
    qsizetype cut = diff.size();
    while (cut > 0 &&
           QStringView(diff).left(cut).toUtf8().size() > WorkspaceChangeSet::kMaxDiffBytes)
        cut = cut * 3 / 4;
    cut = diff.lastIndexOf(u'\n', cut - 1) + 1;
    const int lines = int(QStringView(diff).mid(cut).count(u'\n'));
    return diff.left(cut) + QStringLiteral("... diff cut (%1 more lines)\n").arg(lines);
}

QString kindName(TarType type)
{
    switch (type) {
    case TarType::Symlink:
        return QStringLiteral("is a symbolic link");
    case TarType::HardLink:
        return QStringLiteral("is a hard link");
    case TarType::Fifo:
        return QStringLiteral("is a FIFO");
    case TarType::CharDevice:
    case TarType::BlockDevice:
        return QStringLiteral("is a device");
    case TarType::Socket:
        return QStringLiteral("is a socket");
    case TarType::File:
    case TarType::Directory:
        break;
    }
    return QStringLiteral("is not a regular file");
}
} // namespace

QString WorkspaceChangeSet::pathProblem(const QString &path)
{
    if (path.isEmpty())
        return QStringLiteral("the name is empty");
    if (path.size() > kMaxPathLength)
        return QStringLiteral("the name is longer than %1 characters").arg(kMaxPathLength);
    if (path.startsWith(u'/'))
        return QStringLiteral("the name is absolute");
    for (QChar c : path) {
        if (c.unicode() < 0x20 || c.unicode() == 0x7f)
            return QStringLiteral("the name holds a NUL or control character");
    }
    for (QStringView part : QStringView(path).split(u'/')) {
        if (part == u".." || part == u".")
            return QStringLiteral("the name holds a '%1' component").arg(part);
        if (part.isEmpty())
            return QStringLiteral("the name holds an empty component");
        if (part.size() > 255)
            return QStringLiteral("a component of the name is longer than 255 characters");
    }
    if (path.normalized(QString::NormalizationForm_C) != path)
        return QStringLiteral("the name is not in Unicode normalization form C");
    return {};
}

bool WorkspaceChangeSet::isEmpty() const
{
    return changes.isEmpty() && refused.isEmpty() && refusedCount == 0;
}

namespace {
// One pass over the archive: what each entry is against the scan, keeping the content of the
// files that changed (within the caps) and remembering every path seen, for the deletions.
class Comparison
{
public:
    Comparison(const WorkspaceScan &before, qint64 maxTotalBytes, qint64 maxFileBytes,
               int maxEntries)
        : m_before(before), m_prefix(before.name + u'/'), m_maxTotalBytes(maxTotalBytes),
          m_maxFileBytes(maxFileBytes), m_maxEntries(maxEntries)
    {}

    bool visit(TarArchive::Entry &e, const TarArchive::ReadData &readData)
    {
        if (e.path == m_before.name) {
            m_sawRoot = m_sawRoot || e.type == TarType::Directory;
            if (e.type != TarType::Directory)
                refuse(e.path,
                       QStringLiteral("the workspace's folder itself %1").arg(kindName(e.type)));
            return true;
        }
        if (!e.path.startsWith(m_prefix)) {
            refuse(e.path, QStringLiteral("is outside %1").arg(m_prefix));
            return true;
        }
        const QString path = e.path.mid(m_prefix.size());
        if (const QString why = WorkspaceChangeSet::pathProblem(path); !why.isEmpty()) {
            // Never a change; but a scan path it may stand for ("./a") is not deleted either.
            if (m_before.find(QDir::cleanPath(path)))
                m_seen.insert(QDir::cleanPath(path), TarType::File);
            refuse(path, why);
            return true;
        }
        if (++m_entries > m_maxEntries) {
            // Remembered only as far as the scan goes (not deleted), so that memory stays bounded
            // whatever the archive holds.
            if (m_seen.contains(path))
                m_twice.insert(path);
            else if (m_before.find(path))
                m_seen.insert(path, e.type);
            refuse(path, QStringLiteral("is past the cap of %1 entries").arg(m_maxEntries));
            return true;
        }
        if (m_seen.contains(path)) {
            m_twice.insert(path);
            refuse(path, QStringLiteral("appears twice in the archive"));
            return true;
        }
        m_seen.insert(path, e.type);
        if (e.type != TarType::Directory)
            m_nonDirectories.insert(path);
        if (const QString above = nonDirectoryAbove(path); !above.isEmpty())
            refuse(path, QStringLiteral("is under %1, which is not a folder").arg(shown(above)));
        else if (e.type == TarType::File)
            return file(e, path, readData);
        else if (e.type != TarType::Directory)
            link(e, path);
        return true;
    }

    void refuse(const QString &path, const QString &why)
    {
        if (m_refusedCount++ < WorkspaceChangeSet::kMaxListed)
            m_refused.append(QStringLiteral("%1: %2").arg(shown(path), why));
    }

    void finish(WorkspaceChangeSet *set);
    bool sawRoot() const { return m_sawRoot; }

private:
    QString nonDirectoryAbove(const QString &path) const
    {
        for (qsizetype slash = path.indexOf(u'/'); slash > 0;
             slash = path.indexOf(u'/', slash + 1)) {
            if (m_nonDirectories.contains(path.left(slash)))
                return path.left(slash);
        }
        return {};
    }

    bool file(TarArchive::Entry &e, const QString &path, const TarArchive::ReadData &readData)
    {
        const WorkspaceEntry *old = m_before.find(path);
        const bool wasFile = old && old->type == WorkspaceEntry::Type::File;
        const int mode = e.mode & 0777;
        // As git: of the permission bits, only whether the file is executable is a change (an
        // engine's umask may differ in the others).
        const bool sameMode = wasFile && bool(old->mode & 0111) == bool(mode & 0111);
        if (e.size > m_maxFileBytes) {
            // Hashed in pieces, never held: unchanged, it is no change at all.
            QCryptographicHash hash(QCryptographicHash::Sha256);
            if (sameMode && old->size == e.size) {
                if (!readData([&hash](QByteArrayView piece) { hash.addData(piece); }))
                    return false;
                if (hash.result().toHex() == old->sha256)
                    return true;
            }
            refuse(path, QStringLiteral("is %1, over the cap of %2 per file")
                             .arg(WorkspaceScanner::formatSize(e.size),
                                  WorkspaceScanner::formatSize(m_maxFileBytes)));
            return true;
        }
        if (!readData(nullptr))
            return false;
        WorkspaceChange change;
        change.sha256 = sha256Hex(e.data);
        // The folder's own bits where only the content changed: a copy's others are the
        // engine's (its umask, a cached volume's 0644), and applying them could widen a private
        // file's.
        change.mode = sameMode ? (old->mode & 0777) : mode;
        if (sameMode && old->sha256 == change.sha256)
            return true;
        if (e.data.size() > m_maxTotalBytes - m_bytes) {
            refuse(path, QStringLiteral("is past the cap of %1 of changed content")
                             .arg(WorkspaceScanner::formatSize(m_maxTotalBytes)));
            return true;
        }
        m_bytes += e.data.size();
        change.kind = wasFile ? Kind::Modified : Kind::Added;
        change.path = path;
        change.size = e.data.size();
        if (wasFile) {
            change.oldSize = old->size;
            change.oldSha256 = old->sha256;
            change.oldMode = old->mode;
        }
        change.content = std::move(e.data);
        m_changes.append(std::move(change));
        return true;
    }

    void link(const TarArchive::Entry &e, const QString &path)
    {
        const WorkspaceEntry *old = m_before.find(path);
        if (e.type == TarType::Symlink && old && old->type == WorkspaceEntry::Type::Symlink &&
            old->linkTarget == e.linkTarget)
            return; // the scan's link, back as it was sent
        const QString to = e.linkTarget.isEmpty()
                               ? QString()
                               : QStringLiteral(" (to %1)").arg(shown(e.linkTarget));
        refuse(path, kindName(e.type) + to);
    }

    const WorkspaceScan &m_before;
    const QString m_prefix;
    const qint64 m_maxTotalBytes;
    const qint64 m_maxFileBytes;
    const int m_maxEntries;
    int m_entries = 0;
    qint64 m_bytes = 0;
    QHash<QString, TarType> m_seen;
    QSet<QString> m_twice;
    QSet<QString> m_nonDirectories;
    QList<WorkspaceChange> m_changes;
    QStringList m_refused;
    int m_refusedCount = 0;
    bool m_sawRoot = false;
};
} // namespace

namespace {
// The old content of a Modified file for its diff: from the scan's folder, if it still is what
// the scan saw.
std::optional<QByteArray> oldContent(const WorkspaceScan &before, const WorkspaceChange &c)
{
    if (before.root.isEmpty() || c.oldSize > kMaxDiffInput)
        return std::nullopt;
    std::optional<QByteArray> old =
        WorkspaceScanner::readFile(before.root, c.path, c.oldSize, nullptr);
    if (!old || sha256Hex(*old) != c.oldSha256)
        return std::nullopt;
    return old;
}

void describe(WorkspaceChange *c, const WorkspaceScan &before)
{
    if (c->kind == Kind::Deleted)
        return;
    c->binary = !UnifiedDiff::isText(c->content);
    if (c->binary || c->kind == Kind::Renamed)
        return;
    QString diff;
    if (c->kind == Kind::Added) {
        diff = UnifiedDiff::ofAdded(c->content, c->path);
    } else {
        const std::optional<QByteArray> old = oldContent(before, *c);
        if (!old)
            return;
        if (!UnifiedDiff::isText(*old)) {
            c->binary = true;
            return;
        }
        diff = UnifiedDiff::of(*old, c->content, c->path);
    }
    if (!diff.startsWith(QStringLiteral("--- "))) {
        c->diff = diff; // empty (the mode alone changed) or the note of a diff too long
        return;
    }
    UnifiedDiff::countLines(diff, &c->linesAdded, &c->linesRemoved);
    c->diff = capped(diff);
}

// Added files with the content of a deleted one become its renaming (empty files excepted: all
// are alike), pairing both in path order.
void findRenames(QList<WorkspaceChange> *changes, QList<WorkspaceChange> *deleted)
{
    QHash<QByteArray, QList<qsizetype>> bySha;
    for (qsizetype i = 0; i < deleted->size(); ++i) {
        if (deleted->at(i).oldSize > 0)
            bySha[deleted->at(i).oldSha256].append(i);
    }
    QSet<qsizetype> used;
    for (WorkspaceChange &c : *changes) {
        auto it = bySha.find(c.sha256);
        if (c.kind != Kind::Added || it == bySha.end() || it->isEmpty())
            continue;
        const qsizetype index = it->takeFirst();
        const WorkspaceChange &d = deleted->at(index);
        c.kind = Kind::Renamed;
        c.from = d.path;
        c.oldSize = d.oldSize;
        c.oldSha256 = d.oldSha256;
        c.oldMode = d.oldMode;
        used.insert(index);
    }
    for (qsizetype i = deleted->size() - 1; i >= 0; --i) {
        if (used.contains(i))
            deleted->removeAt(i);
    }
}
} // namespace

void Comparison::finish(WorkspaceChangeSet *set)
{
    QList<WorkspaceChange> changes;
    for (WorkspaceChange &c : m_changes) {
        if (!m_twice.contains(c.path))
            changes.append(std::move(c));
    }
    QList<WorkspaceChange> deleted;
    for (const WorkspaceEntry &e : m_before.entries) {
        if (m_seen.contains(e.path))
            continue;
        if (e.type == WorkspaceEntry::Type::File) {
            WorkspaceChange d;
            d.kind = Kind::Deleted;
            d.path = e.path;
            d.oldSize = e.size;
            d.oldSha256 = e.sha256;
            d.mode = d.oldMode = e.mode;
            deleted.append(std::move(d));
        } else if (e.type == WorkspaceEntry::Type::Symlink) {
            refuse(e.path, QStringLiteral("a symbolic link the sandbox removed (links are not "
                                          "applied)"));
        }
    }
    findRenames(&changes, &deleted);
    changes.append(deleted);
    set->bytes = 0;
    for (WorkspaceChange &c : changes) {
        describe(&c, m_before);
        set->bytes += c.content.size();
    }
    std::sort(changes.begin(), changes.end(),
              [](const WorkspaceChange &a, const WorkspaceChange &b) { return a.path < b.path; });
    set->changes = std::move(changes);
    set->refused = m_refused;
    set->refusedCount = m_refusedCount;
}

WorkspaceChangeSet WorkspaceChangeSet::compute(const WorkspaceScan &before, const QByteArray &tar,
                                               qint64 maxTotalBytes, qint64 maxFileBytes,
                                               int maxEntries, QString *error)
{
    WorkspaceChangeSet set;
    set.workspace = before.name;
    const auto fail = [&](const QString &why) {
        if (error)
            *error = QStringLiteral("workspace '%1': %2").arg(before.name, why);
        return set;
    };
    if (!before.error.isEmpty())
        return fail(QStringLiteral("the scan the run started from failed (%1)").arg(before.error));
    Comparison comparison(before, maxTotalBytes, maxFileBytes, maxEntries);
    QString why;
    const bool complete = TarArchive::read(
        tar,
        [&comparison](TarArchive::Entry &e, const TarArchive::ReadData &readData) {
            return comparison.visit(e, readData);
        },
        &why);
    if (!complete)
        return fail(QStringLiteral("the archive of the sandbox's folder is damaged (%1)").arg(why));
    // An archive laid out otherwise ("./NAME/...", or of another folder) would make every file
    // of the scan look deleted.
    if (!comparison.sawRoot())
        return fail(QStringLiteral("the archive does not hold the folder '%1' itself, with the "
                                   "entries under '%1/'")
                        .arg(before.name));
    comparison.finish(&set);
    return set;
}

namespace {
const char *const kKindKeys[] = {"added", "modified", "deleted", "renamed"};

QString modeText(int mode)
{
    return QStringLiteral("%1").arg(mode & 0777, 4, 8, QLatin1Char('0'));
}

QJsonObject changeToJson(const WorkspaceChange &c, bool withContent)
{
    QJsonObject o{{QStringLiteral("path"), c.path}};
    if (c.kind == Kind::Renamed)
        o.insert(QStringLiteral("from"), c.from);
    if (c.kind != Kind::Deleted) {
        o.insert(QStringLiteral("size"), c.size);
        o.insert(QStringLiteral("sha256"), QString::fromLatin1(c.sha256));
        o.insert(QStringLiteral("mode"), modeText(c.mode));
        o.insert(QStringLiteral("binary"), c.binary);
    }
    if (c.kind != Kind::Added) {
        o.insert(QStringLiteral("old_size"), c.oldSize);
        o.insert(QStringLiteral("old_sha256"), QString::fromLatin1(c.oldSha256));
        o.insert(QStringLiteral("old_mode"), modeText(c.oldMode));
    }
    if (!c.diff.isEmpty())
        o.insert(QStringLiteral("diff"), c.diff);
    if (c.linesAdded >= 0) {
        o.insert(QStringLiteral("lines_added"), c.linesAdded);
        o.insert(QStringLiteral("lines_removed"), c.linesRemoved);
    }
    if (withContent && c.kind != Kind::Deleted)
        o.insert(QStringLiteral("content"), QString::fromLatin1(c.content.toBase64()));
    return o;
}
} // namespace

QJsonObject WorkspaceChangeSet::toJson(bool withContent) const
{
    QJsonArray lists[4];
    for (const WorkspaceChange &c : changes)
        lists[int(c.kind)].append(changeToJson(c, withContent));
    QJsonObject o{{QStringLiteral("workspace"), workspace},
                  {QStringLiteral("refused"), QJsonArray::fromStringList(refused)},
                  {QStringLiteral("refused_count"), refusedCount},
                  {QStringLiteral("bytes"), bytes}};
    for (int kind = 0; kind < 4; ++kind)
        o.insert(QLatin1String(kKindKeys[kind]), lists[kind]);
    return o;
}

namespace {
// Field readers for fromJson: each false with *why set when the value is missing or wrong.
bool readSize(const QJsonObject &o, const char *key, qint64 *out, QString *why)
{
    const QJsonValue v = o.value(QLatin1String(key));
    const double d = v.toDouble(-1);
    if (!v.isDouble() || d < 0 || d > 9007199254740992.0 || d != double(qint64(d))) {
        *why = QStringLiteral("'%1' is not a size").arg(QLatin1String(key));
        return false;
    }
    *out = qint64(d);
    return true;
}

bool readSha(const QJsonObject &o, const char *key, QByteArray *out, QString *why)
{
    static const QRegularExpression hex(
        QRegularExpression::anchoredPattern(QStringLiteral("[0-9a-f]{64}")));
    const QString text = o.value(QLatin1String(key)).toString();
    if (!hex.match(text).hasMatch()) {
        *why = QStringLiteral("'%1' is not a SHA-256 digest").arg(QLatin1String(key));
        return false;
    }
    *out = text.toLatin1();
    return true;
}

bool readMode(const QJsonObject &o, const char *key, int *out, QString *why)
{
    static const QRegularExpression octal(
        QRegularExpression::anchoredPattern(QStringLiteral("0[0-7]{3}")));
    const QString text = o.value(QLatin1String(key)).toString();
    if (!octal.match(text).hasMatch()) {
        *why = QStringLiteral("'%1' is not a mode (0644)").arg(QLatin1String(key));
        return false;
    }
    *out = text.toInt(nullptr, 8);
    return true;
}

bool readPath(const QJsonObject &o, const char *key, QString *out, QString *why)
{
    const QJsonValue v = o.value(QLatin1String(key));
    *out = v.toString();
    const QString problem =
        v.isString() ? WorkspaceChangeSet::pathProblem(*out) : QStringLiteral("it is missing");
    if (!problem.isEmpty())
        *why = QStringLiteral("'%1' is unusable: %2").arg(QLatin1String(key), problem);
    return problem.isEmpty();
}

bool readContent(const QJsonObject &o, WorkspaceChange *c, QString *why)
{
    const QJsonValue v = o.value(QStringLiteral("content"));
    const auto decoded = QByteArray::fromBase64Encoding(v.toString().toLatin1(),
                                                        QByteArray::AbortOnBase64DecodingErrors);
    if (!v.isString() || !decoded) {
        *why = QStringLiteral("its content is missing or not base64");
        return false;
    }
    c->content = *decoded;
    if (c->content.size() != c->size || sha256Hex(c->content) != c->sha256) {
        *why = QStringLiteral("its content does not match its size and digest");
        return false;
    }
    return true;
}

// The fields every kind has, then the ones of its own; the text ones are taken as they are.
bool changeFromJson(const QJsonObject &o, Kind kind, WorkspaceChange *c, QString *why)
{
    c->kind = kind;
    if (!readPath(o, "path", &c->path, why))
        return false;
    if (kind == Kind::Renamed && !readPath(o, "from", &c->from, why))
        return false;
    if (kind != Kind::Deleted &&
        (!readSize(o, "size", &c->size, why) || !readSha(o, "sha256", &c->sha256, why) ||
         !readMode(o, "mode", &c->mode, why) || !readContent(o, c, why)))
        return false;
    if (kind != Kind::Added && (!readSize(o, "old_size", &c->oldSize, why) ||
                                !readSha(o, "old_sha256", &c->oldSha256, why) ||
                                !readMode(o, "old_mode", &c->oldMode, why)))
        return false;
    if (kind == Kind::Deleted)
        c->mode = c->oldMode;
    c->binary = o.value(QStringLiteral("binary")).toBool();
    c->diff = o.value(QStringLiteral("diff")).toString();
    c->linesAdded = o.value(QStringLiteral("lines_added")).toInt(-1);
    c->linesRemoved = o.value(QStringLiteral("lines_removed")).toInt(-1);
    return true;
}
} // namespace

WorkspaceChangeSet WorkspaceChangeSet::fromJson(const QJsonObject &json, QString *error)
{
    WorkspaceChangeSet set;
    const auto fail = [&](const QString &why) {
        if (error)
            *error = QStringLiteral("workspace change set: %1").arg(why);
        return WorkspaceChangeSet();
    };
    set.workspace = json.value(QStringLiteral("workspace")).toString();
    if (!Workspace::isValidName(set.workspace))
        return fail(QStringLiteral("its workspace name is missing or not valid"));
    QSet<QString> paths;
    for (int kind = 0; kind < 4; ++kind) {
        const QJsonValue list = json.value(QLatin1String(kKindKeys[kind]));
        if (!list.isArray() && !list.isUndefined())
            return fail(QStringLiteral("'%1' is not a list").arg(QLatin1String(kKindKeys[kind])));
        for (const QJsonValue &v : list.toArray()) {
            WorkspaceChange c;
            QString why;
            if (!v.isObject() || !changeFromJson(v.toObject(), Kind(kind), &c, &why))
                return fail(QStringLiteral("a change in '%1' is not valid: %2")
                                .arg(QLatin1String(kKindKeys[kind]),
                                     why.isEmpty() ? QStringLiteral("not an object") : why));
            for (const QString &p : {c.path, c.from}) {
                if (!p.isEmpty() && paths.contains(p))
                    return fail(QStringLiteral("'%1' appears twice").arg(shown(p)));
                paths.insert(p);
            }
            set.bytes += c.content.size();
            set.changes.append(std::move(c));
        }
    }
    for (const QJsonValue &v : json.value(QStringLiteral("refused")).toArray()) {
        if (!v.isString())
            return fail(QStringLiteral("'refused' holds something else than text"));
        set.refused.append(v.toString());
    }
    set.refusedCount =
        std::max(int(set.refused.size()), json.value(QStringLiteral("refused_count")).toInt());
    if (json.value(QStringLiteral("bytes")).toDouble(-1) != double(set.bytes))
        return fail(QStringLiteral("'bytes' does not match its content"));
    std::sort(set.changes.begin(), set.changes.end(),
              [](const WorkspaceChange &a, const WorkspaceChange &b) { return a.path < b.path; });
    return set;
}

namespace {
QString listed(const QStringList &items)
{
    constexpr int kShown = 5;
    QStringList head = items.mid(0, kShown);
    if (items.size() > kShown)
        head.append(QStringLiteral("and %1 more").arg(items.size() - kShown));
    return head.join(QStringLiteral(", "));
}

QString itemOf(const WorkspaceChange &c)
{
    if (c.kind == Kind::Renamed)
        return QStringLiteral("%1 → %2").arg(c.from, c.path);
    if (c.kind != Kind::Modified)
        return c.path;
    if (c.binary)
        return c.path + QStringLiteral(" (binary)");
    if (c.linesAdded >= 0)
        return QStringLiteral("%1 +%2 −%3").arg(c.path).arg(c.linesAdded).arg(c.linesRemoved);
    return c.path;
}
} // namespace

QString WorkspaceChangeSet::summary() const
{
    QStringList groups[4];
    for (const WorkspaceChange &c : changes)
        groups[int(c.kind)].append(shown(itemOf(c)));
    QStringList parts;
    for (int kind = 0; kind < 4; ++kind) {
        if (!groups[kind].isEmpty())
            parts.append(QStringLiteral("%1 %2 (%3)")
                             .arg(groups[kind].size())
                             .arg(QLatin1String(kKindKeys[kind]), listed(groups[kind])));
    }
    QString text = QStringLiteral("workspace %1: %2")
                       .arg(workspace, parts.isEmpty() ? QStringLiteral("no changes")
                                                       : parts.join(QStringLiteral(", ")));
    if (refusedCount > 0)
        text += QStringLiteral("; %1 refused").arg(refusedCount);
    return text;
}
