#include "consentdialog.h"

#include "credentialstore.h"
#include "plaintext.h"

#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

ConsentDialog::ConsentDialog(const ConsentRequest &request, const QStringList &policyNames,
                             const QStringList &heldNames, QWidget *parent)
    : QDialog(parent), m_request(request), m_policyNames(policyNames),
      m_assistant(new QComboBox(this)), m_makePolicy(new QCheckBox(this))
{
    setObjectName(QStringLiteral("consentDialog"));
    setWindowTitle(tr("An assistant wants to sign in"));
    setAttribute(Qt::WA_DeleteOnClose);
    const QString name =
        request.clientName.isEmpty() ? tr("An unnamed client") : request.clientName;
    // What the client chose is shown as plain text: its name could look like markup.
    auto *headline = PlainText::label(tr("“%1” (as named by %2) wants to run code here.")
                                          .arg(PlainText::shortName(name, 120), request.source));
    headline->setObjectName(QStringLiteral("consentHeadline"));
    QFont bold = headline->font();
    bold.setBold(true);
    bold.setPointSizeF(bold.pointSizeF() * 1.15);
    headline->setFont(bold);
    headline->setWordWrap(true);

    auto *form = new QFormLayout;
    form->addRow(tr("Sign-in:"), PlainText::label(request.id));
    form->addRow(tr("Client:"), PlainText::label(request.clientId));
    form->addRow(tr("Returns to:"), PlainText::label(request.redirectUri));
    if (!request.openedFrom.isEmpty())
        form->addRow(tr("Opened by:"), openedFromLabel(request.openedFrom));
    m_assistant->setObjectName(QStringLiteral("consentAssistant"));
    m_assistant->setEditable(true);
    // The name it gave itself is offered only when no assistant has it yet: a client calling
    // itself "Claude Code" must not be one click away from Claude Code's policy.
    bool taken = false;
    for (const QString &n : policyNames + heldNames)
        taken = taken || n.compare(request.clientName, Qt::CaseInsensitive) == 0;
    const QString suggested =
        !taken && CredentialStore::checkName(request.clientName).isEmpty()
            ? request.clientName
            : QStringLiteral("OAuth client %1").arg(request.clientId.right(8));
    m_assistant->addItem(suggested);
    for (const QString &p : policyNames)
        if (p.compare(suggested, Qt::CaseInsensitive) != 0)
            m_assistant->addItem(p);
    m_assistant->setToolTip(tr("The assistant it signs in as: its runs go by that assistant's "
                               "policy (Settings → Assistants), whatever name it gives itself."));
    form->addRow(tr("Runs as:"), m_assistant);
    m_makePolicy->setObjectName(QStringLiteral("consentMakePolicy"));
    form->addRow(QString(), m_makePolicy);
    connect(m_assistant, &QComboBox::currentTextChanged, this, &ConsentDialog::updatePolicyBox);
    updatePolicyBox();

    auto *note = new QLabel(tr("Allow makes it a credential of its own (Settings → Assistants "
                               "lists it and revokes it). Its sign-in page goes on by itself."),
                            this);
    note->setWordWrap(true);

    // Allow is an action, not the box's accept button: a button box makes its first accept button
    // the default when shown, and Enter would then let an assistant in.
    auto *buttons = new QDialogButtonBox(this);
    QPushButton *allow = buttons->addButton(tr("&Allow"), QDialogButtonBox::ActionRole);
    allow->setObjectName(QStringLiteral("consentAllow"));
    QPushButton *deny = buttons->addButton(tr("&Deny"), QDialogButtonBox::RejectRole);
    deny->setObjectName(QStringLiteral("consentDeny"));
    for (QPushButton *b : {allow, deny}) {
        b->setAutoDefault(false);
        b->setDefault(false);
    }
    connect(allow, &QPushButton::clicked, this, [this] { answer(true); });
    connect(deny, &QPushButton::clicked, this, [this] { answer(false); });

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(headline);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(buttons);
    setMinimumWidth(520);
}

QLabel *ConsentDialog::openedFromLabel(const QString &openedFrom)
{
    // Any web page can send the browser to a sign-in, naming a client whose metadata document is
    // public: one that a page opened is not necessarily the app it names.
    auto *label = PlainText::label(tr("%1, not an app on this computer. Allow it only if you "
                                      "started this sign-in there.")
                                       .arg(openedFrom));
    label->setObjectName(QStringLiteral("consentOpenedFrom"));
    label->setWordWrap(true);
    QFont bold = label->font();
    bold.setBold(true);
    label->setFont(bold);
    return label;
}

QString ConsentDialog::assistant() const
{
    return m_assistant->currentText().trimmed();
}

bool ConsentDialog::wantsPolicy() const
{
    return m_makePolicy->isEnabled() && m_makePolicy->isChecked();
}

void ConsentDialog::updatePolicyBox()
{
    bool listed = false;
    for (const QString &p : std::as_const(m_policyNames))
        listed = listed || p.compare(assistant(), Qt::CaseInsensitive) == 0;
    m_makePolicy->setEnabled(!listed && !assistant().isEmpty());
    m_makePolicy->setChecked(!listed);
    m_makePolicy->setText(listed ? tr("It runs under this assistant's policy.")
                                 : tr("Give it a policy of its own, copied from the default "
                                      "(change it in Settings → Assistants)"));
}

void ConsentDialog::answer(bool allow)
{
    if (m_done)
        return;
    if (allow && !CredentialStore::checkName(assistant()).isEmpty()) {
        m_assistant->setFocus();
        m_assistant->lineEdit()->selectAll();
        return;
    }
    m_done = true;
    Q_EMIT answered(m_request.id, allow, assistant(), allow && wantsPolicy());
    close();
}

void ConsentDialog::reject()
{
    // Escape before any answer is a refusal; once answered (closing calls this too) it hides.
    if (!m_done)
        answer(false);
    else
        QDialog::reject();
}

void ConsentDialog::withdraw()
{
    m_done = true;
    close();
}

void ConsentDialog::closeEvent(QCloseEvent *event)
{
    // Closing is a refusal, never an approval.
    if (!m_done) {
        m_done = true;
        Q_EMIT answered(m_request.id, false, QString(), false);
    }
    QDialog::closeEvent(event);
}
