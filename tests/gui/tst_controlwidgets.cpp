// The control room's widgets alone: the policy editor gives back what it was given and what was
// changed in it; the approval dialog shows what the run would do, and only a click approves.
#include "approvaldialog.h"
#include "policyeditor.h"

#include <QCheckBox>
#include <QComboBox>
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
        in.assistants.append(claude);
        in.approvalTimeoutSec = 45;
        in.runWhenNoWindow = true;
        PolicyEditor editor(in, {QStringLiteral("python"), QStringLiteral("javascript")});
        QCOMPARE(editor.table()->rowCount(), 2);
        QCOMPARE(editor.policies(), in);
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
        QVERIFY(dialog.findChild<QLabel *>(QStringLiteral("approvalFiles"))
                    ->text()
                    .startsWith(u"data/input.csv ("));
        QVERIFY(dialog.findChild<QLabel *>(QStringLiteral("approvalCountdown"))
                    ->text()
                    .contains(u"denied in 2:00"));
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
