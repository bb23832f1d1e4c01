#include "workspacepane.h"

#include "plaintext.h"
#include "workspacechangesview.h"
#include "workspacedecisions.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <functional>

namespace {
QString stateWord(const RunWorkspace &w)
{
    switch (w.state()) {
    case RunWorkspace::State::ReadOnly:
        return QStringLiteral("—");
    case RunWorkspace::State::Failed:
        return QStringLiteral("failed");
    case RunWorkspace::State::NoChanges:
        return QStringLiteral("none");
    case RunWorkspace::State::Pending:
        return QStringLiteral("%1 · not applied").arg(w.countsText());
    case RunWorkspace::State::Applied:
        return QStringLiteral("%1 · applied").arg(w.countsText());
    case RunWorkspace::State::Discarded:
        return QStringLiteral("%1 · discarded").arg(w.countsText());
    }
    return QString();
}
} // namespace

WorkspacePane::WorkspacePane(QWidget *parent)
    : QWidget(parent), m_table(new QTreeWidget(this)), m_skipped(new QLabel(this)),
      m_readOnly(new QLabel(this)), m_changes(new WorkspaceChangesView(this))
{
    setObjectName(QStringLiteral("workspacePane"));
    m_table->setObjectName(QStringLiteral("workspaceTable"));
    m_table->setColumnCount(ColumnCount);
    m_table->setHeaderLabels({tr("Workspace"), tr("Mode"), tr("Files"), tr("Size"), tr("Kept out"),
                              tr("Skipped"), tr("Changes")});
    m_table->setRootIsDecorated(false);
    m_table->setUniformRowHeights(true);
    m_table->header()->setStretchLastSection(true);
    m_table->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->headerItem()->setToolTip(ExcludedColumn,
                                      tr("Entries the workspace's rules kept out of the sandbox "
                                         "(credentials such as .env, *.pem, .ssh/)"));
    m_table->headerItem()->setToolTip(SkippedColumn,
                                      tr("Entries not copied in: links that leave the folder, "
                                         "devices, sockets, FIFOs"));
    m_skipped->setObjectName(QStringLiteral("workspaceSkipped"));
    m_skipped->setTextFormat(Qt::PlainText);
    m_skipped->setWordWrap(true);
    m_skipped->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_readOnly->setTextFormat(Qt::PlainText);
    m_readOnly->setWordWrap(true);
    m_readOnly->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_readOnly->setForegroundRole(QPalette::PlaceholderText);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_table);
    layout->addWidget(m_skipped);
    layout->addWidget(m_readOnly, 1);
    layout->addWidget(m_changes, 4);
    connect(m_table, &QTreeWidget::currentItemChanged, this, &WorkspacePane::showSelected);
}

void WorkspacePane::setDecisions(WorkspaceDecisions *decisions)
{
    if (m_decisions)
        disconnect(m_decisions, nullptr, this, nullptr);
    m_decisions = decisions;
    m_changes->setDecisions(decisions);
    if (m_decisions)
        connect(m_decisions, &WorkspaceDecisions::changed, this,
                [this](const QString &runId, const QString &) {
                    if (runId == m_runId && m_decisions)
                        setWorkspaces(runId, m_decisions->workspaces(runId));
                });
}

QString WorkspacePane::title() const
{
    const auto pending = std::count_if(m_workspaces.cbegin(), m_workspaces.cend(),
                                       [](const RunWorkspace &w) { return w.needsDecision(); });
    const QString name = m_workspaces.size() == 1 ? tr("Wor&kspace") : tr("Wor&kspaces");
    return pending > 0 ? tr("%1 (%2 to decide)").arg(name).arg(pending) : name;
}

void WorkspacePane::setWorkspaces(const QString &runId, const QList<RunWorkspace> &workspaces)
{
    const QTreeWidgetItem *current = m_table->currentItem();
    const QString selected = runId == m_runId && current
                                 ? current->data(NameColumn, Qt::UserRole).toString()
                                 : QString();
    m_runId = runId;
    m_workspaces = workspaces;
    const QSignalBlocker quiet(m_table);
    m_table->clear();
    const QLocale locale;
    for (const RunWorkspace &w : workspaces) {
        auto *row = new QTreeWidgetItem(m_table);
        row->setData(NameColumn, Qt::UserRole, w.name);
        row->setText(NameColumn, PlainText::visible(w.name));
        row->setText(ModeColumn, w.mode);
        row->setText(FilesColumn, locale.toString(w.files));
        row->setText(SizeColumn,
                     locale.formattedDataSize(w.bytes, 1, QLocale::DataSizeTraditionalFormat));
        row->setText(ExcludedColumn, locale.toString(w.excluded));
        row->setText(SkippedColumn, locale.toString(w.skipped.size()));
        row->setText(ChangesColumn, stateWord(w));
        row->setToolTip(NameColumn, PlainText::toolTip(w.folder));
        for (int c : {FilesColumn, SizeColumn, ExcludedColumn, SkippedColumn})
            row->setTextAlignment(c, Qt::AlignRight | Qt::AlignVCenter);
    }
    // As tall as its rows (up to a few), so that the change set below gets the room.
    const int rows = qBound(1, int(workspaces.size()), 4);
    const int rowHeight = qMax(m_table->sizeHintForRow(0), m_table->fontMetrics().height() + 6);
    m_table->setFixedHeight(m_table->header()->sizeHint().height() + rows * rowHeight +
                            2 * m_table->frameWidth() + 2);
    m_table->setCurrentItem(m_table->topLevelItem(preferredRow(selected)));
    showSelected();
}

int WorkspacePane::preferredRow(const QString &selected) const
{
    // The one selected before, else the first that waits for a decision, else the first
    // copy-on-write one, else the first.
    const std::function<bool(const RunWorkspace &)> wanted[] = {
        [&selected](const RunWorkspace &w) { return !selected.isEmpty() && w.name == selected; },
        [](const RunWorkspace &w) { return w.needsDecision(); },
        [](const RunWorkspace &w) { return w.isCopyOnWrite(); },
    };
    for (const auto &test : wanted) {
        for (int i = 0; i < m_workspaces.size(); ++i) {
            if (test(m_workspaces.at(i)))
                return i;
        }
    }
    return 0;
}

void WorkspacePane::showSelected()
{
    const QTreeWidgetItem *row = m_table->currentItem();
    const QString name = row ? row->data(NameColumn, Qt::UserRole).toString() : QString();
    const auto it = std::find_if(m_workspaces.cbegin(), m_workspaces.cend(),
                                 [&name](const RunWorkspace &w) { return w.name == name; });
    if (it == m_workspaces.cend()) {
        m_skipped->hide();
        m_readOnly->hide();
        m_changes->hide();
        return;
    }
    QString skipped;
    if (!it->skipped.isEmpty())
        skipped = tr("Not copied into the sandbox from %1:\n%2")
                      .arg(PlainText::visible(it->name),
                           PlainText::visible(it->skipped.join(u'\n'), PlainText::Lines::Keep));
    m_skipped->setText(skipped);
    m_skipped->setVisible(!skipped.isEmpty());
    m_readOnly->setText(it->state() == RunWorkspace::State::Failed ? it->error : it->stateText());
    m_readOnly->setVisible(!it->hasChangeSet);
    m_changes->setVisible(it->hasChangeSet);
    if (it->hasChangeSet)
        m_changes->showWorkspace(m_runId, *it);
}
