#include "approvaldialog.h"

#include "codehighlighter.h"

#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStyle>
#include <QVBoxLayout>

ApprovalDialog::ApprovalDialog(const ApprovalRequest &request, QWidget *parent)
    : QDialog(parent), m_request(request), m_code(new QPlainTextEdit(this)),
      m_reason(new QLineEdit(this)), m_countdown(new QLabel(this)),
      m_allowOnce(new QPushButton(QStringLiteral("Allow &once"), this)),
      m_allowAlways(new QPushButton(QStringLiteral("&Always allow this assistant"), this)),
      m_deny(new QPushButton(QStringLiteral("&Deny"), this))
{
    setObjectName(QStringLiteral("approvalDialog"));
    setWindowTitle(QStringLiteral("Approve a run? — Code Sandbox"));
    setAttribute(Qt::WA_DeleteOnClose);
    const QString client =
        request.client.isEmpty() ? QStringLiteral("An assistant") : request.client.toHtmlEscaped();

    auto *layout = new QVBoxLayout(this);
    auto *head = new QLabel(
        QStringLiteral("<b>%1</b> wants to run <b>%2</b> code.<br><small>%3, tool %4</small>")
            .arg(client, languageTitle(request.language).toHtmlEscaped(),
                 askerText(request).toHtmlEscaped(), request.tool.toHtmlEscaped()),
        this);
    head->setObjectName(QStringLiteral("approvalHeading"));
    head->setTextFormat(Qt::RichText);
    head->setWordWrap(true);
    layout->addWidget(head);

    m_code->setObjectName(QStringLiteral("approvalCode"));
    m_code->setReadOnly(true);
    m_code->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_code->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_code->setPlainText(request.code);
    auto *highlighter = new CodeHighlighter(m_code->document());
    highlighter->setLanguage(request.language);
    m_code->setMinimumSize(560, 220);
    layout->addWidget(m_code, 1);

    auto *form = new QFormLayout;
    const QLocale locale;
    QString limits =
        QStringLiteral("timeout %1 s, memory %2, %3 CPU, %4")
            .arg(request.timeoutSec)
            .arg(locale.formattedDataSize(request.memoryBytes, 0, QLocale::DataSizeIecFormat))
            .arg(request.cpus)
            .arg(request.network ? QStringLiteral("network ON") : QStringLiteral("no network"));
    form->addRow(QStringLiteral("Limits:"), new QLabel(limits, this));
    if (!request.sessionId.isEmpty())
        form->addRow(QStringLiteral("Session:"), new QLabel(request.sessionId, this));
    if (!request.libraries.isEmpty()) {
        auto *libs = new QLabel(request.libraries.join(QStringLiteral(", ")), this);
        libs->setObjectName(QStringLiteral("approvalLibraries"));
        libs->setWordWrap(true);
        form->addRow(QStringLiteral("Installs:"), libs);
    }
    if (!request.files.isEmpty()) {
        QStringList files;
        for (const auto &[path, size] : request.files)
            files.append(QStringLiteral("%1 (%2)").arg(
                path, locale.formattedDataSize(size, 1, QLocale::DataSizeIecFormat)));
        auto *list = new QLabel(files.join(QStringLiteral(", ")), this);
        list->setObjectName(QStringLiteral("approvalFiles"));
        list->setWordWrap(true);
        form->addRow(QStringLiteral("Files:"), list);
    }
    m_reason->setObjectName(QStringLiteral("denyReason"));
    m_reason->setPlaceholderText(QStringLiteral("Optional: why not (the assistant reads it)"));
    m_reason->setMaxLength(2000);
    form->addRow(QStringLiteral("Reason to deny:"), m_reason);
    layout->addLayout(form);

    m_countdown->setObjectName(QStringLiteral("approvalCountdown"));
    layout->addWidget(m_countdown);

    // Not a QDialogButtonBox: it makes its first accepting button the default when shown, and
    // Enter in the reason field must not approve by accident.
    auto *buttons = new QHBoxLayout;
    m_allowOnce->setObjectName(QStringLiteral("allowOnceButton"));
    m_allowAlways->setObjectName(QStringLiteral("allowAlwaysButton"));
    m_deny->setObjectName(QStringLiteral("denyButton"));
    m_allowAlways->setToolTip(
        QStringLiteral("Runs of %1 go ahead without asking from now on (its limits stay); "
                       "change it in Settings → Assistants")
            .arg(request.client.isEmpty() ? QStringLiteral("assistants without a name")
                                          : request.client));
    for (QPushButton *b : {m_allowOnce, m_allowAlways, m_deny}) {
        b->setAutoDefault(false);
        b->setDefault(false);
    }
    m_deny->setIcon(style()->standardIcon(QStyle::SP_DialogCancelButton));
    m_allowOnce->setIcon(style()->standardIcon(QStyle::SP_DialogApplyButton));
    buttons->addWidget(m_deny);
    buttons->addStretch();
    buttons->addWidget(m_allowAlways);
    buttons->addWidget(m_allowOnce);
    layout->addLayout(buttons);
    connect(m_allowOnce, &QPushButton::clicked, this,
            [this] { answer(RunApprover::Answer::AllowOnce); });
    connect(m_allowAlways, &QPushButton::clicked, this,
            [this] { answer(RunApprover::Answer::AllowAlways); });
    connect(m_deny, &QPushButton::clicked, this, [this] { answer(RunApprover::Answer::Deny); });

    m_shown.start();
    m_tick.setInterval(1000);
    connect(&m_tick, &QTimer::timeout, this, &ApprovalDialog::updateCountdown);
    m_tick.start();
    updateCountdown();
}

QString ApprovalDialog::languageTitle(const QString &language)
{
    static const QHash<QString, QString> titles{
        {QStringLiteral("python"), QStringLiteral("Python")},
        {QStringLiteral("javascript"), QStringLiteral("JavaScript")},
        {QStringLiteral("typescript"), QStringLiteral("TypeScript")},
        {QStringLiteral("bash"), QStringLiteral("Bash")},
        {QStringLiteral("ruby"), QStringLiteral("Ruby")},
        {QStringLiteral("go"), QStringLiteral("Go")},
        {QStringLiteral("rust"), QStringLiteral("Rust")},
        {QStringLiteral("java"), QStringLiteral("Java")},
        {QStringLiteral("cpp"), QStringLiteral("C++")},
        {QStringLiteral("c"), QStringLiteral("C")},
        {QStringLiteral("r"), QStringLiteral("R")}};
    return titles.value(language, language);
}

QString ApprovalDialog::askerText(const ApprovalRequest &request)
{
    if (request.mode == u"window")
        return QStringLiteral("through this window's HTTP endpoint");
    if (request.mode == u"http")
        return QStringLiteral("through a code-sandbox --http server");
    return QStringLiteral("through a code-sandbox --stdio server it started");
}

void ApprovalDialog::updateCountdown()
{
    const qint64 left = qMax<qint64>(0, m_request.waitSec - m_shown.elapsed() / 1000);
    m_countdown->setText(
        QStringLiteral("The assistant is waiting. Without an answer the run is denied in %1:%2.")
            .arg(left / 60)
            .arg(left % 60, 2, 10, QLatin1Char('0')));
}

void ApprovalDialog::answer(RunApprover::Answer answer)
{
    if (m_done)
        return;
    m_done = true;
    m_tick.stop();
    Q_EMIT answered(m_request.id, answer,
                    answer == RunApprover::Answer::Deny ? m_reason->text().trimmed() : QString());
    if (answer == RunApprover::Answer::Deny)
        QDialog::reject();
    else
        accept();
}

void ApprovalDialog::reject()
{
    // Escape or the window's close button: a run nobody allowed does not run.
    answer(RunApprover::Answer::Deny);
}

void ApprovalDialog::withdraw()
{
    m_done = true;
    m_tick.stop();
    QDialog::reject();
}
