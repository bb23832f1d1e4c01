#include "sessiontreemodel.h"

#include "plaintext.h"
#include "runlistmodel.h"
#include "statusicons.h"

#include <QFont>
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
    const QStringList &runs = m_items.at(top).runs;
    if (role == IsSessionRole)
        return false;
    if (role == SessionIdRole)
        return sessionId;
    if (index.column() == RunListModel::SessionColumn &&
        (role == Qt::DisplayRole || role == Qt::ToolTipRole)) {
        // The session row says which session; its runs say which call they were, oldest first.
        const int ordinal = int(runs.size()) - index.row();
        return role == Qt::DisplayRole
                   ? QStringLiteral("#%1").arg(ordinal)
                   : PlainText::toolTip(QStringLiteral("run %1 of %2 in session %3")
                                            .arg(ordinal)
                                            .arg(runs.size())
                                            .arg(sessionId));
    }
    return sourceIndex(runs.at(index.row()), index.column()).data(role);
}

QVariant SessionTreeModel::sessionData(const Item &item, int column, int role) const
{
    const QString &newest = item.runs.constFirst();
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
    case RunListModel::RunIdRole:
        return newest;
    case RunListModel::LanguageRole:
        return run ? run->language : QString();
    case RunListModel::CreatedRole:
        return run ? run->createdAt : QDateTime();
    case Qt::FontRole:
        if (column == RunListModel::SessionColumn) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return QVariant();
    case Qt::DecorationRole:
        return column == RunListModel::StatusColumn ? QVariant(stateIcon(state)) : QVariant();
    case Qt::ToolTipRole:
        return PlainText::toolTip(
            QStringLiteral("Session %1\n%2 · %3%4\nSelect it to see its newest run.")
                .arg(item.sessionId, run ? run->language : QString(),
                     runsText(int(item.runs.size())),
                     state.isEmpty() ? QString() : QStringLiteral(" · %1").arg(state)));
    case Qt::DisplayRole:
        break;
    default:
        // Alignment and the like as a run's.
        return role < Qt::UserRole ? sourceIndex(newest, column).data(role) : QVariant();
    }
    switch (column) {
    case RunListModel::TimeColumn:
    case RunListModel::SourceColumn:
    case RunListModel::LanguageColumn:
        // When it last ran, for whom, in what.
        return sourceIndex(newest, column).data(role);
    case RunListModel::SessionColumn:
        return shortSessionId(item.sessionId);
    case RunListModel::DurationColumn:
        // Where a run says how long it was, a session says how many runs it had: the session
        // column stays narrow, so that the source keeps its room.
        return runsText(int(item.runs.size()));
    case RunListModel::StatusColumn:
        return stateLabel(state);
    default:
        return QVariant();
    }
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
    return items;
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
