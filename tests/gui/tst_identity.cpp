// Assistants told apart in the window (issue 51): the credentials under Settings → Assistants
// (made, listed with their last use, revoked at once), the Connect dialog making Claude Code a
// credential of its own on Copy, a policy's launcher, and a run that shows both the assistant
// its credential names and the name its client claimed.
#include "connectassistantdialog.h"
#include "credentialstore.h"
#include "credentialsview.h"
#include "policyeditor.h"
#include "rundetailspane.h"
#include "runlistmodel.h"

#include <QApplication>
#include <QClipboard>
#include <QDialog>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

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

QTEST_MAIN(TestIdentity)
#include "tst_identity.moc"
