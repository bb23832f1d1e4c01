#include "runfiltermodel.h"

#include "runlistmodel.h"
#include "sessiontreemodel.h"

RunFilterModel::RunFilterModel(QObject *parent) : QSortFilterProxyModel(parent)
{
    // Output grows while a run is live: rows are re-checked when their data changes.
    setDynamicSortFilter(true);
    // Over the session tree: a session shows when any of its runs does (and with it only those).
    setRecursiveFilteringEnabled(true);
}

void RunFilterModel::setStatus(std::optional<RunRecord::Status> status)
{
    m_status = status;
    invalidateFilter();
}

void RunFilterModel::setLanguage(const QString &language)
{
    m_language = language;
    invalidateFilter();
}

void RunFilterModel::setText(const QString &text)
{
    m_text = text.trimmed();
    invalidateFilter();
}

bool RunFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    if (index.data(SessionTreeModel::IsSessionRole).toBool())
        return !m_status && m_language.isEmpty() && m_text.isEmpty();
    if (m_status && index.data(RunListModel::StatusRole).toInt() != int(*m_status))
        return false;
    if (!m_language.isEmpty() && index.data(RunListModel::LanguageRole).toString() != m_language)
        return false;
    if (!m_text.isEmpty() &&
        !index.data(RunListModel::SearchRole).toString().contains(m_text, Qt::CaseInsensitive))
        return false;
    return true;
}
