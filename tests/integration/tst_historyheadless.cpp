// The history as a headless instance keeps it: `code-sandbox --stdio` (the binary, as an
// assistant starts it) applies the retention without a window, and its history writes never hold
// up an MCP answer, even while another process holds the file's write lock. And such an instance,
// started before any window, is seen by a window opened later, and again after it reopens.

#include "engineclient.h"
#include "enginelocator.h"
#include "enginereply.h"
#include "historystore.h"
#include "monitorpublisher.h"
#include "monitorserver.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <QUuid>
#include <memory>

namespace {
constexpr qint64 kDay = 24 * 3600 * 1000LL;
constexpr int kAnswerMs = 120000;

// A connection of this process to the file (another process, as far as the server knows).
class Connection
{
public:
    explicit Connection(const QString &path)
        : m_name(QStringLiteral("test-") + QUuid::createUuid().toString())
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
        db.setDatabaseName(path);
        db.open();
    }
    ~Connection()
    {
        {
            QSqlDatabase db = QSqlDatabase::database(m_name, false);
            db.close();
        }
        QSqlDatabase::removeDatabase(m_name);
    }
    bool exec(const QString &sql)
    {
        QSqlQuery q(QSqlDatabase::database(m_name, false));
        return q.exec(sql);
    }
    QVariant value(const QString &sql)
    {
        QSqlQuery q(QSqlDatabase::database(m_name, false));
        return q.exec(sql) && q.next() ? q.value(0) : QVariant();
    }

private:
    QString m_name;
};

RunRecord oldRun(const QString &id, qint64 msAgo, int fileBytes = 0)
{
    RunRecord r;
    r.id = id;
    r.source = QStringLiteral("test");
    r.tool = QStringLiteral("manual");
    r.language = QStringLiteral("python");
    r.code = QStringLiteral("print('%1')").arg(id);
    r.status = RunRecord::Status::Ok;
    r.createdAt = QDateTime::currentDateTimeUtc().addMSecs(-msAgo);
    r.finishedAt = r.createdAt.addMSecs(100);
    if (fileBytes > 0) {
        OutputFile f;
        f.name = QStringLiteral("data.bin");
        f.data = QByteArray(fileBytes, 'd');
        f.size = fileBytes;
        r.files = {f};
    }
    return r;
}

// The server under test, talking JSON-RPC lines on its stdin and stdout.
class Server
{
public:
    // `monitor`: report to the monitor socket (CODE_SANDBOX_MONITOR_SOCKET in `extraEnv`).
    Server(const QString &home, const QMap<QString, QString> &extraEnv, bool monitor = false)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("HOME"), home);
        env.insert(QStringLiteral("XDG_DATA_HOME"), home + QStringLiteral("/data"));
        env.insert(QStringLiteral("XDG_CONFIG_HOME"), home + QStringLiteral("/config"));
        env.remove(QStringLiteral("CODE_SANDBOX_HISTORY"));
        env.remove(QStringLiteral("CODE_SANDBOX_HISTORY_DAYS"));
        env.remove(QStringLiteral("CODE_SANDBOX_HISTORY_MAX_MB"));
        for (auto it = extraEnv.begin(); it != extraEnv.end(); ++it)
            env.insert(it.key(), it.value());
        m_process.setProcessEnvironment(env);
        m_process.setProcessChannelMode(QProcess::SeparateChannels);
        QStringList args{QStringLiteral("--stdio"), QStringLiteral("--pool"), QStringLiteral("0")};
        if (!monitor)
            args << QStringLiteral("--no-monitor");
        m_process.start(qEnvironmentVariable("CODE_SANDBOX_BIN"), args);
    }
    ~Server()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.closeWriteChannel();
            if (!m_process.waitForFinished(30000)) {
                m_process.kill();
                m_process.waitForFinished();
            }
        }
    }
    bool started() { return m_process.waitForStarted(10000); }
    QString log() { return QString::fromLocal8Bit(m_stderr += m_process.readAllStandardError()); }

    void send(int id, const QString &method, const QJsonObject &params)
    {
        QJsonObject message{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                            {QStringLiteral("method"), method},
                            {QStringLiteral("params"), params}};
        if (id > 0)
            message.insert(QStringLiteral("id"), id);
        m_process.write(QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n');
    }
    // The answer to request `id` (an empty object if none came in time).
    QJsonObject answer(int id, int timeoutMs = kAnswerMs)
    {
        QDeadlineTimer deadline(timeoutMs);
        while (!deadline.hasExpired()) {
            while (m_process.canReadLine()) {
                const QJsonObject o = QJsonDocument::fromJson(m_process.readLine()).object();
                if (o.value(u"id").toInt() == id)
                    return o;
            }
            if (m_process.state() == QProcess::NotRunning)
                break;
            m_process.waitForReadyRead(100);
        }
        return {};
    }
    bool initialize()
    {
        send(1, QStringLiteral("initialize"),
             QJsonObject{{QStringLiteral("protocolVersion"), QStringLiteral("2025-06-18")},
                         {QStringLiteral("capabilities"), QJsonObject()},
                         {QStringLiteral("clientInfo"),
                          QJsonObject{{QStringLiteral("name"), QStringLiteral("history-test")},
                                      {QStringLiteral("version"), QStringLiteral("1")}}}});
        const bool ok = answer(1).contains(u"result");
        send(0, QStringLiteral("notifications/initialized"), {});
        return ok;
    }
    int finish()
    {
        m_process.closeWriteChannel();
        if (!m_process.waitForFinished(60000))
            return -1;
        return m_process.exitCode();
    }

private:
    QProcess m_process;
    QByteArray m_stderr;
};

QJsonObject toolCall(const QString &name, const QJsonObject &arguments)
{
    return {{QStringLiteral("name"), name}, {QStringLiteral("arguments"), arguments}};
}
} // namespace

class tst_HistoryHeadless : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void stdioInstancePrunes_data();
    void stdioInstancePrunes();
    void answerArrivesWhileHistoryWriteWaits();
    void aWindowOpenedLaterSeesTheInstance();

private:
    QString historyPath(const QTemporaryDir &home) const
    {
        return home.path() + QStringLiteral("/data/code-sandbox/history.sqlite");
    }
};

void tst_HistoryHeadless::initTestCase()
{
    QVERIFY2(!qEnvironmentVariable("CODE_SANDBOX_BIN").isEmpty(),
             "CODE_SANDBOX_BIN names the code-sandbox binary");
}

void tst_HistoryHeadless::stdioInstancePrunes_data()
{
    QTest::addColumn<QString>("maxMb"); // CODE_SANDBOX_HISTORY_MAX_MB; empty: unset
    QTest::addColumn<QStringList>("kept");

    // The defaults (30 days, 1 GiB): the 40-day-old run goes.
    QTest::newRow("by age, defaults")
        << QString()
        << QStringList{QStringLiteral("new-1"), QStringLiteral("new-2"), QStringLiteral("new-3")};
    // A 1 MiB cap: of three 600 KB runs only the newest fits (the old one goes by age).
    QTest::newRow("by size") << QStringLiteral("1") << QStringList{QStringLiteral("new-1")};
}

void tst_HistoryHeadless::stdioInstancePrunes()
{
    QFETCH(QString, maxMb);
    QFETCH(QStringList, kept);

    QTemporaryDir home;
    QVERIFY(home.isValid());
    const QString path = historyPath(home);
    {
        HistoryStore store;
        store.setRetention({0, 0, 0});
        QVERIFY(store.open(path));
        QVERIFY(store.save(oldRun(QStringLiteral("old"), 40 * kDay)));
        for (int i = 1; i <= 3; ++i)
            QVERIFY(store.save(oldRun(QStringLiteral("new-%1").arg(i), i * 60000, 600 * 1000)));
        QVERIFY(store.waitForIdle());
        QCOMPARE(store.count(), 4);
    }

    QMap<QString, QString> env;
    if (!maxMb.isEmpty())
        env.insert(QStringLiteral("CODE_SANDBOX_HISTORY_MAX_MB"), maxMb);
    Server server(home.path(), env);
    QVERIFY(server.started());
    QVERIFY2(server.initialize(), qPrintable(server.log()));

    // Nothing but being open: the instance prunes by itself, soon after it starts.
    Connection db(path);
    QTRY_VERIFY2_WITH_TIMEOUT(db.value(QStringLiteral("SELECT COUNT(*) FROM runs")).toInt() ==
                                  kept.size(),
                              qPrintable(server.log()), 30000);
    for (const QString &id : kept)
        QVERIFY2(
            db.value(QStringLiteral("SELECT COUNT(*) FROM runs WHERE id = '%1'").arg(id)).toInt() ==
                1,
            qPrintable(id));
    QCOMPARE(db.value(QStringLiteral("SELECT COUNT(*) FROM runs WHERE id = 'old'")).toInt(), 0);
    QTRY_VERIFY2(server.log().contains(QStringLiteral("runs removed")), qPrintable(server.log()));
    QCOMPARE(server.finish(), 0);
}

void tst_HistoryHeadless::answerArrivesWhileHistoryWriteWaits()
{
    QTemporaryDir home;
    QVERIFY(home.isValid());
    const QString path = historyPath(home);
    Server server(home.path(), {});
    QVERIFY(server.started());
    QVERIFY2(server.initialize(), qPrintable(server.log()));
    QTRY_VERIFY_WITH_TIMEOUT(QFileInfo::exists(path), 10000);

    // Another process takes the history's write lock and keeps it.
    Connection locker(path);
    QVERIFY(locker.exec(QStringLiteral("BEGIN IMMEDIATE")));
    Connection reader(path);

    // A run with 18 MiB of files: its history write waits for the lock.
    const QString code = QStringLiteral(
        "import os\n"
        "for i in range(4):\n"
        "    with open(os.path.join(os.environ['OUTPUT_DIR'], f'part{i}.bin'), 'wb') as f:\n"
        "        f.write(os.urandom(4718592))\n"
        "print('written')\n");
    server.send(2, QStringLiteral("tools/call"),
                toolCall(QStringLiteral("execute_code"),
                         {{QStringLiteral("language"), QStringLiteral("python")},
                          {QStringLiteral("code"), code}}));
    const QJsonObject run = server.answer(2);
    QVERIFY2(run.contains(u"result"), qPrintable(server.log()));
    QVERIFY2(!run.value(u"result").toObject().value(u"isError").toBool(),
             QJsonDocument(run).toJson().left(2000).constData());

    // Another call, while that write waits.
    server.send(3, QStringLiteral("tools/call"), toolCall(QStringLiteral("list_sessions"), {}));
    const QJsonObject listed = server.answer(3, 20000);
    // Looked at before the lock goes: the write had not happened when the answer came.
    const int storedWhenAnswered =
        reader.value(QStringLiteral("SELECT COUNT(*) FROM runs WHERE tool = 'execute_code'"))
            .toInt();
    QVERIFY(locker.exec(QStringLiteral("ROLLBACK")));
    QVERIFY2(listed.contains(u"result"), qPrintable(server.log()));
    QCOMPARE(storedWhenAnswered, 0);

    // And the write was not lost: it happened once the lock was free.
    QTRY_VERIFY2_WITH_TIMEOUT(
        reader.value(QStringLiteral("SELECT COUNT(*) FROM runs WHERE tool = 'execute_code'"))
                .toInt() == 1,
        qPrintable(server.log()), 60000);
    QVERIFY(reader.value(QStringLiteral("SELECT sum(length(data)) FROM files")).toLongLong() >=
            4 * 4718592LL);
    // The run names the container runtime it had: the engine's default, as its /info says.
    EngineClient engine(EngineLocator::locate(QString()).socketPath);
    EngineReply *info = engine.get("/info");
    QSignalSpy infoDone(info, &EngineReply::finished);
    QVERIFY(infoDone.wait(10000) && info->ok());
    const QString defaultRuntime = info->json().value(u"DefaultRuntime").toString();
    QVERIFY(!defaultRuntime.isEmpty());
    QCOMPARE(reader.value(QStringLiteral("SELECT runtime FROM runs WHERE tool = 'execute_code'"))
                 .toString(),
             defaultRuntime);
    QCOMPARE(server.finish(), 0);
}

void tst_HistoryHeadless::aWindowOpenedLaterSeesTheInstance()
{
    QTemporaryDir home; // mode 0700: a folder of this user's alone, as the monitor requires
    QVERIFY(home.isValid());
    const QString socket = home.filePath(QStringLiteral("monitor.sock"));
    Server server(home.path(), {{QStringLiteral("CODE_SANDBOX_MONITOR_SOCKET"), socket}}, true);
    QVERIFY(server.started());
    // Answering: it is up, and its first try to reach a window (there was none) is behind it.
    QVERIFY2(server.initialize(), qPrintable(server.log()));

    auto window = std::make_unique<MonitorServer>();
    QSignalSpy seen(window.get(), &MonitorServer::instanceConnected);
    QVERIFY(window->listen(socket));
    QTRY_VERIFY2_WITH_TIMEOUT(seen.size() == 1, qPrintable(server.log()), 30000);
    QCOMPARE(seen.first().at(1).toJsonObject().value(u"mode").toString(), QStringLiteral("stdio"));

    // The window closes, stays closed for longer than the instance's longest pause between
    // tries (the scenario, not a synchronisation), and opens again: it is reached again.
    window.reset();
    QTest::qWait(2 * MonitorPublisher::kRetryMs);
    window = std::make_unique<MonitorServer>();
    QSignalSpy again(window.get(), &MonitorServer::instanceConnected);
    QVERIFY(window->listen(socket));
    QTRY_VERIFY2_WITH_TIMEOUT(again.size() == 1, qPrintable(server.log()), 30000);
    QCOMPARE(server.finish(), 0);
}

QTEST_GUILESS_MAIN(tst_HistoryHeadless)
#include "tst_historyheadless.moc"
