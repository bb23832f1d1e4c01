// The window's main flows against the real engine: a manual Python run with a plot shows its
// output and figure; a run made by a separately launched `code-sandbox --stdio` appears live;
// pass-through values stay masked; the history survives a restart; closing the window keeps
// serving.

#include "../integration/leftoversweeper.h"
#include "appcontroller.h"
#include "appsettings.h"
#include "commandline.h"
#include "engineclient.h"
#include "enginelocator.h"
#include "envvarsview.h"
#include "historystore.h"
#include "imagestrip.h"
#include "mainwindow.h"
#include "monitorserver.h"
#include "outputview.h"
#include "rundetailspane.h"
#include "runeditor.h"
#include "runlistmodel.h"
#include "sandboxservice.h"
#include "services.h"
#include "sessiontreemodel.h"

#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <QUuid>
#include <memory>

namespace {
constexpr int kRunMs = 90000; // a cold image start on a loaded CI machine
const QString kSecret = QStringLiteral("s3cr3t-value-for-the-gui-test");

// One window with everything behind it, on the composition root `code-sandbox` with no
// arguments builds (Services), with the history and the instance id of this test.
struct Desk
{
    explicit Desk(const QString &dir, const QString &instance)
    {
        CommandLine cl;
        cl.config.poolSize = 1;
        cl.config.passThroughEnv = {{QStringLiteral("CS_GUI_SECRET"), kSecret}};
        services = Services::create(cl, Services::Mode::Window,
                                    {instance, dir + QStringLiteral("/history.sqlite")});
        if (!services || !services->history())
            qFatal("the services did not start with a history");
        monitor = std::make_unique<MonitorServer>();
        QString error;
        if (!monitor->listen(dir + QStringLiteral("/monitor.sock"), &error))
            qFatal("monitor: %s", qPrintable(error));
        controller = std::make_unique<AppController>(services->sandbox(), services->journal(),
                                                     services->history(), monitor.get());
        controller->loadHistory();
        AppSettings settings;
        settings.keepRunningInBackground = true;
        window = std::make_unique<MainWindow>(controller.get(), settings);
        window->show();
    }
    ~Desk()
    {
        window.reset();
        QSignalSpy done(services->sandbox(), &SandboxService::shutdownFinished);
        services->sandbox()->shutdown();
        done.wait(20000);
    }
    RunListModel *model() const { return controller->model(); }
    HistoryStore *history() const { return services->history(); }

    std::unique_ptr<Services> services; // first: the others refer to it
    std::unique_ptr<MonitorServer> monitor;
    std::unique_ptr<AppController> controller;
    std::unique_ptr<MainWindow> window;
};

const RunRecord *findBySource(RunListModel *model, const QString &source)
{
    for (int row = 0; row < model->rowCount(); ++row) {
        if (model->runAt(row)->source == source)
            return model->runAt(row);
    }
    return nullptr;
}
} // namespace

class MainFlowsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void imagesOfTheEngineShowAsReady();
    void manualRunShowsOutputAndPlot();
    void stopEndsAManualRun();
    void runOfASeparateStdioInstanceAppearsLive();
    void historySurvivesARestart();
    void closingTheWindowKeepsServing();
    void cleanupTestCase();

private:
    QTemporaryDir m_dir;
    QString m_instance =
        QStringLiteral("gui-test-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
    std::unique_ptr<Desk> m_desk;
    QString m_manualId;
};

void MainFlowsTest::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_desk = std::make_unique<Desk>(m_dir.path(), m_instance);
}

// The engine has every image (the tests need them): the window asks it for each language's and
// finds them ready, so the run editor marks none.
void MainFlowsTest::imagesOfTheEngineShowAsReady()
{
    AppController *controller = m_desk->controller.get();
    QSignalSpy changed(controller, &AppController::imagesChanged);
    controller->refreshImages();
    QVERIFY(changed.wait(kRunMs));
    const QHash<QString, SandboxBackend::ImageStatus> images = controller->images();
    QCOMPARE(images.size(), controller->languages().size());
    for (auto it = images.cbegin(); it != images.cend(); ++it)
        QVERIFY2(it->state == SandboxBackend::ImageStatus::State::Ready,
                 qPrintable(it.key() + QStringLiteral(": ") + it->stateName()));
    QVERIFY(controller->imageNotes().isEmpty());
    QVERIFY(m_desk->window->editor()->imageNote().isEmpty());
}

void MainFlowsTest::manualRunShowsOutputAndPlot()
{
    RunEditor *editor = m_desk->window->editor();
    editor->setLanguage(QStringLiteral("python"));
    editor->setCode(QStringLiteral("import matplotlib.pyplot as plt\n"
                                   "plt.plot([1, 3, 2])\n"
                                   "plt.show()\n"
                                   "print('plotted', 6 * 7)\n"));
    auto *run = editor->findChild<QPushButton *>(QStringLiteral("runButton"));
    auto *stop = editor->findChild<QPushButton *>(QStringLiteral("stopButton"));
    QVERIFY(run && stop);
    QTest::mouseClick(run, Qt::LeftButton);
    QCOMPARE(m_desk->model()->rowCount(), 1);
    const RunRecord *record = m_desk->model()->runAt(0);
    m_manualId = record->id;
    QCOMPARE(record->source, QStringLiteral("manual"));
    QVERIFY(stop->isEnabled());
    QVERIFY(!run->isEnabled());
    // The new run is the one shown.
    QCOMPARE(m_desk->window->details()->runId(), m_manualId);

    QTRY_VERIFY_WITH_TIMEOUT(m_desk->model()->run(m_manualId)->isFinished(), kRunMs);
    record = m_desk->model()->run(m_manualId);
    QCOMPARE(record->status, RunRecord::Status::Ok);
    QCOMPARE(record->exitCode, 0);
    // Peak memory and CPU time come from the container's cgroup (matplotlib needs tens of MiB).
    QVERIFY2(record->peakMemoryBytes > 10 * 1024 * 1024,
             qPrintable(QString::number(record->peakMemoryBytes)));
    QVERIFY(record->peakMemoryBytes <= record->memoryBytes);
    QVERIFY(record->cpuTimeMs > 0);
    QTRY_VERIFY(run->isEnabled());
    QVERIFY(!stop->isEnabled());

    RunDetailsPane *details = m_desk->window->details();
    details->outputView()->flushPending();
    QVERIFY2(details->outputView()->toPlainText().contains(u"plotted 42"),
             qPrintable(details->outputView()->toPlainText()));
    QCOMPARE(details->imageStrip()->imageCount(), 1);
    QCOMPARE(details->imageStrip()->files().first().mimeType, QStringLiteral("image/png"));
    QVERIFY(details->tabs()->tabText(2).contains(u"(1)"));
    // The status column of the list says so too.
    const QModelIndex status =
        m_desk->window->runTree()->model()->index(0, RunListModel::StatusColumn);
    QCOMPARE(status.data().toString(), QStringLiteral("OK"));

    // The pass-through variable: name shown, value masked.
    auto *env = details->envView()->findChild<QTableWidget *>(QStringLiteral("envTable"));
    QVERIFY(env);
    QCOMPARE(env->rowCount(), 1);
    QCOMPARE(env->item(0, 0)->text(), QStringLiteral("CS_GUI_SECRET"));
    QCOMPARE(env->item(0, 1)->text(), EnvVarsView::mask());
    for (QLabel *label : m_desk->window->findChildren<QLabel *>())
        QVERIFY(!label->text().contains(kSecret));
    // And never stored. (The run is saved once its answer is out: soon after, not at once.)
    QTRY_VERIFY(m_desk->history()->contains(m_manualId));
    const std::optional<RunRecord> stored = m_desk->history()->load(m_manualId);
    QVERIFY(stored);
    QCOMPARE(stored->envNames, QStringList{QStringLiteral("CS_GUI_SECRET")});
    QVERIFY(stored->envValues.isEmpty());
    QCOMPARE(stored->files.size(), 1);
}

void MainFlowsTest::stopEndsAManualRun()
{
    RunEditor *editor = m_desk->window->editor();
    editor->setLanguage(QStringLiteral("bash"));
    editor->setCode(QStringLiteral("echo started; sleep 60; echo never"));
    QTest::mouseClick(editor->findChild<QPushButton *>(QStringLiteral("runButton")),
                      Qt::LeftButton);
    const QString id = m_desk->model()->runAt(0)->id;
    QVERIFY(id != m_manualId);
    QTRY_VERIFY_WITH_TIMEOUT(m_desk->model()->run(id)->stdoutText().contains("started"), kRunMs);
    QTest::mouseClick(editor->findChild<QPushButton *>(QStringLiteral("stopButton")),
                      Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(m_desk->model()->run(id)->isFinished(), 20000);
    QCOMPARE(m_desk->model()->run(id)->status, RunRecord::Status::Cancelled);
    QVERIFY(!m_desk->model()->run(id)->stdoutText().contains("never"));
}

void MainFlowsTest::runOfASeparateStdioInstanceAppearsLive()
{
    const QString binary = qEnvironmentVariable("CODE_SANDBOX_BIN");
    QVERIFY2(!binary.isEmpty(), "CODE_SANDBOX_BIN names the code-sandbox binary");
    QProcess server;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("CODE_SANDBOX_MONITOR_SOCKET"), m_desk->monitor->path());
    env.insert(QStringLiteral("CODE_SANDBOX_HISTORY"),
               m_dir.path() + QStringLiteral("/history.sqlite"));
    server.setProcessEnvironment(env);
    server.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    server.start(binary,
                 {QStringLiteral("--stdio"), QStringLiteral("--pool"), QStringLiteral("0")});
    QVERIFY(server.waitForStarted());
    QSignalSpy connected(m_desk->monitor.get(), &MonitorServer::instanceConnected);
    const auto send = [&server](const QByteArray &line) { server.write(line + '\n'); };
    send(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"gui-test-assistant","version":"1"}}})");
    send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    QTRY_COMPARE_WITH_TIMEOUT(connected.count(), 1, 10000);
    QCOMPARE(m_desk->controller->serverStatus().instances, 1);
    // Two lines with a pause between them: the first must show before the run ends.
    send(
        R"J({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"execute_code","arguments":{"language":"python","code":"import time, sys\nprint('first line', flush=True)\ntime.sleep(3)\nprint('second line')\nsys.exit(3)"}}})J");
    const RunRecord *run = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(
        (run = findBySource(m_desk->model(), QStringLiteral("gui-test-assistant"))), kRunMs);
    QCOMPARE(run->tool, QStringLiteral("execute_code"));
    QVERIFY(run->instanceId != m_instance);
    const QString id = run->id;
    QTRY_VERIFY_WITH_TIMEOUT(m_desk->model()->run(id)->stdoutText().contains("first line"), kRunMs);
    QVERIFY2(!m_desk->model()->run(id)->isFinished(), "the first line arrived while it ran");
    QCOMPARE(m_desk->model()->run(id)->status, RunRecord::Status::Running);
    // Shown live in the details as well (the window follows the newest run).
    QCOMPARE(m_desk->window->details()->runId(), id);
    QTRY_VERIFY(m_desk->window->details()->outputView()->toPlainText().contains(u"first line"));

    QTRY_VERIFY_WITH_TIMEOUT(m_desk->model()->run(id)->isFinished(), kRunMs);
    QCOMPARE(m_desk->model()->run(id)->status, RunRecord::Status::Error);
    QCOMPARE(m_desk->model()->run(id)->exitCode, 3);
    QVERIFY(m_desk->model()->run(id)->stdoutText().contains("second line"));
    QTRY_VERIFY(m_desk->window->details()->outputView()->toPlainText().contains(u"exit code 3"));

    // A session and two calls in it: one row for the session, opened, with both runs under it.
    QByteArray answers;
    const auto answer = [&server, &answers](int id) {
        const QByteArray key = "\"id\":" + QByteArray::number(id);
        QElapsedTimer waited;
        waited.start();
        while (waited.elapsed() < kRunMs) {
            for (const QByteArray &line : answers.split('\n')) {
                if (line.contains(key + ',') || line.contains(key + '}'))
                    return line;
            }
            server.waitForReadyRead(500);
            answers += server.readAllStandardOutput();
        }
        return QByteArray();
    };
    send(
        R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_session","arguments":{"language":"python"}}})");
    const QRegularExpressionMatch sid =
        QRegularExpression(QStringLiteral("s-[0-9a-z]{1,8}-[0-9a-f]{12}"))
            .match(QString::fromUtf8(answer(3)));
    QVERIFY2(sid.hasMatch(), answers.constData());
    const QString sessionId = sid.captured();
    // (one call at a time: a session refuses a call while it runs one)
    for (int call = 4; call <= 5; ++call) {
        send(
            QStringLiteral(
                R"J({"jsonrpc":"2.0","id":%1,"method":"tools/call","params":{"name":"run_python_code","arguments":{"session_id":"%2","code":"print(%1)"}}})J")
                .arg(call)
                .arg(sessionId)
                .toUtf8());
        const QByteArray reply = answer(call);
        QVERIFY2(reply.contains("result") && !reply.contains("\"isError\":true"),
                 reply.constData());
    }
    QTreeView *tree = m_desk->window->runTree();
    QAbstractItemModel *rows = tree->model();
    QTRY_COMPARE(rows->index(0, 0).data(SessionTreeModel::SessionIdRole).toString(), sessionId);
    QTRY_COMPARE(rows->rowCount(rows->index(0, 0)), 2);
    const QPersistentModelIndex session = rows->index(0, 0);
    QVERIFY(session.data(SessionTreeModel::IsSessionRole).toBool());
    QVERIFY(tree->isExpanded(session));
    QCOMPARE(rows->index(0, RunListModel::DurationColumn).data().toString(),
             QStringLiteral("2 runs"));
    QCOMPARE(rows->index(0, RunListModel::LanguageColumn).data().toString(),
             QStringLiteral("python"));
    const QString first = rows->index(1, 0, session).data(RunListModel::RunIdRole).toString();
    const QString second = rows->index(0, 0, session).data(RunListModel::RunIdRole).toString();
    QCOMPARE(m_desk->model()->run(first)->sessionId, sessionId);
    QTRY_VERIFY(m_desk->model()->run(second)->isFinished());
    // The list followed the runs as they came: the newest is shown.
    QCOMPARE(m_desk->window->details()->runId(), second);
    // A run chosen by id opens its session, even when it was closed; the session's row shows its
    // newest run.
    tree->collapse(session);
    m_desk->window->selectRun(first);
    QVERIFY(tree->isExpanded(session));
    QCOMPARE(tree->currentIndex().data(RunListModel::RunIdRole).toString(), first);
    QCOMPARE(m_desk->window->details()->runId(), first);
    tree->setCurrentIndex(session);
    QCOMPARE(m_desk->window->details()->runId(), second);
    // The session's state came over the monitor socket with its runs.
    QTRY_VERIFY(!session.data(SessionTreeModel::SessionStateRole).toString().isEmpty());

    server.closeWriteChannel();
    QVERIFY(server.waitForFinished(30000));
    QCOMPARE(server.exitCode(), 0);
    QTRY_COMPARE(m_desk->controller->serverStatus().instances, 0);
    // The instance kept its own run in the shared history.
    QVERIFY(m_desk->history()->contains(id));
}

void MainFlowsTest::historySurvivesARestart()
{
    const int before = m_desk->model()->rowCount();
    QVERIFY(before >= 3);
    m_desk.reset();
    m_desk = std::make_unique<Desk>(m_dir.path(), m_instance + QStringLiteral("-2"));
    // Read on the history's thread: in soon after the window opens.
    QTRY_COMPARE(m_desk->model()->rowCount(), before);
    const RunRecord *run = m_desk->model()->complete(m_manualId);
    QVERIFY(run);
    QCOMPARE(run->status, RunRecord::Status::Ok);
    QVERIFY(run->stdoutText().contains("plotted 42"));
    QCOMPARE(run->files.size(), 1);
    // Shown like a live one when selected; its variable's value was never kept.
    m_desk->window->selectRun(m_manualId);
    QCOMPARE(m_desk->window->details()->runId(), m_manualId);
    QCOMPARE(m_desk->window->details()->imageStrip()->imageCount(), 1);
    auto *env =
        m_desk->window->details()->envView()->findChild<QTableWidget *>(QStringLiteral("envTable"));
    QVERIFY(env->item(0, 1)->text().contains(u"not kept"));
}

void MainFlowsTest::closingTheWindowKeepsServing()
{
    QSignalSpy quit(m_desk->window.get(), &MainWindow::quitRequested);
    QVERIFY(m_desk->window->isVisible());
    QVERIFY(m_desk->window->close() == false); // the close is turned into a hide
    QVERIFY(!m_desk->window->isVisible());
    QCOMPARE(quit.count(), 0);
    // Still serving: a run goes through with the window closed, and shows when it is back.
    const QString id = m_desk->controller->runManual(QStringLiteral("bash"),
                                                     QStringLiteral("echo behind the scenes"), 30);
    QVERIFY(!id.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(m_desk->model()->run(id)->isFinished(), kRunMs);
    QCOMPARE(m_desk->model()->run(id)->status, RunRecord::Status::Ok);
    // The supervisor's own report (a language without a preloaded interpreter) has them too.
    QVERIFY(m_desk->model()->run(id)->peakMemoryBytes > 0);
    QVERIFY(m_desk->model()->run(id)->cpuTimeMs >= 0);
    m_desk->window->showAndRaise();
    QVERIFY(m_desk->window->isVisible());
    QCOMPARE(m_desk->model()->runAt(0)->id, id);
}

void MainFlowsTest::cleanupTestCase()
{
    m_desk.reset();
    for (const QString &instance : {m_instance, m_instance + QStringLiteral("-2")}) {
        EngineClient engine(EngineLocator::locate(QString()).socketPath);
        QCOMPARE(LeftoverSweeper::containersOf(engine, instance), QStringList());
    }
}

QTEST_MAIN(MainFlowsTest)
#include "tst_mainflows.moc"
