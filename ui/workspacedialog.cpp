#include "workspacedialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

namespace {

// A wrapped, selectable explanation (as the settings dialog's notes).
QLabel *workspaceNote(const QString &text, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setForegroundRole(QPalette::PlaceholderText);
    return label;
}

// Red for what keeps OK disabled, amber for what only deserves a look; hidden, it leaves no gap.
QLabel *workspaceMessage(const QString &objectName, const QColor &color, QWidget *parent)
{
    auto *label = new QLabel(parent);
    label->setObjectName(objectName);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText); // it quotes what was typed
    QPalette palette = label->palette();
    palette.setColor(QPalette::WindowText, color);
    label->setPalette(palette);
    label->hide();
    return label;
}

QPlainTextEdit *patternEdit(const QString &objectName, const QStringList &patterns,
                            const QString &placeholder, QWidget *parent)
{
    auto *edit = new QPlainTextEdit(patterns.join(u'\n'), parent);
    edit->setObjectName(objectName);
    edit->setPlaceholderText(placeholder);
    edit->setTabChangesFocus(true);
    edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    return edit;
}

QStringList patternsOf(const QPlainTextEdit *edit)
{
    QStringList patterns;
    for (const QString &line : edit->toPlainText().split(u'\n')) {
        const QString pattern = line.trimmed();
        if (!pattern.isEmpty() && !patterns.contains(pattern))
            patterns.append(pattern);
    }
    return patterns;
}

} // namespace

WorkspaceDialog::WorkspaceDialog(const Workspace &workspace, const QStringList &takenNames,
                                 QWidget *parent)
    : QDialog(parent), m_taken(takenNames), m_initialPath(workspace.path),
      m_name(new QLineEdit(workspace.name, this)), m_folder(new QLineEdit(workspace.path, this)),
      m_mode(new QComboBox(this)), m_apply(new QComboBox(this)),
      m_exclude(patternEdit(QStringLiteral("workspaceExcludeEdit"), workspace.exclude,
                            tr("build/\n*.log"), this)),
      m_include(patternEdit(QStringLiteral("workspaceIncludeEdit"), workspace.include,
                            tr(".env.example"), this)),
      m_error(workspaceMessage(QStringLiteral("workspaceError"), QColor(0xc6, 0x28, 0x28), this)),
      m_warning(
          workspaceMessage(QStringLiteral("workspaceWarning"), QColor(0xb2, 0x6a, 0x00), this)),
      m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(workspace.name.isEmpty() ? tr("Add a workspace") : tr("Edit the workspace"));
    setObjectName(QStringLiteral("workspaceDialog"));

    m_name->setObjectName(QStringLiteral("workspaceNameEdit"));
    m_name->setToolTip(tr("What runs ask for, and where they find it: /workspace/NAME"));
    m_folder->setObjectName(QStringLiteral("workspaceFolderEdit"));
    auto *browseButton = new QPushButton(tr("Browse…"), this);
    browseButton->setObjectName(QStringLiteral("workspaceBrowseButton"));
    browseButton->setAutoDefault(false);
    auto *folderRow = new QHBoxLayout;
    folderRow->addWidget(m_folder, 1);
    folderRow->addWidget(browseButton);

    m_mode->setObjectName(QStringLiteral("workspaceModeCombo"));
    m_mode->addItem(tr("read-only: runs read a copy"), int(Workspace::Mode::ReadOnly));
    m_mode->addItem(tr("copy-on-write: runs change a copy"), int(Workspace::Mode::CopyOnWrite));
    m_mode->setCurrentIndex(m_mode->findData(int(workspace.mode)));
    m_apply->setObjectName(QStringLiteral("workspaceApplyCombo"));
    m_apply->addItem(tr("never: the changes stay with the run"), int(Workspace::Apply::Never));
    m_apply->addItem(tr("ask: this window asks when the run ends"), int(Workspace::Apply::Ask));
    m_apply->addItem(tr("always: applied when the run ends"), int(Workspace::Apply::Always));
    m_apply->setCurrentIndex(m_apply->findData(int(workspace.apply)));
    m_apply->setToolTip(tr("What happens to a copy-on-write run's change set. Applying never "
                           "overwrites a file you changed since the run started."));

    auto *form = new QFormLayout;
    form->addRow(tr("Name:"), m_name);
    form->addRow(tr("Folder:"), folderRow);
    form->addRow(tr("Mode:"), m_mode);
    form->addRow(tr("Apply changes:"), m_apply);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addWidget(m_warning);
    layout->addWidget(createRulesGroup(), 1);
    layout->addWidget(m_buttons);

    connect(browseButton, &QPushButton::clicked, this, &WorkspaceDialog::browse);
    connect(m_name, &QLineEdit::textChanged, this, &WorkspaceDialog::updateState);
    connect(m_folder, &QLineEdit::textChanged, this, &WorkspaceDialog::updateState);
    connect(m_mode, &QComboBox::currentIndexChanged, this, &WorkspaceDialog::updateState);
    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] {
        if (problem().isEmpty())
            accept();
    });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    updateState();
    resize(qMax(sizeHint().width(), 620), sizeHint().height());
}

QWidget *WorkspaceDialog::createRulesGroup()
{
    auto *group = new QGroupBox(tr("What stays out"), this);
    group->setObjectName(QStringLiteral("workspaceRulesGroup"));
    auto *defaults = new QPlainTextEdit(Workspace::defaultExclusions().join(u'\n'), group);
    defaults->setObjectName(QStringLiteral("workspaceDefaultsView"));
    defaults->setReadOnly(true);
    defaults->setTabChangesFocus(true);
    defaults->setToolTip(tr("Credentials kept out of every workspace, at any depth"));
    // Read-only, and looking it: the window's colour, not an editor's.
    QPalette palette = defaults->palette();
    palette.setColor(QPalette::Base, palette.color(QPalette::Window));
    defaults->setPalette(palette);

    auto *columns = new QHBoxLayout;
    const auto column = [group](const QString &title, QWidget *body) {
        auto *box = new QVBoxLayout;
        box->addWidget(new QLabel(title, group));
        box->addWidget(body, 1);
        return box;
    };
    columns->addLayout(column(tr("Always kept out:"), defaults));
    columns->addLayout(column(tr("Also keep out:"), m_exclude));
    columns->addLayout(column(tr("Let in:"), m_include));

    auto *layout = new QVBoxLayout(group);
    layout->addLayout(columns, 1);
    layout->addWidget(workspaceNote(
        tr("One pattern a line, as in .gitignore: a name matches at any depth, one with a '/' "
           "from the folder's top; a trailing '/' matches folders only; * and ? stay within a "
           "name; case is ignored. <i>Let in</i> brings back a name kept out (.env.example), "
           "never something inside a folder kept out. A credential under another name (a "
           "config.json holding a token) is not caught: keep it out here."),
        group));
    return group;
}

Workspace WorkspaceDialog::workspace() const
{
    Workspace w;
    w.name = m_name->text().trimmed();
    w.path = folderPath();
    w.mode = Workspace::Mode(m_mode->currentData().toInt());
    w.apply = Workspace::Apply(m_apply->currentData().toInt());
    w.exclude = patternsOf(m_exclude);
    w.include = patternsOf(m_include);
    return w;
}

QString WorkspaceDialog::folderPath() const
{
    const QString typed = m_folder->text().trimmed();
    if (typed.isEmpty())
        return {};
    const QFileInfo info(QDir::cleanPath(Workspace::expandHome(typed)));
    const QString canonical = info.canonicalFilePath();
    return canonical.isEmpty() ? info.absoluteFilePath() : canonical;
}

QString WorkspaceDialog::nameProblem(const QString &name, const QStringList &taken)
{
    if (name.isEmpty())
        return tr("Give it a name: runs ask for the workspace by name.");
    if (!Workspace::isValidName(name))
        return tr("'%1' is not a valid name: a letter or digit, then up to 63 letters, digits, "
                  "'_', '.' or '-'.")
            .arg(name.left(100));
    if (taken.contains(name))
        return tr("A workspace named '%1' exists already.").arg(name);
    return {};
}

QString WorkspaceDialog::problem() const
{
    const QString nameWhy = nameProblem(m_name->text().trimmed(), m_taken);
    if (!nameWhy.isEmpty())
        return nameWhy;
    const QString path = folderPath();
    if (path.isEmpty())
        return tr("Choose the folder.");
    if (!QDir::isAbsolutePath(path))
        return tr("%1 is not a folder's full path.").arg(path);
    const QFileInfo info(path);
    if (QDir(path).isRoot())
        return tr("The file system's root cannot be a workspace.");
    if (info.exists() && !info.isDir())
        return tr("%1 is not a folder.").arg(path);
    // A folder that is gone may stay what it was (a drive not mounted today), not be chosen.
    if (!info.exists() && path != m_initialPath)
        return tr("The folder %1 does not exist.").arg(path);
    return {};
}

void WorkspaceDialog::updateState()
{
    const QString why = problem();
    m_error->setText(why);
    m_error->setVisible(!why.isEmpty());
    const QString path = folderPath();
    const bool gone = why.isEmpty() && !QFileInfo(path).isDir();
    m_warning->setText(gone ? tr("The folder %1 is not there: runs cannot have this workspace "
                                 "until it is back.")
                                  .arg(path)
                            : QString());
    m_warning->setVisible(gone);
    m_apply->setEnabled(m_mode->currentData().toInt() == int(Workspace::Mode::CopyOnWrite));
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(why.isEmpty());
}

void WorkspaceDialog::browse()
{
    const QString start = QFileInfo(folderPath()).isDir() ? folderPath() : QDir::homePath();
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Choose the folder"), start);
    if (!folder.isEmpty())
        m_folder->setText(folder);
}

QString WorkspaceDialog::nameFor(const QString &folder, const QStringList &taken)
{
    // What cannot be in a name becomes '-', runs of it one, and the start a letter or digit.
    QString name = QFileInfo(QDir::cleanPath(folder)).fileName();
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]+")), QStringLiteral("-"));
    name.remove(QRegularExpression(QStringLiteral("^[^A-Za-z0-9]+")));
    name.remove(QRegularExpression(QStringLiteral("-+$")));
    name = name.left(60);
    if (name.isEmpty())
        name = QStringLiteral("workspace");
    QString candidate = name;
    for (int n = 2; taken.contains(candidate); ++n)
        candidate = QStringLiteral("%1-%2").arg(name).arg(n);
    return candidate;
}
