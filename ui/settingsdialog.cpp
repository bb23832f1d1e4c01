#include "settingsdialog.h"

#include "credentialsview.h"
#include "egresslist.h"
#include "engineaddress.h"
#include "enginelocator.h"
#include "policyeditor.h"
#include "workspaceseditor.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QRegularExpressionValidator>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

namespace {

// Explanations under a form: wrapped, and selectable so paths can be copied.
QLabel *noteLabel(const QString &text, QWidget *parent)
{
    auto *label = new QLabel(text, parent);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setForegroundRole(QPalette::PlaceholderText);
    return label;
}

// Under a field, what is wrong with what was typed; hidden, it leaves no gap.
QLabel *errorLabel(const QString &objectName, QWidget *parent)
{
    auto *label = new QLabel(parent);
    label->setObjectName(objectName);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText); // it quotes what was typed
    QPalette palette = label->palette();
    palette.setColor(QPalette::WindowText, QColor(0xc6, 0x28, 0x28));
    label->setPalette(palette);
    label->hide();
    return label;
}

// A variable name field: what cannot be a name is not typed in.
QLineEdit *envNameEdit(const QString &objectName, const QString &placeholder, QWidget *parent)
{
    auto *edit = new QLineEdit(parent);
    edit->setObjectName(objectName);
    edit->setPlaceholderText(placeholder);
    edit->setValidator(new QRegularExpressionValidator(
        QRegularExpression(QStringLiteral("[A-Za-z_][A-Za-z0-9_]*")), edit));
    return edit;
}

// How the list shows a binding: the direction the value goes, and where to.
QString secretText(const AppSettings::SecretBinding &secret)
{
    return SettingsDialog::tr("%1 ← %2 for %3")
        .arg(secret.name, secret.hostVar, secret.hosts.join(QStringLiteral(", ")));
}

// Why `text` is not an engine --engine would take ("" when it is): the forms EngineAddress
// parses, or context:NAME. Checked here so a typo is caught before the restart; whether the
// engine answers is the locator's business then.
QString engineError(const QString &text)
{
    if (text.startsWith(u"context:")) {
        const QString name = text.mid(8);
        return name == u"default" || EngineLocator::isValidContextName(name)
                   ? QString()
                   : SettingsDialog::tr("'%1' is not a Docker context name").arg(name);
    }
    QString error;
    return EngineAddress::parse(text, &error).isValid() ? QString() : error;
}

} // namespace

SettingsDialog::SettingsDialog(const AppSettings &current, const QStringList &languages,
                               QWidget *parent)
    : QDialog(parent), m_initial(current)
{
    setWindowTitle(tr("Settings"));
    setObjectName(QStringLiteral("settingsDialog"));

    auto *tabs = new QTabWidget(this);
    tabs->setObjectName(QStringLiteral("settingsTabs"));
    tabs->addTab(createEngineTab(), tr("Engines"));
    tabs->addTab(createImagesTab(languages), tr("Images"));
    tabs->addTab(createLimitsTab(), tr("Limits"));
    tabs->addTab(createEnvironmentTab(), tr("Environment"));
    m_workspacesEditor = new WorkspacesEditor(current.workspaces, tabs);
    m_workspacesEditor->setObjectName(QStringLiteral("workspacesEditor"));
    tabs->addTab(m_workspacesEditor, tr("Workspaces"));
    tabs->addTab(createServerTab(), tr("Server"));
    tabs->addTab(createHistoryTab(), tr("History"));
    m_policyEditor = new PolicyEditor(current.policies, languages, tabs);
    m_policyEditor->setObjectName(QStringLiteral("policyEditor"));
    m_policyEditor->setWorkspaceNames(m_workspacesEditor->names());
    connect(m_workspacesEditor, &WorkspacesEditor::changed, this,
            [this] { m_policyEditor->setWorkspaceNames(m_workspacesEditor->names()); });
    // The policies above, the credentials that assistants are known by below.
    auto *assistants = new QSplitter(Qt::Vertical, tabs);
    assistants->setObjectName(QStringLiteral("assistantsSplitter"));
    assistants->setChildrenCollapsible(false);
    assistants->addWidget(m_policyEditor);
    m_credentialsView = new CredentialsView(CredentialStore::defaultPath(), assistants);
    m_credentialsView->setObjectName(QStringLiteral("credentialsView"));
    assistants->addWidget(m_credentialsView);
    assistants->setStretchFactor(0, 3);
    assistants->setStretchFactor(1, 1);
    tabs->addTab(assistants, tr("Assistants"));

    auto *restartNote = new QLabel(tr("Changes to the engines, images, limits, workspaces and "
                                      "server apply after a restart."),
                                   this);
    restartNote->setObjectName(QStringLiteral("restartNote"));
    restartNote->setWordWrap(true);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(tabs, 1);
    layout->addWidget(restartNote);
    layout->addWidget(m_buttons);

    updateEngineState();
    updateEnvButtons();
    updateSecretState();
    resize(qMax(sizeHint().width(), 600), qMax(sizeHint().height(), 440));
}

QWidget *SettingsDialog::createEngineTab()
{
    auto *page = new QWidget;
    m_engineList = new QListWidget(page);
    m_engineList->setObjectName(QStringLiteral("engineList"));
    m_engineList->setSelectionMode(QAbstractItemView::SingleSelection);
    for (const QString &engine : m_initial.engineList())
        m_engineList->addItem(engine);

    m_engineEdit = new QLineEdit(page);
    m_engineEdit->setObjectName(QStringLiteral("engineEdit"));
    m_engineEdit->setPlaceholderText(
        tr("socket path, tcp://host:port, ssh://user@host, context:NAME"));
    m_engineEdit->setClearButtonEnabled(true);
    // Enter adds the engine instead of closing the dialog through its default button.
    m_engineEdit->installEventFilter(this);
    auto *browse = new QPushButton(tr("Browse…"), page);
    browse->setObjectName(QStringLiteral("browseSocketButton"));
    browse->setToolTip(tr("Choose a local engine socket"));
    browse->setAutoDefault(false);
    m_addEngineButton = new QPushButton(tr("Add"), page);
    m_addEngineButton->setObjectName(QStringLiteral("addEngineButton"));
    m_addEngineButton->setAutoDefault(false);
    m_removeEngineButton = new QPushButton(tr("Remove"), page);
    m_removeEngineButton->setObjectName(QStringLiteral("removeEngineButton"));
    m_removeEngineButton->setAutoDefault(false);
    m_firstEngineButton = new QPushButton(tr("Make first"), page);
    m_firstEngineButton->setObjectName(QStringLiteral("firstEngineButton"));
    m_firstEngineButton->setToolTip(tr("The first engine is the one messages name by default"));
    m_firstEngineButton->setAutoDefault(false);
    connectEngineControls(browse);

    m_engineError = errorLabel(QStringLiteral("engineError"), page);

    auto *listButtons = new QVBoxLayout;
    listButtons->addWidget(m_firstEngineButton);
    listButtons->addWidget(m_removeEngineButton);
    listButtons->addStretch(1);
    auto *listRow = new QHBoxLayout;
    listRow->addWidget(m_engineList, 1);
    listRow->addLayout(listButtons);
    auto *addRow = new QHBoxLayout;
    addRow->addWidget(m_engineEdit, 1);
    addRow->addWidget(browse);
    addRow->addWidget(m_addEngineButton);

    auto *layout = new QVBoxLayout(page);
    layout->addWidget(noteLabel(tr("The Docker or Podman engines sandboxes run on. With several, "
                                   "each call goes to the one with the most room, a session "
                                   "stays on its engine, and one that stops answering gets no "
                                   "calls until it is back. Leave the list empty to use "
                                   "DOCKER_HOST, the Docker context, CONTAINER_HOST, rootless "
                                   "Podman, rootful Podman, then Docker, whichever is found "
                                   "first."),
                                page));
    layout->addLayout(listRow, 1);
    layout->addLayout(addRow);
    // Under the field; hidden, it leaves no gap.
    layout->addWidget(m_engineError);
    return page;
}

// What the engine tab's list, field and buttons do: the list is edited in place, and what Save
// keeps is read from it then.
void SettingsDialog::connectEngineControls(QPushButton *browse)
{
    connect(browse, &QPushButton::clicked, this, &SettingsDialog::browseForSocket);
    connect(m_engineEdit, &QLineEdit::textChanged, this, &SettingsDialog::updateEngineState);
    connect(m_engineList, &QListWidget::itemSelectionChanged, this,
            &SettingsDialog::updateEngineState);
    connect(m_addEngineButton, &QPushButton::clicked, this, [this] {
        if (addEngine(m_engineEdit->text()))
            m_engineEdit->clear();
    });
    connect(m_removeEngineButton, &QPushButton::clicked, this, [this] {
        qDeleteAll(m_engineList->selectedItems());
        updateEngineState();
    });
    connect(m_firstEngineButton, &QPushButton::clicked, this, [this] {
        const int row = m_engineList->currentRow();
        if (row <= 0)
            return;
        m_engineList->insertItem(0, m_engineList->takeItem(row));
        m_engineList->setCurrentRow(0);
    });
}

QWidget *SettingsDialog::createImagesTab(const QStringList &languages)
{
    auto *page = new QWidget;
    QStringList rows = languages;
    for (auto it = m_initial.images.cbegin(); it != m_initial.images.cend(); ++it) {
        if (!rows.contains(it.key()))
            rows.append(it.key());
    }

    m_imagesTable = new QTableWidget(int(rows.size()), 2, page);
    m_imagesTable->setObjectName(QStringLiteral("imagesTable"));
    m_imagesTable->setHorizontalHeaderLabels({tr("Language"), tr("Image")});
    m_imagesTable->verticalHeader()->hide();
    m_imagesTable->horizontalHeader()->setStretchLastSection(true);
    m_imagesTable->setSelectionMode(QAbstractItemView::SingleSelection);
    m_imagesTable->setEditTriggers(QAbstractItemView::AllEditTriggers);
    m_imagesTable->setAlternatingRowColors(true);
    for (int i = 0; i < rows.size(); ++i) {
        auto *language = new QTableWidgetItem(rows.at(i));
        language->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
        m_imagesTable->setItem(i, 0, language);
        auto *image = new QTableWidgetItem(m_initial.images.value(rows.at(i)));
        image->setToolTip(tr("Empty: the built-in image"));
        m_imagesTable->setItem(i, 1, image);
    }
    m_imagesTable->resizeColumnToContents(0);
    m_imagesTable->setColumnWidth(0, m_imagesTable->columnWidth(0) + 24);
    // Rows as tall as an editor needs, the same for filled and empty ones.
    m_imagesTable->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_imagesTable->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 12);

    auto *layout = new QVBoxLayout(page);
    layout->addWidget(noteLabel(tr("Leave an image empty to use the built-in one. Another image "
                                   "must provide the same interpreters and tools."),
                                page));
    layout->addWidget(m_imagesTable, 1);
    return page;
}

QWidget *SettingsDialog::createLimitsTab()
{
    auto *page = new QWidget;

    m_timeoutSpin = new QSpinBox(page);
    m_timeoutSpin->setObjectName(QStringLiteral("timeoutSpin"));
    m_timeoutSpin->setRange(AppSettings::kMinTimeoutSec, AppSettings::kMaxTimeoutSec);
    m_timeoutSpin->setSuffix(tr(" s"));
    m_timeoutSpin->setValue(m_initial.defaultTimeoutSec);

    m_memorySpin = new QSpinBox(page);
    m_memorySpin->setObjectName(QStringLiteral("memorySpin"));
    m_memorySpin->setRange(AppSettings::kMinMemoryMiB, AppSettings::kMaxMemoryMiB);
    m_memorySpin->setSingleStep(128);
    m_memorySpin->setSuffix(tr(" MiB"));
    m_memorySpin->setValue(m_initial.memoryMiB);

    m_cpusSpin = new QDoubleSpinBox(page);
    m_cpusSpin->setObjectName(QStringLiteral("cpusSpin"));
    m_cpusSpin->setRange(AppSettings::kMinCpus, AppSettings::kMaxCpus);
    m_cpusSpin->setDecimals(2);
    m_cpusSpin->setSingleStep(0.5);
    m_cpusSpin->setValue(m_initial.cpus);

    m_pidsSpin = new QSpinBox(page);
    m_pidsSpin->setObjectName(QStringLiteral("pidsSpin"));
    m_pidsSpin->setRange(AppSettings::kMinPidsLimit, AppSettings::kMaxPidsLimit);
    m_pidsSpin->setSingleStep(64);
    m_pidsSpin->setValue(m_initial.pidsLimit);

    // Spin boxes as wide as their longest value, not the whole row: these are small numbers.
    for (QAbstractSpinBox *spin :
         {static_cast<QAbstractSpinBox *>(m_timeoutSpin),
          static_cast<QAbstractSpinBox *>(m_memorySpin),
          static_cast<QAbstractSpinBox *>(m_cpusSpin), static_cast<QAbstractSpinBox *>(m_pidsSpin)})
        spin->setMinimumWidth(120);

    auto *form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::FieldsStayAtSizeHint);
    form->addRow(tr("Default timeout:"), m_timeoutSpin);
    form->addRow(tr("Memory:"), m_memorySpin);
    form->addRow(tr("CPUs:"), m_cpusSpin);
    form->addRow(tr("Processes:"), m_pidsSpin);

    auto *layout = new QVBoxLayout(page);
    layout->addLayout(form);
    layout->addWidget(noteLabel(tr("Applied to every sandbox. A call may ask for its own timeout, "
                                   "up to %1 s; memory is a hard limit without swap.")
                                    .arg(AppSettings::kMaxTimeoutSec),
                                page));
    layout->addStretch(1);
    return page;
}

QWidget *SettingsDialog::createEnvironmentTab()
{
    auto *page = new QWidget;

    m_passThroughList = new QListWidget(page);
    m_passThroughList->setObjectName(QStringLiteral("passThroughList"));
    m_passThroughList->setSelectionMode(QAbstractItemView::ExtendedSelection);
    for (const QString &name : m_initial.passThroughEnv)
        m_passThroughList->addItem(name);

    m_envNameEdit = envNameEdit(QStringLiteral("envNameEdit"), tr("VARIABLE_NAME"), page);
    // Enter adds the name instead of closing the dialog through its default button.
    m_envNameEdit->installEventFilter(this);

    m_addEnvButton = new QPushButton(tr("Add"), page);
    m_addEnvButton->setObjectName(QStringLiteral("addEnvButton"));
    m_addEnvButton->setAutoDefault(false);
    m_removeEnvButton = new QPushButton(tr("Remove"), page);
    m_removeEnvButton->setObjectName(QStringLiteral("removeEnvButton"));
    m_removeEnvButton->setAutoDefault(false);

    connect(m_envNameEdit, &QLineEdit::textChanged, this, &SettingsDialog::updateEnvButtons);
    connect(m_passThroughList, &QListWidget::itemSelectionChanged, this,
            &SettingsDialog::updateEnvButtons);
    connect(m_addEnvButton, &QPushButton::clicked, this, [this] {
        if (addPassThroughName(m_envNameEdit->text()))
            m_envNameEdit->clear();
    });
    connect(m_removeEnvButton, &QPushButton::clicked, this,
            [this] { qDeleteAll(m_passThroughList->selectedItems()); });

    auto *row = new QHBoxLayout;
    row->addWidget(m_envNameEdit, 1);
    row->addWidget(m_addEnvButton);
    row->addWidget(m_removeEnvButton);

    auto *layout = new QVBoxLayout(page);
    layout->addWidget(noteLabel(tr("Host environment variables handed to every sandbox, by name. "
                                   "Their values are read when the server starts and never "
                                   "logged."),
                                page));
    layout->addWidget(m_passThroughList, 1);
    layout->addLayout(row);
    layout->addSpacing(8);
    layout->addWidget(createSecretsGroup(page), 1);
    return page;
}

// Keys a program may use without holding them, under the variables it may hold: the same list,
// fields and buttons, with the binding's three parts to fill in.
QWidget *SettingsDialog::createSecretsGroup(QWidget *page)
{
    auto *group = new QGroupBox(tr("Bound secrets"), page);
    group->setObjectName(QStringLiteral("secretsGroup"));

    m_secretList = new QListWidget(group);
    m_secretList->setObjectName(QStringLiteral("secretList"));
    m_secretList->setSelectionMode(QAbstractItemView::ExtendedSelection);
    for (const AppSettings::SecretBinding &secret : m_initial.secrets) {
        auto *item = new QListWidgetItem(secretText(secret), m_secretList);
        item->setData(Qt::UserRole, secret.toString());
    }

    m_secretNameEdit = envNameEdit(QStringLiteral("secretNameEdit"), tr("NAME"), group);
    m_secretNameEdit->setToolTip(tr("The variable in the sandbox, which holds a placeholder"));
    m_secretHostVarEdit = envNameEdit(QStringLiteral("secretHostVarEdit"), tr("HOSTVAR"), group);
    m_secretHostVarEdit->setToolTip(tr("The host variable whose value the gateway adds"));
    m_secretHostsEdit = new QLineEdit(group);
    m_secretHostsEdit->setObjectName(QStringLiteral("secretHostsEdit"));
    m_secretHostsEdit->setPlaceholderText(tr("api.example.com, *.example.org:8443"));
    m_secretHostsEdit->setToolTip(tr("Where the value is added: host, *.suffix or an IP address, "
                                     "each with an optional :port (default 80 and 443), "
                                     "comma-separated"));
    m_addSecretButton = new QPushButton(tr("Add"), group);
    m_addSecretButton->setObjectName(QStringLiteral("addSecretButton"));
    m_addSecretButton->setAutoDefault(false);
    m_removeSecretButton = new QPushButton(tr("Remove"), group);
    m_removeSecretButton->setObjectName(QStringLiteral("removeSecretButton"));
    m_removeSecretButton->setAutoDefault(false);
    m_secretError = errorLabel(QStringLiteral("secretError"), group);

    for (QLineEdit *edit : {m_secretNameEdit, m_secretHostVarEdit, m_secretHostsEdit}) {
        // Enter adds the binding instead of closing the dialog through its default button.
        edit->installEventFilter(this);
        connect(edit, &QLineEdit::textChanged, this, &SettingsDialog::updateSecretState);
    }
    connect(m_secretList, &QListWidget::itemSelectionChanged, this,
            &SettingsDialog::updateSecretState);
    connect(m_addSecretButton, &QPushButton::clicked, this, &SettingsDialog::addSecretFromFields);
    connect(m_removeSecretButton, &QPushButton::clicked, this, [this] {
        qDeleteAll(m_secretList->selectedItems());
        updateSecretState();
    });

    // In the order the list reads: NAME ← HOSTVAR for hosts.
    auto *row = new QHBoxLayout;
    row->addWidget(m_secretNameEdit, 2);
    row->addWidget(new QLabel(QStringLiteral("←"), group));
    row->addWidget(m_secretHostVarEdit, 2);
    row->addWidget(new QLabel(tr("for"), group));
    row->addWidget(m_secretHostsEdit, 3);
    row->addWidget(m_addSecretButton);
    row->addWidget(m_removeSecretButton);

    auto *layout = new QVBoxLayout(group);
    layout->addWidget(noteLabel(tr("The sandbox's variable holds a placeholder; the gateway adds "
                                   "the host variable's value in requests to these hosts only, "
                                   "which runs can then reach. Takes effect for servers started "
                                   "afterwards."),
                                group));
    layout->addWidget(m_secretList, 1);
    layout->addLayout(row);
    layout->addWidget(m_secretError);
    return group;
}

QWidget *SettingsDialog::createServerTab()
{
    auto *page = new QWidget;

    m_httpEnabledCheck = new QCheckBox(tr("Serve MCP over HTTP"), page);
    m_httpEnabledCheck->setObjectName(QStringLiteral("httpEnabledCheck"));
    m_httpEnabledCheck->setChecked(m_initial.httpEnabled);

    m_portSpin = new QSpinBox(page);
    m_portSpin->setObjectName(QStringLiteral("portSpin"));
    m_portSpin->setRange(AppSettings::kMinHttpPort, AppSettings::kMaxHttpPort);
    // A port is an identifier: "8,765" would read as a number.
    m_portSpin->setGroupSeparatorShown(false);
    m_portSpin->setMinimumWidth(120);
    m_portSpin->setValue(m_initial.httpPort);

    m_tokenEdit = new QLineEdit(m_initial.httpToken, page);
    m_tokenEdit->setObjectName(QStringLiteral("tokenEdit"));
    m_tokenEdit->setEchoMode(QLineEdit::Password);
    m_tokenEdit->setPlaceholderText(tr("stored token"));
    m_showTokenCheck = new QCheckBox(tr("Show"), page);
    m_showTokenCheck->setObjectName(QStringLiteral("showTokenCheck"));
    connect(m_showTokenCheck, &QCheckBox::toggled, this, [this](bool show) {
        m_tokenEdit->setEchoMode(show ? QLineEdit::Normal : QLineEdit::Password);
    });
    auto *tokenRow = new QHBoxLayout;
    tokenRow->addWidget(m_tokenEdit, 1);
    tokenRow->addWidget(m_showTokenCheck);

    auto *portRow = new QHBoxLayout;
    portRow->addWidget(m_portSpin);
    portRow->addStretch(1);

    auto *form = new QFormLayout;
    form->addRow(m_httpEnabledCheck);
    form->addRow(tr("Port:"), portRow);
    form->addRow(tr("Token:"), tokenRow);

    const auto updateEnabled = [this](bool on) {
        m_portSpin->setEnabled(on);
        m_tokenEdit->setEnabled(on);
        m_showTokenCheck->setEnabled(on);
    };
    connect(m_httpEnabledCheck, &QCheckBox::toggled, this, updateEnabled);
    updateEnabled(m_initial.httpEnabled);

    auto *layout = new QVBoxLayout(page);
    layout->addLayout(form);
    layout->addWidget(noteLabel(tr("Clients send the token as “Authorization: Bearer <token>”. "
                                   "It is kept in ~/.config/code-sandbox/http-token, readable "
                                   "only by you (code-sandbox --print-token shows it). Empty it "
                                   "to have a new one generated at the next start."),
                                page));
    layout->addStretch(1);
    return page;
}

QWidget *SettingsDialog::createHistoryTab()
{
    auto *page = new QWidget;

    m_retentionSpin = new QSpinBox(page);
    m_retentionSpin->setObjectName(QStringLiteral("retentionSpin"));
    m_retentionSpin->setRange(0, AppSettings::kMaxRetentionDays);
    m_retentionSpin->setSuffix(tr(" days"));
    m_retentionSpin->setSpecialValueText(tr("forever"));
    m_retentionSpin->setMinimumWidth(120);
    m_retentionSpin->setValue(m_initial.historyRetentionDays);

    m_keepRunningCheck =
        new QCheckBox(tr("Keep serving in the background when the window closes"), page);
    m_keepRunningCheck->setObjectName(QStringLiteral("keepRunningCheck"));
    m_keepRunningCheck->setChecked(m_initial.keepRunningInBackground);

    auto *form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::FieldsStayAtSizeHint);
    form->addRow(tr("Keep runs for:"), m_retentionSpin);

    auto *layout = new QVBoxLayout(page);
    layout->addLayout(form);
    layout->addWidget(noteLabel(tr("Runs older than this are removed from the history; 0 "
                                   "keeps them forever."),
                                page));
    layout->addSpacing(12);
    layout->addWidget(m_keepRunningCheck);
    layout->addStretch(1);
    return page;
}

AppSettings SettingsDialog::settings() const
{
    AppSettings s = m_initial;
    s.engines.clear();
    for (int i = 0; i < m_engineList->count(); ++i)
        s.engines.append(m_engineList->item(i)->text());
    // An address typed but not added is meant: OK is only enabled when it is a valid one.
    const QString pending = m_engineEdit->text().trimmed();
    if (!pending.isEmpty() && engineError(pending).isEmpty() && !s.engines.contains(pending))
        s.engines.append(pending);
    s.engineSocket = s.engines.value(0);

    s.images.clear();
    for (int row = 0; row < m_imagesTable->rowCount(); ++row) {
        const QString language = m_imagesTable->item(row, 0)->text();
        const QTableWidgetItem *image = m_imagesTable->item(row, 1);
        const QString value = image ? image->text().trimmed() : QString();
        if (!value.isEmpty())
            s.images.insert(language, value);
    }

    s.defaultTimeoutSec = m_timeoutSpin->value();
    s.memoryMiB = m_memorySpin->value();
    s.cpus = m_cpusSpin->value();
    s.pidsLimit = m_pidsSpin->value();

    s.passThroughEnv.clear();
    for (int i = 0; i < m_passThroughList->count(); ++i)
        s.passThroughEnv.append(m_passThroughList->item(i)->text());

    s.secrets.clear();
    for (int i = 0; i < m_secretList->count(); ++i)
        if (const auto secret = AppSettings::SecretBinding::parse(
                m_secretList->item(i)->data(Qt::UserRole).toString()))
            s.secrets.append(*secret);

    s.workspaces = m_workspacesEditor->workspaces();
    s.policies = m_policyEditor->policies();
    s.httpEnabled = m_httpEnabledCheck->isChecked();
    s.httpPort = quint16(m_portSpin->value());
    s.httpToken = m_tokenEdit->text().trimmed();
    s.historyRetentionDays = m_retentionSpin->value();
    s.keepRunningInBackground = m_keepRunningCheck->isChecked();
    return s;
}

bool SettingsDialog::addPassThroughName(const QString &name)
{
    const QString trimmed = name.trimmed();
    if (!AppSettings::isValidEnvName(trimmed) ||
        !m_passThroughList->findItems(trimmed, Qt::MatchExactly).isEmpty())
        return false;
    m_passThroughList->addItem(trimmed);
    m_passThroughList->scrollToBottom();
    updateEnvButtons();
    return true;
}

bool SettingsDialog::addSecret(const QString &name, const QString &hostVar, const QString &hosts)
{
    const std::optional<AppSettings::SecretBinding> secret =
        AppSettings::SecretBinding::make(name, hostVar, hosts.split(u','));
    if (!secret || secretListed(secret->name))
        return false;
    auto *item = new QListWidgetItem(secretText(*secret), m_secretList);
    item->setData(Qt::UserRole, secret->toString());
    m_secretList->scrollToBottom();
    updateSecretState();
    return true;
}

void SettingsDialog::addSecretFromFields()
{
    if (!addSecret(m_secretNameEdit->text(), m_secretHostVarEdit->text(),
                   m_secretHostsEdit->text()))
        return;
    m_secretNameEdit->clear();
    m_secretHostVarEdit->clear();
    m_secretHostsEdit->clear();
}

bool SettingsDialog::secretListed(const QString &name) const
{
    for (int i = 0; i < m_secretList->count(); ++i) {
        const auto listed =
            AppSettings::SecretBinding::parse(m_secretList->item(i)->data(Qt::UserRole).toString());
        if (listed && listed->name == name)
            return true;
    }
    return false;
}

bool SettingsDialog::addEngine(const QString &address)
{
    const QString trimmed = address.trimmed();
    if (trimmed.isEmpty() || !engineError(trimmed).isEmpty() ||
        !m_engineList->findItems(trimmed, Qt::MatchExactly).isEmpty())
        return false;
    m_engineList->addItem(trimmed);
    m_engineList->scrollToBottom();
    updateEngineState();
    return true;
}

bool SettingsDialog::eventFilter(QObject *watched, QEvent *event)
{
    const bool secretField = watched == m_secretNameEdit || watched == m_secretHostVarEdit ||
                             watched == m_secretHostsEdit;
    if ((watched == m_envNameEdit || watched == m_engineEdit || secretField) &&
        event->type() == QEvent::KeyPress) {
        const int key = static_cast<QKeyEvent *>(event)->key();
        if (key == Qt::Key_Return || key == Qt::Key_Enter) {
            if (secretField) {
                addSecretFromFields();
            } else if (watched == m_engineEdit) {
                if (addEngine(m_engineEdit->text()))
                    m_engineEdit->clear();
            } else if (addPassThroughName(m_envNameEdit->text())) {
                m_envNameEdit->clear();
            }
            return true;
        }
    }
    return QDialog::eventFilter(watched, event);
}

void SettingsDialog::browseForSocket()
{
    // Sockets are "system" entries to QDir, hidden by the default filter, and a platform dialog
    // may not offer them at all.
    QFileDialog dialog(this, tr("Choose the engine socket"));
    dialog.setOption(QFileDialog::DontUseNativeDialog);
    dialog.setFileMode(QFileDialog::ExistingFile);
    dialog.setFilter(QDir::AllEntries | QDir::System | QDir::Hidden | QDir::NoDotAndDotDot);
    const QString current = m_engineEdit->text().trimmed();
    const QString path = current.startsWith(u"unix://") ? current.mid(7) : current;
    QString start = QFileInfo(path).absolutePath();
    if (path.isEmpty() || !QFileInfo(start).isDir()) {
        // Where rootless Podman keeps its socket; Docker's is under /run (/var/run links there).
        start = qEnvironmentVariable("XDG_RUNTIME_DIR", QStringLiteral("/run"));
    }
    dialog.setDirectory(start);
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty())
        return;
    m_engineEdit->setText(dialog.selectedFiles().constFirst());
    m_engineEdit->setFocus();
}

void SettingsDialog::updateEngineState()
{
    const QString text = m_engineEdit->text().trimmed();
    const QString error = text.isEmpty() ? QString() : engineError(text);
    const bool listed = !m_engineList->findItems(text, Qt::MatchExactly).isEmpty();
    m_engineError->setText(error);
    m_engineError->setVisible(!error.isEmpty());
    m_addEngineButton->setEnabled(!text.isEmpty() && error.isEmpty() && !listed);
    const int row = m_engineList->currentRow();
    const bool selected = !m_engineList->selectedItems().isEmpty();
    m_removeEngineButton->setEnabled(selected);
    m_firstEngineButton->setEnabled(selected && row > 0);
    if (m_buttons)
        m_buttons->button(QDialogButtonBox::Ok)->setEnabled(error.isEmpty());
}

void SettingsDialog::updateEnvButtons()
{
    const QString name = m_envNameEdit->text().trimmed();
    m_addEnvButton->setEnabled(AppSettings::isValidEnvName(name) &&
                               m_passThroughList->findItems(name, Qt::MatchExactly).isEmpty());
    m_removeEnvButton->setEnabled(!m_passThroughList->selectedItems().isEmpty());
}

void SettingsDialog::updateSecretState()
{
    const QString name = m_secretNameEdit->text().trimmed();
    const QString hosts = m_secretHostsEdit->text();
    // Only what is wrong with a field already filled in: the names' validators keep out what
    // could not become one, so what is left to say is about the hosts and repeats.
    QString error;
    if (!name.isEmpty() && secretListed(name)) {
        error = tr("%1 is bound already; remove it first to bind it anew").arg(name);
    } else if (!hosts.trimmed().isEmpty()) {
        QStringList entries;
        for (const QString &host : hosts.split(u','))
            if (!host.trimmed().isEmpty())
                entries.append(host.trimmed());
        EgressList::parse(entries, &error);
    }
    m_secretError->setText(error);
    m_secretError->setVisible(!error.isEmpty());
    m_addSecretButton->setEnabled(
        error.isEmpty() &&
        AppSettings::SecretBinding::make(name, m_secretHostVarEdit->text(), hosts.split(u',')));
    m_removeSecretButton->setEnabled(!m_secretList->selectedItems().isEmpty());
}
