// The control room's widgets alone: the policy editor gives back what it was given and what was
// changed in it; the approval dialog shows what the run would do (the whole program, every name as
// it is), and only a click approves.
#include "approvaldialog.h"
#include "policyeditor.h"
#include "showntext.h"

#include <QCheckBox>
#include <QComboBox>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTest>

class ControlWidgetsTest : public QObject
{
    Q_OBJECT

private:
    static ApprovalRequest request()
    {
        ApprovalRequest r;
        r.id = QStringLiteral("q-1");
        r.client = QStringLiteral("claude-code");
        r.tool = QStringLiteral("execute_code");
        r.language = QStringLiteral("python");
        r.code = QStringLiteral("import pandas\nprint(pandas.__version__)\n");
        r.timeoutSec = 30;
        r.libraries = {QStringLiteral("pandas")};
        r.files = {{QStringLiteral("data/input.csv"), 2048}};
        r.memoryBytes = 512LL * 1024 * 1024;
        r.cpus = 1;
        r.mode = QStringLiteral("stdio");
        r.waitSec = 120;
        return r;
    }

private Q_SLOTS:
    void policyEditorRoundTrip()
    {
        AssistantPolicies in;
        in.fallback.action = AssistantPolicy::Action::Ask;
        AssistantPolicy claude;
        claude.client = QStringLiteral("claude-code");
        claude.languages = {QStringLiteral("python"), QStringLiteral("javascript")};
        claude.network = false;
        claude.maxTimeoutSec = 60;
        claude.maxMemoryMiB = 256;
        claude.isolation = QStringLiteral("gvisor");
        claude.secrets = QStringList{QStringLiteral("GITHUB_TOKEN")};
        claude.keepSessions = true;
        in.assistants.append(claude);
        AssistantPolicy kata;
        kata.client = QStringLiteral("kata-bot");
        kata.isolation = QStringLiteral("kata"); // a runtime's name, typed in
        kata.secrets = QStringList();            // none of the server's secrets
        in.assistants.append(kata);
        in.approvalTimeoutSec = 45;
        in.runWhenNoWindow = true;
        PolicyEditor editor(in, {QStringLiteral("python"), QStringLiteral("javascript")});
        QCOMPARE(editor.table()->rowCount(), 3);
        QCOMPARE(editor.policies(), in);
        // "container" is any runtime: the policy says nothing.
        auto *isolation =
            qobject_cast<QComboBox *>(editor.table()->cellWidget(1, PolicyEditor::IsolationColumn));
        QCOMPARE(isolation->currentText(), QStringLiteral("gvisor"));
        isolation->setCurrentText(QStringLiteral("container"));
        QCOMPARE(editor.policies().forClient(QStringLiteral("claude-code")).isolation, QString());
        // Keep sessions: a box per row.
        auto *keep = editor.table()
                         ->cellWidget(1, PolicyEditor::KeepSessionsColumn)
                         ->findChild<QCheckBox *>(QStringLiteral("policyKeepSessions"));
        QVERIFY(keep && keep->isChecked());
        keep->setChecked(false);
        QVERIFY(!editor.policies().forClient(QStringLiteral("claude-code")).keepSessions);
        QVERIFY(!editor.policies().forClient(QStringLiteral("kata-bot")).keepSessions);
        // Secrets: "*" is all of the server's (no list), empty is none, names are those only.
        QCOMPARE(editor.table()->item(0, PolicyEditor::SecretsColumn)->text(), QStringLiteral("*"));
        QCOMPARE(editor.table()->item(2, PolicyEditor::SecretsColumn)->text(), QString());
        editor.table()->item(1, PolicyEditor::SecretsColumn)->setText(QStringLiteral(" A, B ,A"));
        QCOMPARE(editor.policies().forClient(QStringLiteral("claude-code")).secrets,
                 std::optional<QStringList>(QStringList{QStringLiteral("A"), QStringLiteral("B")}));
        editor.table()->item(1, PolicyEditor::SecretsColumn)->setText(QStringLiteral("*"));
        QVERIFY(!editor.policies().forClient(QStringLiteral("claude-code")).secrets.has_value());
    }

    // Workspaces: "*" is all the server's (no list), empty is none, names are those only; what
    // is not a name is left out, the cell red; the tooltip offers Settings' workspaces.
    void policyEditorWorkspaces()
    {
        AssistantPolicies in;
        AssistantPolicy claude;
        claude.client = QStringLiteral("claude-code");
        claude.workspaces = QStringList{QStringLiteral("data")};
        in.assistants.append(claude);
        AssistantPolicy none;
        none.client = QStringLiteral("none-bot");
        none.workspaces = QStringList();
        in.assistants.append(none);
        PolicyEditor editor(in, {QStringLiteral("python")});
        QTableWidget *t = editor.table();
        QCOMPARE(editor.policies(), in);
        QCOMPARE(t->horizontalHeaderItem(PolicyEditor::WorkspacesColumn)->text(),
                 QStringLiteral("Workspaces (*: all)"));
        QCOMPARE(t->item(0, PolicyEditor::WorkspacesColumn)->text(), QStringLiteral("*"));
        QCOMPARE(t->item(1, PolicyEditor::WorkspacesColumn)->text(), QStringLiteral("data"));
        QCOMPARE(t->item(2, PolicyEditor::WorkspacesColumn)->text(), QString());

        editor.setWorkspaceNames({QStringLiteral("data"), QStringLiteral("repo")});
        QVERIFY(shownToolTip(t->item(0, PolicyEditor::WorkspacesColumn)->toolTip())
                    .contains(QStringLiteral("Settings → Workspaces lists: data, repo.")));

        QTableWidgetItem *cell = t->item(1, PolicyEditor::WorkspacesColumn);
        cell->setText(QStringLiteral(" repo, data ,repo, not a name, <b>x"));
        QCOMPARE(editor.policies().forClient(QStringLiteral("claude-code")).workspaces,
                 std::optional<QStringList>(
                     QStringList{QStringLiteral("repo"), QStringLiteral("data")}));
        QCOMPARE(cell->foreground().color(), QColor(Qt::red));
        const QString tip = shownToolTip(cell->toolTip());
        QVERIFY2(tip.contains(QStringLiteral("left out: not a name, <b>x")), qPrintable(tip));
        cell->setText(QStringLiteral("*"));
        QVERIFY(!editor.policies().forClient(QStringLiteral("claude-code")).workspaces);
        QCOMPARE(cell->foreground(), QBrush());
        t->item(0, PolicyEditor::WorkspacesColumn)->setText(QString());
        QCOMPARE(editor.policies().fallback.workspaces, std::optional<QStringList>(QStringList()));

        // Saved in the policy as the settings file keeps it.
        const QJsonObject json = editor.policies().toJson();
        const AssistantPolicies back = AssistantPolicies::fromJson(json);
        QCOMPARE(back, editor.policies());
        QCOMPARE(back.fallback.workspaces, std::optional<QStringList>(QStringList()));
        QVERIFY(!back.forClient(QStringLiteral("claude-code")).workspaces);
    }

    void policyEditorEdits()
    {
        PolicyEditor editor(AssistantPolicies(), {QStringLiteral("python")});
        QVERIFY(editor.addAssistant(QStringLiteral("cursor")));
        QVERIFY(!editor.addAssistant(QStringLiteral("Cursor"))); // listed
        QVERIFY(!editor.addAssistant(QStringLiteral("  ")));
        QTableWidget *t = editor.table();
        auto *action = qobject_cast<QComboBox *>(t->cellWidget(1, PolicyEditor::ActionColumn));
        action->setCurrentIndex(action->findText(QStringLiteral("refuse")));
        t->item(1, PolicyEditor::LanguagesColumn)->setText(QStringLiteral("Python, python, go"));
        t->cellWidget(1, PolicyEditor::NetworkColumn)->findChild<QCheckBox *>()->setChecked(false);
        const AssistantPolicies out = editor.policies();
        QCOMPARE(out.assistants.size(), 1);
        const AssistantPolicy &cursor = out.forClient(QStringLiteral("cursor"));
        QCOMPARE(cursor.action, AssistantPolicy::Action::Refuse);
        QCOMPARE(cursor.languages, (QStringList{QStringLiteral("python"), QStringLiteral("go")}));
        QVERIFY(!cursor.network);
        QCOMPARE(out.fallback, AssistantPolicy());
        // The default row cannot be removed.
        auto *remove = editor.findChild<QPushButton *>(QStringLiteral("removePolicyButton"));
        t->setCurrentCell(0, PolicyEditor::LanguagesColumn);
        QVERIFY(!remove->isEnabled());
        t->setCurrentCell(1, PolicyEditor::LanguagesColumn);
        QVERIFY(remove->isEnabled());
        QTest::mouseClick(remove, Qt::LeftButton);
        QCOMPARE(editor.policies().assistants.size(), 0);
    }

    void policyEditorHosts()
    {
        // The Hosts cell: patterns as --egress takes them; what is not one is shown in red and
        // left out, and a cell left with none means no network (never the server's whole list).
        PolicyEditor editor(AssistantPolicies(), {QStringLiteral("python")});
        QVERIFY(editor.addAssistant(QStringLiteral("cursor")));
        QTableWidget *t = editor.table();
        QTableWidgetItem *hosts = t->item(1, PolicyEditor::HostsColumn);
        QVERIFY(hosts);
        hosts->setText(QStringLiteral("API.github.com, https://pypi.org/, *.pythonhosted.org:443"));
        AssistantPolicy cursor = editor.policies().forClient(QStringLiteral("cursor"));
        QCOMPARE(cursor.egress, (QStringList{QStringLiteral("api.github.com"),
                                             QStringLiteral("*.pythonhosted.org:443")}));
        QVERIFY(cursor.network);
        QCOMPARE(hosts->foreground().color(), QColor(Qt::red));
        QVERIFY(hosts->toolTip().contains(u"https://pypi.org/"));
        hosts->setText(QStringLiteral("https://pypi.org/"));
        cursor = editor.policies().forClient(QStringLiteral("cursor"));
        QVERIFY(cursor.egress.isEmpty());
        QVERIFY(!cursor.network);
        hosts->setText(QString());
        cursor = editor.policies().forClient(QStringLiteral("cursor"));
        QVERIFY(cursor.network);
        QCOMPARE(hosts->foreground(), QBrush());
    }

    void approvalDialogShowsTheHosts()
    {
        ApprovalRequest r = request();
        QVERIFY(!ApprovalDialog(r).findChild<QLabel *>(QStringLiteral("approvalEgress")));
        r.network = true;
        r.egress = {QStringLiteral("api.github.com"), QStringLiteral("<b>evil</b>.test")};
        ApprovalDialog dialog(r);
        const QLabel *reach = dialog.findChild<QLabel *>(QStringLiteral("approvalEgress"));
        QVERIFY(reach);
        QCOMPARE(reach->textFormat(), Qt::PlainText);
        QCOMPARE(reach->text(), QStringLiteral("api.github.com, <b>evil</b>.test"));
    }

    void connectionQuestionNamesTheHost()
    {
        // A held connection: what it wants to reach, in the heading (escaped), its run's list,
        // the whole program; "always" says what it adds; no reason field (the program reads only
        // the proxy's refusal); the countdown speaks of the connection.
        ApprovalRequest r = request();
        r.libraries.clear();
        r.network = true;
        r.egress = {QStringLiteral("pypi.org")};
        r.host = QStringLiteral("<b>api</b>.example");
        r.port = 8443;
        r.runId = QStringLiteral("run-1");
        auto *dialog = new ApprovalDialog(r);
        QSignalSpy answered(dialog, &ApprovalDialog::answered);
        QCOMPARE(dialog->windowTitle(), QStringLiteral("Allow a connection? — Code Sandbox"));
        const QLabel *heading = dialog->findChild<QLabel *>(QStringLiteral("approvalHeading"));
        QVERIFY(heading->text().contains(u"&lt;b&gt;api&lt;/b&gt;.example:8443"));
        QVERIFY(!heading->text().contains(u"<b>api</b>"));
        QCOMPARE(dialog->findChild<QLabel *>(QStringLiteral("approvalEgress"))->text(),
                 QStringLiteral("pypi.org"));
        QCOMPARE(dialog->findChild<QPlainTextEdit *>(QStringLiteral("approvalCode"))->toPlainText(),
                 r.code);
        auto *always = dialog->findChild<QPushButton *>(QStringLiteral("allowAlwaysButton"));
        QCOMPARE(always->text(), QStringLiteral("&Always for this assistant"));
        QVERIFY(always->toolTip().contains(u"<b>api</b>.example:8443") ||
                always->toolTip().contains(u"&lt;b&gt;api&lt;/b&gt;.example:8443"));
        QVERIFY(!dialog->findChild<QLineEdit *>(QStringLiteral("denyReason"))->isVisibleTo(dialog));
        QVERIFY(dialog->findChild<QLabel *>(QStringLiteral("approvalCountdown"))
                    ->text()
                    .contains(u"the connection is refused in"));
        QTest::mouseClick(always, Qt::LeftButton);
        QCOMPARE(answered.size(), 1);
        QCOMPARE(answered.first().at(1).value<RunApprover::Answer>(),
                 RunApprover::Answer::AllowAlways);
        // Without a name there is no "always": its rule would be everyone's.
        r.client.clear();
        ApprovalDialog nameless(r);
        QVERIFY(
            !nameless.findChild<QPushButton *>(QStringLiteral("allowAlwaysButton"))->isEnabled());
    }

    void policyEditorOtherHosts()
    {
        AssistantPolicies in;
        AssistantPolicy cursor;
        cursor.client = QStringLiteral("cursor");
        cursor.otherHosts = AssistantPolicy::OtherHosts::Ask;
        in.assistants.append(cursor);
        PolicyEditor editor(in, {QStringLiteral("python")});
        QCOMPARE(editor.policies(), in);
        auto *others = qobject_cast<QComboBox *>(
            editor.table()->cellWidget(0, PolicyEditor::OtherHostsColumn));
        QVERIFY(others);
        QCOMPARE(others->currentText(), QStringLiteral("refuse"));
        others->setCurrentIndex(others->findText(QStringLiteral("ask")));
        QCOMPARE(editor.policies().fallback.otherHosts, AssistantPolicy::OtherHosts::Ask);
    }

    void approvalDialogShowsTheRun()
    {
        ApprovalDialog dialog(request());
        QCOMPARE(dialog.findChild<QPlainTextEdit *>(QStringLiteral("approvalCode"))->toPlainText(),
                 request().code);
        const QString heading =
            dialog.findChild<QLabel *>(QStringLiteral("approvalHeading"))->text();
        QVERIFY(heading.contains(u"claude-code") && heading.contains(u"Python"));
        QVERIFY(heading.contains(u"--stdio"));
        QCOMPARE(dialog.findChild<QLabel *>(QStringLiteral("approvalLibraries"))->text(),
                 QStringLiteral("pandas"));
        const auto *files = dialog.findChild<QPlainTextEdit *>(QStringLiteral("approvalFiles"));
        QVERIFY(files);
        QVERIFY(files->toPlainText().startsWith(u"data/input.csv ("));
        QVERIFY(dialog.findChild<QLabel *>(QStringLiteral("approvalCountdown"))
                    ->text()
                    .contains(u"denied in 2:00"));
    }

    // create_session with libraries: no program, an install with network; the dialog says so
    // rather than "runs Python code: 1 line, 0 B" with no network.
    void installApprovalSaysWhatRuns()
    {
        ApprovalRequest r = request();
        r.tool = QStringLiteral("create_session");
        r.code.clear();
        r.files.clear();
        r.libraries = {QStringLiteral("requests"), QStringLiteral("numpy")};
        ApprovalDialog dialog(r);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        const QString heading =
            dialog.findChild<QLabel *>(QStringLiteral("approvalHeading"))->text();
        QVERIFY2(heading.contains(u"session") && heading.contains(u"install") &&
                     heading.contains(u"network") && !heading.contains(u"run <b>"),
                 qPrintable(heading));
        const QString info =
            dialog.findChild<QLabel *>(QStringLiteral("approvalProgramInfo"))->text();
        QVERIFY2(info.contains(u"No program") && info.contains(u"network"), qPrintable(info));
        QVERIFY(!dialog.findChild<QPlainTextEdit *>(QStringLiteral("approvalCode"))->isVisible());
        QCOMPARE(dialog.findChild<QLabel *>(QStringLiteral("approvalLibraries"))->text(),
                 QStringLiteral("requests, numpy"));
    }

    void onlyAClickApproves()
    {
        auto *dialog = new ApprovalDialog(request());
        QSignalSpy answered(dialog, &ApprovalDialog::answered);
        dialog->show();
        auto *reason = dialog->findChild<QLineEdit *>(QStringLiteral("denyReason"));
        reason->setFocus();
        QTest::keyClicks(reason, QStringLiteral("too risky"));
        QTest::keyClick(reason, Qt::Key_Return);
        QCOMPARE(answered.size(), 0); // Enter is not an answer
        // Escape (or closing) denies, with the reason typed.
        QTest::keyClick(dialog, Qt::Key_Escape);
        QCOMPARE(answered.size(), 1);
        QCOMPARE(answered.first().at(1).value<RunApprover::Answer>(), RunApprover::Answer::Deny);
        QCOMPARE(answered.first().at(2).toString(), QStringLiteral("too risky"));
    }

    void approvalShowsTheWholeProgram()
    {
        // A headless instance's question crosses the monitor socket as JSON: the program arrives
        // whole, however long, and the dialog holds all of it (the tail is what would run unseen).
        ApprovalRequest r = request();
        QString program;
        for (int i = 0; program.size() < 300 * 1024; ++i)
            program += QStringLiteral("print('line %1')\n").arg(i);
        program += QStringLiteral("import os; os.system('the hidden tail')\n");
        r.code = program;
        const std::optional<ApprovalRequest> received = ApprovalRequest::fromJson(r.toJson());
        QVERIFY(received);
        ApprovalDialog dialog(*received);
        QCOMPARE(dialog.findChild<QPlainTextEdit *>(QStringLiteral("approvalCode"))->toPlainText(),
                 program);
        const auto *infoLabel = dialog.findChild<QLabel *>(QStringLiteral("approvalProgramInfo"));
        QVERIFY(infoLabel);
        const QString info = shownText(infoLabel);
        QVERIFY2(info.contains(u"whole program") &&
                     info.contains(QString::number(program.count(u'\n'))),
                 qPrintable(info));
        // As large as an HTTP call may be (4 MiB): past the highlighter's size, still whole.
        while (r.code.size() < 4 * 1024 * 1024)
            r.code += program;
        ApprovalDialog large(*ApprovalRequest::fromJson(r.toJson()));
        QVERIFY(r.code.size() > ApprovalDialog::kMaxHighlightedChars);
        QCOMPARE(large.findChild<QPlainTextEdit *>(QStringLiteral("approvalCode"))->toPlainText(),
                 r.code);
    }

    void approvalShowsWhatWouldNotShow()
    {
        // "Trojan source": a direction override makes the line read otherwise than it runs; it is
        // written out, and the count says so.
        ApprovalRequest r = request();
        r.code = QStringLiteral("ok = 1 \u202E# comment\nprint(ok)\r\n");
        ApprovalDialog dialog(r);
        const QString code =
            dialog.findChild<QPlainTextEdit *>(QStringLiteral("approvalCode"))->toPlainText();
        QCOMPARE(code, QStringLiteral("ok = 1 ⟨U+202E⟩# comment\nprint(ok)⟨U+000D⟩\n"));
        const auto *info = dialog.findChild<QLabel *>(QStringLiteral("approvalProgramInfo"));
        QVERIFY(info);
        QVERIFY(shownText(info).contains(u"2 characters that would not show"));
    }

    void approvalShowsNamesAsText()
    {
        // Names that look like HTML: as rich text, "<!--" … "-->" would hide numpy.py, and the
        // approved "import numpy" would run it.
        ApprovalRequest r = request();
        r.client = QStringLiteral("<i>helper</i><!--");
        r.code = QStringLiteral("import numpy\n");
        r.files = {{QStringLiteral("data<b></b>.csv"), 1},
                   {QStringLiteral("<!--"), 1},
                   {QStringLiteral("numpy.py"), 60},
                   {QStringLiteral("-->"), 1}};
        r.libraries = {QStringLiteral("<!--"), QStringLiteral("evil-lib"), QStringLiteral("-->")};
        r.sessionId = QStringLiteral("<!--s-->");
        const std::optional<ApprovalRequest> received = ApprovalRequest::fromJson(r.toJson());
        QVERIFY(received);
        ApprovalDialog dialog(*received);
        const QString shown = shownTexts(&dialog);
        for (const QString &expected :
             {QStringLiteral("data<b></b>.csv"), QStringLiteral("<!--"), QStringLiteral("numpy.py"),
              QStringLiteral("-->"), QStringLiteral("evil-lib"), QStringLiteral("<!--s-->"),
              QStringLiteral("<i>helper</i><!--")})
            QVERIFY2(shown.contains(expected),
                     qPrintable(expected + QStringLiteral("\n---\n") + shown));
        const auto *fileList = dialog.findChild<QPlainTextEdit *>(QStringLiteral("approvalFiles"));
        QVERIFY(fileList);
        const QString files = fileList->toPlainText();
        QCOMPARE(files.count(u'\n'), 3); // one file a line
        QVERIFY(files.contains(u"numpy.py ("));
        // The tooltip of "Always allow" names the client as it is, too.
        const QString tip =
            dialog.findChild<QPushButton *>(QStringLiteral("allowAlwaysButton"))->toolTip();
        QVERIFY2(shownToolTip(tip).contains(u"<i>helper</i><!--"), qPrintable(tip));
        // A line break in a name cannot push the next name out of its line.
        r.files = {{QStringLiteral("a\n\n\n\n\n\n\nb"), 1}, {QStringLiteral("numpy.py"), 1}};
        ApprovalDialog broken(r);
        fileList = broken.findChild<QPlainTextEdit *>(QStringLiteral("approvalFiles"));
        QVERIFY(fileList);
        QCOMPARE(fileList->toPlainText().count(u'\n'), 1);
    }

    void alwaysAllowNeedsAName()
    {
        // For a client without a name, "always" would make the default policy "run", for every
        // assistant without one of its own: the button is off and says why.
        ApprovalRequest r = request();
        for (const QString &client : {QString(), QStringLiteral("   ")}) {
            r.client = client;
            auto *dialog = new ApprovalDialog(r);
            QSignalSpy answered(dialog, &ApprovalDialog::answered);
            dialog->show();
            auto *always = dialog->findChild<QPushButton *>(QStringLiteral("allowAlwaysButton"));
            QVERIFY(!always->isEnabled());
            QVERIFY(shownToolTip(always->toolTip()).contains(u"gave no name"));
            QTest::mouseClick(always, Qt::LeftButton);
            QCOMPARE(answered.size(), 0);
            QVERIFY(
                dialog->findChild<QPushButton *>(QStringLiteral("allowOnceButton"))->isEnabled());
            dialog->withdraw();
        }
        r.client = QStringLiteral("claude-code");
        ApprovalDialog named(r);
        QVERIFY(named.findChild<QPushButton *>(QStringLiteral("allowAlwaysButton"))->isEnabled());
    }

    void withdrawnDialogDoesNotAnswer()
    {
        auto *dialog = new ApprovalDialog(request());
        QSignalSpy answered(dialog, &ApprovalDialog::answered);
        dialog->show();
        dialog->withdraw();
        QCOMPARE(answered.size(), 0);
    }
};

QTEST_MAIN(ControlWidgetsTest)
#include "tst_controlwidgets.moc"
