// Assistants told apart in the window (issue 51): the credentials under Settings → Assistants
// (made, listed with their last use, revoked at once), the Connect dialog making Claude Code a
// credential of its own on Copy, a policy's launcher, and a run that shows both the assistant
// its credential names and the name its client claimed.
#include "approvaldialog.h"
#include "connectassistantdialog.h"
#include "consentdialog.h"
#include "consentprompter.h"
#include "credentialstore.h"
#include "credentialsview.h"
#include "httpresponder.h"
#include "httpserver.h"
#include "monitorpublisher.h"
#include "monitorserver.h"
#include "oauthserver.h"
#include "policyeditor.h"
#include "rundetailspane.h"
#include "runlistmodel.h"
#include "services.h"

#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QCryptographicHash>
#include <QDialog>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrlQuery>

namespace {
QStringList labelTexts(QWidget *root)
{
    QStringList texts;
    for (QLabel *label : root->findChildren<QLabel *>())
        texts << label->text();
    return texts;
}

// The secret at the end of a copied configuration.
QString secretIn(const QString &text)
{
    const qsizetype at = text.indexOf(QLatin1String(CredentialStore::kPrefix));
    return at < 0 ? QString() : text.mid(at, 4 + 43);
}
} // namespace

class TestIdentity : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void credentialsViewMakesListsAndRevokes();
    void connectDialogMakesTheAssistantACredential();
    void connectDialogWithoutAStoreKeepsTheSharedToken();
    void policyEditorKeepsALauncher();
    void runShowsTheAssistantAndWhatItClaimed();
    void signInIsAskedInTheWindow();
    void closingTheConsentDialogDenies();
    void aHeadlessInstancesSignInIsAskedInTheWindow();
    void approvalSaysWhoAsks();
    void aNameAnAssistantHasIsNotSuggested();

private:
    // A real HTTP server with the authorization server on it, as the window's endpoint has.
    struct SignInServer
    {
        QTemporaryDir dir;
        CredentialStore credentials{dir.filePath(QStringLiteral("credentials.json"))};
        OAuthServer oauth{&credentials,
                          {"/mcp",
                           900,
                           600,
                           dir.filePath(QStringLiteral("clients.json")),
                           dir.filePath(QStringLiteral("key")),
                           {}}};
        HttpServer http;
        QNetworkAccessManager network;
        SignInServer()
        {
            QObject::connect(&http, &HttpServer::requestReceived, &oauth,
                             [this](const HttpRequest &r, HttpResponder *responder) {
                                 oauth.handle(r, responder, "shared");
                             });
            http.listen(QHostAddress::LocalHost, 0);
        }
        QUrl url(const QString &path) const
        {
            return QUrl(QStringLiteral("http://127.0.0.1:%1%2").arg(http.port()).arg(path));
        }
        // The reply once finished.
        QNetworkReply *wait(QNetworkReply *reply)
        {
            if (!reply->isFinished())
                QSignalSpy(reply, &QNetworkReply::finished).wait(10000);
            return reply;
        }
        // Registers a client and opens its sign-in (a browser's request, with `headers`): the id
        // of the sign-in that now waits.
        QString startSignIn(const QString &clientName,
                            const QList<QPair<QByteArray, QByteArray>> &headers = {})
        {
            QNetworkRequest reg(url(QStringLiteral("/oauth/register")));
            reg.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
            QNetworkReply *r = wait(network.post(
                reg, QJsonDocument(QJsonObject{{"client_name", clientName},
                                               {"redirect_uris", QJsonArray{kRedirect}}})
                         .toJson()));
            const QString clientId =
                QJsonDocument::fromJson(r->readAll()).object().value(u"client_id").toString();
            QUrl authorize = url(QStringLiteral("/oauth/authorize"));
            QUrlQuery q;
            q.addQueryItem(QStringLiteral("response_type"), QStringLiteral("code"));
            q.addQueryItem(QStringLiteral("client_id"), clientId);
            q.addQueryItem(QStringLiteral("redirect_uri"), kRedirect);
            q.addQueryItem(QStringLiteral("code_challenge"), QString(43, u'A'));
            q.addQueryItem(QStringLiteral("code_challenge_method"), QStringLiteral("S256"));
            authorize.setQuery(q);
            QNetworkRequest open(authorize);
            for (const auto &[name, value] : headers)
                open.setRawHeader(name, value);
            QNetworkReply *page = wait(network.get(open));
            return QString::fromLatin1(page->rawHeader("X-Code-Sandbox-Sign-In"));
        }
        // Where the sign-in's page sends the browser now ("" while it waits).
        QString location(const QString &id)
        {
            QNetworkRequest req(url(QStringLiteral("/oauth/authorize/wait?request=") + id));
            req.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                             QNetworkRequest::ManualRedirectPolicy);
            return QString::fromUtf8(wait(network.get(req))->rawHeader("Location"));
        }
        static inline const QString kRedirect = QStringLiteral("http://127.0.0.1:33418/cb");
    };
};

void TestIdentity::credentialsViewMakesListsAndRevokes()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("credentials.json"));
    CredentialsView view(path);
    QTableWidget *table = view.table();
    QCOMPARE(table->rowCount(), 1); // the shared token's row
    QVERIFY(!view.revokeRow(0));
    QSignalSpy changed(&view, &CredentialsView::changed);

    const QString secret = view.create(QStringLiteral("Claude Code"));
    QVERIFY(secret.startsWith(QLatin1String(CredentialStore::kPrefix)));
    QCOMPARE(changed.size(), 1);
    QCOMPARE(table->rowCount(), 2);
    QCOMPARE(table->item(1, 0)->text(), QStringLiteral("Claude Code"));
    QCOMPARE(table->item(1, 3)->text(), QStringLiteral("never"));
    // The secret is shown once, in a dialog of its own.
    auto *shown = view.findChild<QLineEdit *>(QStringLiteral("credentialSecret"));
    QVERIFY(shown);
    QCOMPARE(shown->text(), secret);

    // Used by a server (another store on the same file): the view shows it when read again.
    CredentialStore server(path);
    QVERIFY(server.match(secret.toLatin1()).has_value());
    view.reload();
    QVERIFY(table->item(1, 3)->text() != QStringLiteral("never"));

    // Revoked at once: the server's store no longer matches it.
    QVERIFY(view.revokeRow(1));
    QCOMPARE(changed.size(), 2);
    QCOMPARE(table->rowCount(), 1);
    QVERIFY(!server.match(secret.toLatin1()).has_value());
}

void TestIdentity::connectDialogMakesTheAssistantACredential()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("credentials.json"));
    const QString url = QStringLiteral("http://127.0.0.1:8765/mcp");
    const QString shared = QStringLiteral("0123456789abcdef");
    ConnectAssistantDialog dialog(QStringLiteral("/usr/bin/code-sandbox"), url, shared, nullptr,
                                  path);
    auto *text = dialog.findChild<QPlainTextEdit *>(QStringLiteral("claudeCodeHttpText"));
    auto *copy = dialog.findChild<QPushButton *>(QStringLiteral("claudeCodeHttpCopy"));
    QVERIFY(text && copy);
    QVERIFY(!text->toPlainText().contains(shared));
    QClipboard *clipboard = QGuiApplication::clipboard();
    clipboard->clear();
    copy->click();

    // One click: the exact command, with a credential of Claude Code's own, not the shared token.
    const QString copied = clipboard->text();
    QVERIFY2(copied.startsWith(QStringLiteral("claude mcp add --transport http code-sandbox ") +
                               url + QStringLiteral(" \\\n  --header \"Authorization: Bearer ")),
             qPrintable(copied));
    QVERIFY(!copied.contains(shared));
    const QString secret = secretIn(copied);
    CredentialStore store(path);
    const auto matched = store.match(secret.toLatin1());
    QVERIFY(matched.has_value());
    QCOMPARE(matched->name, QStringLiteral("Claude Code"));
    QVERIFY(labelTexts(&dialog).join(u'|').contains(matched->id));

    // Copying again copies the same credential; none more is made.
    clipboard->clear();
    copy->click();
    QCOMPARE(clipboard->text(), copied);
    QCOMPARE(store.list().size(), 1);

    // Gemini CLI gets one of its own, in valid JSON.
    auto *gemini = dialog.findChild<QPushButton *>(QStringLiteral("geminiHttpCopy"));
    QVERIFY(gemini);
    gemini->click();
    const QJsonObject server = QJsonDocument::fromJson(clipboard->text().toUtf8())
                                   .object()[QStringLiteral("mcpServers")]
                                   .toObject()[QStringLiteral("code-sandbox")]
                                   .toObject();
    const QString bearer =
        server[QStringLiteral("headers")].toObject()[QStringLiteral("Authorization")].toString();
    QVERIFY(bearer.startsWith(QStringLiteral("Bearer csk_")));
    QCOMPARE(store.match(bearer.mid(7).toLatin1())->name, QStringLiteral("Gemini CLI"));
    QCOMPARE(store.list().size(), 2);
}

void TestIdentity::connectDialogWithoutAStoreKeepsTheSharedToken()
{
    const QString shared = QStringLiteral("0123456789abcdef");
    ConnectAssistantDialog dialog(QStringLiteral("/usr/bin/code-sandbox"),
                                  QStringLiteral("http://127.0.0.1:8765/mcp"), shared);
    auto *copy = dialog.findChild<QPushButton *>(QStringLiteral("claudeCodeHttpCopy"));
    QVERIFY(copy);
    copy->click();
    QVERIFY(QGuiApplication::clipboard()->text().endsWith(shared + u'"'));
}

void TestIdentity::policyEditorKeepsALauncher()
{
    AssistantPolicies in;
    AssistantPolicy claude;
    claude.client = QStringLiteral("claude-code");
    claude.launcher = QStringLiteral("/usr/bin/claude");
    in.assistants.append(claude);
    PolicyEditor editor(in, {QStringLiteral("python")});
    QCOMPARE(editor.policies(), in);
    QTableWidgetItem *cell = editor.table()->item(1, PolicyEditor::LauncherColumn);
    QCOMPARE(cell->text(), QStringLiteral("/usr/bin/claude"));
    cell->setText(QStringLiteral(" /usr/local/bin/claude "));
    QCOMPARE(editor.policies().forClient(QStringLiteral("claude-code")).launcher,
             QStringLiteral("/usr/local/bin/claude"));
    // The default row guards no name: no launcher to type.
    QVERIFY(!(editor.table()->item(0, PolicyEditor::LauncherColumn)->flags() & Qt::ItemIsEditable));
}

void TestIdentity::runShowsTheAssistantAndWhatItClaimed()
{
    RunRecord r;
    r.id = QStringLiteral("r1");
    r.source = QStringLiteral("alpha");
    r.claimedName = QStringLiteral("claude-code");
    r.identity = QStringLiteral("credential c-0011aabb (alpha)");
    r.language = QStringLiteral("python");
    r.createdAt = QDateTime::currentDateTimeUtc();
    RunListModel model;
    JournalEvent created;
    created.type = JournalEvent::Type::Created;
    created.run = r;
    model.apply(created);
    QCOMPARE(model.data(model.index(0, RunListModel::SourceColumn)).toString(),
             QStringLiteral("alpha (claims “claude-code”)"));

    RunDetailsPane pane;
    pane.showRun(&r);
    const QString texts = labelTexts(&pane).join(u'|');
    QVERIFY2(texts.contains(u"credential c-0011aabb (alpha)"), qPrintable(texts));
    QVERIFY(texts.contains(u"claude-code"));

    // A stdio instance's run: its launcher, and why it ran under the default policy.
    RunRecord s = r;
    s.source = QStringLiteral("from-elsewhere");
    s.claimedName.clear();
    s.identity = QStringLiteral("launched by /usr/bin/node (pid 42, uid 1000)");
    s.notes = {QStringLiteral("Ran under the default policy: it claims 'from-elsewhere', whose "
                              "policy needs the launcher /usr/bin/claude; it was launched by "
                              "/usr/bin/node.")};
    pane.showRun(&s);
    const QString stdio = labelTexts(&pane).join(u'|');
    QVERIFY(stdio.contains(u"launched by /usr/bin/node"));
    QVERIFY(stdio.contains(u"needs the launcher /usr/bin/claude"));
}

void TestIdentity::signInIsAskedInTheWindow()
{
    SignInServer server;
    QWidget window;
    ConsentPrompter prompter(&window);
    prompter.watch(&server.oauth);
    QSignalSpy wanted(&prompter, &ConsentPrompter::policyWanted);
    // Opened as an app opens it: the browser says no site sent it there.
    const QString id =
        server.startSignIn(QStringLiteral("Claude Code"), {{"Sec-Fetch-Site", "none"}});
    QVERIFY(!id.isEmpty());
    QTRY_COMPARE(prompter.dialogs().size(), 1);
    ConsentDialog *dialog = prompter.dialogs().first();
    QVERIFY(dialog->isVisible());
    QVERIFY(!dialog->findChild<QLabel *>(QStringLiteral("consentOpenedFrom")));
    // Nothing goes on until a person answers.
    QCOMPARE(server.location(id), QString());
    const QString headline = dialog->findChild<QLabel *>(QStringLiteral("consentHeadline"))->text();
    QCOMPARE(headline, QStringLiteral(
                           "“Claude Code” (as named by its registration) wants to run code here."));
    auto *assistant = dialog->findChild<QComboBox *>(QStringLiteral("consentAssistant"));
    QCOMPARE(assistant->currentText(), QStringLiteral("Claude Code"));
    assistant->setEditText(QStringLiteral("claude-oauth"));
    // Enter answers nothing: no button is the default.
    QTest::keyClick(dialog, Qt::Key_Return);
    QVERIFY(dialog->isVisible());
    // Alt+A is Allow (the mnemonic desktop.sh presses).
    QTest::keyClick(dialog, Qt::Key_A, Qt::AltModifier);
    QTRY_VERIFY(prompter.dialogs().isEmpty());
    QCOMPARE(wanted.size(), 1); // no policy named so: one is asked for
    QCOMPARE(wanted.first().first().toString(), QStringLiteral("claude-oauth"));

    // The browser goes back with a code, which the client exchanges for a grant of that name.
    const QUrl back(server.location(id));
    QVERIFY2(back.toString().startsWith(SignInServer::kRedirect), qPrintable(back.toString()));
    QVERIFY(QUrlQuery(back).hasQueryItem(QStringLiteral("code")));
}

void TestIdentity::closingTheConsentDialogDenies()
{
    SignInServer server;
    QWidget window;
    ConsentPrompter prompter(&window);
    prompter.watch(&server.oauth);
    const QString id = server.startSignIn(QStringLiteral("<b>Bold</b> bot"));
    QTRY_COMPARE(prompter.dialogs().size(), 1);
    ConsentDialog *dialog = prompter.dialogs().first();
    // Its name is shown as it is, not as markup.
    QVERIFY(dialog->findChild<QLabel *>(QStringLiteral("consentHeadline"))
                ->text()
                .contains(QStringLiteral("<b>Bold</b> bot")));
    QCOMPARE(dialog->findChild<QLabel *>(QStringLiteral("consentHeadline"))->textFormat(),
             Qt::PlainText);
    dialog->close();
    QTRY_VERIFY(prompter.dialogs().isEmpty());
    const QUrl back(server.location(id));
    QCOMPARE(QUrlQuery(back).queryItemValue(QStringLiteral("error")),
             QStringLiteral("access_denied"));

    // A sign-in answered elsewhere (the command line) closes its dialog.
    const QString second = server.startSignIn(QStringLiteral("Other"));
    QTRY_COMPARE(prompter.dialogs().size(), 1);
    QString error;
    QVERIFY(server.oauth.decide(second, true, QStringLiteral("other"), &error));
    QTRY_VERIFY(prompter.dialogs().isEmpty());
}

void TestIdentity::aHeadlessInstancesSignInIsAskedInTheWindow()
{
    // The headless instance's endpoint has a sign-in waiting before any window is open, one
    // that a web page sent the browser to.
    SignInServer server;
    const QString id = server.startSignIn(
        QStringLiteral("Claude Code"),
        {{"Sec-Fetch-Site", "cross-site"}, {"Referer", "https://user@evil.example:8443/a?b#c"}});
    QVERIFY(!id.isEmpty());

    // The window opens: its monitor socket, and the instance's link to it, as Services makes it.
    QTemporaryDir sockets;
    const QString path = sockets.filePath(QStringLiteral("monitor.sock"));
    MonitorServer monitor;
    QVERIFY(monitor.listen(path));
    QWidget window;
    ConsentPrompter prompter(&window);
    prompter.watch(&monitor);
    auto publisher =
        std::make_unique<MonitorPublisher>(path, QStringLiteral("inst-9"), QStringLiteral("http"));
    Services::askSignInsInWindow(&server.oauth, publisher.get());
    QTRY_COMPARE(prompter.dialogs().size(), 1);
    ConsentDialog *dialog = prompter.dialogs().first();
    QCOMPARE(dialog->request().id, id);
    QCOMPARE(dialog->request().clientName, QStringLiteral("Claude Code"));
    // The window says a web page opened it (its origin only), across the socket too.
    const auto *opened = dialog->findChild<QLabel *>(QStringLiteral("consentOpenedFrom"));
    QVERIFY(opened);
    QVERIFY2(opened->text().startsWith(
                 QStringLiteral("a web page at https://evil.example:8443, not an app")),
             qPrintable(opened->text()));
    QCOMPARE(server.location(id), QString());
    dialog->findChild<QComboBox *>(QStringLiteral("consentAssistant"))
        ->setEditText(QStringLiteral("headless-bot"));
    dialog->findChild<QPushButton *>(QStringLiteral("consentAllow"))->click();
    // The answer crosses the socket back to the instance's authorization server.
    // (Not QTRY_VERIFY: it evaluates once more after success, and the way back is given once.)
    QString back;
    for (int i = 0; i < 100 && back.isEmpty(); ++i) {
        back = server.location(id);
        if (back.isEmpty())
            QTest::qWait(50);
    }
    QVERIFY2(back.contains(QStringLiteral("code=")), qPrintable(back));

    // Answered from the command line instead: the window's question closes.
    const QString second = server.startSignIn(QStringLiteral("Other"));
    QTRY_COMPARE(prompter.dialogs().size(), 1);
    QString error;
    QVERIFY(server.oauth.decide(second, false, QString(), &error));
    QTRY_VERIFY(prompter.dialogs().isEmpty());
    // The instance goes: its open questions close.
    server.startSignIn(QStringLiteral("Third"));
    QTRY_COMPARE(prompter.dialogs().size(), 1);
    publisher.reset();
    QTRY_VERIFY(prompter.dialogs().isEmpty());
}

void TestIdentity::approvalSaysWhoAsks()
{
    ApprovalRequest r;
    r.id = QStringLiteral("q1");
    r.client = QStringLiteral("alpha");
    r.identity = QStringLiteral("credential c-0011aabb (alpha), claims 'claude-code'");
    r.mode = QStringLiteral("http");
    r.language = QStringLiteral("python");
    r.code = QStringLiteral("print(1)");
    // Across the monitor socket and back, as a headless instance's question travels.
    const auto back = ApprovalRequest::fromJson(r.toJson());
    QVERIFY(back.has_value());
    QCOMPARE(back->identity, r.identity);
    ApprovalDialog dialog(*back);
    const QString heading = dialog.findChild<QLabel *>(QStringLiteral("approvalHeading"))->text();
    QVERIFY2(heading.contains(QStringLiteral("credential c-0011aabb (alpha), claims "
                                             "'claude-code'")),
             qPrintable(heading));
}

void TestIdentity::aNameAnAssistantHasIsNotSuggested()
{
    ConsentRequest request{QStringLiteral("0011aabb"),
                           QStringLiteral("cs-client-00000000cafe1234"),
                           QStringLiteral("Claude Code"),
                           QStringLiteral("its registration"),
                           QStringLiteral("http://127.0.0.1:1/cb"),
                           QDateTime::currentDateTimeUtc(),
                           {}};
    const auto suggestion = [&](const QStringList &policies, const QStringList &held) {
        ConsentDialog dialog(request, policies, held);
        return dialog.findChild<QComboBox *>(QStringLiteral("consentAssistant"))->currentText();
    };
    QCOMPARE(suggestion({}, {}), QStringLiteral("Claude Code"));
    // A policy's name, or a credential's: offered among the others, never the suggestion.
    QCOMPARE(suggestion({QStringLiteral("claude code")}, {}),
             QStringLiteral("OAuth client cafe1234"));
    QCOMPARE(suggestion({}, {QStringLiteral("Claude Code")}),
             QStringLiteral("OAuth client cafe1234"));
}

QTEST_MAIN(TestIdentity)
#include "tst_identity.moc"
