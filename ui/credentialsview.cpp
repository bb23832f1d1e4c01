#include "credentialsview.h"

#include <QApplication>
#include <QClipboard>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace {
enum Column
{
    AssistantColumn,
    IdColumn,
    MadeColumn,
    LastUsedColumn,
    ColumnCount
};

QString when(const QDateTime &time)
{
    return time.isValid() ? QLocale().toString(time.toLocalTime(), QLocale::ShortFormat)
                          : CredentialsView::tr("never");
}

QTableWidgetItem *cell(const QString &text)
{
    auto *item = new QTableWidgetItem(text);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    return item;
}
} // namespace

CredentialsView::CredentialsView(const QString &storePath, QWidget *parent)
    : QWidget(parent), m_store(storePath), m_table(new QTableWidget(0, ColumnCount, this)),
      m_revoke(new QPushButton(tr("Revoke"), this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *intro = new QLabel(
        tr("<b>Credentials</b> (HTTP): each assistant its own key. Its requests run as that "
           "assistant under its policy, whatever name its client gives, and a name a credential "
           "holds is no longer given to a client that merely claims it. <i>Connect an "
           "assistant</i> makes one for you."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);

    m_table->setObjectName(QStringLiteral("credentialTable"));
    m_table->setHorizontalHeaderLabels({tr("Assistant"), tr("Id"), tr("Made"), tr("Last used")});
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setSectionResizeMode(AssistantColumn, QHeaderView::Stretch);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    layout->addWidget(m_table, 1);

    auto *buttons = new QHBoxLayout;
    auto *add = new QPushButton(tr("New credential…"), this);
    add->setObjectName(QStringLiteral("newCredentialButton"));
    m_revoke->setObjectName(QStringLiteral("revokeCredentialButton"));
    m_revoke->setEnabled(false);
    buttons->addWidget(add);
    buttons->addWidget(m_revoke);
    buttons->addStretch();
    layout->addLayout(buttons);

    connect(add, &QPushButton::clicked, this, [this] {
        const QString name = QInputDialog::getText(
            this, tr("New credential"),
            tr("The assistant it is for (its policy in the table above goes by this name):"));
        if (!name.trimmed().isEmpty())
            create(name.trimmed());
    });
    connect(m_revoke, &QPushButton::clicked, this, [this] {
        const int row = m_table->currentRow();
        if (row < 1 || row > m_shown.size())
            return;
        const Credential &c = m_shown.at(row - 1);
        if (QMessageBox::question(this, tr("Revoke credential"),
                                  tr("Revoke %1 of %2? Its next request is refused; the "
                                     "assistant needs a new credential to connect again.")
                                      .arg(c.id, c.name.toHtmlEscaped())) == QMessageBox::Yes)
            revokeRow(row);
    });
    connect(m_table, &QTableWidget::currentCellChanged, this,
            [this](int row) { m_revoke->setEnabled(row > 0); });
    reload();
}

void CredentialsView::reload()
{
    m_shown = m_store.list();
    m_table->setRowCount(0);
    m_table->insertRow(0);
    m_table->setItem(0, AssistantColumn,
                     cell(tr("(shared token: runs as the name the client gives)")));
    m_table->setItem(0, IdColumn, cell(tr("shared")));
    m_table->setItem(0, MadeColumn, cell(tr("Settings → Server")));
    m_table->setItem(0, LastUsedColumn, cell(QString()));
    for (const Credential &c : std::as_const(m_shown)) {
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        QTableWidgetItem *name = cell(c.isGrant() ? tr("%1 (signed in)").arg(c.name) : c.name);
        if (c.isGrant())
            name->setToolTip(
                tr("Signed in (OAuth) as client %1; revoking it ends its tokens.").arg(c.clientId));
        m_table->setItem(row, AssistantColumn, name);
        m_table->setItem(row, IdColumn, cell(c.id));
        m_table->setItem(row, MadeColumn, cell(when(c.created)));
        m_table->setItem(row, LastUsedColumn, cell(when(c.lastUsed)));
    }
    m_table->resizeColumnsToContents();
    m_revoke->setEnabled(m_table->currentRow() > 0);
}

QString CredentialsView::create(const QString &name)
{
    QString error;
    const auto made = m_store.create(name, &error);
    if (!made) {
        QMessageBox::warning(this, tr("New credential"), error);
        return {};
    }
    reload();
    Q_EMIT changed();
    showSecret(made->credential, made->secret);
    return made->secret;
}

bool CredentialsView::revokeRow(int row)
{
    if (row < 1 || row > m_shown.size())
        return false;
    QString error;
    if (m_store.revoke(m_shown.at(row - 1).id, &error) == 0) {
        QMessageBox::warning(this, tr("Revoke credential"), error);
        reload();
        return false;
    }
    reload();
    Q_EMIT changed();
    return true;
}

void CredentialsView::showSecret(const Credential &credential, const QString &secret)
{
    // Not modal to the test that drives create(): shown, and left for a person to close.
    auto *dialog = new QDialog(this);
    dialog->setObjectName(QStringLiteral("credentialSecretDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(tr("Credential for %1").arg(credential.name));
    auto *layout = new QVBoxLayout(dialog);
    auto *label = new QLabel(tr("The credential %1 for <b>%2</b>. This is the only time it is "
                                "shown: put it in the assistant's configuration as "
                                "“Authorization: Bearer …”.")
                                 .arg(credential.id, credential.name.toHtmlEscaped()),
                             dialog);
    label->setWordWrap(true);
    layout->addWidget(label);
    auto *field = new QLineEdit(secret, dialog);
    field->setObjectName(QStringLiteral("credentialSecret"));
    field->setReadOnly(true);
    field->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    field->setMinimumWidth(field->fontMetrics().horizontalAdvance(secret) + 24);
    layout->addWidget(field);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, dialog);
    auto *copy = buttons->addButton(tr("Copy"), QDialogButtonBox::ActionRole);
    connect(copy, &QPushButton::clicked, dialog,
            [secret] { QApplication::clipboard()->setText(secret); });
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
    layout->addWidget(buttons);
    dialog->show();
}
