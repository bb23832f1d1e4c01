#include "networkview.h"

#include <QHeaderView>
#include <QLocale>

NetworkView::NetworkView(QWidget *parent) : QTreeWidget(parent)
{
    setObjectName(QStringLiteral("networkView"));
    setColumnCount(ColumnCount);
    setHeaderLabels({tr("Host"), tr("Verdict"), tr("Rule or reason"), tr("Sent"), tr("Received"),
                     tr("Time"), tr("Secrets added")});
    setRootIsDecorated(false);
    setUniformRowHeights(true);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    header()->setStretchLastSection(false);
    header()->setSectionResizeMode(RuleColumn, QHeaderView::Stretch);
}

void NetworkView::setConnections(const QList<NetworkAttempt> &connections)
{
    // The same rows again (a record refreshed for another reason): keep the selection.
    if (connections == m_connections)
        return;
    m_connections = connections;
    clear();
    const QLocale locale;
    bool anySecret = false;
    for (int i = 0; i < connections.size(); ++i) {
        const NetworkAttempt &a = connections.at(i);
        // QTreeWidgetItem shows text as it is (no rich text), so a host cannot pass for markup.
        auto *row = new QTreeWidgetItem(this);
        row->setData(HostColumn, Qt::UserRole, i);
        row->setText(HostColumn, QStringLiteral("%1:%2").arg(a.host).arg(a.port));
        row->setText(VerdictColumn, ExecutionResult::verdictName(a.verdict));
        const QString rule = a.verdict == NetworkAttempt::Verdict::Held
                                 ? tr("held until you answer the question in the window")
                                 : a.rule;
        row->setText(RuleColumn, rule);
        row->setToolTip(RuleColumn, rule);
        if (a.bytesUp >= 0) {
            row->setText(SentColumn, locale.formattedDataSize(a.bytesUp, 1,
                                                              QLocale::DataSizeTraditionalFormat));
            row->setText(ReceivedColumn, locale.formattedDataSize(
                                             a.bytesDown, 1, QLocale::DataSizeTraditionalFormat));
            row->setText(TimeColumn, tr("%1 ms").arg(a.ms));
        }
        if (!a.secrets.isEmpty()) {
            row->setText(SecretsColumn, secretsText(a));
            row->setToolTip(
                SecretsColumn,
                tr("The egress gateway put the value of %1 in this connection's request, in place "
                   "of the placeholder the program held. Only the name is shown or kept.")
                    .arg(a.secrets.join(QLatin1String(", "))));
            anySecret = true;
        }
        for (int c : {SentColumn, ReceivedColumn, TimeColumn})
            row->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
        switch (a.verdict) {
        case NetworkAttempt::Verdict::Allowed:
            break;
        case NetworkAttempt::Verdict::Refused:
            row->setForeground(VerdictColumn, QBrush(QColor(Qt::red)));
            break;
        case NetworkAttempt::Verdict::Failed:
            row->setForeground(VerdictColumn, QBrush(QColor(Qt::darkYellow)));
            break;
        case NetworkAttempt::Verdict::Held:
            row->setForeground(VerdictColumn, QBrush(QColor(Qt::blue)));
            break;
        }
    }
    // Most runs have no bound secrets: no empty column for them.
    setColumnHidden(SecretsColumn, !anySecret);
    for (int c = 0; c < ColumnCount; ++c)
        if (c != RuleColumn)
            resizeColumnToContents(c);
}

std::optional<NetworkAttempt> NetworkView::selectedRefusal() const
{
    const QTreeWidgetItem *item = currentItem();
    if (!item || !item->isSelected())
        return std::nullopt;
    const int i = item->data(HostColumn, Qt::UserRole).toInt();
    if (i < 0 || i >= m_connections.size())
        return std::nullopt;
    const NetworkAttempt &a = m_connections.at(i);
    // The gateway's words for a host that no entry of the list names (cs-gateway, decide()).
    const bool notListed =
        a.rule == u"not on the allow-list" || a.rule == u"an address not on the allow-list";
    if (a.verdict != NetworkAttempt::Verdict::Refused || !notListed)
        return std::nullopt;
    return a;
}

QString NetworkView::secretsText(const NetworkAttempt &attempt)
{
    if (attempt.secrets.isEmpty())
        return {};
    const QString names = attempt.secrets.join(QLatin1String(", "));
    return attempt.secrets.size() == 1 ? tr("secret added: %1").arg(names)
                                       : tr("secrets added: %1").arg(names);
}

QString NetworkView::patternFor(const NetworkAttempt &attempt)
{
    const QString host =
        attempt.host.contains(u':') ? QStringLiteral("[%1]").arg(attempt.host) : attempt.host;
    return attempt.port == 80 || attempt.port == 443
               ? host
               : QStringLiteral("%1:%2").arg(host).arg(attempt.port);
}
