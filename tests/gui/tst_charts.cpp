// Look rather than read: the selected run's memory and CPU, sampled from its container's cgroup
// while it runs, reach the chart live — for a run of this window and for one of a separate
// `code-sandbox --stdio` instance, over the monitor socket — and the overview strip counts the
// last hour right. Against the real engine where the claim is about it.

#include "appcontroller.h"
#include "commandline.h"
#include "containersapi.h"
#include "execution.h"
#include "monitorserver.h"
#include "overviewstrip.h"
#include "resourcechart.h"
#include "rundetailspane.h"
#include "runlistmodel.h"
#include "sandboxservice.h"
#include "services.h"

#include <QJsonDocument>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUuid>
#include <memory>

namespace {
constexpr int kRunMs = 90000; // a cold image start on a loaded CI machine
constexpr qint64 kMiB = 1024 * 1024;

// About 4 s: 64 MiB written (so the pages are really there), then a busy loop. Docker reads a
// container's cgroup once a second, so this gives three readings or more.
const QString kBusyProgram = QStringLiteral("import time\n"
                                            "block = b'\\x01' * (64 << 20)\n"
                                            "end = time.time() + 4\n"
                                            "n = 0\n"
                                            "while time.time() < end:\n"
                                            "    n += 1\n"
                                            "print(len(block) >> 20, n > 0)\n");

RunRecord runAgo(const QString &id, qint64 secondsAgo, RunRecord::Status status, qint64 durationMs)
{
    RunRecord r;
    r.id = id;
    r.source = QStringLiteral("test");
    r.language = QStringLiteral("python");
    r.status = status;
    r.createdAt = QDateTime::currentDateTimeUtc().addSecs(-secondsAgo);
    r.durationMs = durationMs;
    return r;
}

JournalEvent sampleEvent(const QString &id, qint64 elapsedMs, qint64 memoryBytes, qint64 cpuMs)
{
    JournalEvent e;
    e.type = JournalEvent::Type::Sample;
    e.run.id = id;
    e.sample = {elapsedMs, memoryBytes, cpuMs};
    return e;
}

// What the chart showed while the run went on: recorded at each sample the model got.
struct Watch
{
    int samplesWhileRunning = 0;
    int chartWhileRunning = 0;
    bool chartVisibleWhileRunning = false;
};
} // namespace

class ChartsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void usageOfStatsAnswers_data();
    void usageOfStatsAnswers();
    void modelKeepsSamplesOfRunningRunsOnly();
    void modelThinsLongRuns();
    void chartRatesAndScales();
    void overviewCountsTheLastHour();
    void initTestCase();
    void chartSamplesARunOfThisWindow();
    void chartSamplesARunOfAStdioInstance();
    void cleanupTestCase();

private:
    // Shows the run `findId` names (once it appears) in the pane and follows it until it ends.
    void follow(const std::function<QString()> &findId, QString *idOut, Watch *watch);
    void checkSamples(const QString &id, const Watch &watch);

    QTemporaryDir m_dir;
    std::unique_ptr<Services> m_services;
    std::unique_ptr<MonitorServer> m_monitor;
    std::unique_ptr<AppController> m_controller;
    std::unique_ptr<RunDetailsPane> m_pane;
};

// The engine's stats answer, as Docker (cgroup v1 and v2) and Podman write it: memory in use
// less the inactive file cache (as `docker stats`), CPU time in ns; nothing from an answer that
// has no reading (a container that stopped) or numbers that are not numbers.
void ChartsTest::usageOfStatsAnswers_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<qint64>("memory");
    QTest::addColumn<qint64>("cpuNs");
    QTest::newRow("docker cgroup v1")
        << QByteArray(R"({"read":"2026-12-01T20:21:28.06Z","cpu_stats":{"cpu_usage":
            {"total_usage":20722553,"percpu_usage":[10359033,10363520]},"online_cpus":2},
            "memory_stats":{"usage":81015808,"max_usage":84075520,"stats":{"cache":323584,
            "total_inactive_file":1048576,"inactive_file":0}}})")
        << qint64(81015808 - 1048576) << qint64(20722553);
    QTest::newRow("cgroup v2") << QByteArray(
                                      R"({"cpu_stats":{"cpu_usage":{"total_usage":5000000000}},
            "memory_stats":{"usage":50000000,"stats":{"inactive_file":10000000}}})")
                               << qint64(40000000) << qint64(5000000000);
    QTest::newRow("no detail") << QByteArray(R"({"cpu_stats":{"cpu_usage":{"total_usage":7}},
            "memory_stats":{"usage":4096}})")
                               << qint64(4096) << qint64(7);
    QTest::newRow("cache larger than usage (ignored)")
        << QByteArray(R"({"cpu_stats":{"cpu_usage":{"total_usage":7}},
            "memory_stats":{"usage":4096,"stats":{"total_inactive_file":9999}}})")
        << qint64(4096) << qint64(7);
    QTest::newRow("stopped container")
        << QByteArray(
               R"({"read":"0001-01-01T00:00:00Z","cpu_stats":{"cpu_usage":{"total_usage":0}},
            "memory_stats":{}})")
        << qint64(-1) << qint64(0);
    QTest::newRow("text for numbers")
        << QByteArray(R"({"cpu_stats":{"cpu_usage":{"total_usage":"12"}},
            "memory_stats":{"usage":"4096"}})")
        << qint64(-1) << qint64(-1);
    QTest::newRow("negative") << QByteArray(R"({"cpu_stats":{"cpu_usage":{"total_usage":-5}},
            "memory_stats":{"usage":-1}})")
                              << qint64(-1) << qint64(-1);
    QTest::newRow("empty") << QByteArray("{}") << qint64(-1) << qint64(-1);
}

void ChartsTest::usageOfStatsAnswers()
{
    QFETCH(QByteArray, json);
    QFETCH(qint64, memory);
    QFETCH(qint64, cpuNs);
    QJsonParseError error;
    const QJsonObject stats = QJsonDocument::fromJson(json, &error).object();
    QCOMPARE(error.error, QJsonParseError::NoError);
    const ContainersApi::Usage usage = ContainersApi::usage(stats);
    QCOMPARE(usage.memoryBytes, memory);
    QCOMPARE(usage.cpuTimeNs, cpuNs);
    QCOMPARE(usage.isValid(), memory >= 0 && cpuNs >= 0);
}

void ChartsTest::modelKeepsSamplesOfRunningRunsOnly()
{
    RunListModel model;
    QSignalSpy changed(&model, &RunListModel::samplesChanged);
    RunRecord r = runAgo(QStringLiteral("r1"), 1, RunRecord::Status::Running, -1);
    model.apply({JournalEvent::Type::Created, r, 1, {}, {}});
    // One for a run the window does not know is dropped.
    model.apply(sampleEvent(QStringLiteral("nobody"), 300, kMiB, 10));
    QVERIFY(model.samples(QStringLiteral("nobody")).isEmpty());
    model.apply(sampleEvent(QStringLiteral("r1"), 300, 10 * kMiB, 100));
    model.apply(sampleEvent(QStringLiteral("r1"), 1300, 20 * kMiB, 600));
    // Out of order or repeated: the rates would be wrong.
    model.apply(sampleEvent(QStringLiteral("r1"), 1300, 30 * kMiB, 700));
    model.apply(sampleEvent(QStringLiteral("r1"), 800, 30 * kMiB, 700));
    QCOMPARE(model.samples(QStringLiteral("r1")).size(), 2);
    QCOMPARE(model.samples(QStringLiteral("r1")).last().memoryBytes, 20 * kMiB);
    QCOMPARE(changed.count(), 2);
    QCOMPARE(changed.first().first().toString(), QStringLiteral("r1"));
    // The run ends: its samples stay (its chart is still there), late ones are dropped.
    r.status = RunRecord::Status::Ok;
    r.durationMs = 1500;
    model.apply({JournalEvent::Type::Finished, r, 1, {}, {}});
    model.apply(sampleEvent(QStringLiteral("r1"), 2300, 5 * kMiB, 900));
    QCOMPARE(model.samples(QStringLiteral("r1")).size(), 2);
    // The run leaves the model: its samples go with it.
    model.setLimits(1, 1);
    model.apply({JournalEvent::Type::Created,
                 runAgo(QStringLiteral("r2"), 0, RunRecord::Status::Running, -1),
                 1,
                 {},
                 {}});
    QCOMPARE(model.rowCount(), 1);
    QVERIFY(model.samples(QStringLiteral("r1")).isEmpty());
}

void ChartsTest::modelThinsLongRuns()
{
    RunListModel model;
    model.apply({JournalEvent::Type::Created,
                 runAgo(QStringLiteral("long"), 0, RunRecord::Status::Running, -1),
                 1,
                 {},
                 {}});
    const int n = RunListModel::kMaxSamplesPerRun * 3;
    for (int i = 1; i <= n; ++i)
        model.apply(sampleEvent(QStringLiteral("long"), i * 500, i * kMiB, i * 250));
    const QList<UsageSample> kept = model.samples(QStringLiteral("long"));
    QVERIFY2(kept.size() <= RunListModel::kMaxSamplesPerRun,
             qPrintable(QString::number(kept.size())));
    QVERIFY(kept.size() >= RunListModel::kMaxSamplesPerRun / 2);
    // The whole span stays: the first and the newest.
    QCOMPARE(kept.first().elapsedMs, 500);
    QCOMPARE(kept.last().elapsedMs, qint64(n) * 500);
    for (int i = 1; i < kept.size(); ++i)
        QVERIFY(kept.at(i).elapsedMs > kept.at(i - 1).elapsedMs);
    // Thinned, the rate between kept samples is the true one (50 % throughout).
    ResourceChart chart;
    chart.setSamples(kept);
    for (const QPointF &rate : chart.cpuPercent())
        QCOMPARE(rate.y(), 50.0);

    // Only the runs sampled last keep theirs.
    for (int i = 0; i <= RunListModel::kMaxSampledRuns; ++i) {
        const QString id = QStringLiteral("many-%1").arg(i);
        model.apply({JournalEvent::Type::Created,
                     runAgo(id, 0, RunRecord::Status::Running, -1),
                     1,
                     {},
                     {}});
        model.apply(sampleEvent(id, 300, kMiB, 1));
    }
    // "long" and "many-0" were the first of 102.
    QVERIFY(model.samples(QStringLiteral("long")).isEmpty());
    QVERIFY(model.samples(QStringLiteral("many-0")).isEmpty());
    QCOMPARE(model.samples(QStringLiteral("many-1")).size(), 1);
}

void ChartsTest::chartRatesAndScales()
{
    ResourceChart chart;
    chart.resize(640, chart.sizeHint().height());
    chart.setLimits(512 * kMiB, 1);
    chart.setSamples({{1000, 10 * kMiB, 100}, {2000, 20 * kMiB, 600}, {3000, 30 * kMiB, 1600}});
    const QList<QPointF> rates = chart.cpuPercent();
    QCOMPARE(rates.size(), 2);
    QCOMPARE(rates.at(0), QPointF(2000, 50));
    QCOMPARE(rates.at(1), QPointF(3000, 100));
    // Room above the highest reading, in powers of two MiB, below the limit.
    QCOMPARE(chart.memoryScaleBytes(), 64 * kMiB);
    QCOMPARE(chart.cpuScalePercent(), 100.0);
    // Near the limit, the limit is the scale.
    chart.setLimits(40 * kMiB, 2);
    QCOMPARE(chart.memoryScaleBytes(), 40 * kMiB);
    QCOMPARE(chart.cpuScalePercent(), 200.0);
    // Drawn in either palette without a sample, with one, with many.
    for (const bool dark : {false, true}) {
        QPalette palette = chart.palette();
        if (dark) {
            palette.setColor(QPalette::Window, QColor(0x20, 0x20, 0x24));
            palette.setColor(QPalette::Base, QColor(0x18, 0x18, 0x1a));
            palette.setColor(QPalette::WindowText, QColor(0xe8, 0xe8, 0xe8));
        }
        chart.setPalette(palette);
        const QImage drawn = chart.grab().toImage();
        QVERIFY(!drawn.isNull());
        chart.setSamples({{1000, 10 * kMiB, 100}});
        QVERIFY(!chart.grab().toImage().isNull());
        chart.clear();
        QVERIFY(!chart.grab().toImage().isNull());
        QVERIFY(chart.cpuPercent().isEmpty());
    }
}

void ChartsTest::overviewCountsTheLastHour()
{
    RunListModel model;
    model.addHistory({
        runAgo(QStringLiteral("a"), 30, RunRecord::Status::Ok, 1000),
        runAgo(QStringLiteral("b"), 90, RunRecord::Status::Error, 3000),
        runAgo(QStringLiteral("c"), 150, RunRecord::Status::TimedOut, 5000),
        runAgo(QStringLiteral("d"), 610, RunRecord::Status::Ok, 2000),
        runAgo(QStringLiteral("e"), 620, RunRecord::Status::Cancelled, 100000),
        runAgo(QStringLiteral("old"), 7200, RunRecord::Status::Error, 9000),
    });
    // One still running: counted as a run, without a duration.
    model.apply({JournalEvent::Type::Created,
                 runAgo(QStringLiteral("live"), 5, RunRecord::Status::Running, -1),
                 1,
                 {},
                 {}});
    OverviewStrip strip(&model);
    strip.resize(600, strip.sizeHint().height());
    const OverviewStrip::Figures &f = strip.figures();
    QCOMPARE(f.runs, 6);
    QCOMPARE(f.failed, 2); // an error and a timeout; a cancelled run is no failure
    QCOMPARE(f.finished, 5);
    // 1000, 2000, 3000, 5000, 100000: the median is 3000.
    QCOMPARE(f.p50Ms, 3000);
    QCOMPARE(f.perMinute.size(), OverviewStrip::kMinutes);
    QCOMPARE(f.perMinute.at(59), 2); // 5 s and 30 s ago
    QCOMPARE(f.perMinute.at(58), 1);
    QCOMPARE(f.perMinute.at(57), 1);
    QCOMPARE(f.perMinute.at(49), 2); // ten minutes ago
    QCOMPARE(f.failedPerMinute.at(58), 1);
    QCOMPARE(f.failedPerMinute.at(57), 1);
    QCOMPARE(f.failedPerMinute.at(59), 0);
    int total = 0;
    for (int n : f.perMinute)
        total += n;
    QCOMPARE(total, 6);
    QVERIFY2(strip.summaryText().contains(u"6 runs"), qPrintable(strip.summaryText()));
    QVERIFY(strip.summaryText().contains(u"2 failed"));
    QVERIFY(strip.summaryText().contains(u"p50 3"));
    QVERIFY(!strip.grab().toImage().isNull());

    // The model changes: the strip follows without being asked.
    RunRecord live = *model.run(QStringLiteral("live"));
    live.status = RunRecord::Status::Error;
    live.durationMs = 400;
    model.apply({JournalEvent::Type::Finished, live, 1, {}, {}});
    QTRY_COMPARE(strip.figures().failed, 3);
    QCOMPARE(strip.figures().finished, 6);
    // An even count: the lower of the middle two (a duration some run had).
    QCOMPARE(strip.figures().p50Ms, 2000);

    // Nothing in the hour.
    RunListModel empty;
    OverviewStrip none(&empty);
    QCOMPARE(none.figures().runs, 0);
    QCOMPARE(none.figures().p50Ms, -1);
    QVERIFY(none.summaryText().contains(u"0 runs"));
}

void ChartsTest::initTestCase()
{
    QVERIFY(m_dir.isValid());
    CommandLine cl;
    cl.config.poolSize = 1;
    const QString instance =
        QStringLiteral("gui-charts-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
    m_services = Services::create(cl, Services::Mode::Window,
                                  {instance, m_dir.path() + QStringLiteral("/history.sqlite")});
    QVERIFY(m_services);
    m_monitor = std::make_unique<MonitorServer>();
    QString error;
    QVERIFY2(m_monitor->listen(m_dir.path() + QStringLiteral("/monitor.sock"), &error),
             qPrintable(error));
    m_controller = std::make_unique<AppController>(m_services->sandbox(), m_services->journal(),
                                                   m_services->history(), m_monitor.get());
    // The details pane as the window holds it: fed the selected run and its changes.
    m_pane = std::make_unique<RunDetailsPane>();
    m_pane->setModel(m_controller->model());
    RunListModel *model = m_controller->model();
    connect(model, &RunListModel::runChanged, m_pane.get(), [this, model](const QString &id) {
        if (const RunRecord *run = model->run(id))
            m_pane->updateRun(*run);
    });
    m_pane->resize(900, 600);
    m_pane->show();
}

void ChartsTest::follow(const std::function<QString()> &findId, QString *idOut, Watch *watch)
{
    RunListModel *model = m_controller->model();
    QString id;
    QTRY_VERIFY_WITH_TIMEOUT(!(id = findId()).isEmpty(), kRunMs);
    *idOut = id;
    m_pane->showRun(model->run(id));
    QMetaObject::Connection c =
        connect(model, &RunListModel::samplesChanged, this, [&, model](const QString &which) {
            const RunRecord *run = model->run(which);
            if (which != id || !run || run->isFinished())
                return;
            watch->samplesWhileRunning = int(model->samples(id).size());
            watch->chartWhileRunning = int(m_pane->resourceChart()->samples().size());
            watch->chartVisibleWhileRunning = m_pane->resourceChart()->isVisible();
        });
    QTRY_VERIFY_WITH_TIMEOUT(model->run(id) && model->run(id)->isFinished(), kRunMs);
    disconnect(c);
}

void ChartsTest::checkSamples(const QString &id, const Watch &watch)
{
    const RunRecord *run = m_controller->model()->run(id);
    QVERIFY(run);
    QCOMPARE(run->status, RunRecord::Status::Ok);
    QVERIFY2(run->stdoutText().contains("64 True"), run->stdoutText().constData());
    // Several samples, shown by the chart as they came, while the program ran.
    QVERIFY2(watch.samplesWhileRunning >= 3,
             qPrintable(QString::number(watch.samplesWhileRunning)));
    QCOMPARE(watch.chartWhileRunning, watch.samplesWhileRunning);
    QVERIFY(watch.chartVisibleWhileRunning);
    // Plausible: the 64 MiB the program wrote, never past the limit; a busy loop's CPU, never
    // far past the one CPU the sandbox has.
    const QList<UsageSample> samples = m_controller->model()->samples(id);
    QVERIFY(run->memoryBytes > 0);
    qint64 highest = 0;
    for (const UsageSample &s : samples) {
        QVERIFY2(s.memoryBytes > 0 && s.memoryBytes <= run->memoryBytes,
                 qPrintable(QString::number(s.memoryBytes)));
        QVERIFY(s.elapsedMs > 0 && s.elapsedMs <= run->durationMs + 1000);
        highest = qMax(highest, s.memoryBytes);
    }
    QVERIFY2(highest >= 64 * kMiB, qPrintable(QString::number(highest)));
    const QList<QPointF> rates = m_pane->resourceChart()->cpuPercent();
    QVERIFY(!rates.isEmpty());
    double busiest = 0;
    for (const QPointF &r : rates) {
        QVERIFY2(r.y() >= 0 && r.y() <= 100.0 * run->cpus * 1.5,
                 qPrintable(QString::number(r.y())));
        busiest = qMax(busiest, r.y());
    }
    QVERIFY2(busiest > 20, qPrintable(QString::number(busiest)));
    qInfo("%d samples during the run (%d on its chart), highest %.1f MiB, busiest %.0f %% CPU",
          watch.samplesWhileRunning, watch.chartWhileRunning, double(highest) / kMiB, busiest);
    // The finished run keeps its chart.
    QVERIFY(m_pane->resourceChart()->isVisible());
    QCOMPARE(m_pane->resourceChart()->samples().size(), samples.size());
}

void ChartsTest::chartSamplesARunOfThisWindow()
{
    ExecutionRequest request(QStringLiteral("python"), kBusyProgram, 60);
    request.source = QStringLiteral("manual");
    request.tool = QStringLiteral("manual");
    Execution *execution = m_services->sandbox()->execute(request);
    const QString expected = execution->runId();
    QString id;
    Watch watch;
    follow([&] { return m_controller->model()->run(expected) ? expected : QString(); }, &id,
           &watch);
    if (QTest::currentTestFailed())
        return;
    checkSamples(id, watch);
}

void ChartsTest::chartSamplesARunOfAStdioInstance()
{
    const QString binary = qEnvironmentVariable("CODE_SANDBOX_BIN");
    QVERIFY2(!binary.isEmpty(), "CODE_SANDBOX_BIN names the code-sandbox binary");
    QProcess server;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("CODE_SANDBOX_MONITOR_SOCKET"), m_monitor->path());
    env.insert(QStringLiteral("CODE_SANDBOX_HISTORY"),
               m_dir.path() + QStringLiteral("/history.sqlite"));
    server.setProcessEnvironment(env);
    server.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    server.start(binary,
                 {QStringLiteral("--stdio"), QStringLiteral("--pool"), QStringLiteral("0")});
    QVERIFY(server.waitForStarted());
    QSignalSpy connected(m_monitor.get(), &MonitorServer::instanceConnected);
    const auto send = [&server](const QByteArray &line) { server.write(line + '\n'); };
    send(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"charts-assistant","version":"1"}}})");
    send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    QTRY_COMPARE_WITH_TIMEOUT(connected.count(), 1, 10000);
    QJsonObject call{{"jsonrpc", "2.0"},
                     {"id", 2},
                     {"method", "tools/call"},
                     {"params", QJsonObject{{"name", "execute_code"},
                                            {"arguments", QJsonObject{{"language", "python"},
                                                                      {"code", kBusyProgram}}}}}};
    send(QJsonDocument(call).toJson(QJsonDocument::Compact));
    RunListModel *model = m_controller->model();
    QString id;
    Watch watch;
    follow(
        [model] {
            for (int row = 0; row < model->rowCount(); ++row) {
                if (model->runAt(row)->source == u"charts-assistant")
                    return model->runAt(row)->id;
            }
            return QString();
        },
        &id, &watch);
    if (QTest::currentTestFailed())
        return;
    QVERIFY(model->run(id)->instanceId != m_services->sandbox()->config().instanceId);
    checkSamples(id, watch);
    server.closeWriteChannel();
    QVERIFY(server.waitForFinished(30000));
}

void ChartsTest::cleanupTestCase()
{
    m_pane.reset();
    m_controller.reset();
    m_monitor.reset();
    if (m_services) {
        QSignalSpy done(m_services->sandbox(), &SandboxService::shutdownFinished);
        m_services->sandbox()->shutdown();
        done.wait(20000);
    }
    m_services.reset();
}

QTEST_MAIN(ChartsTest)
#include "tst_charts.moc"
