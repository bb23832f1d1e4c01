#include "runworkspace.h"

#include <algorithm>

namespace {
const char *const kKinds[] = {"added", "modified", "deleted", "renamed"};

QStringList strings(const QJsonValue &value)
{
    QStringList list;
    for (const QJsonValue v : value.toArray()) {
        if (v.isString())
            list.append(v.toString());
    }
    return list;
}

qint64 number(const QJsonObject &o, QStringView key, qint64 fallback)
{
    const QJsonValue v = o.value(key);
    return v.isDouble() ? v.toInteger(fallback) : fallback;
}

RunWorkspace::Change changeOf(const QJsonObject &o, const QString &kind)
{
    RunWorkspace::Change c;
    c.kind = kind;
    c.path = o.value(u"path").toString();
    c.from = o.value(u"from").toString();
    c.size = number(o, u"size", -1);
    c.oldSize = number(o, u"old_size", -1);
    c.sha256 = o.value(u"sha256").toString();
    c.binary = o.value(u"binary").toBool();
    c.diff = o.value(u"diff").toString();
    c.linesAdded = int(number(o, u"lines_added", -1));
    c.linesRemoved = int(number(o, u"lines_removed", -1));
    return c;
}

void readChangeSet(const QJsonObject &changes, RunWorkspace *w)
{
    for (const char *kind : kKinds) {
        const QString name = QString::fromLatin1(kind);
        for (const QJsonValue v : changes.value(name).toArray()) {
            if (v.isObject())
                w->changes.append(changeOf(v.toObject(), name));
        }
    }
    std::sort(w->changes.begin(), w->changes.end(),
              [](const RunWorkspace::Change &a, const RunWorkspace::Change &b) {
                  return a.path < b.path;
              });
    w->refused = strings(changes.value(u"refused"));
    w->refusedCount =
        qMax(int(w->refused.size()), int(number(changes, u"refused_count", w->refused.size())));
}

QString filesText(qsizetype n)
{
    return n == 1 ? QStringLiteral("1 file") : QStringLiteral("%1 files").arg(n);
}

QString dateText(const QDateTime &when)
{
    return when.isValid() ? QStringLiteral(" on %1").arg(
                                when.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")))
                          : QString();
}
} // namespace

RunWorkspace RunWorkspace::fromJson(const QJsonObject &json)
{
    RunWorkspace w;
    w.json = json;
    w.name = json.value(u"name").toString();
    w.mode = json.value(u"mode").toString();
    w.folder = json.value(u"folder").toString();
    w.apply = json.value(u"apply").toString(QStringLiteral("never"));
    w.files = int(number(json, u"files", 0));
    w.bytes = number(json, u"bytes", 0);
    w.excluded = int(number(json, u"excluded", 0));
    w.skipped = strings(json.value(u"skipped"));
    w.error = json.value(u"error").toString();
    w.hasChangeSet = json.value(u"changes").isObject();
    if (w.hasChangeSet)
        readChangeSet(json.value(u"changes").toObject(), &w);
    w.contentKept = json.value(u"content_kept").toBool();
    w.decision = json.value(u"decision").toString();
    w.decidedAt = QDateTime::fromString(json.value(u"decided_at").toString(), Qt::ISODateWithMs);
    const QJsonValue applied = json.value(u"applied");
    w.wasApplied = applied.isObject();
    if (w.wasApplied) {
        const QJsonObject a = applied.toObject();
        w.applied = {strings(a.value(u"files")), strings(a.value(u"conflicts")),
                     strings(a.value(u"failed"))};
    }
    return w;
}

QList<RunWorkspace> RunWorkspace::fromRecord(const QJsonArray &workspaces)
{
    QList<RunWorkspace> list;
    for (const QJsonValue v : workspaces) {
        if (v.isObject())
            list.append(fromJson(v.toObject()));
    }
    return list;
}

RunWorkspace::State RunWorkspace::state() const
{
    if (!isCopyOnWrite())
        return error.isEmpty() ? State::ReadOnly : State::Failed;
    if (decision == u"discarded")
        return State::Discarded;
    if (decision == u"applied" || wasApplied)
        return State::Applied;
    if (!hasChangeSet)
        return error.isEmpty() ? State::NoChanges : State::Failed;
    return changes.isEmpty() ? State::NoChanges : State::Pending;
}

QString RunWorkspace::whyNotApplicable() const
{
    if (state() != State::Pending)
        return QString();
    if (!contentKept)
        return QStringLiteral("Its changes were too large to keep with the run (more than "
                              "32 MiB, or 64 MiB for all of a run's workspaces): they cannot be "
                              "applied from here. Run the program again to write them.");
    if (folder.isEmpty())
        return QStringLiteral("The run's record does not say which folder this was.");
    return QString();
}

QString RunWorkspace::countsText() const
{
    QStringList parts;
    for (const char *kind : kKinds) {
        const auto n = std::count_if(changes.cbegin(), changes.cend(), [kind](const Change &c) {
            return c.kind == QLatin1String(kind);
        });
        if (n > 0)
            parts.append(QStringLiteral("%1 %2").arg(n).arg(QLatin1String(kind)));
    }
    if (refusedCount > 0)
        parts.append(QStringLiteral("%1 refused").arg(refusedCount));
    return parts.isEmpty() ? QStringLiteral("no changes") : parts.join(QStringLiteral(", "));
}

QString RunWorkspace::stateText() const
{
    switch (state()) {
    case State::ReadOnly:
        return QStringLiteral("Read-only: nothing comes back from the run.");
    case State::Failed:
        return error;
    case State::NoChanges:
        return QStringLiteral("The run changed nothing here.");
    case State::Pending:
        return apply == u"ask" ? QStringLiteral("Not applied yet: apply or discard the changes.")
                               : QStringLiteral("Not applied: the folder stays as it is until "
                                                "you apply the changes.");
    case State::Discarded:
        return QStringLiteral("Discarded%1: the folder was left as it was.")
            .arg(dateText(decidedAt));
    case State::Applied:
        break;
    }
    QString text = decision == u"applied"
                       ? QStringLiteral("Applied%1: %2 written")
                             .arg(dateText(decidedAt), filesText(applied.applied.size()))
                       : QStringLiteral("Applied by the server when the run ended (apply: "
                                        "always): %1 written")
                             .arg(filesText(applied.applied.size()));
    if (!applied.conflicts.isEmpty())
        text += QStringLiteral(", %1 left alone (the folder's file changed since the run "
                               "started)")
                    .arg(applied.conflicts.size());
    if (!applied.failed.isEmpty())
        text += QStringLiteral(", %1 failed").arg(applied.failed.size());
    return text + u'.';
}

QJsonObject RunWorkspace::decided(QJsonObject workspace, const QString &decision,
                                  const WorkspaceApplyResult &result, const QDateTime &when)
{
    workspace.insert(QStringLiteral("decision"), decision);
    workspace.insert(QStringLiteral("decided_at"), when.toUTC().toString(Qt::ISODateWithMs));
    if (decision == u"applied")
        workspace.insert(
            QStringLiteral("applied"),
            QJsonObject{{QStringLiteral("files"), QJsonArray::fromStringList(result.applied)},
                        {QStringLiteral("conflicts"), QJsonArray::fromStringList(result.conflicts)},
                        {QStringLiteral("failed"), QJsonArray::fromStringList(result.failed)}});
    return workspace;
}
