#pragma once

#include "runrecord.h"

#include <QSortFilterProxyModel>
#include <optional>

// The runs list as filtered by status, language and text (case-insensitive, over code, output,
// source, language and tool). Over a SessionTreeModel, filters apply to runs: a session row
// stays while one of its runs matches.
class RunFilterModel : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    explicit RunFilterModel(QObject *parent = nullptr);

    void setStatus(std::optional<RunRecord::Status> status);
    void setLanguage(const QString &language); // empty: all
    void setText(const QString &text);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    std::optional<RunRecord::Status> m_status;
    QString m_language;
    QString m_text;
};
