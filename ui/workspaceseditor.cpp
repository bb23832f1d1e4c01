#include "workspaceseditor.h"

#include "workspacedialog.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace {

QLabel *editorNote(const QString &text, const QString &objectName, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    label->setObjectName(objectName);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
}

QTableWidgetItem *readOnlyItem(const QString &text)
{
    auto *item = new QTableWidgetItem(text);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    return item;
}

QString chooseFolder(QWidget *parent)
{
    return QFileDialog::getExistingDirectory(parent, WorkspacesEditor::tr("Choose a folder"),
                                             QDir::homePath());
}

} // namespace

WorkspacesEditor::WorkspacesEditor(const QList<Workspace> &workspaces, QWidget *parent)
    : QWidget(parent), m_chooseFolder(chooseFolder),
      m_table(new QTableWidget(0, ColumnCount, this)), m_edit(new QPushButton(tr("Edit…"), this)),
      m_remove(new QPushButton(tr("Remove"), this)),
      m_rules(editorNote(QString(), QStringLiteral("workspaceRules"), this))
{
    m_rules->setTextFormat(Qt::PlainText); // it quotes the patterns
    m_table->setObjectName(QStringLiteral("workspaceTable"));
    m_table->setHorizontalHeaderLabels({tr("Name"), tr("Folder"), tr("Mode"), tr("Apply")});
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(FolderColumn, QHeaderView::Stretch);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setTextElideMode(Qt::ElideMiddle); // the folder's own name stays in sight
    m_table->setAlternatingRowColors(true);
    for (const Workspace &w : workspaces) {
        m_table->insertRow(int(m_workspaces.size()));
        m_workspaces.append(w);
        setRow(int(m_workspaces.size()) - 1, w);
    }
    m_table->resizeColumnToContents(NameColumn);
    m_table->setColumnWidth(NameColumn, qMax(m_table->columnWidth(NameColumn) + 24, 120));

    auto *add = new QPushButton(tr("Add…"), this);
    add->setObjectName(QStringLiteral("addWorkspaceButton"));
    add->setToolTip(tr("Choose a folder, then its name and mode"));
    m_edit->setObjectName(QStringLiteral("editWorkspaceButton"));
    m_remove->setObjectName(QStringLiteral("removeWorkspaceButton"));
    for (QPushButton *button : {add, m_edit, m_remove})
        button->setAutoDefault(false);
    connect(add, &QPushButton::clicked, this, &WorkspacesEditor::add);
    connect(m_edit, &QPushButton::clicked, this, [this] { editRow(m_table->currentRow()); });
    connect(m_remove, &QPushButton::clicked, this, &WorkspacesEditor::removeCurrent);
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row) { editRow(row); });
    connect(m_table, &QTableWidget::itemSelectionChanged, this, &WorkspacesEditor::updateSelection);

    auto *buttons = new QVBoxLayout;
    buttons->addWidget(add);
    buttons->addWidget(m_edit);
    buttons->addWidget(m_remove);
    buttons->addStretch(1);
    auto *tableRow = new QHBoxLayout;
    tableRow->addWidget(m_table, 1);
    tableRow->addLayout(buttons);

    // Non-breaking hyphens (&#8209;): a line that ends in "Read-" reads badly.
    auto *intro = editorNote(
        tr("Folders of yours that runs may ask for by name; the program finds one at "
           "/workspace/NAME. <b>Read&#8209;only</b>: it reads a copy. "
           "<b>Copy&#8209;on&#8209;write</b>: it changes "
           "a copy, and the changes come back with the result, reaching your folder only when "
           "applied (never, ask, always). The server this window starts uses them when "
           "--workspace names none."),
        QStringLiteral("workspaceIntro"), this);
    intro->setForegroundRole(QPalette::PlaceholderText);
    auto *exposure = editorNote(tr("A read-only workspace still exposes what it holds: the "
                                   "program can read it and, with network, send what it read."),
                                QStringLiteral("workspaceExposureNote"), this);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(tableRow, 1);
    layout->addWidget(exposure);
    layout->addWidget(m_rules);
    updateSelection();
}

void WorkspacesEditor::setRow(int row, const Workspace &w)
{
    m_table->setItem(row, NameColumn, readOnlyItem(w.name));
    auto *folder = readOnlyItem(QDir::toNativeSeparators(w.path));
    // Tooltips guess HTML: a path is escaped, so that one holding "<b>" shows as it is.
    const QString path = w.path.toHtmlEscaped();
    if (QFileInfo(w.path).isDir()) {
        folder->setToolTip(QStringLiteral("<p>%1</p>").arg(path));
    } else {
        folder->setForeground(QColor(0xc6, 0x28, 0x28));
        folder->setToolTip(
            tr("<p>%1 is not there: runs cannot have this workspace until it is back</p>")
                .arg(path));
    }
    m_table->setItem(row, FolderColumn, folder);
    m_table->setItem(row, ModeColumn, readOnlyItem(Workspace::modeName(w.mode)));
    // A read-only workspace brings nothing back: its apply setting does not count.
    const bool rw = w.mode == Workspace::Mode::CopyOnWrite;
    auto *apply = readOnlyItem(rw ? Workspace::applyName(w.apply) : QStringLiteral("—"));
    apply->setToolTip(rw ? tr("What happens to a run's changes") : tr("Nothing comes back"));
    m_table->setItem(row, ApplyColumn, apply);
}

QStringList WorkspacesEditor::names() const
{
    return namesBut(-1);
}

QStringList WorkspacesEditor::namesBut(int row) const
{
    QStringList names;
    for (int i = 0; i < m_workspaces.size(); ++i)
        if (i != row)
            names.append(m_workspaces.at(i).name);
    return names;
}

void WorkspacesEditor::setFolderChooser(std::function<QString(QWidget *)> chooser)
{
    m_chooseFolder = std::move(chooser);
}

void WorkspacesEditor::add()
{
    const QString folder = m_chooseFolder ? m_chooseFolder(this) : QString();
    if (!folder.isEmpty())
        addFolder(folder);
}

bool WorkspacesEditor::addFolder(const QString &folder)
{
    // Only an existing folder: the dialog lets a folder that is gone stay, not be added.
    Workspace proposed;
    proposed.path = QFileInfo(folder).canonicalFilePath();
    if (proposed.path.isEmpty() || !QFileInfo(proposed.path).isDir())
        return false;
    proposed.name = WorkspaceDialog::nameFor(proposed.path, names());
    WorkspaceDialog dialog(proposed, names(), this);
    dialog.setWindowTitle(tr("Add a workspace"));
    if (dialog.exec() != QDialog::Accepted)
        return false;
    return addWorkspace(dialog.workspace());
}

bool WorkspacesEditor::addWorkspace(const Workspace &workspace, QString *error)
{
    const QString why = WorkspaceDialog::nameProblem(workspace.name, names());
    if (!why.isEmpty()) {
        if (error)
            *error = why;
        return false;
    }
    const int row = int(m_workspaces.size());
    m_workspaces.append(workspace);
    m_table->insertRow(row);
    setRow(row, workspace);
    m_table->selectRow(row);
    emit changed();
    return true;
}

void WorkspacesEditor::editRow(int row)
{
    if (row < 0 || row >= m_workspaces.size())
        return;
    WorkspaceDialog dialog(m_workspaces.at(row), namesBut(row), this);
    if (dialog.exec() != QDialog::Accepted)
        return;
    m_workspaces[row] = dialog.workspace();
    setRow(row, m_workspaces.at(row));
    updateSelection();
    emit changed();
}

void WorkspacesEditor::removeCurrent()
{
    const int row = m_table->currentRow();
    if (row < 0 || row >= m_workspaces.size())
        return;
    m_workspaces.removeAt(row);
    m_table->removeRow(row);
    updateSelection();
    emit changed();
}

void WorkspacesEditor::updateSelection()
{
    const QList<QTableWidgetItem *> selected = m_table->selectedItems();
    const int row = selected.isEmpty() ? -1 : selected.constFirst()->row();
    m_edit->setEnabled(row >= 0);
    m_remove->setEnabled(row >= 0);
    QString text = tr("Kept out of every workspace: %1.")
                       .arg(Workspace::defaultExclusions().join(QStringLiteral(", ")));
    if (row >= 0 && row < m_workspaces.size()) {
        const Workspace &w = m_workspaces.at(row);
        if (!w.exclude.isEmpty())
            text += u' ' +
                    tr("%1 also keeps out: %2.").arg(w.name, w.exclude.join(QStringLiteral(", ")));
        if (!w.include.isEmpty())
            text += u' ' + tr("%1 lets in: %2.").arg(w.name, w.include.join(QStringLiteral(", ")));
    }
    m_rules->setText(text);
}
