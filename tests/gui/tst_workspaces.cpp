// The window's side of workspaces, without an engine: runs' records made as the server makes
// them (a temporary folder scanned, the sandbox's copy as an archive with the program's changes),
// fed to the runs model as finished runs. The Workspace tab shows what went in and the change
// set; Apply writes the folder and the decision sticks (the record, the history, the buttons); a
// file changed in the folder since the run started is left alone; the dialog asks for "ask" runs
// only, once, also for a headless instance's run as it arrives over the monitor socket.
#include "../unit/workspacefixture.h"
#include "historystore.h"
#include "rundetailspane.h"
#include "runlistmodel.h"
#include "showntext.h"
#include "workspaceaskdialog.h"
#include "workspacechangesview.h"
#include "workspacedecisions.h"
#include "workspacepane.h"
#include "workspaceprompter.h"

#include <QFontDatabase>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

namespace {
JournalEvent finished(const RunRecord &run)
{
    return {JournalEvent::Type::Finished, run, 1, {}, {}};
}

// A symbolic link the program made: refused, never applied.
TarArchive::Entry link(const QString &path, const QString &target)
{
    TarArchive::Entry e;
    e.path = path;
    e.type = TarArchive::Entry::Type::Symlink;
    e.linkTarget = target;
    return e;
}

QByteArray binaryBytes()
{
    QByteArray b("\x89PNG\r\n\x1a\n", 8);
    b.append(QByteArray(300, '\0'));
    return b;
}
} // namespace

class WorkspacesTest : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    int m_runs = 0;

    // A folder of its own for each test, with a program, a text to delete and a data file.
    QString folder(const QString &name)
    {
        const QString path = m_dir.filePath(name);
        if (!writeFiles(path, {{QStringLiteral("main.py"), "print(1)\nprint('a')\n"},
                               {QStringLiteral("old.txt"), "old\n"},
                               {QStringLiteral("data/in.csv"), "x,y\n1,2\n"},
                               {QStringLiteral(".env"), "TOKEN=never-copied\n"}}))
            qFatal("cannot write %s", qPrintable(path));
        return path;
    }

    // A finished run of `source` with workspace "data" (read-only) and "repo" (copy-on-write
    // over `repo`, applied as `apply`): main.py changed, old.txt deleted, new.txt and a binary
    // added, a link refused.
    RunRecord run(const QString &repo, Workspace::Apply apply,
                  const QString &source = QStringLiteral("claude-code"))
    {
        ExecutionResult result;
        result.exitCode = 0;
        result.durationMs = 420;
        result.workspaces = {
            readOnlyWorkspace(QStringLiteral("data"), repo + QStringLiteral("/data")),
            changedWorkspace(QStringLiteral("repo"), repo, apply,
                             {{QStringLiteral("main.py"), "print(2)\nprint('a')\nprint(3)\n"},
                              {QStringLiteral("old.txt"), QByteArray()},
                              {QStringLiteral("new.txt"), "new\n"},
                              {QStringLiteral("plot.png"), binaryBytes()}},
                             {link(QStringLiteral("repo/escape"), QStringLiteral("/etc/passwd"))})};
        RunRecord r;
        r.id = QStringLiteral("run-%1").arg(++m_runs);
        r.instanceId = QStringLiteral("instance-1");
        r.source = source;
        r.tool = QStringLiteral("execute_code");
        r.language = QStringLiteral("python");
        r.code = QStringLiteral("open('/workspace/repo/new.txt', 'w').write('new\\n')");
        r.createdAt = QDateTime::currentDateTimeUtc();
        r.applyResult(result);
        return r;
    }

    static QPushButton *applyButton(RunDetailsPane &pane)
    {
        return pane.workspacePane()->changesView()->applyButton();
    }

    static int tabIndex(RunDetailsPane &pane) { return pane.tabs()->indexOf(pane.workspacePane()); }

private Q_SLOTS:
    void initTestCase() { QVERIFY(m_dir.isValid()); }

    void tabShowsWhatWentInAndTheChangeSet()
    {
        const QString repo = folder(QStringLiteral("shown"));
        RunListModel model;
        WorkspaceDecisions decisions(&model, nullptr);
        const RunRecord r = run(repo, Workspace::Apply::Never);
        model.apply(finished(r));
        RunDetailsPane pane;
        pane.setModel(&model);
        pane.setWorkspaceDecisions(&decisions);
        pane.showRun(model.complete(r.id));

        QVERIFY(pane.tabs()->isTabVisible(tabIndex(pane)));
        QCOMPARE(pane.tabs()->tabText(tabIndex(pane)), QStringLiteral("Wor&kspaces (1 to decide)"));
        const QTreeWidget *table = pane.workspacePane()->table();
        QCOMPARE(table->topLevelItemCount(), 2);
        const QTreeWidgetItem *data = table->topLevelItem(0);
        QCOMPARE(data->text(WorkspacePane::NameColumn), QStringLiteral("data"));
        QCOMPARE(data->text(WorkspacePane::ModeColumn), QStringLiteral("read-only"));
        QCOMPARE(data->text(WorkspacePane::FilesColumn), QStringLiteral("1"));
        const QTreeWidgetItem *repoRow = table->topLevelItem(1);
        QCOMPARE(repoRow->text(WorkspacePane::ModeColumn), QStringLiteral("copy-on-write"));
        QCOMPARE(repoRow->text(WorkspacePane::FilesColumn), QStringLiteral("3"));
        QCOMPARE(repoRow->text(WorkspacePane::ExcludedColumn), QStringLiteral("1")); // .env
        QVERIFY(repoRow->text(WorkspacePane::ChangesColumn).contains(u"not applied"));
        // The copy-on-write one is selected: its change set shows.
        QCOMPARE(table->currentItem(), repoRow);
        WorkspaceChangesView *view = pane.workspacePane()->changesView();
        QVERIFY(!view->isHidden());
        const QTreeWidget *list = view->changeList();
        QCOMPARE(list->topLevelItemCount(), 4);
        QStringList rows;
        for (int i = 0; i < list->topLevelItemCount(); ++i) {
            const QTreeWidgetItem *row = list->topLevelItem(i);
            rows << QStringLiteral("%1 %2 %3")
                        .arg(row->text(WorkspaceChangesView::KindColumn),
                             row->text(WorkspaceChangesView::PathColumn),
                             row->text(WorkspaceChangesView::LinesColumn));
        }
        QCOMPARE(rows, (QStringList{QStringLiteral("modified main.py +2 −1"),
                                    QStringLiteral("added new.txt +1 −0"),
                                    QStringLiteral("deleted old.txt "),
                                    QStringLiteral("added plot.png binary")}));
        // The first file's diff, read-only and monospace.
        QVERIFY(view->diffView()->isReadOnly());
        QCOMPARE(view->diffView()->font(), QFontDatabase::systemFont(QFontDatabase::FixedFont));
        const QString diff = view->diffView()->toPlainText();
        QVERIFY2(diff.contains(u"-print(1)\n") && diff.contains(u"+print(2)\n") &&
                     diff.contains(u"+print(3)"),
                 qPrintable(diff));
        // A binary says what it is.
        const_cast<QTreeWidget *>(list)->setCurrentItem(list->topLevelItem(3));
        QVERIFY2(view->diffView()->toPlainText().startsWith(u"binary, 308 bytes, sha256 "),
                 qPrintable(view->diffView()->toPlainText()));
        // The link the program made is listed as refused, with why.
        QVERIFY(!view->notesView()->isHidden());
        QVERIFY2(view->notesView()->toPlainText().contains(u"Refused, never applied") &&
                     view->notesView()->toPlainText().contains(u"escape"),
                 qPrintable(view->notesView()->toPlainText()));
        QVERIFY(applyButton(pane)->isEnabled());
        QVERIFY(view->discardButton()->isEnabled());
        QVERIFY(shownText(view->stateLabel()).contains(u"Not applied"));

        // A run without workspaces has no tab.
        RunRecord plain;
        plain.id = QStringLiteral("plain");
        plain.status = RunRecord::Status::Ok;
        pane.showRun(&plain);
        QVERIFY(!pane.tabs()->isTabVisible(tabIndex(pane)));
    }

    void applyWritesTheFolderAndTheDecisionSticks()
    {
        const QString repo = folder(QStringLiteral("applied"));
        HistoryStore history;
        QVERIFY(history.open(m_dir.filePath(QStringLiteral("history-apply.sqlite"))));
        RunListModel model;
        WorkspaceDecisions decisions(&model, &history);
        const RunRecord r = run(repo, Workspace::Apply::Never);
        QSignalSpy saved(&history, &HistoryStore::saved);
        QVERIFY(history.save(r));
        QVERIFY(saved.wait(10000));
        model.apply(finished(r));
        RunDetailsPane pane;
        pane.setModel(&model);
        pane.setWorkspaceDecisions(&decisions);
        pane.showRun(model.complete(r.id));

        QSignalSpy updated(&history, &HistoryStore::workspacesUpdated);
        QTest::mouseClick(applyButton(pane), Qt::LeftButton);
        // Under way: neither button takes a second click.
        QVERIFY(!applyButton(pane)->isEnabled());
        QVERIFY(!pane.workspacePane()->changesView()->discardButton()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(!decisions.isBusy(r.id, QStringLiteral("repo")), 10000);

        QCOMPARE(readFile(repo + QStringLiteral("/main.py")),
                 QByteArray("print(2)\nprint('a')\nprint(3)\n"));
        QCOMPARE(readFile(repo + QStringLiteral("/new.txt")), QByteArray("new\n"));
        QCOMPARE(readFile(repo + QStringLiteral("/plot.png")), binaryBytes());
        QVERIFY(!QFile::exists(repo + QStringLiteral("/old.txt")));
        QVERIFY(!QFileInfo(repo + QStringLiteral("/escape")).exists());
        QCOMPARE(readFile(repo + QStringLiteral("/.env")), QByteArray("TOKEN=never-copied\n"));

        WorkspaceChangesView *view = pane.workspacePane()->changesView();
        QVERIFY(!applyButton(pane)->isEnabled());
        QVERIFY(!view->discardButton()->isEnabled());
        QVERIFY2(shownText(view->stateLabel()).contains(u"Applied") &&
                     shownText(view->stateLabel()).contains(u"4 files written"),
                 qPrintable(shownText(view->stateLabel())));
        QCOMPARE(pane.tabs()->tabText(tabIndex(pane)), QStringLiteral("Wor&kspaces"));

        // In the model's record, and in the history.
        QTRY_VERIFY_WITH_TIMEOUT(!updated.isEmpty(), 10000);
        QVERIFY(updated.last().at(1).toBool());
        const std::optional<RunRecord> stored = history.load(r.id);
        QVERIFY(stored.has_value());
        const RunWorkspace kept = RunWorkspace::fromRecord(stored->workspaces).at(1);
        QCOMPARE(kept.decision, QStringLiteral("applied"));
        QCOMPARE(kept.applied.applied.size(), 4);
        QCOMPARE(kept.state(), RunWorkspace::State::Applied);
        // Shown again (another run selected, then this one; or after a restart): still decided.
        RunDetailsPane again;
        again.setWorkspaceDecisions(&decisions);
        again.showRun(&*stored);
        QVERIFY(!applyButton(again)->isEnabled());
        QVERIFY(!decisions.apply(r.id, QStringLiteral("repo")));
        QVERIFY(!decisions.discard(r.id, QStringLiteral("repo")));
    }

    void aConflictIsShownAndNothingOverwritten()
    {
        const QString repo = folder(QStringLiteral("conflict"));
        RunListModel model;
        WorkspaceDecisions decisions(&model, nullptr);
        const RunRecord r = run(repo, Workspace::Apply::Never);
        model.apply(finished(r));
        // The person edits main.py after the run started.
        QVERIFY(writeFiles(repo, {{QStringLiteral("main.py"), "print('mine')\n"}}));
        RunDetailsPane pane;
        pane.setWorkspaceDecisions(&decisions);
        pane.showRun(model.complete(r.id));
        QTest::mouseClick(applyButton(pane), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!decisions.isBusy(r.id, QStringLiteral("repo")), 10000);

        QCOMPARE(readFile(repo + QStringLiteral("/main.py")), QByteArray("print('mine')\n"));
        QCOMPARE(readFile(repo + QStringLiteral("/new.txt")), QByteArray("new\n"));
        WorkspaceChangesView *view = pane.workspacePane()->changesView();
        const QString notes = view->notesView()->toPlainText();
        QVERIFY2(notes.contains(u"Left alone: the folder's file changed since the run started") &&
                     notes.contains(u"main.py"),
                 qPrintable(notes));
        QVERIFY2(shownText(view->stateLabel()).contains(u"1 left alone"),
                 qPrintable(shownText(view->stateLabel())));
        QVERIFY(!applyButton(pane)->isEnabled());
    }

    void discardLeavesTheFolder()
    {
        const QString repo = folder(QStringLiteral("discarded"));
        RunListModel model;
        WorkspaceDecisions decisions(&model, nullptr);
        const RunRecord r = run(repo, Workspace::Apply::Never);
        model.apply(finished(r));
        RunDetailsPane pane;
        pane.setWorkspaceDecisions(&decisions);
        pane.showRun(model.complete(r.id));
        QTest::mouseClick(pane.workspacePane()->changesView()->discardButton(), Qt::LeftButton);
        QCOMPARE(readFile(repo + QStringLiteral("/main.py")), QByteArray("print(1)\nprint('a')\n"));
        QVERIFY(QFile::exists(repo + QStringLiteral("/old.txt")));
        QVERIFY(!QFile::exists(repo + QStringLiteral("/new.txt")));
        QVERIFY(!applyButton(pane)->isEnabled());
        QVERIFY(
            shownText(pane.workspacePane()->changesView()->stateLabel()).contains(u"Discarded"));
        QCOMPARE(RunWorkspace::fromRecord(model.run(r.id)->workspaces).at(1).decision,
                 QStringLiteral("discarded"));
    }

    void contentNotKeptCannotBeApplied()
    {
        const QString repo = folder(QStringLiteral("unkept"));
        RunListModel model;
        WorkspaceDecisions decisions(&model, nullptr);
        RunRecord r = run(repo, Workspace::Apply::Never);
        // As a record whose change set was too large to keep its content.
        QJsonObject repoJson = r.workspaces.at(1).toObject();
        repoJson.insert(QStringLiteral("content_kept"), false);
        r.workspaces[1] = repoJson;
        model.apply(finished(r));
        RunDetailsPane pane;
        pane.setWorkspaceDecisions(&decisions);
        pane.showRun(model.complete(r.id));
        WorkspaceChangesView *view = pane.workspacePane()->changesView();
        QVERIFY(!applyButton(pane)->isEnabled());
        QVERIFY(view->discardButton()->isEnabled());
        QVERIFY2(shownText(view->stateLabel()).contains(u"too large to keep"),
                 qPrintable(shownText(view->stateLabel())));
        QVERIFY(!decisions.apply(r.id, QStringLiteral("repo")));
        QCOMPARE(readFile(repo + QStringLiteral("/main.py")), QByteArray("print(1)\nprint('a')\n"));
    }

    void theDialogAsksForAskRunsOnly()
    {
        const QString repo = folder(QStringLiteral("asked"));
        RunListModel model;
        WorkspaceDecisions decisions(&model, nullptr);
        QWidget window;
        WorkspacePrompter prompter(&decisions, &window, nullptr);

        // apply "never": kept with the run, nobody is asked.
        model.apply(finished(run(repo, Workspace::Apply::Never)));
        QVERIFY(prompter.dialogs().isEmpty());
        // apply "ask", from a headless instance: its end as it crosses the monitor socket.
        const RunRecord asked = run(repo, Workspace::Apply::Ask, QStringLiteral("gemini-cli"));
        const QByteArray line =
            QJsonDocument(finished(asked).toJson()).toJson(QJsonDocument::Compact);
        const std::optional<JournalEvent> received =
            JournalEvent::fromJson(QJsonDocument::fromJson(line).object());
        QVERIFY(received.has_value());
        model.apply(*received);
        QCOMPARE(prompter.dialogs().size(), 1);
        WorkspaceAskDialog *dialog = prompter.dialog(asked.id);
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());
        QVERIFY(!dialog->isModal());
        const QString texts = shownTexts(dialog);
        QVERIFY2(texts.contains(u"gemini-cli's run changed a workspace") &&
                     texts.contains(QFileInfo(repo).canonicalFilePath()) &&
                     texts.contains(u"+print(2)"),
                 qPrintable(texts));
        QCOMPARE(dialog->views().size(), 1);
        QCOMPARE(dialog->views().at(0)->changeList()->topLevelItemCount(), 4);
        // The same end again (a reconnecting instance): still one dialog.
        model.apply(*received);
        QCOMPARE(prompter.dialogs().size(), 1);

        // Apply from the dialog: written, and decided there.
        QTest::mouseClick(dialog->views().at(0)->applyButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(!decisions.isBusy(asked.id, QStringLiteral("repo")), 10000);
        QCOMPARE(readFile(repo + QStringLiteral("/new.txt")), QByteArray("new\n"));
        QVERIFY(!dialog->views().at(0)->applyButton()->isEnabled());
        QVERIFY(!decisions.needsAsking(*model.run(asked.id)));

        // "ask" with nothing changed: nobody is asked.
        ExecutionResult nothing;
        nothing.workspaces = {
            changedWorkspace(QStringLiteral("repo"), repo, Workspace::Apply::Ask, {})};
        RunRecord quiet;
        quiet.id = QStringLiteral("quiet");
        quiet.applyResult(nothing);
        model.apply(finished(quiet));
        QVERIFY(!prompter.dialog(QStringLiteral("quiet")));
        // Closing decides nothing: the run still waits in its tab.
        const RunRecord later = run(folder(QStringLiteral("asked-later")), Workspace::Apply::Ask);
        model.apply(finished(later));
        QPointer<WorkspaceAskDialog> second = prompter.dialog(later.id);
        QVERIFY(second);
        second->findChild<QPushButton *>(QStringLiteral("decideLaterButton"))->click();
        QTRY_VERIFY(!second);
        QVERIFY(decisions.needsAsking(*model.run(later.id)));
    }
};

QTEST_MAIN(WorkspacesTest)
#include "tst_workspaces.moc"
