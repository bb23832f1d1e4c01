#include "workspacerun.h"

#include <QDir>
#include <QJsonArray>

QJsonObject WorkspaceRun::toJson() const
{
    QJsonObject o{{QStringLiteral("name"), workspace.name},
                  {QStringLiteral("mode"), Workspace::modeName(workspace.mode)},
                  {QStringLiteral("path"), QStringLiteral("/workspace/") + workspace.name}};
    if (scan) {
        o.insert(QStringLiteral("files"), scan->files);
        o.insert(QStringLiteral("bytes"), scan->bytes);
        o.insert(QStringLiteral("excluded"), scan->excluded);
        if (!scan->skipped.isEmpty())
            o.insert(QStringLiteral("skipped"), QJsonArray::fromStringList(scan->skipped));
        o.insert(QStringLiteral("sent_bytes"), sentBytes);
    }
    if (changes) {
        o.insert(QStringLiteral("changes"), changes->toJson());
        o.insert(QStringLiteral("apply"), Workspace::applyName(workspace.apply));
    }
    if (applied)
        o.insert(QStringLiteral("applied"),
                 QJsonObject{
                     {QStringLiteral("files"), QJsonArray::fromStringList(applied->applied)},
                     {QStringLiteral("conflicts"), QJsonArray::fromStringList(applied->conflicts)},
                     {QStringLiteral("failed"), QJsonArray::fromStringList(applied->failed)}});
    if (!error.isEmpty())
        o.insert(QStringLiteral("error"), error);
    return o;
}

QString WorkspaceRun::summary() const
{
    if (!error.isEmpty())
        return QStringLiteral("workspace %1: %2").arg(workspace.name, error);
    if (!changes)
        return QString();
    if (changes->isEmpty() && changes->refused.isEmpty())
        return QStringLiteral("workspace %1: no changes").arg(workspace.name);
    QString line = changes->summary();
    if (applied) {
        line += QStringLiteral("; applied to the folder: %1 file(s)").arg(applied->applied.size());
        if (!applied->conflicts.isEmpty())
            line += QStringLiteral(", %1 conflict(s) left alone (the folder changed since the "
                                   "run started): %2")
                        .arg(applied->conflicts.size())
                        .arg(applied->conflicts.join(QStringLiteral("; ")));
        if (!applied->failed.isEmpty())
            line += QStringLiteral(", %1 failed: %2")
                        .arg(applied->failed.size())
                        .arg(applied->failed.join(QStringLiteral("; ")));
    } else if (!changes->isEmpty()) {
        line += workspace.apply == Workspace::Apply::Ask
                    ? QStringLiteral("; not applied yet: the user decides in the Code Sandbox "
                                     "window")
                    : QStringLiteral("; not applied: the folder is unchanged until the user "
                                     "applies them");
    }
    return line;
}

namespace {

QJsonArray stringsJson(const QStringList &list)
{
    return QJsonArray::fromStringList(list);
}

QStringList stringsOf(const QJsonValue &value)
{
    QStringList list;
    for (const QJsonValue &v : value.toArray())
        list.append(v.toString());
    return list;
}

// The scan's entries of the files a change set changes, deletes or renames away from.
QJsonArray touchedEntries(const WorkspaceScan &scan, const WorkspaceChangeSet &changes)
{
    QJsonArray entries;
    for (const WorkspaceChange &c : changes.changes) {
        const QString old = c.kind == WorkspaceChange::Kind::Renamed ? c.from : c.path;
        const WorkspaceEntry *e = scan.find(old);
        if (!e || e->type != WorkspaceEntry::Type::File)
            continue;
        entries.append(QJsonObject{{QStringLiteral("path"), e->path},
                                   {QStringLiteral("size"), e->size},
                                   {QStringLiteral("mode"), e->mode},
                                   {QStringLiteral("sha256"), QString::fromLatin1(e->sha256)},
                                   {QStringLiteral("mtime_ms"), e->mtimeMs}});
    }
    return entries;
}

std::optional<WorkspaceApplyResult> appliedOf(const QJsonValue &value)
{
    if (!value.isObject())
        return std::nullopt;
    const QJsonObject o = value.toObject();
    return WorkspaceApplyResult{stringsOf(o.value(u"files")), stringsOf(o.value(u"conflicts")),
                                stringsOf(o.value(u"failed"))};
}

} // namespace

QJsonObject WorkspaceRun::recordJson() const
{
    QJsonObject o = toJson();
    o.insert(QStringLiteral("folder"), workspace.path);
    o.insert(QStringLiteral("apply"), Workspace::applyName(workspace.apply));
    o.insert(QStringLiteral("exclude"), stringsJson(workspace.exclude));
    o.insert(QStringLiteral("include"), stringsJson(workspace.include));
    if (changes && scan) {
        const bool keep = changes->bytes <= kMaxRecordedContent;
        o.insert(QStringLiteral("changes"), changes->toJson(keep));
        o.insert(QStringLiteral("content_kept"), keep);
        o.insert(QStringLiteral("before"), touchedEntries(*scan, *changes));
    }
    return o;
}

std::optional<WorkspaceRun> WorkspaceRun::fromRecordJson(const QJsonObject &json, QString *error)
{
    WorkspaceRun run;
    Workspace &w = run.workspace;
    w.name = json.value(u"name").toString();
    w.path = json.value(u"folder").toString();
    if (!Workspace::isValidName(w.name) || !QDir::isAbsolutePath(w.path) ||
        QDir::cleanPath(w.path) != w.path) {
        *error = QStringLiteral("not a workspace's record (name or folder)");
        return std::nullopt;
    }
    w.mode = json.value(u"mode").toString() == Workspace::modeName(Workspace::Mode::CopyOnWrite)
                 ? Workspace::Mode::CopyOnWrite
                 : Workspace::Mode::ReadOnly;
    w.apply =
        Workspace::parseApply(json.value(u"apply").toString()).value_or(Workspace::Apply::Never);
    w.exclude = stringsOf(json.value(u"exclude"));
    w.include = stringsOf(json.value(u"include"));
    auto scan = std::make_shared<WorkspaceScan>();
    scan->name = w.name;
    scan->root = w.path;
    scan->files = json.value(u"files").toInt();
    scan->bytes = qint64(json.value(u"bytes").toDouble());
    scan->excluded = json.value(u"excluded").toInt();
    run.sentBytes = qint64(json.value(u"sent_bytes").toDouble());
    scan->skipped = stringsOf(json.value(u"skipped"));
    for (const QJsonValue &v : json.value(u"before").toArray()) {
        const QJsonObject e = v.toObject();
        const QString path = e.value(u"path").toString();
        if (!WorkspaceChangeSet::pathProblem(path).isEmpty()) {
            *error = QStringLiteral("a workspace record names an impossible path");
            return std::nullopt;
        }
        scan->entries.append({path, WorkspaceEntry::Type::File, qint64(e.value(u"size").toDouble()),
                              e.value(u"mode").toInt() & 0777,
                              e.value(u"sha256").toString().toLatin1(), QString(),
                              qint64(e.value(u"mtime_ms").toDouble())});
    }
    std::sort(scan->entries.begin(), scan->entries.end(),
              [](const WorkspaceEntry &a, const WorkspaceEntry &b) { return a.path < b.path; });
    run.scan = scan;
    run.error = json.value(u"error").toString();
    run.applied = appliedOf(json.value(u"applied"));
    if (json.value(u"changes").isObject()) {
        if (!json.value(u"content_kept").toBool()) {
            run.error = QStringLiteral("its changes were too large to keep for applying later");
        } else {
            QString why;
            WorkspaceChangeSet changes =
                WorkspaceChangeSet::fromJson(json.value(u"changes").toObject(), &why);
            if (!why.isEmpty() || changes.workspace != w.name) {
                *error = QStringLiteral("a workspace record's change set is damaged: %1")
                             .arg(why.isEmpty() ? QStringLiteral("another workspace's") : why);
                return std::nullopt;
            }
            run.changes = std::move(changes);
        }
    }
    return run;
}
