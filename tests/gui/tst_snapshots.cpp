// Sessions' snapshots in the window (issue 49), against the real engine: a session of the window's
// own server (made and called as the tools make and call it, through Services' SessionManager)
// shows a step per call; Rewind here from the list's context menu brings it back (its next call
// finds the first call's state) and the tree shows the branch; Fork from here lists a new session
// linked to its parent; Export, Import and Delete work from the menus; a headless instance's run
// has the items disabled, saying why. With CODE_SANDBOX_SHOTS set and a real display (desktop.sh
// runs it so), it also takes the screenshot of the tree with its menu open.

#include "../integration/leftoversweeper.h"
#include "appcontroller.h"
#include "appsettings.h"
#include "commandline.h"
#include "engineclient.h"
#include "enginelocator.h"
#include "execution.h"
#include "mainwindow.h"
#include "monitorpublisher.h"
#include "monitorserver.h"
#include "runlistmodel.h"
#include "sandboxservice.h"
#include "sandboxsession.h"
#include "services.h"
#include "sessionmanager.h"
#include "sessionsnapshots.h"
#include "sessiontreemodel.h"
#include "snapshotactions.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QScreen>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QTreeView>
#include <QUuid>
#include <functional>
#include <memory>

namespace {
constexpr int kRunMs = 90000; // a cold image start on a loaded CI machine
// The MCP session that owns the sessions, as the tools pass it (call->owner()).
const QString kOwner = QStringLiteral("mcp-session-gui-snapshots");

// One window with everything behind it, as main() builds it for the window (Services, the
// controller with the server's sessions), with the history and the instance id of this test.
struct Desk
{
    Desk(const QString &dir, const QString &instance)
    {
        CommandLine cl;
        cl.config.poolSize = 1;
        services = Services::create(cl, Services::Mode::Window,
                                    {instance, dir + QStringLiteral("/history.sqlite")});
        if (!services || !services->sessions() || !services->sessions()->snapshots())
            qFatal("the services did not start with sessions that keep snapshots");
        monitor = std::make_unique<MonitorServer>();
        QString error;
        if (!monitor->listen(dir + QStringLiteral("/monitor.sock"), &error))
            qFatal("monitor: %s", qPrintable(error));
        controller = std::make_unique<AppController>(services->sandbox(), services->journal(),
                                                     services->history(), monitor.get());
        controller->setSessions(services->sessions());
        AppSettings settings;
        settings.keepRunningInBackground = true;
        // As main() has it: a window closing (a tray icon's, on a real display) must not end the
        // application, which would end every dialog's event loop at once from then on.
        QApplication::setQuitOnLastWindowClosed(false);
        QObject::connect(qApp, &QCoreApplication::aboutToQuit,
                         [] { qWarning("the application was told to quit"); });
        window = std::make_unique<MainWindow>(controller.get(), settings);
        window->resize(1280, 820);
        window->show();
    }
    ~Desk()
    {
        window.reset();
        QSignalSpy done(services->sandbox(), &SandboxService::shutdownFinished);
        services->sandbox()->shutdown();
        done.wait(20000);
    }
    SessionManager *sessions() const { return services->sessions(); }
    RunListModel *model() const { return controller->model(); }
    SessionTreeModel *tree() const { return window->sessionTree(); }

    std::unique_ptr<Services> services; // first: the others refer to it
    std::unique_ptr<MonitorServer> monitor;
    std::unique_ptr<AppController> controller;
    std::unique_ptr<MainWindow> window;
};

// Calls `answer` with the next modal dialog once it shows (a question, a file dialog, a
// message), from the event loop the dialog's exec() runs. `answered` says it was.
void whenDialog(const std::function<void(QWidget *)> &answer,
                std::shared_ptr<bool> answered = std::make_shared<bool>())
{
    auto *poll = new QTimer;
    auto waited = std::make_shared<int>(0);
    QObject::connect(poll, &QTimer::timeout, [poll, answer, answered, waited] {
        QWidget *dialog = QApplication::activeModalWidget();
        if (!dialog && (*waited += poll->interval()) < 20000)
            return;
        poll->stop();
        poll->deleteLater();
        if (dialog) {
            *answered = true;
            answer(dialog);
        }
    });
    poll->start(50);
}

// Presses the button of a message box whose text is `text`.
void press(QWidget *dialog, const QString &text)
{
    auto *box = qobject_cast<QMessageBox *>(dialog);
    QVERIFY2(box, dialog->metaObject()->className());
    for (QAbstractButton *button : box->buttons()) {
        if (button->text().remove(u'&') == text) {
            button->click();
            return;
        }
    }
    QFAIL(qPrintable(QStringLiteral("no button %1").arg(text)));
}

// Types a path into a file dialog's name field, as a person does.
void typeFileName(QFileDialog *dialog, const QString &path)
{
    auto *name = dialog->findChild<QLineEdit *>(QStringLiteral("fileNameEdit"));
    QVERIFY(name);
    name->setText(path);
}

QAction *actionNamed(QMenu *menu, const QString &name)
{
    for (QAction *action : menu->actions())
        if (action->objectName() == name)
            return action;
    return nullptr;
}
} // namespace

class SnapshotsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void twoCallsShowTwoSteps();
    void rewindHereBringsTheSessionBack();
    void forkFromHereListsALinkedSession();
    void screenshotOfTheTree();
    void exportImportAndDelete();
    void headlessRunsSayWhyNot();
    void cleanupTestCase();

private:
    // A python session of kOwner's, ready.
    QString createSession();
    // A call in the session, as run_python_code makes it; its run id once it ended.
    QString call(const QString &sessionId, const QString &code);
    // The step of a run, once its snapshot is in the tree.
    QString waitForStep(const QString &runId);
    QModelIndex rowOf(const QString &runId) const { return m_desk->tree()->indexOfRun(runId); }
    // The row's context menu, as a right-click opens it.
    std::unique_ptr<QMenu> menuOf(const QString &runId);
    // Chooses an item of the row's menu; false (with why) when it is not there or disabled.
    bool choose(const QString &runId, const QString &item);

    QTemporaryDir m_dir;
    QString m_instance =
        QStringLiteral("gui-snap-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
    std::unique_ptr<Desk> m_desk;
    std::unique_ptr<QAbstractItemModelTester> m_tester;
    QString m_session;
    QStringList m_runs; // the session's, oldest first
    QString m_fork;
};

void SnapshotsTest::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_desk = std::make_unique<Desk>(m_dir.path(), m_instance);
    m_tester = std::make_unique<QAbstractItemModelTester>(
        m_desk->tree(), QAbstractItemModelTester::FailureReportingMode::QtTest);
}

QString SnapshotsTest::createSession()
{
    SessionManager *sessions = m_desk->sessions();
    QString id;
    QString error;
    bool done = false;
    sessions->create(kOwner, QStringLiteral("python"), {}, 0,
                     RunNetwork::decide(sessions->sandbox()->config(), std::nullopt), {},
                     [&](SandboxSession *session, const QString &why) {
                         done = true;
                         error = why;
                         if (session)
                             id = session->id();
                     });
    if (!QTest::qWaitFor([&] { return done; }, kRunMs))
        qWarning("the session did not start in time");
    if (!error.isEmpty())
        qWarning("the session did not start: %s", qPrintable(error));
    return id;
}

QString SnapshotsTest::call(const QString &sessionId, const QString &code)
{
    SessionManager *sessions = m_desk->sessions();
    // One call at a time: wait until the session is idle (a rewind or a snapshot may be going).
    SessionAdmission verdict;
    [[maybe_unused]] const bool idle = QTest::qWaitFor(
        [&] {
            verdict = sessions->admit(sessionId, kOwner, nullptr, false);
            return verdict.admitted();
        },
        kRunMs);
    if (!verdict.admitted())
        return QString();
    ExecutionRequest request(QStringLiteral("python"), code);
    request.source = QStringLiteral("claude-code");
    request.tool = QStringLiteral("run_python_code");
    request.sessionId = sessionId;
    request.session = verdict.session;
    Execution *execution = sessions->execute(request);
    const QString runId = execution->runId();
    [[maybe_unused]] const bool ended = QTest::qWaitFor(
        [&] {
            const RunRecord *run = m_desk->model()->run(runId);
            return run && run->isFinished();
        },
        kRunMs);
    return runId;
}

QString SnapshotsTest::waitForStep(const QString &runId)
{
    [[maybe_unused]] const bool kept = QTest::qWaitFor(
        [&] { return !rowOf(runId).data(SessionTreeModel::SnapshotIdRole).toString().isEmpty(); },
        kRunMs);
    return rowOf(runId).data(SessionTreeModel::SnapshotIdRole).toString();
}

std::unique_ptr<QMenu> SnapshotsTest::menuOf(const QString &runId)
{
    MainWindow *window = m_desk->window.get();
    window->selectRun(runId);
    return std::unique_ptr<QMenu>(window->contextMenuFor(window->runTree()->currentIndex()));
}

bool SnapshotsTest::choose(const QString &runId, const QString &item)
{
    const std::unique_ptr<QMenu> menu = menuOf(runId);
    QAction *action = actionNamed(menu.get(), item);
    if (!action || !action->isEnabled()) {
        qWarning("%s: %s", qPrintable(item),
                 action ? qPrintable(action->toolTip()) : "not in the menu");
        return false;
    }
    action->trigger();
    return true;
}

void SnapshotsTest::twoCallsShowTwoSteps()
{
    m_session = createSession();
    QVERIFY(!m_session.isEmpty());
    // The first call leaves a socket, which no snapshot keeps.
    m_runs << call(m_session,
                   QStringLiteral("import socket\nx = 1\nconn = socket.socket()\nprint('one')"));
    QVERIFY(!m_runs.last().isEmpty());
    const QString first = waitForStep(m_runs.at(0));
    QCOMPARE(first, m_session + QStringLiteral(".1"));
    m_runs << call(m_session, QStringLiteral("x = 2\nprint('two')"));
    const QString second = waitForStep(m_runs.at(1));
    QCOMPARE(second, m_session + QStringLiteral(".2"));
    QCOMPARE(m_desk->model()->run(m_runs.at(1))->stdoutText().trimmed(), QByteArray("two"));

    SessionTreeModel *tree = m_desk->tree();
    const QModelIndex session = tree->indexOfSession(m_session);
    QCOMPARE(tree->rowCount(session), 2);
    // Two steps, one after the other: no branch; the session is at the second.
    for (int i = 0; i < 2; ++i) {
        const QModelIndex row = rowOf(m_runs.at(i));
        QCOMPARE(row.parent(), session);
        QCOMPARE(row.data(SessionTreeModel::BranchFromRole).toString(), QString());
        const QModelIndex cell = row.siblingAtColumn(RunListModel::SessionColumn);
        QCOMPARE(cell.data().toString(), QStringLiteral("#%1").arg(i + 1));
        QVERIFY(!cell.data(Qt::DecorationRole).value<QIcon>().isNull());
        const QString tip = cell.data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(m_session + QStringLiteral(".%1").arg(i + 1)), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("after call %1").arg(i + 1)), qPrintable(tip));
        QVERIFY2(tip.contains(u"B"), qPrintable(tip)); // its size
    }
    QVERIFY(!rowOf(m_runs.at(0)).data(SessionTreeModel::IsCurrentStepRole).toBool());
    QVERIFY(rowOf(m_runs.at(1)).data(SessionTreeModel::IsCurrentStepRole).toBool());
    // What the first step could not keep is said with it.
    const QString tip = rowOf(m_runs.at(0))
                            .siblingAtColumn(RunListModel::SessionColumn)
                            .data(Qt::ToolTipRole)
                            .toString();
    QVERIFY2(tip.contains(u"Not kept: conn (socket)"), qPrintable(tip));
    QVERIFY(!session.data(SessionTreeModel::ForkedFromRole).toString().size());

    // Its run's menu has the four items, all usable (the session is idle, of this process).
    const std::unique_ptr<QMenu> menu = menuOf(m_runs.at(0));
    for (const QString &name :
         {QStringLiteral("rewindAction"), QStringLiteral("forkAction"),
          QStringLiteral("exportSnapshotAction"), QStringLiteral("deleteSnapshotAction")}) {
        QAction *action = actionNamed(menu.get(), name);
        QVERIFY2(action, qPrintable(name));
        QVERIFY2(action->isEnabled(), qPrintable(name + u' ' + action->toolTip()));
    }
    // A session's own row has none (its steps are its runs' rows).
    const std::unique_ptr<QMenu> sessionMenu(m_desk->window->contextMenuFor(session));
    QVERIFY(!actionNamed(sessionMenu.get(), QStringLiteral("rewindAction")));
}

void SnapshotsTest::rewindHereBringsTheSessionBack()
{
    QVERIFY(m_runs.size() == 2);
    const QString first = m_session + QStringLiteral(".1");
    // Cancel first: nothing happens.
    auto answered = std::make_shared<bool>();
    whenDialog([](QWidget *d) { press(d, QStringLiteral("Cancel")); }, answered);
    QVERIFY(choose(m_runs.at(0), QStringLiteral("rewindAction")));
    QVERIFY(*answered);
    QCOMPARE(m_desk->controller->snapshots()->currentOf(m_session),
             m_session + QStringLiteral(".2"));

    answered = std::make_shared<bool>();
    whenDialog([](QWidget *d) { press(d, QStringLiteral("Rewind")); }, answered);
    QSignalSpy finished(m_desk->controller->snapshots(), &SessionSnapshots::finished);
    QSignalSpy failed(m_desk->controller->snapshots(), &SessionSnapshots::failed);
    QVERIFY(choose(m_runs.at(0), QStringLiteral("rewindAction")));
    QVERIFY(*answered);
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() + failed.count() > 0, kRunMs);
    QVERIFY2(failed.isEmpty(),
             failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
    // The status bar says so, and the tree marks where the session is now.
    QVERIFY(m_desk->window->statusBar()->currentMessage().contains(first));
    QVERIFY(rowOf(m_runs.at(0)).data(SessionTreeModel::IsCurrentStepRole).toBool());
    QVERIFY(!rowOf(m_runs.at(1)).data(SessionTreeModel::IsCurrentStepRole).toBool());

    // The next call finds the first call's state.
    m_runs << call(m_session, QStringLiteral("print('x is', x)"));
    const RunRecord *third = m_desk->model()->run(m_runs.at(2));
    QVERIFY(third);
    QCOMPARE(third->status, RunRecord::Status::Ok);
    QCOMPARE(third->stdoutText().trimmed(), QByteArray("x is 1"));
    // Its assistant is told, with that call's result, that a person rewound the session.
    QVERIFY2(third->notes.join(u'\n').contains(QStringLiteral("rewound this session to snapshot %1 "
                                                              "from the Code Sandbox window")
                                                   .arg(first)),
             qPrintable(third->notes.join(u'\n')));
    // Its step branches from the first: the tree says so.
    QCOMPARE(waitForStep(m_runs.at(2)), m_session + QStringLiteral(".3"));
    const QModelIndex row = rowOf(m_runs.at(2));
    QCOMPARE(row.data(SessionTreeModel::BranchFromRole).toString(), first);
    QCOMPARE(row.siblingAtColumn(RunListModel::SessionColumn).data().toString(),
             QStringLiteral("#3 ← #1"));
    QVERIFY(row.siblingAtColumn(RunListModel::SessionColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(u"Branches from #1"));
    QVERIFY(row.data(SessionTreeModel::IsCurrentStepRole).toBool());
    // The second step stays, as the branch left behind.
    QCOMPARE(rowOf(m_runs.at(1)).data(SessionTreeModel::SnapshotIdRole).toString(),
             m_session + QStringLiteral(".2"));
}

void SnapshotsTest::forkFromHereListsALinkedSession()
{
    QVERIFY(m_runs.size() == 3);
    const QString second = m_session + QStringLiteral(".2");
    SessionTreeModel *tree = m_desk->tree();
    QSignalSpy forked(m_desk->controller->snapshots(), &SessionSnapshots::forked);
    QSignalSpy failed(m_desk->controller->snapshots(), &SessionSnapshots::failed);
    QVERIFY(choose(m_runs.at(1), QStringLiteral("forkAction")));
    QTRY_VERIFY_WITH_TIMEOUT(forked.count() + failed.count() > 0, kRunMs);
    QVERIFY2(failed.isEmpty(),
             failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
    m_fork = forked.first().at(0).toString();
    QCOMPARE(forked.first().at(2).toString(), second);
    // A new session row, at the top and selected before it ran anything, linked to its parent.
    const QModelIndex fork = tree->indexOfSession(m_fork);
    QVERIFY(fork.isValid());
    QCOMPARE(fork.row(), 0);
    QCOMPARE(tree->rowCount(fork), 0);
    QCOMPARE(fork.data(SessionTreeModel::ForkedFromRole).toString(), second);
    const QString shortParent = m_session.section(u'-', -1).left(8);
    QCOMPARE(fork.siblingAtColumn(RunListModel::SessionColumn).data().toString(),
             m_fork.section(u'-', -1).left(8));
    QCOMPARE(fork.siblingAtColumn(RunListModel::SourceColumn).data().toString(),
             QStringLiteral("← %1 #2").arg(shortParent.left(4)));
    QVERIFY(!fork.siblingAtColumn(RunListModel::SessionColumn).data(Qt::DecorationRole).isNull());
    QCOMPARE(fork.siblingAtColumn(RunListModel::DurationColumn).data().toString(),
             QStringLiteral("no runs yet"));
    QCOMPARE(fork.siblingAtColumn(RunListModel::LanguageColumn).data().toString(),
             QStringLiteral("python"));
    QVERIFY(fork.siblingAtColumn(RunListModel::SessionColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(QStringLiteral("Forked from %1 #2 (%2)").arg(shortParent, second)));
    QCOMPARE(m_desk->window->runTree()->currentIndex().data(SessionTreeModel::SessionIdRole),
             QVariant(m_fork));
    // It is the same assistant's, with the second step's state; the parent goes on as it was.
    QCOMPARE(m_desk->sessions()->ownerOf(m_fork), kOwner);
    const QString run = call(m_fork, QStringLiteral("print('fork has', x)"));
    QCOMPARE(m_desk->model()->run(run)->stdoutText().trimmed(), QByteArray("fork has 2"));
    QCOMPARE(tree->indexOfSession(m_fork).row(), 0);
    QCOMPARE(tree->rowCount(tree->indexOfSession(m_fork)), 1);
    QCOMPARE(waitForStep(run), m_fork + QStringLiteral(".1"));
    // Its first step continues the parent's: the session row says so, the step no branch.
    QCOMPARE(rowOf(run).data(SessionTreeModel::BranchFromRole).toString(), QString());
    QCOMPARE(tree->indexOfSession(m_fork).data(SessionTreeModel::ForkedFromRole).toString(),
             second);
    const QString parentRun = call(m_session, QStringLiteral("print('parent has', x)"));
    QCOMPARE(m_desk->model()->run(parentRun)->stdoutText().trimmed(), QByteArray("parent has 1"));
    m_runs << parentRun;
    QVERIFY(!waitForStep(parentRun).isEmpty());
}

void SnapshotsTest::exportImportAndDelete()
{
    QVERIFY(m_runs.size() == 4);
    const QString second = m_session + QStringLiteral(".2");
    const QString path = m_dir.filePath(QStringLiteral("exported.csnap"));
    // Export: the file dialog proposes "<id>.csnap".
    auto answered = std::make_shared<bool>();
    QString proposed;
    whenDialog(
        [&proposed, path](QWidget *d) {
            auto *dialog = qobject_cast<QFileDialog *>(d);
            QVERIFY2(dialog, d->metaObject()->className());
            proposed = dialog->selectedFiles().value(0);
            typeFileName(dialog, path);
            static_cast<QDialog *>(dialog)->accept(); // QFileDialog's is protected
        },
        answered);
    QVERIFY(choose(m_runs.at(1), QStringLiteral("exportSnapshotAction")));
    QVERIFY(*answered);
    QCOMPARE(QFileInfo(proposed).fileName(), second + QStringLiteral(".csnap"));
    QVERIFY2(QFileInfo(path).size() > 0,
             qPrintable(m_desk->window->statusBar()->currentMessage() + u' ' + proposed));
    QVERIFY(m_desk->window->statusBar()->currentMessage().contains(u"exported"));

    // Import (File menu): kept under a new id, copied, explained.
    QAction *import = m_desk->window->snapshotActions()->importAction();
    QVERIFY(m_desk->window->findChildren<QAction *>().contains(import));
    QString told;
    answered = std::make_shared<bool>();
    auto shown = std::make_shared<bool>();
    whenDialog(
        [&told, path, shown](QWidget *d) {
            auto *dialog = qobject_cast<QFileDialog *>(d);
            QVERIFY2(dialog, d->metaObject()->className());
            typeFileName(dialog, path);
            static_cast<QDialog *>(dialog)->accept(); // QFileDialog's is protected
            // Then the message that says what was imported.
            whenDialog(
                [&told](QWidget *m) {
                    auto *box = qobject_cast<QMessageBox *>(m);
                    QVERIFY(box);
                    told = box->text() + u'\n' + box->informativeText();
                    box->accept();
                },
                shown);
        },
        answered);
    import->trigger();
    QVERIFY(*answered);
    QTRY_VERIFY(*shown);
    const QString imported = QApplication::clipboard()->text();
    QVERIFY2(imported.startsWith(u"import-"), qPrintable(imported));
    QVERIFY2(told.contains(imported) && told.contains(u"from_snapshot"), qPrintable(told));
    // Any assistant may start from it.
    QVERIFY(m_desk->sessions()->snapshotOf(imported, QStringLiteral("another-client")));

    // Delete: asked first, then gone from the server and from the tree; the run stays.
    answered = std::make_shared<bool>();
    whenDialog([](QWidget *d) { press(d, QStringLiteral("Delete")); }, answered);
    QVERIFY(choose(m_runs.at(1), QStringLiteral("deleteSnapshotAction")));
    QVERIFY(*answered);
    QVERIFY(!m_desk->sessions()->snapshots()->find(second));
    QCOMPARE(rowOf(m_runs.at(1)).data(SessionTreeModel::SnapshotIdRole).toString(), QString());
    QVERIFY(rowOf(m_runs.at(1)).isValid());
    const std::unique_ptr<QMenu> menu = menuOf(m_runs.at(1));
    QAction *rewind = actionNamed(menu.get(), QStringLiteral("rewindAction"));
    QVERIFY(!rewind->isEnabled());
    QVERIFY2(rewind->toolTip().contains(u"No snapshot is kept"), qPrintable(rewind->toolTip()));
    // The fork still names where it came from.
    QCOMPARE(m_desk->tree()->indexOfSession(m_fork).data(SessionTreeModel::ForkedFromRole),
             QVariant(second));
}

void SnapshotsTest::headlessRunsSayWhyNot()
{
    // A headless instance's session run, over the monitor socket as such an instance sends it:
    // no SessionManager here has its session.
    const QString instance = QStringLiteral("headless-") + QUuid::createUuid().toString();
    auto publisher = std::make_unique<MonitorPublisher>(m_desk->monitor->path(), instance,
                                                        QStringLiteral("stdio"));
    QTRY_VERIFY(m_desk->monitor->hasInstance(instance));
    RunRecord r;
    r.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    r.instanceId = instance;
    r.source = QStringLiteral("claude-code");
    r.tool = QStringLiteral("run_python_code");
    r.sessionId = QStringLiteral("s-elsewhe-0123456789ab");
    r.language = QStringLiteral("python");
    r.createdAt = QDateTime::currentDateTimeUtc();
    r.status = RunRecord::Status::Running;
    publisher->send({JournalEvent::Type::Created, r, 1, {}, {}});
    r.status = RunRecord::Status::Ok;
    r.exitCode = 0;
    r.finishedAt = QDateTime::currentDateTimeUtc();
    publisher->send({JournalEvent::Type::Finished, r, 1, {}, {}});
    QTRY_VERIFY(m_desk->model()->run(r.id) && m_desk->model()->run(r.id)->isFinished());
    const QStringList items{QStringLiteral("rewindAction"), QStringLiteral("forkAction"),
                            QStringLiteral("exportSnapshotAction"),
                            QStringLiteral("deleteSnapshotAction")};
    const auto checkDisabled = [&](const QString &why) {
        const std::unique_ptr<QMenu> menu = menuOf(r.id);
        QVERIFY(menu->toolTipsVisible());
        for (const QString &name : items) {
            QAction *action = actionNamed(menu.get(), name);
            QVERIFY2(action, qPrintable(name));
            QVERIFY(!action->isEnabled());
            QVERIFY2(action->toolTip().contains(why), qPrintable(action->toolTip()));
        }
    };
    checkDisabled(QStringLiteral("headless instance"));
    // Once the instance is gone, its snapshots are too.
    publisher.reset();
    QTRY_VERIFY(!m_desk->monitor->hasInstance(instance));
    checkDisabled(QStringLiteral("has stopped"));
}

void SnapshotsTest::screenshotOfTheTree()
{
    const QString shots = qEnvironmentVariable("CODE_SANDBOX_SHOTS");
    if (shots.isEmpty() || QGuiApplication::platformName() != u"xcb")
        QSKIP("CODE_SANDBOX_SHOTS names no folder, or there is no display for a screenshot");
    MainWindow *window = m_desk->window.get();
    // The whole screen (1440x900 in desktop.sh): the list has room for a fork's origin.
    window->setGeometry(QGuiApplication::primaryScreen()->availableGeometry());
    window->showAndRaise();
    QVERIFY(QTest::qWaitForWindowExposed(window));
    // The rewound session's first step, its menu open over the tree.
    window->selectRun(m_runs.at(0));
    QTreeView *tree = window->runTree();
    // Right-clicked towards the row's end: the menu leaves the sessions' ids and steps in
    // sight.
    const QRect row =
        tree->visualRect(tree->currentIndex().siblingAtColumn(RunListModel::DurationColumn));
    const QPoint at = tree->viewport()->mapToGlobal(row.center() + QPoint(0, row.height() / 2));
    const std::unique_ptr<QMenu> menu(window->contextMenuFor(tree->currentIndex()));
    menu->popup(at);
    QTest::qWait(300);
    // The pointer on its Rewind here item, whose tooltip says what it does.
    QAction *rewind = actionNamed(menu.get(), QStringLiteral("rewindAction"));
    // (at its right end: the tooltip opens beside the other items, not over them)
    const QRect item = menu->actionGeometry(rewind);
    QCursor::setPos(menu->mapToGlobal(QPoint(item.right() - 4, item.center().y())));
    QTest::qWait(1500);
    const QString file = QDir(shots).filePath(QStringLiteral("session-snapshots.png"));
    const QRect frame = window->frameGeometry();
    QProcess import;
    import.start(QStringLiteral("import"),
                 {QStringLiteral("-window"), QStringLiteral("root"), QStringLiteral("-crop"),
                  QStringLiteral("%1x%2+%3+%4")
                      .arg(frame.width())
                      .arg(frame.height())
                      .arg(frame.x())
                      .arg(frame.y()),
                  file});
    QVERIFY(import.waitForFinished(30000));
    QCOMPARE(import.exitCode(), 0);
    QVERIFY(QFileInfo(file).size() > 0);
    menu->close();
}

void SnapshotsTest::cleanupTestCase()
{
    m_tester.reset();
    m_desk.reset();
    EngineClient engine(EngineLocator::locate(QString()).socketPath);
    QCOMPARE(LeftoverSweeper::containersOf(engine, m_instance), QStringList());
}

QTEST_MAIN(SnapshotsTest)
#include "tst_snapshots.moc"
