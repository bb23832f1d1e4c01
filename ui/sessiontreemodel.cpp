#include "sessiontreemodel.h"

#include "plaintext.h"
#include "runlistmodel.h"
#include "snapshoticons.h"
#include "statusicons.h"

#include <QFont>
#include <QJsonArray>
#include <QJsonObject>
#include <QLocale>
#include <QSet>

namespace {
// What the list has room for: the random part of "s-<instance>-<random>" tells sessions apart.
QString shortSessionId(const QString &id)
{
    return id.section(QLatin1Char('-'), -1).left(8);
}

QString runsText(int count)
{
    return count == 1 ? QStringLiteral("1 run") : QStringLiteral("%1 runs").arg(count);
}

// A session's state as the status column shows it, with the icon of the run state it resembles.
QString stateLabel(const QString &state)
{
    if (state.isEmpty())
        return QString();
    return state.at(0).toUpper() + state.mid(1);
}

QIcon stateIcon(const QString &state)
{
    if (state == u"busy")
        return StatusIcons::icon(RunRecord::Status::Running);
    if (state == u"idle")
        return StatusIcons::icon(RunRecord::Status::Queued);
    if (state.isEmpty())
        return QIcon();
    return StatusIcons::icon(RunRecord::Status::Cancelled); // ended, expired
}

// As the runs' time column says it.
QString timeText(const QDateTime &at)
{
    const QDateTime local = at.toLocalTime();
    return local.toString(local.date() == QDate::currentDate()
                              ? QStringLiteral("HH:mm:ss")
                              : QStringLiteral("yyyy-MM-dd HH:mm"));
}

// A snapshot's id is "<session id>.<number>".
QString sessionOfSnapshot(const QString &id)
{
    return id.left(id.lastIndexOf(u'.'));
}

int numberOfSnapshot(const QString &id)
{
    return id.mid(id.lastIndexOf(u'.') + 1).toInt();
}

} // namespace

SessionTreeModel::SessionTreeModel(RunListModel *source, QObject *parent)
    : QAbstractItemModel(parent), m_source(source)
{
    connect(source, &QAbstractItemModel::rowsInserted, this, &SessionTreeModel::onRowsInserted);
    connect(source, &QAbstractItemModel::dataChanged, this, &SessionTreeModel::onDataChanged);
    connect(source, &QAbstractItemModel::rowsRemoved, this, &SessionTreeModel::rebuild);
    connect(source, &QAbstractItemModel::rowsMoved, this, &SessionTreeModel::rebuild);
    connect(source, &QAbstractItemModel::modelReset, this, &SessionTreeModel::rebuild);
    connect(source, &QAbstractItemModel::layoutChanged, this, &SessionTreeModel::rebuild);
    m_items = grouped();
    for (const Item &item : std::as_const(m_items)) {
        if (!item.sessionId.isEmpty())
            keyOf(item.sessionId);
    }
    reindex();
}

QModelIndex SessionTreeModel::index(int row, int column, const QModelIndex &parent) const
{
    if (row < 0 || column < 0 || column >= RunListModel::ColumnCount)
        return QModelIndex();
    if (!parent.isValid())
        return row < m_items.size() ? createIndex(row, column, quintptr(0)) : QModelIndex();
    if (parent.internalId() != 0 || parent.row() >= m_items.size())
        return QModelIndex();
    const Item &item = m_items.at(parent.row());
    if (item.sessionId.isEmpty() || row >= item.runs.size())
        return QModelIndex();
    return createIndex(row, column, m_keys.value(item.sessionId));
}

QModelIndex SessionTreeModel::parent(const QModelIndex &child) const
{
    if (!child.isValid() || child.internalId() == 0)
        return QModelIndex();
    const int row = m_topRow.value(m_byKey.value(child.internalId()), -1);
    return row < 0 ? QModelIndex() : createIndex(row, 0, quintptr(0));
}

int SessionTreeModel::rowCount(const QModelIndex &parent) const
{
    if (!parent.isValid())
        return int(m_items.size());
    if (parent.internalId() != 0 || parent.column() != 0 || parent.row() >= m_items.size())
        return 0;
    return int(m_items.at(parent.row()).runs.size());
}

int SessionTreeModel::columnCount(const QModelIndex &) const
{
    return RunListModel::ColumnCount;
}

bool SessionTreeModel::hasChildren(const QModelIndex &parent) const
{
    return rowCount(parent) > 0;
}

QVariant SessionTreeModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || !m_source)
        return QVariant();
    if (index.internalId() == 0) {
        if (index.row() >= m_items.size())
            return QVariant();
        const Item &item = m_items.at(index.row());
        if (!item.sessionId.isEmpty())
            return sessionData(item, index.column(), role);
        if (role == IsSessionRole)
            return false;
        if (role == SessionIdRole)
            return QString();
        return sourceIndex(item.runId, index.column()).data(role);
    }
    const QString sessionId = m_byKey.value(index.internalId());
    const int top = m_topRow.value(sessionId, -1);
    if (top < 0 || index.row() >= m_items.at(top).runs.size())
        return QVariant();
    return runData(sessionId, m_items.at(top).runs, index.row(), index.column(), role);
}

QVariant SessionTreeModel::runData(const QString &sessionId, const QStringList &runs, int row,
                                   int column, int role) const
{
    const QString &runId = runs.at(row);
    const SessionSnapshot *step = stepOf(runId);
    switch (role) {
    case IsSessionRole:
        return false;
    case SessionIdRole:
        return sessionId;
    case SnapshotIdRole:
        return step ? step->id : QString();
    case BranchFromRole:
        return branchOf(runId);
    case IsCurrentStepRole:
        return step && m_current.value(sessionId) == step->id;
    default:
        break;
    }
    if (column != RunListModel::SessionColumn)
        return sourceIndex(runId, column).data(role);
    // The session row says which session; its runs say which call they were, oldest first, and
    // where a rewind made the history branch, which step they continue from.
    const int ordinal = int(runs.size()) - row;
    switch (role) {
    case Qt::DisplayRole: {
        const QString from = branchOf(runId);
        return from.isEmpty()
                   ? QStringLiteral("#%1").arg(ordinal)
                   : QStringLiteral("#%1 ← %2").arg(ordinal).arg(stepLabel(from, sessionId));
    }
    case Qt::DecorationRole:
        return step ? QVariant(stepIcon(sessionId, runId)) : QVariant();
    case Qt::ToolTipRole:
        return PlainText::toolTip(runToolTip(sessionId, runs, row));
    default:
        return sourceIndex(runId, column).data(role);
    }
}

QString SessionTreeModel::runToolTip(const QString &sessionId, const QStringList &runs,
                                     int row) const
{
    const int ordinal = int(runs.size()) - row;
    QStringList lines{
        QStringLiteral("run %1 of %2 in session %3").arg(ordinal).arg(runs.size()).arg(sessionId)};
    const SessionSnapshot *step = stepOf(runs.at(row));
    if (!step)
        return lines.constFirst();
    lines << QStringLiteral("Snapshot %1 after call %2 · %3 · %4")
                 .arg(step->id)
                 .arg(step->afterCall)
                 .arg(QLocale().formattedDataSize(step->bytes))
                 .arg(step->kind == u"files" ? QStringLiteral("its files")
                                             : QStringLiteral("its variables and files"));
    if (!step->notKept.isEmpty())
        lines << QStringLiteral("Not kept: %1").arg(SessionSnapshot::namesOf(step->notKept, false));
    if (const QString from = branchOf(runs.at(row)); !from.isEmpty())
        lines << QStringLiteral("Branches from %1 (%2): the session was rewound there before "
                                "this call.")
                     .arg(stepLabel(from, sessionId), from);
    if (m_current.value(sessionId) == step->id)
        lines << QStringLiteral("The session is at this step now.");
    lines << QStringLiteral("Right-click to rewind the session here, fork a new one from here, "
                            "export or delete the snapshot.");
    return lines.join(u'\n');
}

QVariant SessionTreeModel::sessionData(const Item &item, int column, int role) const
{
    // A fork listed before its first run has none to stand for.
    const QString newest = item.runs.isEmpty() ? QString() : item.runs.constFirst();
    const QString state = m_source->sessionState(item.sessionId);
    const RunRecord *run = m_source->run(newest);
    switch (role) {
    case IsSessionRole:
        return true;
    case SessionIdRole:
        return item.sessionId;
    case RunCountRole:
        return int(item.runs.size());
    case SessionStateRole:
        return state;
    case ForkedFromRole:
        return originOf(item.sessionId);
    case RunListModel::RunIdRole:
        return newest;
    case RunListModel::LanguageRole:
        return run ? run->language : m_pending.value(item.sessionId).language;
    case RunListModel::CreatedRole:
        return createdOf(item);
    case Qt::FontRole:
        if (column == RunListModel::SessionColumn) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return QVariant();
    case Qt::DecorationRole:
        if (column == RunListModel::StatusColumn)
            return stateIcon(state);
        if (column == RunListModel::SessionColumn && !originOf(item.sessionId).isEmpty())
            return SnapshotIcons::icon(SnapshotIcons::Kind::Fork);
        return QVariant();
    case Qt::ToolTipRole:
        return PlainText::toolTip(sessionToolTip(item));
    case Qt::DisplayRole:
        return sessionDisplay(item, column);
    default:
        // Alignment and the like as a run's.
        return role < Qt::UserRole ? sourceIndex(newest, column).data(role) : QVariant();
    }
}

QVariant SessionTreeModel::sessionDisplay(const Item &item, int column) const
{
    const QString newest = item.runs.isEmpty() ? QString() : item.runs.constFirst();
    switch (column) {
    case RunListModel::TimeColumn:
        // When it last ran (a fork without runs: when it started).
        return item.runs.isEmpty() ? QVariant(timeText(createdOf(item)))
                                   : sourceIndex(newest, column).data(Qt::DisplayRole);
    case RunListModel::SourceColumn: {
        // For whom; a fork says where it came from instead (its runs say for whom), beside
        // the mark its id has: the parent's id cut to four characters, which tell the sessions
        // in the list apart in the room this column has. The tooltip has it whole.
        const QString origin = originOf(item.sessionId);
        return origin.isEmpty()
                   ? sourceIndex(newest, column).data(Qt::DisplayRole)
                   : QVariant(QStringLiteral("← %1").arg(stepLabel(origin, item.sessionId, 4)));
    }
    case RunListModel::LanguageColumn:
        return sessionData(item, column, RunListModel::LanguageRole);
    case RunListModel::SessionColumn:
        return shortSessionId(item.sessionId);
    case RunListModel::DurationColumn:
        // Where a run says how long it was, a session says how many runs it had: the session
        // column stays narrow, so that the source keeps its room.
        return item.runs.isEmpty() ? QStringLiteral("no runs yet")
                                   : runsText(int(item.runs.size()));
    case RunListModel::StatusColumn:
        return stateLabel(m_source->sessionState(item.sessionId));
    default:
        return QVariant();
    }
}

QString SessionTreeModel::sessionToolTip(const Item &item) const
{
    const QString state = m_source->sessionState(item.sessionId);
    QString text =
        QStringLiteral("Session %1\n%2 · %3%4")
            .arg(item.sessionId, sessionData(item, 0, RunListModel::LanguageRole).toString(),
                 item.runs.isEmpty() ? QStringLiteral("no runs yet")
                                     : runsText(int(item.runs.size())),
                 state.isEmpty() ? QString() : QStringLiteral(" · %1").arg(state));
    if (const QString origin = originOf(item.sessionId); !origin.isEmpty())
        text += QStringLiteral("\nForked from %1 (%2): it started with that step's state.")
                    .arg(stepLabel(origin, item.sessionId), origin);
    if (!item.runs.isEmpty())
        text += QStringLiteral("\nSelect it to see its newest run.");
    return text;
}

QVariant SessionTreeModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    return m_source ? m_source->headerData(section, orientation, role) : QVariant();
}

Qt::ItemFlags SessionTreeModel::flags(const QModelIndex &index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (!index.data(IsSessionRole).toBool())
        f |= Qt::ItemNeverHasChildren;
    return f;
}

QModelIndex SessionTreeModel::indexOfRun(const QString &runId, int column) const
{
    const QString sessionId = sessionOf(runId);
    if (sessionId.isEmpty()) {
        const int row = m_topRow.value(runId, -1);
        return row < 0 ? QModelIndex() : index(row, column);
    }
    const QModelIndex session = indexOfSession(sessionId);
    if (!session.isValid())
        return QModelIndex();
    const int row = int(m_items.at(session.row()).runs.indexOf(runId));
    return row < 0 ? QModelIndex() : index(row, column, session);
}

QModelIndex SessionTreeModel::indexOfSession(const QString &sessionId, int column) const
{
    const int row = sessionId.isEmpty() ? -1 : m_topRow.value(sessionId, -1);
    return row < 0 ? QModelIndex() : index(row, column);
}

QString SessionTreeModel::sessionOf(const QString &runId) const
{
    const RunRecord *run = m_source ? m_source->run(runId) : nullptr;
    return run ? run->sessionId : QString();
}

QModelIndex SessionTreeModel::sourceIndex(const QString &runId, int column) const
{
    const int row = m_source ? m_source->rowOf(runId) : -1;
    return row < 0 ? QModelIndex() : m_source->index(row, column);
}

void SessionTreeModel::onRowsInserted(const QModelIndex &parent, int first, int last)
{
    if (parent.isValid())
        return;
    if (first != 0 || last != 0) {
        rebuild(); // not what the list does today, but handled all the same
        return;
    }
    // A new run, the newest: its own top row, or the first of its session's runs.
    const QString runId = m_source->index(0, 0).data(RunListModel::RunIdRole).toString();
    const QString sessionId = sessionOf(runId);
    // A fork listed before its first run has one now.
    m_pending.remove(sessionId);
    const int top = sessionId.isEmpty() ? -1 : m_topRow.value(sessionId, -1);
    if (top < 0) {
        beginInsertRows(QModelIndex(), 0, 0);
        Item item;
        if (sessionId.isEmpty()) {
            item.runId = runId;
        } else {
            item.sessionId = sessionId;
            item.runs = QStringList{runId};
            keyOf(sessionId);
        }
        m_items.prepend(item);
        reindex();
        endInsertRows();
        return;
    }
    if (top > 0) {
        // The session ran again: it comes to the top, as its newest run would.
        beginMoveRows(QModelIndex(), top, top, QModelIndex(), 0);
        m_items.move(top, 0);
        reindex();
        endMoveRows();
    }
    const QModelIndex session = index(0, 0);
    beginInsertRows(session, 0, 0);
    m_items[0].runs.prepend(runId);
    endInsertRows();
    changedRow(session);
}

void SessionTreeModel::onDataChanged(const QModelIndex &topLeft, const QModelIndex &bottomRight)
{
    // Rows of runs (and with them their session's row: its newest run, its state).
    QSet<int> sessionRows;
    for (int row = topLeft.row(); row <= bottomRight.row(); ++row) {
        const QString runId = m_source->index(row, 0).data(RunListModel::RunIdRole).toString();
        const QModelIndex mine = indexOfRun(runId);
        if (!mine.isValid())
            continue;
        changedRow(mine);
        if (mine.parent().isValid())
            sessionRows.insert(mine.parent().row());
    }
    for (int row : std::as_const(sessionRows))
        changedRow(index(row, 0));
}

void SessionTreeModel::changedRow(const QModelIndex &index)
{
    Q_EMIT dataChanged(index.siblingAtColumn(0),
                       index.siblingAtColumn(RunListModel::ColumnCount - 1));
}

void SessionTreeModel::rebuild()
{
    // A layout change rather than a reset: selected and expanded rows stay as they were (by
    // run and session), those that went are dropped.
    Q_EMIT layoutAboutToBeChanged();
    const QModelIndexList before = persistentIndexList();
    struct Where
    {
        QString runId;
        QString sessionId; // session rows
        int column;
    };
    QList<Where> where;
    where.reserve(before.size());
    for (const QModelIndex &i : before) {
        const bool session = i.internalId() == 0 && i.row() < m_items.size() &&
                             !m_items.at(i.row()).sessionId.isEmpty();
        if (session) {
            where.append({QString(), m_items.at(i.row()).sessionId, i.column()});
        } else if (i.internalId() == 0) {
            where.append({i.row() < m_items.size() ? m_items.at(i.row()).runId : QString(),
                          QString(), i.column()});
        } else {
            const int top = m_topRow.value(m_byKey.value(i.internalId()), -1);
            const QStringList runs = top < 0 ? QStringList() : m_items.at(top).runs;
            where.append(
                {i.row() < runs.size() ? runs.at(i.row()) : QString(), QString(), i.column()});
        }
    }

    m_items = grouped();
    // Keys of sessions no longer listed go (their indexes are dropped below).
    QSet<QString> present;
    for (const Item &item : std::as_const(m_items)) {
        if (!item.runs.isEmpty())
            m_pending.remove(item.sessionId);
        if (!item.sessionId.isEmpty()) {
            present.insert(item.sessionId);
            keyOf(item.sessionId);
        }
    }
    for (auto it = m_keys.begin(); it != m_keys.end();) {
        if (present.contains(it.key())) {
            ++it;
        } else {
            m_byKey.remove(it.value());
            it = m_keys.erase(it);
        }
    }
    reindex();

    QModelIndexList after;
    after.reserve(before.size());
    for (const Where &w : std::as_const(where))
        after.append(w.sessionId.isEmpty() ? indexOfRun(w.runId, w.column)
                                           : indexOfSession(w.sessionId, w.column));
    changePersistentIndexList(before, after);
    Q_EMIT layoutChanged();
}

QList<SessionTreeModel::Item> SessionTreeModel::grouped() const
{
    QList<Item> items;
    if (!m_source)
        return items;
    QHash<QString, int> sessionAt;
    const int rows = m_source->rowCount();
    for (int row = 0; row < rows; ++row) {
        const RunRecord *run = m_source->runAt(row);
        if (!run)
            continue;
        if (run->sessionId.isEmpty()) {
            items.append({run->id, QString(), {}});
            continue;
        }
        auto it = sessionAt.constFind(run->sessionId);
        if (it == sessionAt.constEnd()) {
            sessionAt.insert(run->sessionId, int(items.size()));
            items.append({QString(), run->sessionId, {run->id}});
        } else {
            items[*it].runs.append(run->id);
        }
    }
    // Forks without runs yet, where their start falls among the runs (newest first).
    for (auto it = m_pending.cbegin(); it != m_pending.cend(); ++it) {
        if (sessionAt.contains(it.key()))
            continue;
        int at = 0;
        while (at < items.size() && createdOf(items.at(at)) > it->createdAt)
            ++at;
        items.insert(at, {QString(), it.key(), {}});
    }
    return items;
}

QDateTime SessionTreeModel::createdOf(const Item &item) const
{
    if (!item.runId.isEmpty() || !item.runs.isEmpty()) {
        const RunRecord *run =
            m_source->run(item.runId.isEmpty() ? item.runs.constFirst() : item.runId);
        return run ? run->createdAt : QDateTime();
    }
    return m_pending.value(item.sessionId).createdAt;
}

void SessionTreeModel::setSnapshots(const QString &sessionId,
                                    const QList<SessionSnapshot> &snapshots)
{
    for (const SessionSnapshot &old : m_snapshots.value(sessionId)) {
        m_stepOfRun.remove(old.afterRun);
        m_runOfSnapshot.remove(old.id);
    }
    if (snapshots.isEmpty())
        m_snapshots.remove(sessionId);
    else
        m_snapshots.insert(sessionId, snapshots);
    for (const SessionSnapshot &s : snapshots) {
        // A step whose parent is another session's: the session was forked from there (also
        // when an assistant forked it, with fork_session).
        if (!s.parent.isEmpty() && sessionOfSnapshot(s.parent) != sessionId)
            m_origins.insert(sessionId, s.parent);
        if (s.afterRun.isEmpty())
            continue;
        m_stepOfRun.insert(s.afterRun, s);
        m_runOfSnapshot.insert(s.id, s.afterRun);
    }
    changedSession(sessionId);
    // Forks of this session name its steps.
    for (auto it = m_origins.cbegin(); it != m_origins.cend(); ++it) {
        if (it.key() != sessionId && sessionOfSnapshot(it.value()) == sessionId)
            changedSession(it.key());
    }
}

void SessionTreeModel::setCurrentSnapshot(const QString &sessionId, const QString &snapshotId)
{
    if (m_current.value(sessionId) == snapshotId)
        return;
    if (snapshotId.isEmpty())
        m_current.remove(sessionId);
    else
        m_current.insert(sessionId, snapshotId);
    changedSession(sessionId);
}

void SessionTreeModel::addFork(const QString &sessionId, const QString &language,
                               const QString &origin)
{
    m_origins.insert(sessionId, origin);
    if (m_topRow.contains(sessionId)) {
        changedSession(sessionId);
        return;
    }
    m_pending.insert(sessionId, {language, QDateTime::currentDateTimeUtc()});
    beginInsertRows(QModelIndex(), 0, 0);
    keyOf(sessionId);
    m_items.prepend({QString(), sessionId, {}});
    reindex();
    endInsertRows();
}

void SessionTreeModel::changedSession(const QString &sessionId)
{
    const QModelIndex session = indexOfSession(sessionId);
    if (!session.isValid())
        return;
    changedRow(session);
    const int runs = rowCount(session);
    if (runs > 0)
        Q_EMIT dataChanged(index(0, 0, session),
                           index(runs - 1, RunListModel::ColumnCount - 1, session));
}

const SessionSnapshot *SessionTreeModel::stepOf(const QString &runId) const
{
    const auto it = m_stepOfRun.constFind(runId);
    return it == m_stepOfRun.cend() ? nullptr : &*it;
}

QString SessionTreeModel::branchOf(const QString &runId) const
{
    const SessionSnapshot *step = stepOf(runId);
    // The first step has no parent; a fork's first continues another session's (its session
    // row says so). Numbers go up by one along a line: a step whose parent is not the one just
    // before it came after a rewind (a deleted or failed step leaves no gap: numbers are given
    // to kept snapshots only).
    if (!step || step->parent.isEmpty() || sessionOfSnapshot(step->parent) != step->sessionId)
        return QString();
    return numberOfSnapshot(step->parent) == step->number - 1 ? QString() : step->parent;
}

QString SessionTreeModel::originOf(const QString &sessionId) const
{
    return m_origins.value(sessionId);
}

QString SessionTreeModel::stepLabel(const QString &snapshotId, const QString &sessionId,
                                    int idChars) const
{
    const QString session = sessionOfSnapshot(snapshotId);
    QString label = QStringLiteral("snapshot %1").arg(numberOfSnapshot(snapshotId));
    const QModelIndex row = indexOfRun(m_runOfSnapshot.value(snapshotId));
    if (row.isValid() && row.parent().isValid()) {
        label = QStringLiteral("#%1").arg(rowCount(row.parent()) - row.row());
    } else {
        // Its run is not listed (trimmed, or older than the history shown): its call's number.
        for (const SessionSnapshot &s : m_snapshots.value(session))
            if (s.id == snapshotId)
                label = QStringLiteral("#%1").arg(s.afterCall);
    }
    return session == sessionId
               ? label
               : QStringLiteral("%1 %2").arg(shortSessionId(session).left(idChars), label);
}

QIcon SessionTreeModel::stepIcon(const QString &sessionId, const QString &runId) const
{
    const SessionSnapshot *step = stepOf(runId);
    using Kind = SnapshotIcons::Kind;
    const Kind kind = !branchOf(runId).isEmpty() ? Kind::Branch
                      : step->notKept.isEmpty()  ? Kind::Step
                                                 : Kind::Partial;
    return SnapshotIcons::icon(kind, m_current.value(sessionId) == step->id);
}

void SessionTreeModel::reindex()
{
    m_topRow.clear();
    for (int i = 0; i < m_items.size(); ++i) {
        const Item &item = m_items.at(i);
        m_topRow.insert(item.sessionId.isEmpty() ? item.runId : item.sessionId, i);
    }
}

quintptr SessionTreeModel::keyOf(const QString &sessionId)
{
    auto it = m_keys.constFind(sessionId);
    if (it != m_keys.constEnd())
        return *it;
    const quintptr key = m_nextKey++;
    m_keys.insert(sessionId, key);
    m_byKey.insert(key, sessionId);
    return key;
}
