#include "policyeditor.h"

#include "egresslist.h"
#include "sandboxspec.h"
#include "workspace.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace {
const QString kOthers = QStringLiteral("(any other assistant)");

// A checkbox centred in its cell.
QWidget *checkCell(bool checked, const QString &name, QWidget *parent)
{
    auto *cell = new QWidget(parent);
    auto *layout = new QHBoxLayout(cell);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setAlignment(Qt::AlignCenter);
    auto *box = new QCheckBox(cell);
    box->setObjectName(name);
    box->setChecked(checked);
    layout->addWidget(box);
    return cell;
}

// A largest value, 0 meaning the server's own.
QSpinBox *limitCell(int value, int max, const QString &suffix, const QString &name, QWidget *parent)
{
    auto *spin = new QSpinBox(parent);
    spin->setObjectName(name);
    spin->setRange(0, max);
    spin->setSpecialValueText(PolicyEditor::tr("server's"));
    spin->setSuffix(suffix);
    spin->setValue(value);
    return spin;
}

bool cellChecked(const QTableWidget *table, int row, int column)
{
    const QWidget *cell = table->cellWidget(row, column);
    const QCheckBox *box = cell ? cell->findChild<QCheckBox *>() : nullptr;
    return box && box->isChecked();
}
// Says in the cell which entries are not host patterns (they are left out when saved).
void markHosts(QTableWidgetItem *item)
{
    QStringList rejected;
    EgressList::parseEach(item->text().split(u',', Qt::SkipEmptyParts), &rejected);
    const QString tip = PolicyEditor::tr("The only hosts its runs may reach (host, *.suffix or an "
                                         "IP address, each with an optional :port), "
                                         "comma-separated; within the server's --egress list. "
                                         "Empty: what the server allows.");
    item->setToolTip(rejected.isEmpty() ? tip
                                        : PolicyEditor::tr("Not host patterns, left out: %1\n\n%2")
                                              .arg(rejected.join(QStringLiteral(", ")), tip));
    item->setForeground(rejected.isEmpty() ? QBrush() : QBrush(Qt::red));
}
} // namespace

PolicyEditor::PolicyEditor(const AssistantPolicies &policies, const QStringList &languages,
                           QWidget *parent)
    : QWidget(parent), m_languages(languages), m_table(new QTableWidget(0, ColumnCount, this)),
      m_remove(new QPushButton(tr("Remove"), this)), m_approvalTimeout(new QSpinBox(this)),
      m_whenNoWindow(new QComboBox(this))
{
    auto *layout = new QVBoxLayout(this);
    auto *intro = new QLabel(
        tr("What each assistant may run. An assistant is known by its credential (below) when "
           "it has one, else by the name its MCP client gives (clientInfo), as the runs list "
           "shows it. <b>Ask</b> shows you each run first; <b>refuse</b> refuses them all. "
           "Limits only narrow what the server allows."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);

    m_table->setObjectName(QStringLiteral("policyTable"));
    m_table->setHorizontalHeaderLabels(
        {tr("Assistant"), tr("Runs"), tr("Languages (empty: all)"), tr("Network"),
         tr("Hosts (empty: the server's)"), tr("Other hosts"), tr("Libraries"), tr("Max timeout"),
         tr("Max memory"), tr("Isolation"), tr("Secrets (*: all)"), tr("Workspaces (*: all)"),
         tr("Keep sessions"), tr("Launcher (stdio)")});
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(LanguagesColumn, QHeaderView::Stretch);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    addRow(policies.fallback);
    for (const AssistantPolicy &p : policies.assistants)
        addRow(p);
    m_table->resizeColumnsToContents();
    layout->addWidget(m_table, 1);

    auto *buttons = new QHBoxLayout;
    auto *add = new QPushButton(tr("Add assistant…"), this);
    add->setObjectName(QStringLiteral("addPolicyButton"));
    m_remove->setObjectName(QStringLiteral("removePolicyButton"));
    m_remove->setEnabled(false);
    buttons->addWidget(add);
    buttons->addWidget(m_remove);
    buttons->addStretch();
    layout->addLayout(buttons);
    connect(add, &QPushButton::clicked, this, [this] {
        const QString name = QInputDialog::getText(
            this, tr("Add assistant"), tr("Its name as its MCP client gives it (clientInfo):"));
        addAssistant(name);
    });
    connect(m_remove, &QPushButton::clicked, this, [this] {
        const int row = m_table->currentRow();
        if (row > 0) // the first row is the default policy: it always exists
            m_table->removeRow(row);
    });
    connect(m_table, &QTableWidget::currentCellChanged, this,
            [this](int row) { m_remove->setEnabled(row > 0); });
    connect(m_table, &QTableWidget::itemChanged, this, [this](QTableWidgetItem *item) {
        if (item->column() == HostsColumn)
            markHosts(item);
        else if (item->column() == WorkspacesColumn)
            markWorkspaces(item);
    });

    auto *form = new QFormLayout;
    m_approvalTimeout->setObjectName(QStringLiteral("approvalTimeoutSpin"));
    m_approvalTimeout->setRange(AssistantPolicies::kMinApprovalTimeoutSec,
                                AssistantPolicies::kMaxApprovalTimeoutSec);
    m_approvalTimeout->setSuffix(tr(" s"));
    m_approvalTimeout->setValue(policies.approvalTimeoutSec);
    m_approvalTimeout->setToolTip(tr("A run nobody approves within this long is denied"));
    form->addRow(tr("Approval waits:"), m_approvalTimeout);
    m_whenNoWindow->setObjectName(QStringLiteral("whenNoWindowCombo"));
    m_whenNoWindow->addItem(tr("Refuse the run (nothing runs unseen)"), false);
    m_whenNoWindow->addItem(tr("Run it without asking"), true);
    m_whenNoWindow->setCurrentIndex(policies.runWhenNoWindow ? 1 : 0);
    m_whenNoWindow->setToolTip(tr("For \"ask\" on a server an assistant started while this "
                                  "window is not open"));
    form->addRow(tr("When no window is open:"), m_whenNoWindow);
    layout->addLayout(form);
}

void PolicyEditor::addRow(const AssistantPolicy &policy)
{
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    auto *client = new QTableWidgetItem(policy.isDefault() ? kOthers : policy.client);
    if (policy.isDefault()) {
        client->setFlags(client->flags() & ~Qt::ItemIsEditable);
        client->setToolTip(tr("Every assistant not listed below, and clients that give no name"));
    }
    m_table->setItem(row, ClientColumn, client);
    auto *action = new QComboBox(m_table);
    action->setObjectName(QStringLiteral("policyAction"));
    for (AssistantPolicy::Action a : {AssistantPolicy::Action::Run, AssistantPolicy::Action::Ask,
                                      AssistantPolicy::Action::Refuse})
        action->addItem(AssistantPolicy::actionName(a), int(a));
    action->setCurrentIndex(action->findData(int(policy.action)));
    m_table->setCellWidget(row, ActionColumn, action);
    auto *languages = new QTableWidgetItem(policy.languages.join(QStringLiteral(", ")));
    languages->setToolTip(tr("Comma-separated, from: %1").arg(m_languages.join(u", ")));
    m_table->setItem(row, LanguagesColumn, languages);
    m_table->setCellWidget(row, NetworkColumn,
                           checkCell(policy.network, QStringLiteral("policyNetwork"), m_table));
    auto *hosts = new QTableWidgetItem(policy.egress.join(QStringLiteral(", ")));
    markHosts(hosts);
    m_table->setItem(row, HostsColumn, hosts);
    auto *others = new QComboBox(m_table);
    others->setObjectName(QStringLiteral("policyOtherHosts"));
    others->addItem(tr("refuse"), int(AssistantPolicy::OtherHosts::Refuse));
    others->addItem(tr("ask"), int(AssistantPolicy::OtherHosts::Ask));
    others->setCurrentIndex(others->findData(int(policy.otherHosts)));
    others->setToolTip(tr("A connection of its runs to a host not on their list: refused at "
                          "once, or held while this window asks you (Allow once, Always for "
                          "this assistant, Deny). Runs with an allow-list only."));
    m_table->setCellWidget(row, OtherHostsColumn, others);
    m_table->setCellWidget(row, LibrariesColumn,
                           checkCell(policy.libraries, QStringLiteral("policyLibraries"), m_table));
    m_table->setCellWidget(row, TimeoutColumn,
                           limitCell(policy.maxTimeoutSec, AssistantPolicy::kMaxTimeoutSec,
                                     tr(" s"), QStringLiteral("policyTimeout"), m_table));
    m_table->setCellWidget(row, MemoryColumn,
                           limitCell(policy.maxMemoryMiB, AssistantPolicy::kMaxMemoryMiB,
                                     tr(" MiB"), QStringLiteral("policyMemory"), m_table));
    // Editable: a runtime of another name (kata, a RuntimeClass) is typed in.
    auto *isolation = new QComboBox(m_table);
    isolation->setObjectName(QStringLiteral("policyIsolation"));
    isolation->setEditable(true);
    isolation->addItem(QString::fromLatin1(AssistantPolicy::kIsolationContainer));
    isolation->addItem(QString::fromLatin1(SandboxSpec::kIsolationGvisor));
    isolation->setCurrentText(policy.isolation.isEmpty()
                                  ? QString::fromLatin1(AssistantPolicy::kIsolationContainer)
                                  : policy.isolation);
    isolation->setToolTip(tr("The runtime its runs and sessions must have: container (any), "
                             "gvisor (a kernel of its own between the program and the host's: "
                             "only engines with runsc, or a gVisor RuntimeClass), or a runtime's "
                             "name. With no engine that has it, its runs are refused."));
    m_table->setCellWidget(row, IsolationColumn, isolation);
    auto *secrets = new QTableWidgetItem(policy.secrets ? policy.secrets->join(QStringLiteral(", "))
                                                        : QStringLiteral("*"));
    secrets->setToolTip(tr("The server's bound secrets (--secret) its runs get, by name, "
                           "comma-separated: * all of them, empty none. Its runs hold only a "
                           "placeholder either way; the gateway adds the value for the "
                           "secret's hosts."));
    m_table->setItem(row, SecretsColumn, secrets);
    // As for secrets: "*" is no list (all the server's), empty is none.
    auto *workspaces = new QTableWidgetItem(
        policy.workspaces ? policy.workspaces->join(QStringLiteral(", ")) : QStringLiteral("*"));
    markWorkspaces(workspaces);
    m_table->setItem(row, WorkspacesColumn, workspaces);
    QWidget *keep = checkCell(policy.keepSessions, QStringLiteral("policyKeepSessions"), m_table);
    keep->setToolTip(tr("Its sessions are kept: when the server stops, each is saved after its "
                        "last call, and the first call with its id afterwards brings it back "
                        "(unless create_session says keep: false)."));
    m_table->setCellWidget(row, KeepSessionsColumn, keep);
    m_table->setItem(row, LauncherColumn, launcherItem(policy));
}

QTableWidgetItem *PolicyEditor::launcherItem(const AssistantPolicy &policy) const
{
    auto *launcher = new QTableWidgetItem(policy.launcher);
    if (policy.isDefault()) {
        launcher->setFlags(launcher->flags() & ~Qt::ItemIsEditable);
        return launcher;
    }
    launcher->setToolTip(tr("A stdio instance gets this policy only when this program started "
                            "it (its full path, e.g. /usr/bin/claude; the run's details show "
                            "each instance's launcher); else it runs under the default policy "
                            "and its runs say why. Empty: whoever started it."));
    return launcher;
}

// The cell's tooltip names the workspaces to choose from, and what is not a name (left out when
// saved, as the settings file is read) turns it red.
void PolicyEditor::markWorkspaces(QTableWidgetItem *item) const
{
    QStringList invalid;
    if (item->text().trimmed() != u"*") {
        for (const QString &part : item->text().split(u',')) {
            const QString name = part.trimmed();
            if (!name.isEmpty() && !Workspace::isValidName(name))
                invalid.append(name);
        }
    }
    QString tip = tr("The server's workspaces its runs may ask for, by name, comma-separated: * "
                     "all of them, empty none.");
    tip +=
        u' ' + (m_workspaceNames.isEmpty() ? tr("Settings → Workspaces lists none.")
                                           : tr("Settings → Workspaces lists: %1.")
                                                 .arg(m_workspaceNames.join(QStringLiteral(", "))));
    // As HTML, escaped: what was typed may look like a tag.
    tip = QStringLiteral("<p>%1</p>").arg(tip.toHtmlEscaped());
    if (!invalid.isEmpty())
        tip = tr("<p>Not workspace names, left out: %1</p>%2")
                  .arg(invalid.join(QStringLiteral(", ")).toHtmlEscaped(), tip);
    item->setToolTip(tip);
    item->setForeground(invalid.isEmpty() ? QBrush() : QBrush(Qt::red));
}

void PolicyEditor::setWorkspaceNames(const QStringList &names)
{
    m_workspaceNames = names;
    for (int row = 0; row < m_table->rowCount(); ++row)
        if (QTableWidgetItem *item = m_table->item(row, WorkspacesColumn))
            markWorkspaces(item);
}

bool PolicyEditor::addAssistant(const QString &client)
{
    const QString name = client.trimmed();
    if (name.isEmpty() || name == kOthers)
        return false;
    for (int row = 1; row < m_table->rowCount(); ++row) {
        const QTableWidgetItem *item = m_table->item(row, ClientColumn);
        if (item && item->text().trimmed().compare(name, Qt::CaseInsensitive) == 0)
            return false;
    }
    AssistantPolicy policy = rowPolicy(0);
    policy.client = name;
    addRow(policy);
    m_table->setCurrentCell(m_table->rowCount() - 1, ActionColumn);
    return true;
}

AssistantPolicy PolicyEditor::rowPolicy(int row) const
{
    AssistantPolicy p;
    if (row > 0) {
        const QTableWidgetItem *item = m_table->item(row, ClientColumn);
        p.client = item ? item->text().trimmed() : QString();
    }
    if (const auto *action = qobject_cast<QComboBox *>(m_table->cellWidget(row, ActionColumn)))
        p.action = AssistantPolicy::Action(action->currentData().toInt());
    const QTableWidgetItem *languages = m_table->item(row, LanguagesColumn);
    for (const QString &l : (languages ? languages->text() : QString()).split(u',')) {
        const QString name = l.trimmed().toLower();
        if (!name.isEmpty() && !p.languages.contains(name))
            p.languages.append(name);
    }
    p.network = cellChecked(m_table, row, NetworkColumn);
    // As the settings file is read: entries that are not patterns are left out, and a list left
    // with none means no network (the cell shows what was left out as it is edited).
    const QTableWidgetItem *hosts = m_table->item(row, HostsColumn);
    const QStringList entries = (hosts ? hosts->text() : QString()).split(u',', Qt::SkipEmptyParts);
    QStringList rejected;
    p.egress = EgressList::parseEach(entries, &rejected);
    if (!rejected.isEmpty() && p.egress.isEmpty())
        p.network = false;
    if (const auto *o = qobject_cast<QComboBox *>(m_table->cellWidget(row, OtherHostsColumn)))
        p.otherHosts = AssistantPolicy::OtherHosts(o->currentData().toInt());
    p.libraries = cellChecked(m_table, row, LibrariesColumn);
    p.keepSessions = cellChecked(m_table, row, KeepSessionsColumn);
    if (const QTableWidgetItem *launcher = m_table->item(row, LauncherColumn); launcher && row > 0)
        p.launcher = launcher->text().trimmed();
    if (const auto *t = qobject_cast<QSpinBox *>(m_table->cellWidget(row, TimeoutColumn)))
        p.maxTimeoutSec = t->value();
    if (const auto *m = qobject_cast<QSpinBox *>(m_table->cellWidget(row, MemoryColumn)))
        p.maxMemoryMiB = m->value();
    if (const auto *i = qobject_cast<QComboBox *>(m_table->cellWidget(row, IsolationColumn))) {
        p.isolation = i->currentText().trimmed();
        if (p.isolation.compare(QLatin1String(AssistantPolicy::kIsolationContainer),
                                Qt::CaseInsensitive) == 0)
            p.isolation.clear();
    }
    const QTableWidgetItem *secrets = m_table->item(row, SecretsColumn);
    const QString secretsText = secrets ? secrets->text().trimmed() : QStringLiteral("*");
    if (secretsText != u"*") {
        QStringList names;
        for (const QString &n : secretsText.split(u',', Qt::SkipEmptyParts))
            if (!n.trimmed().isEmpty() && !names.contains(n.trimmed()))
                names.append(n.trimmed());
        p.secrets = names;
    }
    const QTableWidgetItem *workspaces = m_table->item(row, WorkspacesColumn);
    const QString workspacesText = workspaces ? workspaces->text().trimmed() : QStringLiteral("*");
    if (workspacesText != u"*") {
        QStringList names;
        for (const QString &n : workspacesText.split(u',', Qt::SkipEmptyParts))
            if (Workspace::isValidName(n.trimmed()) && !names.contains(n.trimmed()))
                names.append(n.trimmed());
        p.workspaces = names;
    }
    return p;
}

AssistantPolicies PolicyEditor::policies() const
{
    AssistantPolicies set;
    set.fallback = rowPolicy(0);
    for (int row = 1; row < m_table->rowCount(); ++row) {
        const AssistantPolicy p = rowPolicy(row);
        if (p.client.isEmpty() || &set.forClient(p.client) != &set.fallback)
            continue;
        set.assistants.append(p);
    }
    set.approvalTimeoutSec = m_approvalTimeout->value();
    set.runWhenNoWindow = m_whenNoWindow->currentData().toBool();
    return set;
}
