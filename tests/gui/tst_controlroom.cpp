// The window as a control room, against the real engine and the official MCP SDK client
// (tests/e2e/sdk-call.mjs): a person stops any run (the window's own HTTP runs and a headless
// --stdio instance's), approves or denies runs before they start (both kinds of server; no answer
// in time denies; "always" is saved and followed by headless instances, and never turns the
// default policy into "run" for a client without a name), the dialog shows the whole program and
// every name as it is, policies refuse a language or network with an error naming them, and a
// connection to a host beyond a run's list is held while the window asks.

#include "../integration/leftoversweeper.h"
#include "appcontroller.h"
#include "approvaldialog.h"
#include "approvalprompter.h"
#include "appsettings.h"
#include "commandline.h"
#include "egressgateway.h"
#include "mainwindow.h"
#include "monitorserver.h"
#include "rungate.h"
#include "runlistmodel.h"
#include "sandboxservice.h"
#include "services.h"
#include "showntext.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QNetworkInterface>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <QUuid>
#include <functional>
#include <memory>

namespace {
constexpr int kRunMs = 90000; // a cold image start on a loaded CI machine

// One tools/call through the SDK client in a node process; its JSON lines as they come.
class SdkCall
{
public:
    // `server`: {"--stdio", BIN, args..., "--"} or {"--http", URL, TOKEN}.
    SdkCall(const QStringList &server, const QString &client, const QString &tool,
            const QJsonObject &arguments, const QProcessEnvironment &env)
    {
        const QString script =
            QStringLiteral(QT_TESTCASE_SOURCEDIR) + QStringLiteral("/../e2e/sdk-call.mjs");
        m_process.setProcessEnvironment(env);
        m_process.setProcessChannelMode(QProcess::SeparateChannels);
        m_process.setReadChannel(QProcess::StandardOutput);
        QObject::connect(&m_process, &QProcess::readyReadStandardOutput, [this] { read(); });
        QObject::connect(&m_process, &QProcess::readyReadStandardError,
                         [this] { m_stderr += m_process.readAllStandardError(); });
        m_process.start(QStringLiteral("node"),
                        QStringList{script} + server +
                            QStringList{QStringLiteral("--client"), client,
                                        QStringLiteral("--tool"), tool, QStringLiteral("--args"),
                                        QString::fromUtf8(QJsonDocument(arguments).toJson(
                                            QJsonDocument::Compact))});
    }
    ~SdkCall()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }
    bool done() const { return !m_result.isEmpty() || !m_error.isEmpty(); }
    QJsonObject result() const { return m_result; }
    QString error() const { return m_error; }
    QStringList progress() const { return m_progress; }
    bool isError() const { return m_result.value(u"isError").toBool(); }
    QString text() const
    {
        QString all;
        for (const QJsonValue &c : m_result.value(u"content").toArray())
            all += c.toObject().value(u"text").toString();
        return all;
    }
    QString log() const { return QString::fromUtf8(m_stderr.right(4000)); }

private:
    void read()
    {
        while (m_process.canReadLine()) {
            const QJsonObject o = QJsonDocument::fromJson(m_process.readLine()).object();
            if (o.contains(u"progress"))
                m_progress.append(o.value(u"progress").toString());
            else if (o.contains(u"result"))
                m_result = o.value(u"result").toObject();
            else if (o.contains(u"error"))
                m_error = o.value(u"error").toString();
        }
    }
    QProcess m_process;
    QJsonObject m_result;
    QString m_error;
    QStringList m_progress;
    QByteArray m_stderr;
};

// A --stdio server spoken to by hand, one JSON line at a time: for what the SDK call cannot carry
// (a program larger than one command-line argument may be, a client that gives no name) and for
// several calls to one headless instance.
class RawStdioSession
{
public:
    RawStdioSession(const QString &binary, const QString &client, const QProcessEnvironment &env,
                    const QStringList &extra = {})
    {
        m_process.setProcessEnvironment(env);
        m_process.setProcessChannelMode(QProcess::SeparateChannels);
        m_process.setReadChannel(QProcess::StandardOutput);
        QObject::connect(&m_process, &QProcess::readyReadStandardOutput, [this] { read(); });
        QObject::connect(&m_process, &QProcess::readyReadStandardError,
                         [this] { m_stderr += m_process.readAllStandardError(); });
        m_process.start(binary, QStringList{QStringLiteral("--stdio"), QStringLiteral("--pool"),
                                            QStringLiteral("0")} +
                                    extra);
        send(1, QStringLiteral("initialize"),
             {{QStringLiteral("protocolVersion"), QStringLiteral("2025-06-18")},
              {QStringLiteral("capabilities"), QJsonObject()},
              {QStringLiteral("clientInfo"),
               QJsonObject{{QStringLiteral("name"), client},
                           {QStringLiteral("version"), QStringLiteral("1")}}}});
        send(0, QStringLiteral("notifications/initialized"), {});
    }
    ~RawStdioSession()
    {
        // The end of its stdin ends a stdio server, which removes its sandboxes once its calls
        // are answered; then, as MCP's stdio shutdown goes, SIGTERM (it still removes them: a
        // test that failed with a call held open) and last SIGKILL.
        m_process.closeWriteChannel();
        if (!m_process.waitForFinished(20000)) {
            m_process.terminate();
            if (!m_process.waitForFinished(15000)) {
                m_process.kill();
                m_process.waitForFinished(5000);
            }
        }
    }
    int call(const QString &tool, const QJsonObject &arguments)
    {
        const int id = ++m_lastId;
        send(id, QStringLiteral("tools/call"),
             {{QStringLiteral("name"), tool}, {QStringLiteral("arguments"), arguments}});
        return id;
    }
    bool done(int id) const { return m_answers.contains(id); }
    bool isError(int id) const
    {
        const QJsonObject a = m_answers.value(id);
        return a.contains(u"error") || a.value(u"result").toObject().value(u"isError").toBool();
    }
    QString text(int id) const
    {
        QString all;
        const QJsonObject result = m_answers.value(id).value(u"result").toObject();
        for (const QJsonValue &c : result.value(u"content").toArray())
            all += c.toObject().value(u"text").toString();
        return all + m_answers.value(id).value(u"error").toObject().value(u"message").toString();
    }
    QJsonObject structured(int id) const
    {
        return m_answers.value(id)
            .value(u"result")
            .toObject()
            .value(u"structuredContent")
            .toObject();
    }
    QString log() const { return QString::fromUtf8(m_stderr.right(4000)); }

private:
    void send(int id, const QString &method, const QJsonObject &params)
    {
        QJsonObject message{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                            {QStringLiteral("method"), method}};
        if (id > 0)
            message.insert(QStringLiteral("id"), id);
        if (!params.isEmpty())
            message.insert(QStringLiteral("params"), params);
        m_process.write(QJsonDocument(message).toJson(QJsonDocument::Compact) + '\n');
    }
    void read()
    {
        while (m_process.canReadLine()) {
            const QJsonObject o = QJsonDocument::fromJson(m_process.readLine()).object();
            if (o.contains(u"id") && (o.contains(u"result") || o.contains(u"error")))
                m_answers.insert(o.value(u"id").toInt(), o);
        }
    }
    QProcess m_process;
    int m_lastId = 1; // 1 is the handshake
    QHash<int, QJsonObject> m_answers;
    QByteArray m_stderr;
};
// "hello <path>" to every HTTP request: the host an allow-list run reaches for, named
// world.test and other.test through the gateway's test-only name map.
class HelloServer : public QTcpServer
{
public:
    HelloServer()
    {
        connect(this, &QTcpServer::pendingConnectionAvailable, this, [this] {
            while (QTcpSocket *socket = nextPendingConnection()) {
                connect(socket, &QTcpSocket::readyRead, socket, [socket] {
                    const QByteArray in = socket->peek(8192);
                    if (!in.contains("\r\n\r\n"))
                        return;
                    const QByteArray body = "hello " + in.split(' ').value(1);
                    socket->readAll();
                    socket->write(
                        "HTTP/1.1 200 OK\r\nContent-Length: " + QByteArray::number(body.size()) +
                        "\r\nConnection: close\r\n\r\n" + body);
                    socket->disconnectFromHost();
                });
                connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
            }
        });
    }
};

QString outwardAddress()
{
    for (const QHostAddress &a : QNetworkInterface::allAddresses())
        if (a.protocol() == QAbstractSocket::IPv4Protocol && !a.isLoopback() &&
            !a.toString().startsWith(QStringLiteral("172.")))
            return a.toString();
    return {};
}
} // namespace

class ControlRoomTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void httpRunWaitsAndAllowOnceRunsIt();
    void httpDenyReturnsTheReason();
    void httpNoAnswerDenies();
    void headlessAllowAndDeny();
    void headlessNoAnswerDenies();
    void headlessWithoutWindowRefuses();
    void alwaysAllowIsSavedAndFollowed();
    void headlessApprovalShowsTheWholeProgram();
    void hostileFileNamesShowInTheDialog();
    void alwaysForAClientWithoutANameAllowsOnce();
    void policyRefusesLanguageAndNetwork();
    void stopAHeadlessRun();
    void stopAnHttpRun();
    void deleteInTheWindowsListStops();
    void aHeldConnectionIsAskedInTheWindow();
    void aSessionsQuestionNamesItsHosts();
    void cleanupTestCase();

private:
    QStringList stdio(const QStringList &extra = {}) const
    {
        return QStringList{QStringLiteral("--stdio"), m_binary, QStringLiteral("--stdio"),
                           QStringLiteral("--pool"), QStringLiteral("0")} +
               extra + QStringList{QStringLiteral("--")};
    }
    QStringList http() const
    {
        return {QStringLiteral("--http"),
                QStringLiteral("http://127.0.0.1:%1/mcp").arg(m_endpoint->port()),
                QString::fromLatin1(m_token)};
    }
    QProcessEnvironment env(bool window = true) const
    {
        QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
        e.insert(QStringLiteral("CODE_SANDBOX_MONITOR_SOCKET"),
                 window ? m_monitor->path() : m_dir.filePath(QStringLiteral("nobody.sock")));
        e.insert(QStringLiteral("CODE_SANDBOX_HISTORY"),
                 m_dir.filePath(QStringLiteral("headless.sqlite")));
        return e;
    }
    // The policies for every server: the window's gate and the settings file headless ones read.
    void setPolicies(const AssistantPolicies &policies)
    {
        AppSettings::savePolicies(policies);
        m_controller->setPolicies(policies);
    }
    static AssistantPolicies askEveryone(int waitSec = 120)
    {
        AssistantPolicies p;
        p.fallback.action = AssistantPolicy::Action::Ask;
        p.approvalTimeoutSec = waitSec;
        return p;
    }
    // A headless server's environment in which `hosts` lead to this machine's outward address
    // (the gateway's test-only name map), under a policy that asks for hosts beyond a run's list.
    QProcessEnvironment askingWorld(const QString &address, const QStringList &hosts)
    {
        QStringList map;
        for (const QString &host : hosts)
            map.append(host + u'=' + address);
        QProcessEnvironment e = env();
        e.insert(QString::fromLatin1(EgressGateway::kTestHostsVar), map.join(u','));
        AssistantPolicies p;
        p.fallback.otherHosts = AssistantPolicy::OtherHosts::Ask;
        setPolicies(p);
        return e;
    }
    ApprovalDialog *waitForDialog(const SdkCall &call)
    {
        return waitForDialog([&call] { return call.done(); });
    }
    // The first dialog once one is open, or nothing once the call ended without one.
    ApprovalDialog *waitForDialog(const std::function<bool()> &callDone)
    {
        // Neither in time: nothing, and the caller's check says so.
        const bool either =
            QTest::qWaitFor([&] { return !m_prompter->dialogs().isEmpty() || callDone(); }, kRunMs);
        if (!either || m_prompter->dialogs().isEmpty())
            return nullptr;
        return m_prompter->dialogs().first();
    }
    static void click(ApprovalDialog *dialog, const char *button)
    {
        auto *b = dialog->findChild<QPushButton *>(QLatin1String(button));
        QVERIFY(b);
        QTest::mouseClick(b, Qt::LeftButton);
    }
    const RunRecord *runningOf(const QString &client) const
    {
        RunListModel *model = m_controller->model();
        for (int row = 0; row < model->rowCount(); ++row) {
            const RunRecord *r = model->runAt(row);
            if (r->source == client && r->status == RunRecord::Status::Running)
                return r;
        }
        return nullptr;
    }

    QTemporaryDir m_dir;
    QString m_binary;
    QString m_instance =
        QStringLiteral("gui-control-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
    QByteArray m_token = QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
    std::unique_ptr<Services> m_services;
    std::unique_ptr<StreamableHttpServer> m_endpoint;
    std::unique_ptr<MonitorServer> m_monitor;
    std::unique_ptr<AppController> m_controller;
    std::unique_ptr<QWidget> m_window;
    ApprovalPrompter *m_prompter = nullptr;
    QStringList m_headless; // instance ids seen, for the leftover check
};

void ControlRoomTest::initTestCase()
{
    QVERIFY(m_dir.isValid());
    m_binary = qEnvironmentVariable("CODE_SANDBOX_BIN");
    QVERIFY2(!m_binary.isEmpty(), "CODE_SANDBOX_BIN names the code-sandbox binary");
    // The settings file (policies) of this test only, for the window and headless instances.
    qputenv("XDG_CONFIG_HOME", m_dir.filePath(QStringLiteral("config")).toUtf8());
    QStandardPaths::setTestModeEnabled(false);
    AppSettings::savePolicies(AssistantPolicies());

    CommandLine cl;
    cl.config.poolSize = 1;
    m_services = Services::create(cl, Services::Mode::Window,
                                  {m_instance, m_dir.filePath(QStringLiteral("history.sqlite"))});
    QVERIFY(m_services);
    QString error;
    m_endpoint = m_services->startHttp(
        Services::httpConfig(cl, QHostAddress(QHostAddress::LocalHost), m_token),
        QHostAddress::LocalHost, 0, &error);
    QVERIFY2(m_endpoint, qPrintable(error));
    m_monitor = std::make_unique<MonitorServer>();
    QVERIFY(m_monitor->listen(m_dir.filePath(QStringLiteral("monitor.sock")), &error));
    m_controller = std::make_unique<AppController>(m_services->sandbox(), m_services->journal(),
                                                   m_services->history(), m_monitor.get());
    m_controller->setRunGate(m_services->gate());
    m_controller->setRunControl(m_services->runControl());
    m_window = std::make_unique<QWidget>();
    m_window->show();
    m_prompter = new ApprovalPrompter(m_controller.get(), m_window.get(), nullptr);
}

void ControlRoomTest::httpRunWaitsAndAllowOnceRunsIt()
{
    setPolicies(askEveryone());
    SdkCall call(http(), QStringLiteral("claude-code"), QStringLiteral("run_python_code"),
                 {{QStringLiteral("code"), QStringLiteral("print(6 * 7)")}}, env());
    ApprovalDialog *dialog = waitForDialog(call);
    QVERIFY2(dialog, qPrintable(call.text() + call.error() + call.log()));
    QCOMPARE(dialog->request().client, QStringLiteral("claude-code"));
    QCOMPARE(dialog->request().mode, QStringLiteral("window"));
    QCOMPARE(dialog->findChild<QPlainTextEdit *>(QStringLiteral("approvalCode"))->toPlainText(),
             QStringLiteral("print(6 * 7)"));
    // The call waits, and says so.
    QTRY_VERIFY(call.progress().contains(
        QStringLiteral("waiting for approval in the Code Sandbox window")));
    QVERIFY(!call.done());
    click(dialog, "allowOnceButton");
    QTRY_VERIFY_WITH_TIMEOUT(call.done(), kRunMs);
    QVERIFY2(!call.isError(), qPrintable(call.text() + call.error()));
    QCOMPARE(call.text(), QStringLiteral("42\n"));
    QVERIFY(m_prompter->dialogs().isEmpty());
}

void ControlRoomTest::httpDenyReturnsTheReason()
{
    setPolicies(askEveryone());
    SdkCall call(http(), QStringLiteral("claude-code"), QStringLiteral("execute_code"),
                 {{QStringLiteral("language"), QStringLiteral("python")},
                  {QStringLiteral("code"), QStringLiteral("import shutil; shutil.rmtree('/')")}},
                 env());
    ApprovalDialog *dialog = waitForDialog(call);
    QVERIFY2(dialog, qPrintable(call.text() + call.error()));
    dialog->findChild<QLineEdit *>(QStringLiteral("denyReason"))
        ->setText(QStringLiteral("do not delete things"));
    click(dialog, "denyButton");
    QTRY_VERIFY_WITH_TIMEOUT(call.done(), kRunMs);
    QVERIFY(call.isError());
    QCOMPARE(call.text(),
             QStringLiteral("Denied in the Code Sandbox window: do not delete things"));
}

void ControlRoomTest::httpNoAnswerDenies()
{
    setPolicies(askEveryone(5));
    SdkCall call(http(), QStringLiteral("claude-code"), QStringLiteral("run_python_code"),
                 {{QStringLiteral("code"), QStringLiteral("print(1)")}}, env());
    QVERIFY(waitForDialog(call));
    QTRY_VERIFY_WITH_TIMEOUT(call.done(), 30000);
    QVERIFY(call.isError());
    QVERIFY2(call.text().contains(u"nobody answered in the Code Sandbox window within 5 s"),
             qPrintable(call.text()));
    // The dialog went with the question.
    QTRY_VERIFY(m_prompter->dialogs().isEmpty());
}

void ControlRoomTest::headlessAllowAndDeny()
{
    setPolicies(askEveryone());
    {
        SdkCall call(stdio(), QStringLiteral("cursor"), QStringLiteral("run_javascript_code"),
                     {{QStringLiteral("code"), QStringLiteral("console.log(2 ** 10)")}}, env());
        ApprovalDialog *dialog = waitForDialog(call);
        QVERIFY2(dialog, qPrintable(call.text() + call.error() + call.log()));
        QCOMPARE(dialog->request().mode, QStringLiteral("stdio"));
        QCOMPARE(dialog->request().language, QStringLiteral("javascript"));
        QVERIFY(dialog->request().instanceId != m_instance);
        m_headless.append(dialog->request().instanceId);
        click(dialog, "allowOnceButton");
        QTRY_VERIFY_WITH_TIMEOUT(call.done(), kRunMs);
        QVERIFY2(!call.isError(), qPrintable(call.text() + call.error()));
        QCOMPARE(call.text(), QStringLiteral("1024\n"));
    }
    SdkCall call(stdio(), QStringLiteral("cursor"), QStringLiteral("run_python_code"),
                 {{QStringLiteral("code"), QStringLiteral("print(1)")}}, env());
    ApprovalDialog *dialog = waitForDialog(call);
    QVERIFY2(dialog, qPrintable(call.text() + call.error() + call.log()));
    dialog->findChild<QLineEdit *>(QStringLiteral("denyReason"))
        ->setText(QStringLiteral("not on a Friday"));
    click(dialog, "denyButton");
    QTRY_VERIFY_WITH_TIMEOUT(call.done(), kRunMs);
    QVERIFY(call.isError());
    QCOMPARE(call.text(), QStringLiteral("Denied in the Code Sandbox window: not on a Friday"));
}

void ControlRoomTest::headlessNoAnswerDenies()
{
    setPolicies(askEveryone(5));
    SdkCall call(stdio(), QStringLiteral("cursor"), QStringLiteral("run_python_code"),
                 {{QStringLiteral("code"), QStringLiteral("print(1)")}}, env());
    QVERIFY(waitForDialog(call));
    QTRY_VERIFY_WITH_TIMEOUT(call.done(), 30000);
    QVERIFY(call.isError());
    QVERIFY2(call.text().contains(u"nobody answered in the Code Sandbox window within 5 s"),
             qPrintable(call.text()));
    QTRY_VERIFY(m_prompter->dialogs().isEmpty());
}

void ControlRoomTest::headlessWithoutWindowRefuses()
{
    setPolicies(askEveryone());
    SdkCall call(stdio(), QStringLiteral("cursor"), QStringLiteral("run_python_code"),
                 {{QStringLiteral("code"), QStringLiteral("print(1)")}}, env(false));
    QTRY_VERIFY_WITH_TIMEOUT(call.done(), kRunMs);
    QVERIFY(call.isError());
    QVERIFY2(call.text().contains(u"no Code Sandbox window is open to ask"),
             qPrintable(call.text()));
    QVERIFY(m_prompter->dialogs().isEmpty());
    // The setting says "run": it runs unseen, as asked.
    AssistantPolicies run = askEveryone();
    run.runWhenNoWindow = true;
    setPolicies(run);
    SdkCall ran(stdio(), QStringLiteral("cursor"), QStringLiteral("run_python_code"),
                {{QStringLiteral("code"), QStringLiteral("print('unseen')")}}, env(false));
    QTRY_VERIFY_WITH_TIMEOUT(ran.done(), kRunMs);
    QCOMPARE(ran.text(), QStringLiteral("unseen\n"));
}

void ControlRoomTest::alwaysAllowIsSavedAndFollowed()
{
    setPolicies(askEveryone());
    QSignalSpy changed(m_controller.get(), &AppController::policiesChanged);
    {
        SdkCall call(stdio(), QStringLiteral("trusted-bot"), QStringLiteral("run_python_code"),
                     {{QStringLiteral("code"), QStringLiteral("print('first')")}}, env());
        ApprovalDialog *dialog = waitForDialog(call);
        QVERIFY2(dialog, qPrintable(call.text() + call.error() + call.log()));
        click(dialog, "allowAlwaysButton");
        QTRY_VERIFY_WITH_TIMEOUT(call.done(), kRunMs);
        QCOMPARE(call.text(), QStringLiteral("first\n"));
    }
    QCOMPARE(changed.size(), 1);
    QCOMPARE(AppSettings::loadPolicies().forClient(QStringLiteral("trusted-bot")).action,
             AssistantPolicy::Action::Run);
    QCOMPARE(m_services->gate()->policies().forClient(QStringLiteral("trusted-bot")).action,
             AssistantPolicy::Action::Run);
    // A new headless instance reads it from the settings file; the window's own gate has it.
    SdkCall headless(stdio(), QStringLiteral("trusted-bot"), QStringLiteral("run_python_code"),
                     {{QStringLiteral("code"), QStringLiteral("print('second')")}}, env());
    SdkCall window(http(), QStringLiteral("trusted-bot"), QStringLiteral("run_python_code"),
                   {{QStringLiteral("code"), QStringLiteral("print('third')")}}, env());
    QTRY_VERIFY_WITH_TIMEOUT(headless.done() && window.done(), kRunMs);
    QCOMPARE(headless.text(), QStringLiteral("second\n"));
    QCOMPARE(window.text(), QStringLiteral("third\n"));
    QVERIFY(m_prompter->dialogs().isEmpty());
    // Other assistants still ask.
    SdkCall other(http(), QStringLiteral("other-bot"), QStringLiteral("run_python_code"),
                  {{QStringLiteral("code"), QStringLiteral("print(1)")}}, env());
    ApprovalDialog *dialog = waitForDialog(other);
    QVERIFY(dialog);
    click(dialog, "denyButton");
    QTRY_VERIFY_WITH_TIMEOUT(other.done(), kRunMs);
}

void ControlRoomTest::headlessApprovalShowsTheWholeProgram()
{
    // Over 256 KiB, which the question once was cut to on its way over the monitor socket: the
    // person allowed the head, and the tail ran.
    setPolicies(askEveryone());
    QString program;
    for (int i = 0; program.size() < 300 * 1024; ++i)
        program += QStringLiteral("v%1 = %1\n").arg(i);
    program += QStringLiteral("print('the tail ran')\n");
    RawStdioSession session(m_binary, QStringLiteral("big-bot"), env());
    const int call =
        session.call(QStringLiteral("run_python_code"), {{QStringLiteral("code"), program}});
    ApprovalDialog *dialog = waitForDialog([&] { return session.done(call); });
    QVERIFY2(dialog, qPrintable(session.text(call) + session.log()));
    m_headless.append(dialog->request().instanceId);
    QCOMPARE(dialog->request().mode, QStringLiteral("stdio"));
    QCOMPARE(dialog->findChild<QPlainTextEdit *>(QStringLiteral("approvalCode"))->toPlainText(),
             program);
    click(dialog, "allowOnceButton");
    QTRY_VERIFY_WITH_TIMEOUT(session.done(call), kRunMs);
    QCOMPARE(session.text(call), QStringLiteral("the tail ran\n"));
}

void ControlRoomTest::hostileFileNamesShowInTheDialog()
{
    // As HTML, "<!--" … "-->" hid numpy.py, and the approved "import numpy" ran it.
    setPolicies(askEveryone());
    QJsonArray files;
    for (const auto &[path, content] :
         {std::pair{QStringLiteral("data<b></b>.csv"), QStringLiteral("a,b\n")},
          std::pair{QStringLiteral("<!--"), QString()},
          std::pair{QStringLiteral("numpy.py"), QStringLiteral("print('the hidden numpy')")},
          std::pair{QStringLiteral("-->"), QString()}})
        files.append(
            QJsonObject{{QStringLiteral("path"), path}, {QStringLiteral("content"), content}});
    RawStdioSession session(m_binary, QStringLiteral("<b>x</b><!--bot-->"), env());
    const int call = session.call(QStringLiteral("execute_code"),
                                  {{QStringLiteral("language"), QStringLiteral("python")},
                                   {QStringLiteral("code"), QStringLiteral("import numpy\n")},
                                   {QStringLiteral("files"), files}});
    ApprovalDialog *dialog = waitForDialog([&] { return session.done(call); });
    QVERIFY2(dialog, qPrintable(session.text(call) + session.log()));
    m_headless.append(dialog->request().instanceId);
    const QString shown = shownTexts(dialog);
    for (const QString &name :
         {QStringLiteral("data<b></b>.csv"), QStringLiteral("<!--"), QStringLiteral("numpy.py"),
          QStringLiteral("-->"), QStringLiteral("<b>x</b><!--bot-->")})
        QVERIFY2(shown.contains(name), qPrintable(name + QStringLiteral("\n---\n") + shown));
    // What was shown is what runs.
    click(dialog, "allowOnceButton");
    QTRY_VERIFY_WITH_TIMEOUT(session.done(call), kRunMs);
    QVERIFY2(session.text(call).contains(u"the hidden numpy"), qPrintable(session.text(call)));
}

void ControlRoomTest::alwaysForAClientWithoutANameAllowsOnce()
{
    // The only policy a client without a name matches is the default, everyone's: "always" for
    // it must not make every assistant without a policy of its own run unasked.
    const AssistantPolicies asking = askEveryone();
    setPolicies(asking);
    RawStdioSession session(m_binary, QString(), env());
    const int first = session.call(QStringLiteral("run_python_code"),
                                   {{QStringLiteral("code"), QStringLiteral("print('once')")}});
    ApprovalDialog *dialog = waitForDialog([&] { return session.done(first); });
    QVERIFY2(dialog, qPrintable(session.text(first) + session.log()));
    m_headless.append(dialog->request().instanceId);
    QVERIFY(!dialog->findChild<QPushButton *>(QStringLiteral("allowAlwaysButton"))->isEnabled());
    // Even said otherwise (the button is off), it is this run only.
    QVERIFY(m_controller->answerApproval(dialog->request().id, RunApprover::Answer::AllowAlways,
                                         QString()));
    QTRY_VERIFY_WITH_TIMEOUT(session.done(first), kRunMs);
    QCOMPARE(session.text(first), QStringLiteral("once\n"));
    QCOMPARE(AppSettings::loadPolicies(), asking);
    QCOMPARE(m_services->gate()->policies(), asking);
    // The same headless instance asks again for its next run: it did not hear "always" either.
    const int second = session.call(QStringLiteral("run_python_code"),
                                    {{QStringLiteral("code"), QStringLiteral("print('twice')")}});
    dialog = waitForDialog([&] { return session.done(second); });
    QVERIFY2(dialog, qPrintable(session.text(second) + session.log()));
    click(dialog, "denyButton");
    QTRY_VERIFY_WITH_TIMEOUT(session.done(second), kRunMs);
    QVERIFY(session.isError(second));
    // And a named assistant without a policy of its own is still asked.
    SdkCall other(http(), QStringLiteral("unlisted-bot"), QStringLiteral("run_python_code"),
                  {{QStringLiteral("code"), QStringLiteral("print(1)")}}, env());
    dialog = waitForDialog(other);
    QVERIFY2(dialog, qPrintable(other.text() + other.error()));
    click(dialog, "denyButton");
    QTRY_VERIFY_WITH_TIMEOUT(other.done(), kRunMs);
    QVERIFY(other.isError());
}

void ControlRoomTest::policyRefusesLanguageAndNetwork()
{
    AssistantPolicies p;
    AssistantPolicy limited;
    limited.client = QStringLiteral("limited-bot");
    limited.languages = {QStringLiteral("python")};
    limited.network = false;
    p.assistants.append(limited);
    setPolicies(p);
    SdkCall ruby(stdio(), QStringLiteral("limited-bot"), QStringLiteral("execute_code"),
                 {{QStringLiteral("language"), QStringLiteral("ruby")},
                  {QStringLiteral("code"), QStringLiteral("puts 1")}},
                 env());
    // A server that gives sandboxes network: this assistant may not use it.
    SdkCall network(stdio({QStringLiteral("--network")}), QStringLiteral("limited-bot"),
                    QStringLiteral("run_python_code"),
                    {{QStringLiteral("code"), QStringLiteral("print(1)")}}, env());
    // Another assistant on that server runs.
    SdkCall other(stdio({QStringLiteral("--network")}), QStringLiteral("other-bot"),
                  QStringLiteral("run_python_code"),
                  {{QStringLiteral("code"), QStringLiteral("print('ok')")}}, env());
    // A session installs its libraries when it is created: the policy is asked then.
    SdkCall session(stdio(), QStringLiteral("limited-bot"), QStringLiteral("create_session"),
                    {{QStringLiteral("language"), QStringLiteral("python")},
                     {QStringLiteral("libraries"), QJsonArray{QStringLiteral("rich")}}},
                    env());
    QTRY_VERIFY_WITH_TIMEOUT(ruby.done() && network.done() && other.done() && session.done(),
                             kRunMs);
    QVERIFY(session.isError());
    QVERIFY2(session.text().contains(u"installing libraries needs network access"),
             qPrintable(session.text()));
    QVERIFY(ruby.isError());
    QVERIFY2(ruby.text().contains(u"Refused by the policy for assistant 'limited-bot'") &&
                 ruby.text().contains(u"ruby is not among the languages it allows: python"),
             qPrintable(ruby.text()));
    QVERIFY(network.isError());
    QVERIFY2(network.text().contains(u"Refused by the policy for assistant 'limited-bot'") &&
                 network.text().contains(u"network access is not allowed for it"),
             qPrintable(network.text()));
    QCOMPARE(other.text(), QStringLiteral("ok\n"));
}

void ControlRoomTest::stopAHeadlessRun()
{
    setPolicies(AssistantPolicies());
    SdkCall call(stdio(), QStringLiteral("long-bot"), QStringLiteral("execute_code"),
                 {{QStringLiteral("language"), QStringLiteral("python")},
                  {QStringLiteral("code"),
                   QStringLiteral("import time\nprint('started', flush=True)\ntime.sleep(60)")},
                  {QStringLiteral("timeout"), 120}},
                 env());
    const RunRecord *run = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(call.done() || ((run = runningOf(QStringLiteral("long-bot"))) &&
                                             run->stdoutText().contains("started")),
                             kRunMs);
    QVERIFY2(run && !call.done(), qPrintable(call.text() + call.error()));
    const QString id = run->id;
    const QString instance = run->instanceId;
    m_headless.append(instance);
    QVERIFY(instance != m_instance);
    QVERIFY(m_controller->canStop(id));
    QElapsedTimer clicked;
    clicked.start();
    QVERIFY(m_controller->stopRun(id));
    QTRY_VERIFY_WITH_TIMEOUT(call.done(), 20000);
    qInfo("the client had its answer %lld ms after the stop", clicked.elapsed());
    QVERIFY(call.isError());
    // execute_code's text is the JSON result.
    const QJsonObject structured = call.result().value(u"structuredContent").toObject();
    QVERIFY2(structured.value(u"cancelled").toBool(), qPrintable(call.text()));
    QCOMPARE(structured.value(u"cancel_reason").toString(),
             QStringLiteral("stopped from the Code Sandbox window"));
    QTRY_VERIFY_WITH_TIMEOUT(m_controller->model()->run(id)->status == RunRecord::Status::Cancelled,
                             10000);
    QVERIFY(!m_controller->canStop(id));
    QVERIFY(!m_controller->stopRun(id)); // finished: nothing to stop
    // Its container is gone.
    QTRY_VERIFY_WITH_TIMEOUT(
        LeftoverSweeper::containersOf(*m_services->engine(), instance).isEmpty(), 20000);
}

void ControlRoomTest::stopAnHttpRun()
{
    setPolicies(AssistantPolicies());
    SdkCall call(http(), QStringLiteral("long-bot-2"), QStringLiteral("execute_code"),
                 {{QStringLiteral("language"), QStringLiteral("python")},
                  {QStringLiteral("code"),
                   QStringLiteral("import time\nprint('started', flush=True)\ntime.sleep(60)")},
                  {QStringLiteral("timeout"), 120}},
                 env());
    const RunRecord *run = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(call.done() || ((run = runningOf(QStringLiteral("long-bot-2"))) &&
                                             run->stdoutText().contains("started")),
                             kRunMs);
    QVERIFY2(run && !call.done(), qPrintable(call.text() + call.error()));
    const QString id = run->id;
    QCOMPARE(run->instanceId, m_instance);
    QVERIFY(m_controller->stopRun(id));
    QTRY_VERIFY_WITH_TIMEOUT(call.done(), 20000);
    QVERIFY(call.isError());
    // execute_code's text is the JSON result.
    const QJsonObject structured = call.result().value(u"structuredContent").toObject();
    QVERIFY2(structured.value(u"cancelled").toBool(), qPrintable(call.text()));
    QCOMPARE(structured.value(u"cancel_reason").toString(),
             QStringLiteral("stopped from the Code Sandbox window"));
    QVERIFY(m_controller->model()->run(id)->notes.contains(
        QStringLiteral("stopped from the Code Sandbox window")));
}

// The real window: the list follows the newest run, Stop is enabled for it (and the Run menu holds
// the same action), and Delete in the list stops it.
void ControlRoomTest::deleteInTheWindowsListStops()
{
    setPolicies(AssistantPolicies());
    AppSettings settings;
    MainWindow window(m_controller.get(), settings);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QMenu *runMenu = nullptr;
    for (QAction *a : window.menuBar()->actions()) {
        if (a->text() == u"&Run")
            runMenu = a->menu();
    }
    QVERIFY(runMenu && runMenu->actions().contains(window.stopAction()));
    SdkCall call(http(), QStringLiteral("long-bot-3"), QStringLiteral("execute_code"),
                 {{QStringLiteral("language"), QStringLiteral("python")},
                  {QStringLiteral("code"),
                   QStringLiteral("import time\nprint('started', flush=True)\ntime.sleep(60)")},
                  {QStringLiteral("timeout"), 120}},
                 env());
    const RunRecord *run = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT(call.done() || ((run = runningOf(QStringLiteral("long-bot-3"))) &&
                                             run->stdoutText().contains("started")),
                             kRunMs);
    QVERIFY2(run && !call.done(), qPrintable(call.text() + call.error()));
    QTRY_COMPARE(window.currentRunId(), run->id);
    QTRY_VERIFY(window.stopAction()->isEnabled());
    window.runTree()->setFocus();
    QTest::keyClick(window.runTree(), Qt::Key_Delete);
    QTRY_VERIFY_WITH_TIMEOUT(call.done(), 20000);
    QVERIFY(call.result().value(u"structuredContent").toObject().value(u"cancelled").toBool());
    QTRY_VERIFY(!window.stopAction()->isEnabled());
}

void ControlRoomTest::aHeldConnectionIsAskedInTheWindow()
{
    // A headless allow-list server; its assistants' policy asks for other hosts. A connection
    // to one is held while the window asks: "always" lets it through and lists the host for
    // the assistant (its next connection there is not asked about); "deny" refuses it.
    HelloServer world;
    QVERIFY(world.listen(QHostAddress::AnyIPv4));
    const QString address = outwardAddress();
    if (address.isEmpty())
        QSKIP("this machine has no non-loopback IPv4 address for the test's world");
    const QString port = QString::number(world.serverPort());
    QProcessEnvironment e =
        askingWorld(address, {QStringLiteral("world.test"), QStringLiteral("other.test")});
    // An allowed-when-asked name must resolve outside the private ranges (the machine's own
    // address stands for the internet here).
    e.insert(QString::fromLatin1(EgressGateway::kTestPublicVar), address + QStringLiteral("/32"));
    const QString program =
        QStringLiteral("import urllib.request, urllib.error\n"
                       "def get(path):\n"
                       "    try:\n"
                       "        return urllib.request.urlopen('http://other.test:%1' + path, "
                       "timeout=100).read().decode()\n"
                       "    except urllib.error.HTTPError as e:\n"
                       "        return 'HTTP %d' % e.code\n"
                       "print(get('/1'))\nprint(get('/2'))\n")
            .arg(port);
    const QStringList server =
        stdio({QStringLiteral("--egress"), QStringLiteral("world.test:") + port});
    {
        SdkCall call(server, QStringLiteral("net-bot"), QStringLiteral("run_python_code"),
                     {{QStringLiteral("code"), program}}, e);
        ApprovalDialog *dialog = waitForDialog(call);
        QVERIFY2(dialog, qPrintable(call.text() + call.error() + call.log()));
        m_headless.append(dialog->request().instanceId);
        QVERIFY(dialog->request().isConnection());
        QCOMPARE(dialog->request().hostPort(), QStringLiteral("other.test:") + port);
        QCOMPARE(dialog->windowTitle(), QStringLiteral("Allow a connection? — Code Sandbox"));
        const QString shown = shownTexts(dialog);
        QVERIFY2(shown.contains(QStringLiteral("other.test:") + port), qPrintable(shown));
        QVERIFY2(shown.contains(QStringLiteral("world.test:") + port), qPrintable(shown));
        QCOMPARE(dialog->findChild<QPlainTextEdit *>(QStringLiteral("approvalCode"))->toPlainText(),
                 program);
        click(dialog, "allowAlwaysButton");
        QTRY_VERIFY_WITH_TIMEOUT(call.done(), kRunMs);
        QVERIFY2(call.text().startsWith(QStringLiteral("hello /1\nhello /2\n")),
                 qPrintable(call.text() + call.log()));
        // The second connection was not asked about.
        QVERIFY(m_prompter->dialogs().isEmpty());
        QVERIFY(call.progress().join(u'\n').contains(
            QStringLiteral("may the run reach other.test:") + port));
    }
    const AssistantPolicy saved = AppSettings::loadPolicies().forClient(QStringLiteral("net-bot"));
    QCOMPARE(saved.client, QStringLiteral("net-bot"));
    QCOMPARE(saved.egress, (QStringList{QStringLiteral("world.test:") + port,
                                        QStringLiteral("other.test:") + port}));
    QCOMPARE(saved.otherHosts, AssistantPolicy::OtherHosts::Ask);
    QVERIFY(AppSettings::loadPolicies().fallback.egress.isEmpty());

    SdkCall denied(server, QStringLiteral("deny-bot"), QStringLiteral("run_python_code"),
                   {{QStringLiteral("code"), program}}, e);
    for (int i = 0; i < 2; ++i) {
        ApprovalDialog *dialog = waitForDialog(denied);
        QVERIFY2(dialog, qPrintable(denied.text() + denied.error() + denied.log()));
        if (i == 0)
            m_headless.append(dialog->request().instanceId);
        click(dialog, "denyButton");
        QTRY_VERIFY(!m_prompter->dialogs().contains(dialog));
    }
    QTRY_VERIFY_WITH_TIMEOUT(denied.done(), kRunMs);
    QVERIFY2(denied.text().startsWith(QStringLiteral("HTTP 403\nHTTP 403\n")),
             qPrintable(denied.text()));
    QVERIFY2(denied.text().contains(u"denied when asked"), qPrintable(denied.text()));
    setPolicies(AssistantPolicies());
}

void ControlRoomTest::aSessionsQuestionNamesItsHosts()
{
    // A session reaches the hosts it chose when it was created, narrower than the server's: the
    // question for a host beyond them shows the session's hosts (it showed the server's list).
    HelloServer world;
    QVERIFY(world.listen(QHostAddress::AnyIPv4));
    const QString address = outwardAddress();
    if (address.isEmpty())
        QSKIP("this machine has no non-loopback IPv4 address for the test's world");
    const QString port = QString::number(world.serverPort());
    const QProcessEnvironment e =
        askingWorld(address, {QStringLiteral("world.test"), QStringLiteral("other.test"),
                              QStringLiteral("third.test")});
    const QString listed = QStringLiteral("world.test:") + port;
    RawStdioSession session(
        m_binary, QStringLiteral("session-net-bot"), e,
        {QStringLiteral("--egress"), listed + QStringLiteral(",third.test:") + port});
    const int created = session.call(QStringLiteral("create_session"),
                                     {{QStringLiteral("language"), QStringLiteral("python")},
                                      {QStringLiteral("network"), QJsonArray{listed}}});
    QTRY_VERIFY_WITH_TIMEOUT(session.done(created), kRunMs);
    QVERIFY2(!session.isError(created), qPrintable(session.text(created) + session.log()));
    const QString id = session.structured(created).value(u"session_id").toString();
    QVERIFY2(!id.isEmpty(), qPrintable(session.text(created)));
    const int run = session.call(
        QStringLiteral("execute_code"),
        {{QStringLiteral("language"), QStringLiteral("python")},
         {QStringLiteral("session_id"), id},
         {QStringLiteral("code"),
          QStringLiteral("import urllib.request, urllib.error\n"
                         "try:\n"
                         "    urllib.request.urlopen('http://other.test:%1/', timeout=100)\n"
                         "except urllib.error.HTTPError as e:\n"
                         "    print('HTTP', e.code)\n")
              .arg(port)}});
    ApprovalDialog *dialog = waitForDialog([&] { return session.done(run); });
    QVERIFY2(dialog, qPrintable(session.text(run) + session.log()));
    m_headless.append(dialog->request().instanceId);
    QCOMPARE(dialog->request().hostPort(), QStringLiteral("other.test:") + port);
    QCOMPARE(dialog->request().egress, QStringList{listed});
    const QString shown = shownTexts(dialog);
    QVERIFY2(!shown.contains(QStringLiteral("third.test")), qPrintable(shown));
    // Meanwhile the window's record of the headless run shows the connection as waiting.
    const auto held = [this] {
        const RunRecord *r = runningOf(QStringLiteral("session-net-bot"));
        return r && !r->connections.isEmpty() && r->connections.last().host == u"other.test" &&
               r->connections.last().verdict == NetworkAttempt::Verdict::Held;
    };
    QTRY_VERIFY_WITH_TIMEOUT(held(), 10000);
    click(dialog, "denyButton");
    QTRY_VERIFY_WITH_TIMEOUT(session.done(run), kRunMs);
    QCOMPARE(session.structured(run).value(u"stdout").toString(), QStringLiteral("HTTP 403\n"));
    setPolicies(AssistantPolicies());
}

void ControlRoomTest::cleanupTestCase()
{
    m_window.reset();
    m_controller.reset();
    m_monitor.reset();
    if (m_endpoint)
        m_endpoint->closeAll();
    m_endpoint.reset();
    if (m_services) {
        QSignalSpy done(m_services->sandbox(), &SandboxService::shutdownFinished);
        m_services->sandbox()->shutdown();
        done.wait(20000);
        for (const QString &instance : std::as_const(m_headless))
            QTRY_VERIFY_WITH_TIMEOUT(
                LeftoverSweeper::containersOf(*m_services->engine(), instance).isEmpty(), 20000);
        QVERIFY(LeftoverSweeper::containersOf(*m_services->engine(), m_instance).isEmpty());
    }
}

QTEST_MAIN(ControlRoomTest)
#include "tst_controlroom.moc"
