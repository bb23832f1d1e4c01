#include "connectassistantdialog.h"

#include <QCheckBox>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QTabWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace {

// Marks where the token goes in a snippet: a private-use character no path or URL contains.
const QChar kTokenMark(0xE000);
const QString kMaskedToken = QStringLiteral("••••");

// A word a POSIX shell takes literally, quoted only when it has to be.
QString shellQuote(const QString &word)
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_./+:@%=,-]+$"));
    if (plain.match(word).hasMatch())
        return word;
    QString quoted = word;
    quoted.replace(u'\'', QStringLiteral("'\\''"));
    return u'\'' + quoted + u'\'';
}

// `value` as it must be written inside a shell's double quotes: escaped where a shell would
// expand it there.
QString inDoubleQuotes(const QString &value)
{
    QString escaped;
    for (const QChar c : value) {
        if (c == u'"' || c == u'\\' || c == u'$' || c == u'`')
            escaped += u'\\';
        escaped += c;
    }
    return escaped;
}

// A JSON string literal, quotes included.
QString jsonString(const QString &value)
{
    const QByteArray array = QJsonDocument(QJsonArray{value}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(array.mid(1, array.size() - 2));
}

// Written by hand rather than through QJsonDocument, which sorts keys ("args" before "command")
// and indents by four; this reads like the clients' own documentation.
QString stdioJson(const QString &binaryPath)
{
    return QStringLiteral("{\n"
                          "  \"mcpServers\": {\n"
                          "    \"code-sandbox\": {\n"
                          "      \"command\": %1,\n"
                          "      \"args\": [\"--stdio\"]\n"
                          "    }\n"
                          "  }\n"
                          "}")
        .arg(jsonString(binaryPath));
}

QString geminiHttpJson(const QString &url, bool withToken)
{
    const QString headers = withToken ? QStringLiteral(",\n"
                                                       "      \"headers\": {\n"
                                                       "        \"Authorization\": \"Bearer %1\"\n"
                                                       "      }")
                                            .arg(kTokenMark)
                                      : QString();
    return QStringLiteral("{\n"
                          "  \"mcpServers\": {\n"
                          "    \"code-sandbox\": {\n"
                          "      \"httpUrl\": %1%2\n"
                          "    }\n"
                          "  }\n"
                          "}")
        .arg(jsonString(url), headers);
}

} // namespace

ConnectAssistantDialog::ConnectAssistantDialog(const QString &binaryPath, const QString &httpUrl,
                                               const QString &token, QWidget *parent,
                                               const QString &credentialStore)
    : QDialog(parent), m_token(token)
{
    if (!credentialStore.isEmpty() && !token.isEmpty())
        m_credentials = std::make_unique<CredentialStore>(credentialStore);
    setWindowTitle(tr("Connect an Assistant"));
    setObjectName(QStringLiteral("connectAssistantDialog"));

    const bool http = !httpUrl.isEmpty();
    const bool withToken = !token.isEmpty();

    auto *tabs = new QTabWidget(this);
    tabs->setObjectName(QStringLiteral("assistantTabs"));
    // In this order: the snippets are kept in the order they were added.
    tabs->addTab(claudeCodePage(binaryPath, httpUrl, token), tr("Claude Code"));
    tabs->addTab(geminiPage(binaryPath, httpUrl, token), tr("Gemini CLI"));
    tabs->addTab(claudeDesktopPage(binaryPath), tr("Claude Desktop"));

    m_showTokenCheck = new QCheckBox(tr("Show token"), this);
    m_showTokenCheck->setObjectName(QStringLiteral("showTokenCheck"));
    m_showTokenCheck->setVisible(http && withToken);
    connect(m_showTokenCheck, &QCheckBox::toggled, this, &ConnectAssistantDialog::updateShownText);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *bottom = new QHBoxLayout;
    bottom->addWidget(m_showTokenCheck);
    bottom->addStretch(1);
    bottom->addWidget(buttons);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(tabs, 1);
    layout->addLayout(bottom);

    updateShownText();
    resize(qMax(sizeHint().width(), 720), sizeHint().height());
}

QWidget *ConnectAssistantDialog::claudeCodePage(const QString &binaryPath, const QString &httpUrl,
                                                const QString &token)
{
    auto *page = new QWidget;
    auto *layout = new QVBoxLayout(page);
    addSnippet(
        layout, QStringLiteral("claudeCode"),
        tr("Run in a terminal. Claude Code then starts its own sandbox server for "
           "each session (add --scope user to have it in every project):"),
        QStringLiteral("claude mcp add code-sandbox -- %1 --stdio").arg(shellQuote(binaryPath)),
        QString());
    if (!httpUrl.isEmpty()) {
        QString command = QStringLiteral("claude mcp add --transport http code-sandbox %1")
                              .arg(shellQuote(httpUrl));
        // Continued on a second line so the header, the part to check, is in view.
        if (!token.isEmpty())
            command +=
                QStringLiteral(" \\\n  --header \"Authorization: Bearer %1\"").arg(kTokenMark);
        addSnippet(layout, QStringLiteral("claudeCodeHttp"),
                   m_credentials
                       ? tr("Or connect to the server in this window over HTTP instead. Copy "
                            "makes Claude Code a credential of its own:")
                       : tr("Or connect to the server in this window over HTTP instead:"),
                   command, inDoubleQuotes(token));
        if (m_credentials)
            m_snippets.last().credentialFor = QStringLiteral("Claude Code");
    } else {
        addHttpOffNote(layout);
    }
    layout->addStretch(1);
    return page;
}

QWidget *ConnectAssistantDialog::geminiPage(const QString &binaryPath, const QString &httpUrl,
                                            const QString &token)
{
    auto *page = new QWidget;
    auto *layout = new QVBoxLayout(page);
    addSnippet(layout, QStringLiteral("gemini"),
               tr("Merge into ~/.gemini/settings.json (or .gemini/settings.json in a project):"),
               stdioJson(binaryPath), QString());
    if (!httpUrl.isEmpty()) {
        // Inside a JSON string the token needs escaping; the stored one is hex, a typed one may
        // not be.
        const QString jsonToken = jsonString(token).mid(1).chopped(1);
        addSnippet(layout, QStringLiteral("geminiHttp"),
                   m_credentials ? tr("Or, to use the server in this window over HTTP instead "
                                      "(Copy makes Gemini CLI a credential of its own):")
                                 : tr("Or, to use the server in this window over HTTP instead:"),
                   geminiHttpJson(httpUrl, !token.isEmpty()), jsonToken);
        if (m_credentials)
            m_snippets.last().credentialFor = QStringLiteral("Gemini CLI");
    } else {
        addHttpOffNote(layout);
    }
    layout->addStretch(1);
    return page;
}

// Claude Desktop: its config file only starts local servers, so there is no HTTP variant.
QWidget *ConnectAssistantDialog::claudeDesktopPage(const QString &binaryPath)
{
    auto *page = new QWidget;
    auto *layout = new QVBoxLayout(page);
    addSnippet(layout, QStringLiteral("claudeDesktop"),
               tr("Merge into claude_desktop_config.json, then restart Claude Desktop:\n"
                  "~/.config/Claude/claude_desktop_config.json on Linux, "
                  "~/Library/Application Support/Claude/ on macOS."),
               stdioJson(binaryPath), QString());
    layout->addStretch(1);
    return page;
}

void ConnectAssistantDialog::addHttpOffNote(QVBoxLayout *layout)
{
    auto *note = new QLabel(tr("The HTTP server is off: turn it on under Settings → Server to "
                               "let assistants share this window's server."),
                            layout->parentWidget());
    note->setWordWrap(true);
    layout->addWidget(note);
}

void ConnectAssistantDialog::addSnippet(QVBoxLayout *layout, const QString &name,
                                        const QString &explanation, const QString &text,
                                        const QString &tokenValue)
{
    auto *label = new QLabel(explanation);
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *view = new QPlainTextEdit;
    view->setObjectName(name + QStringLiteral("Text"));
    view->setReadOnly(true);
    view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    view->setLineWrapMode(QPlainTextEdit::NoWrap);
    view->setTabChangesFocus(true);
    view->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Tall enough for the whole snippet (they are short) plus a horizontal scroll bar, which a
    // shown token may need.
    const int lines = int(text.count(u'\n')) + 1;
    const QFontMetrics metrics(view->font());
    view->setFixedHeight(lines * metrics.lineSpacing() + 2 * view->frameWidth() +
                         int(2 * view->document()->documentMargin()) +
                         view->horizontalScrollBar()->sizeHint().height() + 4);

    auto *copy = new QPushButton(tr("Copy"));
    copy->setObjectName(name + QStringLiteral("Copy"));
    copy->setAutoDefault(false);
    const int index = int(m_snippets.size());
    connect(copy, &QPushButton::clicked, this, [this, copy, index] {
        Snippet &snippet = m_snippets[index];
        if (!snippet.credentialFor.isEmpty() && !makeCredential(snippet))
            return;
        QGuiApplication::clipboard()->setText(withToken(snippet, true));
        copy->setText(tr("Copied"));
        QTimer::singleShot(1500, copy, [copy] { copy->setText(tr("Copy")); });
    });
    // The button keeps its width when its text changes to "Copied".
    copy->setMinimumWidth(
        qMax(copy->sizeHint().width(), copy->fontMetrics().horizontalAdvance(tr("Copied")) + 32));

    auto *row = new QHBoxLayout;
    row->addWidget(view, 1);
    row->addWidget(copy, 0, Qt::AlignTop);

    if (layout->count() > 0)
        layout->addSpacing(12);
    layout->addWidget(label);
    layout->addLayout(row);
    m_snippets.append({view, text, tokenValue, label, QString()});
}

bool ConnectAssistantDialog::makeCredential(Snippet &snippet)
{
    QString error;
    const auto made = m_credentials->create(snippet.credentialFor, &error);
    if (!made) {
        QMessageBox::warning(this, tr("Connect an Assistant"),
                             tr("No credential was made: %1").arg(error));
        return false;
    }
    // Base64url: nothing in it needs escaping in a shell's double quotes or a JSON string.
    snippet.tokenValue = made->secret;
    snippet.label->setText(tr("Credential %1 made for %2: this configuration carries it (Settings "
                              "→ Assistants revokes it). Copy again while this dialog is open; "
                              "the credential is not shown anywhere else.")
                               .arg(made->credential.id, made->credential.name));
    snippet.credentialFor.clear();
    updateShownText();
    return true;
}

QString ConnectAssistantDialog::withToken(const Snippet &snippet, bool real) const
{
    QString text = snippet.text;
    if (!snippet.credentialFor.isEmpty()) // its credential is made on Copy
        return text.replace(kTokenMark,
                            real ? tr("(its credential, made when you press Copy)") : kMaskedToken);
    return text.replace(kTokenMark, real ? snippet.tokenValue : kMaskedToken);
}

void ConnectAssistantDialog::updateShownText()
{
    const bool show = m_showTokenCheck->isChecked();
    for (const Snippet &snippet : m_snippets)
        snippet.view->setPlainText(withToken(snippet, show));
}
