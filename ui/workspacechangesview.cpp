#include "workspacechangesview.h"

#include "diffhighlighter.h"
#include "plaintext.h"
#include "workspacedecisions.h"

#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace {
QString sizeText(qint64 bytes)
{
    return bytes < 0 ? QString()
                     : QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

QString exactSize(qint64 bytes)
{
    return bytes == 1 ? QStringLiteral("1 byte")
                      : QStringLiteral("%1 bytes").arg(QLocale().toString(bytes));
}

QColor kindColor(const QString &kind)
{
    if (kind == u"added")
        return QColor(0x1f, 0x8a, 0x3c);
    if (kind == u"deleted")
        return QColor(0xd6, 0x3b, 0x3b);
    return QColor(0x3b, 0x7d, 0xd8);
}

QString shownPath(const RunWorkspace::Change &c)
{
    const QString path = PlainText::visible(c.path);
    return c.kind == u"renamed" ? QStringLiteral("%1 → %2").arg(PlainText::visible(c.from), path)
                                : path;
}
} // namespace

WorkspaceChangesView::WorkspaceChangesView(QWidget *parent)
    : QWidget(parent), m_title(new QLabel(this)), m_list(new QTreeWidget(this)),
      m_diff(new QPlainTextEdit(this)), m_notes(new QPlainTextEdit(this)),
      m_state(new QLabel(this)),
      m_apply(new QPushButton(QStringLiteral("&Apply to the folder"), this)),
      m_discard(new QPushButton(QStringLiteral("&Discard"), this))
{
    setObjectName(QStringLiteral("workspaceChanges"));
    m_title->setTextFormat(Qt::PlainText);
    m_title->setWordWrap(true);
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_list->setObjectName(QStringLiteral("workspaceChangeList"));
    m_list->setColumnCount(ColumnCount);
    m_list->setHeaderLabels({tr("Change"), tr("Path"), tr("Size"), tr("Lines")});
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->header()->setStretchLastSection(false);
    m_list->header()->setSectionResizeMode(PathColumn, QHeaderView::Stretch);
    m_list->header()->setSectionResizeMode(KindColumn, QHeaderView::ResizeToContents);
    m_list->header()->setSectionResizeMode(SizeColumn, QHeaderView::ResizeToContents);
    m_list->header()->setSectionResizeMode(LinesColumn, QHeaderView::ResizeToContents);
    m_diff->setObjectName(QStringLiteral("workspaceDiff"));
    m_diff->setReadOnly(true);
    m_diff->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_diff->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_diff->setPlaceholderText(tr("Select a file to see its changes."));
    m_highlighter = new DiffHighlighter(m_diff->document());
    m_notes->setObjectName(QStringLiteral("workspaceNotes"));
    m_notes->setReadOnly(true);
    m_notes->setMaximumHeight(fontMetrics().lineSpacing() * 6);
    m_state->setObjectName(QStringLiteral("workspaceState"));
    m_state->setTextFormat(Qt::PlainText);
    m_state->setWordWrap(true);
    m_apply->setObjectName(QStringLiteral("applyWorkspaceButton"));
    m_apply->setToolTip(tr("Writes these changes into the folder on this computer, each file "
                           "atomically; a file that changed there since the run started is left "
                           "alone"));
    m_discard->setObjectName(QStringLiteral("discardWorkspaceButton"));
    m_discard->setToolTip(tr("Leaves the folder as it is; the changes stay visible here"));

    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(m_list);
    split->addWidget(m_diff);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_state, 1);
    buttons->addWidget(m_discard, 0, Qt::AlignTop);
    buttons->addWidget(m_apply, 0, Qt::AlignTop);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_title);
    layout->addWidget(split, 1);
    layout->addWidget(m_notes);
    layout->addLayout(buttons);

    connect(m_list, &QTreeWidget::currentItemChanged, this, &WorkspaceChangesView::showSelected);
    connect(m_apply, &QPushButton::clicked, this, [this] {
        if (m_decisions)
            m_decisions->apply(m_runId, m_workspace.name);
    });
    connect(m_discard, &QPushButton::clicked, this, [this] {
        if (m_decisions)
            m_decisions->discard(m_runId, m_workspace.name);
    });
    showWorkspace(QString(), RunWorkspace());
}

void WorkspaceChangesView::setDecisions(WorkspaceDecisions *decisions)
{
    if (m_decisions)
        disconnect(m_decisions, nullptr, this, nullptr);
    m_decisions = decisions;
    if (m_decisions)
        connect(m_decisions, &WorkspaceDecisions::changed, this,
                [this](const QString &runId, const QString &name) {
                    if (runId == m_runId && name == m_workspace.name)
                        refresh();
                });
    fillState();
}

void WorkspaceChangesView::refresh()
{
    if (!m_decisions)
        return;
    if (const std::optional<RunWorkspace> w = m_decisions->workspace(m_runId, m_workspace.name))
        showWorkspace(m_runId, *w);
}

void WorkspaceChangesView::showWorkspace(const QString &runId, const RunWorkspace &workspace)
{
    const bool same = runId == m_runId && workspace.name == m_workspace.name;
    const bool sameChanges =
        same && workspace.json.value(u"changes") == m_workspace.json.value(u"changes");
    m_runId = runId;
    m_workspace = workspace;
    m_title->setText(workspace.name.isEmpty()
                         ? QString()
                         : tr("Workspace %1 · folder %2 · apply: %3")
                               .arg(PlainText::visible(workspace.name),
                                    PlainText::visible(workspace.folder, PlainText::Lines::Mark),
                                    workspace.apply));
    // The same change set again (its state changed): keep the selected file and the diff.
    if (!sameChanges)
        fillList();
    fillNotes();
    fillState();
}

void WorkspaceChangesView::fillList()
{
    m_list->clear();
    const QLocale locale;
    for (int i = 0; i < m_workspace.changes.size(); ++i) {
        const RunWorkspace::Change &c = m_workspace.changes.at(i);
        auto *row = new QTreeWidgetItem(m_list);
        row->setData(KindColumn, Qt::UserRole, i);
        row->setText(KindColumn, c.kind);
        row->setForeground(KindColumn, kindColor(c.kind));
        row->setText(PathColumn, shownPath(c));
        row->setToolTip(PathColumn, PlainText::toolTip(shownPath(c)));
        row->setText(SizeColumn, sizeText(c.kind == u"deleted" ? c.oldSize : c.size));
        if (c.binary)
            row->setText(LinesColumn, tr("binary"));
        else if (c.linesAdded >= 0)
            row->setText(LinesColumn,
                         QStringLiteral("+%1 −%2").arg(c.linesAdded).arg(c.linesRemoved));
        row->setTextAlignment(SizeColumn, Qt::AlignRight | Qt::AlignVCenter);
        row->setTextAlignment(LinesColumn, Qt::AlignRight | Qt::AlignVCenter);
    }
    // The first file with a diff to read (a deletion says little), else the first.
    int first = 0;
    for (int i = 0; i < m_workspace.changes.size(); ++i) {
        if (!m_workspace.changes.at(i).diff.isEmpty()) {
            first = i;
            break;
        }
    }
    if (m_list->topLevelItemCount() > 0)
        m_list->setCurrentItem(m_list->topLevelItem(first));
    else
        m_diff->clear();
}

void WorkspaceChangesView::showSelected()
{
    const QTreeWidgetItem *row = m_list->currentItem();
    const int index = row ? row->data(KindColumn, Qt::UserRole).toInt() : -1;
    if (index < 0 || index >= m_workspace.changes.size()) {
        m_diff->clear();
        m_diff->setExtraSelections({});
        return;
    }
    m_diff->setPlainText(diffText(m_workspace.changes.at(index)));
    m_diff->setExtraSelections(DiffHighlighter::lineTints(m_diff));
}

QString WorkspaceChangesView::diffText(const RunWorkspace::Change &c)
{
    const QString sha =
        c.sha256.isEmpty() ? QString() : QStringLiteral(", sha256 %1").arg(c.sha256);
    if (c.kind == u"deleted")
        return tr("Deleted (it was %1).").arg(exactSize(c.oldSize));
    if (c.kind == u"renamed")
        return tr("Renamed from %1, the same content: %2%3.")
            .arg(PlainText::visible(c.from), exactSize(c.size), sha);
    if (c.binary)
        return c.kind == u"modified" ? tr("binary, %1 (it was %2)%3")
                                           .arg(exactSize(c.size), exactSize(c.oldSize), sha)
                                     : tr("binary, %1%2").arg(exactSize(c.size), sha);
    if (c.diff.isEmpty())
        return tr("%1%2; no diff (the text it replaces could not be read when the run ended).")
            .arg(exactSize(c.size), sha);
    return PlainText::visible(c.diff, PlainText::Lines::Keep);
}

void WorkspaceChangesView::fillNotes()
{
    QStringList lines;
    const auto section = [&lines](const QString &title, const QStringList &items) {
        if (items.isEmpty())
            return;
        lines << title;
        for (const QString &item : items)
            lines << QStringLiteral("  ") + PlainText::visible(item);
    };
    section(tr("Left alone: the folder's file changed since the run started"),
            m_workspace.applied.conflicts);
    section(tr("Failed"), m_workspace.applied.failed);
    QString refused = tr("Refused, never applied");
    if (m_workspace.refusedCount > m_workspace.refused.size())
        refused += tr(" (%1 in all; the first %2 listed)")
                       .arg(m_workspace.refusedCount)
                       .arg(m_workspace.refused.size());
    section(refused, m_workspace.refused);
    m_notes->setPlainText(lines.join(u'\n'));
    m_notes->setVisible(!lines.isEmpty());
}

void WorkspaceChangesView::fillState()
{
    const bool busy = m_decisions && m_decisions->isBusy(m_runId, m_workspace.name);
    const RunWorkspace::State state = m_workspace.state();
    const bool pending = state == RunWorkspace::State::Pending;
    QStringList text;
    text << (busy ? tr("Applying to the folder…") : m_workspace.stateText());
    if (!m_workspace.changes.isEmpty() && !busy)
        text.first().prepend(m_workspace.countsText() + QStringLiteral(". "));
    // What went wrong beyond the change set (an apply "always" that could not run, say).
    if (!m_workspace.error.isEmpty() && state != RunWorkspace::State::Failed)
        text << PlainText::visible(m_workspace.error, PlainText::Lines::Keep);
    const QString why = m_workspace.whyNotApplicable();
    if (!why.isEmpty())
        text << why;
    if (m_decisions && !m_decisions->message(m_runId, m_workspace.name).isEmpty())
        text << m_decisions->message(m_runId, m_workspace.name);
    m_state->setText(m_workspace.name.isEmpty() ? QString() : text.join(u'\n'));
    // Shown for a change set, enabled while it waits: after a decision they stay, greyed out, so
    // the place where one decided says that it is done.
    const bool decidable =
        pending || state == RunWorkspace::State::Applied || state == RunWorkspace::State::Discarded;
    m_apply->setVisible(decidable);
    m_discard->setVisible(decidable);
    m_apply->setEnabled(pending && why.isEmpty() && !busy && m_decisions);
    m_discard->setEnabled(pending && !busy && m_decisions);
}
