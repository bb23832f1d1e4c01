#pragma once

#include <QStyledItemDelegate>

// Rows at least as tall as given: the runs list keeps the airy rows its table had (a tree view
// has no row height of its own). Header-only: it is this one method.
class RowHeightDelegate : public QStyledItemDelegate
{
public:
    RowHeightDelegate(int height, QObject *parent) : QStyledItemDelegate(parent), m_height(height)
    {}

    QSize sizeHint(const QStyleOptionViewItem &option, const QModelIndex &index) const override
    {
        QSize size = QStyledItemDelegate::sizeHint(option, index);
        size.setHeight(qMax(size.height(), m_height));
        return size;
    }

private:
    int m_height;
};
