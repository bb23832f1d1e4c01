#include "approvaldialog.h"

#include "codehighlighter.h"
#include "plaintext.h"

#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QStyle>
#include <QTextOption>
#include <QVBoxLayout>

ApprovalDialog::ApprovalDialog(const ApprovalRequest &request, QWidget *parent)
    : QDialog(parent), m_request(request), m_code(new QPlainTextEdit(this)),
      m_reason(new QLineEdit(this)), m_countdown(new QLabel(this)),
      m_allowOnce(new QPushButton(QStringLiteral("Allow &once"), this)),
      m_allowAlways(new QPushButton(QStringLiteral("&Always allow this assistant"), this)),
      m_deny(new QPushButton(QStringLiteral("&Deny"), this))
{
    setObjectName(QStringLiteral("approvalDialog"));
    setWindowTitle(request.isConnection() ? QStringLiteral("Allow a connection? — Code Sandbox")
                                          : QStringLiteral("Approve a run? — Code Sandbox"));
    if (request.isConnection())
        m_allowAlways->setText(QStringLiteral("&Always for this assistant"));
    setAttribute(Qt::WA_DeleteOnClose);
    auto *layout = new QVBoxLayout(this);
    addHeading(layout);
    addProgram(layout);
    addDetails(layout);
    m_countdown->setObjectName(QStringLiteral("approvalCountdown"));
    m_countdown->setTextFormat(Qt::PlainText);
    layout->addWidget(m_countdown);
    addButtons(layout);

    m_shown.start();
    m_tick.setInterval(1000);
    connect(&m_tick, &QTimer::timeout, this, &ApprovalDialog::updateCountdown);
    m_tick.start();
    updateCountdown();
}

void ApprovalDialog::addHeading(QVBoxLayout *layout)
{
    // The one rich-text label: every piece of the request in it is escaped.
    const QString client = hasName(m_request)
                               ? PlainText::shortName(m_request.client).toHtmlEscaped()
                               : QStringLiteral("An assistant that gave no name");
    // What is asked for: a program to run, or (create_session) libraries to install with network.
    // What is asked for: a program to run, or (create_session) libraries to install with network,
    // or a held connection of a running program (the host whole; the program below reaches it).
    const QString what =
        m_request.isConnection()
            ? QStringLiteral("wants to reach <b>%5</b> from its running <b>%2</b> program, which "
                             "may not reach it without your say")
        : installsOnly(m_request) ? QStringLiteral("wants to start a <b>%2</b> session and install "
                                                   "libraries into it from the network")
                                  : QStringLiteral("wants to run <b>%2</b> code");
    // One arg() call for all: a value's own "%1" is not taken for a place to fill.
    auto *head = new QLabel(
        QStringLiteral("<b>%1</b> %6.<br><small>%3, tool %4</small>")
            .replace(QStringLiteral("%6"), what)
            .arg(client, PlainText::shortName(languageTitle(m_request.language)).toHtmlEscaped(),
                 askerText(m_request).toHtmlEscaped(),
                 PlainText::shortName(m_request.tool).toHtmlEscaped(),
                 PlainText::visible(m_request.hostPort()).toHtmlEscaped()),
        this);
    head->setObjectName(QStringLiteral("approvalHeading"));
    head->setTextFormat(Qt::RichText);
    head->setWordWrap(true);
    layout->addWidget(head);
}

void ApprovalDialog::addProgram(QVBoxLayout *layout)
{
    m_code->setObjectName(QStringLiteral("approvalCode"));
    if (installsOnly(m_request)) {
        // No program to show: what runs is the package manager, in a container with network,
        // for the libraries listed below. Saying "0 lines" here would suggest nothing happens.
        QLabel *about = PlainText::label(
            QStringLiteral("No program: the libraries below are installed in a container that "
                           "has network, before the session starts. Its runs are asked about one "
                           "by one."),
            this);
        about->setObjectName(QStringLiteral("approvalProgramInfo"));
        about->setWordWrap(true);
        layout->addWidget(about);
        m_code->hide();
        return;
    }
    // The whole program, as it will run: nothing is cut (docs/security.md, "What the approval
    // shows"), and what would not show on screen is written out.
    int marked = 0;
    const QString shown = PlainText::visible(m_request.code, PlainText::Lines::Keep, &marked);
    const qsizetype lines = m_request.code.count(u'\n') + (m_request.code.endsWith(u'\n') ? 0 : 1);
    QString info = QStringLiteral("The whole program, exactly as it runs: %1 line%2, %3.")
                       .arg(lines)
                       .arg(lines == 1 ? QString() : QStringLiteral("s"))
                       .arg(QLocale().formattedDataSize(m_request.code.toUtf8().size(), 1,
                                                        QLocale::DataSizeIecFormat));
    if (marked > 0)
        info += QStringLiteral(" %1 character%2 that would not show (controls, direction "
                               "overrides, invisible spaces) are written as ⟨U+…⟩.")
                    .arg(marked)
                    .arg(marked == 1 ? QString() : QStringLiteral("s"));
    QLabel *about = PlainText::label(info, this);
    about->setObjectName(QStringLiteral("approvalProgramInfo"));
    about->setWordWrap(true);
    layout->addWidget(about);

    m_code->setReadOnly(true);
    m_code->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    // Wrapped: code far to the right of a long line must not sit out of sight.
    m_code->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    m_code->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
    m_code->setPlainText(shown);
    // Colours are a help, not the content: a program of megabytes is shown without them rather
    // than keep the dialog busy for seconds.
    if (shown.size() <= kMaxHighlightedChars) {
        auto *highlighter = new CodeHighlighter(m_code->document());
        highlighter->setLanguage(m_request.language);
    }
    m_code->setMinimumSize(560, 220);
    layout->addWidget(m_code, 1);
}

void ApprovalDialog::addDetails(QVBoxLayout *layout)
{
    auto *form = new QFormLayout;
    const QLocale locale;
    const QString limits =
        QStringLiteral("timeout %1 s, memory %2, %3 CPU, %4")
            .arg(m_request.timeoutSec)
            .arg(locale.formattedDataSize(m_request.memoryBytes, 0, QLocale::DataSizeIecFormat))
            .arg(m_request.cpus)
            .arg(!m_request.network           ? QStringLiteral("no network")
                 : m_request.egress.isEmpty() ? QStringLiteral("network ON")
                                              : QStringLiteral("network to listed hosts only"));
    form->addRow(QStringLiteral("Limits:"), PlainText::label(limits, this));
    if (!m_request.sessionId.isEmpty())
        form->addRow(QStringLiteral("Session:"),
                     PlainText::label(PlainText::visible(m_request.sessionId), this));
    // Names from the call (libraries, hosts), each as it is, in plain text.
    const auto names = [this, form](const QStringList &list, const QString &objectName,
                                    const QString &label) {
        QStringList shown;
        for (const QString &name : list)
            shown.append(PlainText::visible(name));
        QLabel *value = PlainText::label(shown.join(QStringLiteral(", ")), this);
        value->setObjectName(objectName);
        value->setWordWrap(true);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        form->addRow(label, value);
    };
    if (!m_request.workspaces.isEmpty())
        names(m_request.workspaces, QStringLiteral("approvalWorkspaces"),
              QStringLiteral("Sees the folders:"));
    if (!m_request.libraries.isEmpty())
        names(m_request.libraries, QStringLiteral("approvalLibraries"),
              QStringLiteral("Installs (from the network):"));
    if (m_request.network && !m_request.egress.isEmpty())
        names(m_request.egress, QStringLiteral("approvalEgress"),
              m_request.isConnection() ? QStringLiteral("Its list:")
                                       : QStringLiteral("May reach:"));
    if (!m_request.files.isEmpty()) {
        // One per line, each name as it is: a name cannot pass for a separator or hide the next.
        QStringList files;
        for (const auto &[path, size] : m_request.files)
            files.append(QStringLiteral("%1 (%2)").arg(
                PlainText::visible(path),
                locale.formattedDataSize(size, 1, QLocale::DataSizeIecFormat)));
        auto *list = new QPlainTextEdit(this);
        list->setObjectName(QStringLiteral("approvalFiles"));
        list->setReadOnly(true);
        list->setLineWrapMode(QPlainTextEdit::WidgetWidth);
        list->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
        list->setPlainText(files.join(u'\n'));
        const int rows = int(qMin<qsizetype>(files.size(), 6));
        list->setFixedHeight(list->fontMetrics().lineSpacing() * rows +
                             2 * (list->frameWidth() + int(list->document()->documentMargin())));
        form->addRow(QStringLiteral("Files (%1):").arg(files.size()), list);
    }
    m_reason->setObjectName(QStringLiteral("denyReason"));
    m_reason->setPlaceholderText(QStringLiteral("Optional: why not (the assistant reads it)"));
    m_reason->setMaxLength(2000);
    // A refused connection reaches the program as the proxy's refusal, with no words of ours.
    if (m_request.isConnection())
        m_reason->hide();
    else
        form->addRow(QStringLiteral("Reason to deny:"), m_reason);
    layout->addLayout(form);
}

void ApprovalDialog::addButtons(QVBoxLayout *layout)
{
    // Not a QDialogButtonBox: it makes its first accepting button the default when shown, and
    // Enter in the reason field must not approve by accident.
    auto *buttons = new QHBoxLayout;
    m_allowOnce->setObjectName(QStringLiteral("allowOnceButton"));
    m_allowAlways->setObjectName(QStringLiteral("allowAlwaysButton"));
    m_deny->setObjectName(QStringLiteral("denyButton"));
    if (hasName(m_request) && m_request.isConnection()) {
        m_allowAlways->setToolTip(PlainText::toolTip(
            QStringLiteral("%1 joins the hosts that runs of %2 may reach (this one from now on "
                           "too); change it in Settings → Assistants")
                .arg(PlainText::shortName(m_request.hostPattern()),
                     PlainText::shortName(m_request.client))));
        m_allowOnce->setToolTip(
            PlainText::toolTip(QStringLiteral("This connection only: the next one asks again")));
    } else if (hasName(m_request)) {
        m_allowAlways->setToolTip(PlainText::toolTip(
            QStringLiteral("Runs of %1 go ahead without asking from now on (its limits stay); "
                           "change it in Settings → Assistants")
                .arg(PlainText::shortName(m_request.client))));
    } else {
        // Its rule would be the default one, and every assistant without a policy of its own
        // would run unasked.
        m_allowAlways->setEnabled(false);
        m_allowAlways->setToolTip(PlainText::toolTip(
            QStringLiteral("This assistant gave no name, so a rule for it would be the default "
                           "for every assistant without a policy of its own. Allow this run once, "
                           "or change the default in Settings → Assistants.")));
    }
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
    connect(m_allowAlways, &QPushButton::clicked, this, [this] {
        if (hasName(m_request))
            answer(RunApprover::Answer::AllowAlways);
    });
    connect(m_deny, &QPushButton::clicked, this, [this] { answer(RunApprover::Answer::Deny); });
}

bool ApprovalDialog::hasName(const ApprovalRequest &request)
{
    return !request.client.trimmed().isEmpty();
}

bool ApprovalDialog::installsOnly(const ApprovalRequest &request)
{
    return request.code.isEmpty() && !request.libraries.isEmpty();
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
    const QString who = request.identity.isEmpty()
                            ? QString()
                            : QStringLiteral(" (%1)").arg(PlainText::shortName(request.identity));
    if (request.mode == u"window")
        return QStringLiteral("through this window's HTTP endpoint") + who;
    if (request.mode == u"http")
        return QStringLiteral("through a code-sandbox --http server") + who;
    return QStringLiteral("through a code-sandbox --stdio server it started") + who;
}

void ApprovalDialog::updateCountdown()
{
    const qint64 left = qMax<qint64>(0, m_request.waitSec - m_shown.elapsed() / 1000);
    m_countdown->setText(
        (m_request.isConnection()
             ? QStringLiteral("The program is waiting. Without an answer the connection is "
                              "refused in %1:%2.")
             : QStringLiteral("The assistant is waiting. Without an answer the run is denied in "
                              "%1:%2."))
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
