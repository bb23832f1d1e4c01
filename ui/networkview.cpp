#include "networkview.h"

#include <QHeaderView>
#include <QLocale>

NetworkView::NetworkView(QWidget *parent) : QTreeWidget(parent)
{
    setObjectName(QStringLiteral("networkView"));
    setColumnCount(ColumnCount);
    setHeaderLabels(
        {tr("Host"), tr("Verdict"), tr("Rule or reason"), tr("Sent"), tr("Received"), tr("Time")});
    setRootIsDecorated(false);
    setUniformRowHeights(true);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    header()->setStretchLastSection(false);
    header()->setSectionResizeMode(RuleColumn, QHeaderView::Stretch);
}

void NetworkView::setConnections(const QList<NetworkAttempt> &connections)
{
    clear();
    const QLocale locale;
    for (const NetworkAttempt &a : connections) {
        // QTreeWidgetItem shows text as it is (no rich text), so a host cannot pass for markup.
        auto *row = new QTreeWidgetItem(this);
        row->setText(HostColumn, QStringLiteral("%1:%2").arg(a.host).arg(a.port));
        row->setText(VerdictColumn, ExecutionResult::verdictName(a.verdict));
        row->setText(RuleColumn, a.rule);
        row->setToolTip(RuleColumn, a.rule);
        if (a.bytesUp >= 0) {
            row->setText(SentColumn, locale.formattedDataSize(a.bytesUp, 1,
                                                              QLocale::DataSizeTraditionalFormat));
            row->setText(ReceivedColumn, locale.formattedDataSize(
                                             a.bytesDown, 1, QLocale::DataSizeTraditionalFormat));
            row->setText(TimeColumn, tr("%1 ms").arg(a.ms));
        }
        for (int c : {SentColumn, ReceivedColumn, TimeColumn})
            row->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
        if (a.verdict != NetworkAttempt::Verdict::Allowed)
            row->setForeground(VerdictColumn, QBrush(a.verdict == NetworkAttempt::Verdict::Refused
                                                         ? QColor(Qt::red)
                                                         : QColor(Qt::darkYellow)));
    }
    for (int c = 0; c < ColumnCount; ++c)
        if (c != RuleColumn)
            resizeColumnToContents(c);
}
