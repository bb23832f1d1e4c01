// The allow-list network mode against the real engine: a sandbox reaches the hosts its list
// names through the egress gateway and nothing else (no other host, no IP literal, no name
// lookup of its own, no raw route, no other sandbox's credential); a killed gateway is made
// again and warm sandboxes keep working; nothing (gateway, networks, sandboxes) is left behind.
//
// The world is this test's own HTTP server on the machine's first non-loopback address, named
// world.test and other.test through the gateway's test-only name map (this machine has no
// internet), which the test passes through EgressGateway::kTestHostsVar.

#include "assistantpolicy.h"
#include "containerpool.h"
#include "containersapi.h"
#include "dockerbackend.h"
#include "egressgateway.h"
#include "egressprograms.h"
#include "engineclient.h"
#include "enginereply.h"
#include "enginetestcase.h"
#include "execution.h"
#include "hosttrustprograms.h"
#include "networksapi.h"
#include "runnetwork.h"
#include "sandboxservice.h"
#include "sandboxsession.h"
#include "sessionmanager.h"
#include "testcertificates.h"
#include "tunnelproxy.h"
#include "worldserver.h"

#include <QFile>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslServer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>

class TestEgress : public EngineTestCase
{
    Q_OBJECT

private:
    QString m_address;
    WorldServer<QTcpServer> m_world;
    WorldServer<QSslServer> m_tlsWorld;
    QTemporaryDir m_certs;
    QByteArray m_caPem;
    ExecutionResult m_last; // runJson's

    SandboxConfig egressConfig(const QStringList &hosts)
    {
        SandboxConfig c = newConfig(QStringLiteral("egress-"));
        c.egress = hosts;
        c.poolSize = 1;
        c.warmLanguages = {QStringLiteral("python")};
        return c;
    }

    QString port() const { return QString::number(m_world.serverPort()); }
    QString tlsPort() const { return QString::number(m_tlsWorld.serverPort()); }

    QJsonObject runJson(SandboxService &service, const QString &code)
    {
        const ExecutionResult r =
            resultOf(service.execute({QStringLiteral("python"), code, 40}), 120 * 1000);
        m_last = r;
        const QJsonObject out = QJsonDocument::fromJson(r.stdoutData).object();
        if (out.isEmpty())
            qWarning().noquote() << "exit" << r.exitCode << "stdout" << r.stdoutData << "stderr"
                                 << r.stderrData << r.error;
        return out;
    }

    // The networks (their names) and gateways (their ids) this test's instance made that the
    // engine still has.
    // The world server and the gateway's name map, once (EngineTestCase has initTestCase).
    void prepareWorld()
    {
        if (m_world.isListening())
            return;
        m_address = outwardAddress();
        QVERIFY2(!m_address.isEmpty(), "the machine has no non-loopback IPv4 address");
        QVERIFY(m_world.listen(QHostAddress::AnyIPv4));
        QVERIFY(m_certs.isValid());
        QVERIFY2(makeTestCertificates(m_certs.path()),
                 "openssl could not make the test certificates");
        QVERIFY(listenWithTls(m_tlsWorld, m_certs.filePath(QStringLiteral("server.pem")),
                              m_certs.filePath(QStringLiteral("server.key"))));
        QFile ca(m_certs.filePath(QStringLiteral("ca.pem")));
        QVERIFY(ca.open(QIODevice::ReadOnly));
        m_caPem = ca.readAll();
        qputenv(EgressGateway::kTestHostsVar,
                QStringLiteral("world.test=%1,other.test=%1").arg(m_address).toUtf8());
        QVERIFY(hasGatewayImage());
    }

private Q_SLOTS:

    void onlyTheListedHostIsReached()
    {
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               egressConfig({QStringLiteral("world.test:") + port()}));
        m_world.requests.clear();
        const QJsonObject out =
            runJson(service, QString::fromLatin1(kReachProgram).arg(port(), m_address));
        // Refused by the gateway with an HTTP error the program can read; no name lookup, raw
        // route or host address of its own.
        QCOMPARE(reachMismatch(out, port()), QString());
        // Only the allowed request reached the world.
        QCOMPARE(m_world.requests, QByteArrayList{"/a"});
        // The run's result lists what the gateway decided, allowed ones with their bytes.
        QCOMPARE(attemptsSeen(m_last.network),
                 (QStringList{QStringLiteral("world.test:%1 allowed").arg(port()),
                              QStringLiteral("other.test:%1 refused").arg(port()),
                              QStringLiteral("%1:%2 refused").arg(m_address, port())}));
        QCOMPARE(m_last.network.first().rule, QStringLiteral("world.test:") + port());

        // Another sandbox's credential (this one's, once its sandbox is gone) is refused.
        const QString stale = out.value(u"proxy").toString();
        QVERIFY(stale.contains(u'@'));
        const QJsonObject second =
            runJson(service, QString::fromLatin1(kStaleCredentialProgram).arg(stale, port()));
        QCOMPARE(second.value(u"stale").toString(), QStringLiteral("HTTP 407"));
        QCOMPARE(second.value(u"own").toBool(), true);
        QCOMPARE(m_world.requests, QByteArrayList{"/a"});
        shutDown(service, engine);
    }

    void aCallsListNarrowsTheServers()
    {
        // The server allows world.test and other.test; a run that asks for world.test alone
        // (a call's `network`) reaches only that, from a sandbox of its own, while a run that
        // asks for nothing gets the server's list; a run that asks for none has no proxy at all.
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               egressConfig({QStringLiteral("world.test:") + port(),
                                             QStringLiteral("other.test:") + port()}));
        const QString program = QString::fromLatin1(kReachProgram).arg(port(), m_address);
        const auto run = [&](const std::optional<QStringList> &egress) {
            ExecutionRequest request(QStringLiteral("python"), program, 40);
            request.network = RunNetwork::decide(service.config(), egress);
            const ExecutionResult r = resultOf(service.execute(request), 120 * 1000);
            return QJsonDocument::fromJson(r.stdoutData).object();
        };
        m_world.requests.clear();
        const QJsonObject narrowed = run(QStringList{QStringLiteral("world.test:") + port()});
        QCOMPARE(narrowed.value(u"allowed").toString(),
                 QStringLiteral("hello world.test:%1 /a").arg(port()));
        QCOMPARE(narrowed.value(u"other").toString(), QStringLiteral("HTTP 403"));
        const QJsonObject server = run(std::nullopt);
        QCOMPARE(server.value(u"other").toString(),
                 QStringLiteral("hello other.test:%1 /b").arg(port()));
        QCOMPARE(m_world.requests, (QByteArrayList{"/a", "/a", "/b"}));
        // No network: no proxy to name, and still no route of its own.
        ExecutionRequest none(
            QStringLiteral("python"),
            QStringLiteral("import os, socket\nprint(os.environ.get('HTTP_PROXY'))\n"
                           "s = socket.socket(); s.settimeout(3)\ntry:\n"
                           "    s.connect(('%1', %2)); print('connected')\n"
                           "except OSError: print('no route')\n")
                .arg(m_address, port()),
            40);
        none.network = RunNetwork::decide(service.config(), QStringList());
        const ExecutionResult r = resultOf(service.execute(none), 120 * 1000);
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("None\nno route\n"));
        shutDown(service, engine);
    }

    void aSessionKeepsItsOwnList()
    {
        // create_session's `network`: the session's sandbox has its own list for every call.
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               egressConfig({QStringLiteral("world.test:") + port(),
                                             QStringLiteral("other.test:") + port()}));
        SessionManager sessions(&service, {});
        // A session whose sandbox may reach other.test only, once it is ready (null: why not).
        QString error;
        const auto start = [&](bool askOtherHosts) {
            QPointer<SandboxSession> session;
            bool done = false;
            // As RunGate decides it for a caller whose policy asks for other hosts, or not.
            AssistantPolicy policy;
            policy.otherHosts = askOtherHosts ? AssistantPolicy::OtherHosts::Ask
                                              : AssistantPolicy::OtherHosts::Refuse;
            sessions.create(
                QStringLiteral("owner"), QStringLiteral("python"), {}, 0,
                RunNetwork::decide(service.config(),
                                   QStringList{QStringLiteral("other.test:") + port()}, &policy),
                [](const QString &) {},
                [&](SandboxSession *s, const QString &why) {
                    session = s;
                    error = why;
                    done = true;
                });
            if (!QTest::qWaitFor([&] { return done; }, 60000))
                error = QStringLiteral("the session did not start within 60 s");
            return session;
        };
        const QPointer<SandboxSession> session = start(false);
        QVERIFY2(session, qPrintable(error));
        m_world.requests.clear();
        for (int i = 0; i < 2; ++i) {
            ExecutionRequest request(QStringLiteral("python"),
                                     QString::fromLatin1(kReachProgram).arg(port(), m_address), 40);
            request.sessionId = session->id();
            request.session = session;
            const ExecutionResult r = resultOf(sessions.execute(request), 120 * 1000);
            const QJsonObject out = QJsonDocument::fromJson(r.stdoutData).object();
            QCOMPARE(out.value(u"allowed").toString(), QStringLiteral("HTTP 403"));
            QCOMPARE(out.value(u"other").toString(),
                     QStringLiteral("hello other.test:%1 /b").arg(port()));
        }
        QCOMPARE(m_world.requests, (QByteArrayList{"/b", "/b"}));
        // A session whose assistant asks for other hosts: its runs' connections beyond the
        // session's list are held and reported to the run, which answers (here: deny).
        const QPointer<SandboxSession> asking = start(true);
        QVERIFY2(asking, qPrintable(error));
        ExecutionRequest request(QStringLiteral("python"),
                                 QString::fromLatin1(kFetchProgram).arg(port()), 40);
        request.sessionId = asking->id();
        request.session = asking;
        Execution *run = sessions.execute(request);
        QStringList held;
        connect(run, &Execution::connectionHeld, this,
                [&held, run](quint64 id, const QString &host, int heldPort) {
                    held.append(QStringLiteral("%1:%2").arg(host).arg(heldPort));
                    run->answerConnection(id, false);
                });
        const ExecutionResult r = resultOf(run, 120 * 1000);
        QCOMPARE(held, QStringList{QStringLiteral("world.test:") + port()});
        QVERIFY2(r.stderrData.contains("HTTP Error 403"), r.stdoutData + r.stderrData);
        sessions.closeAll(QStringLiteral("test over"));
        shutDown(service, engine);
    }

    void nodeFetchUsesTheGateway()
    {
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxConfig config = egressConfig({QStringLiteral("world.test:") + port()});
        config.warmLanguages = {QStringLiteral("javascript")};
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        m_world.requests.clear();
        const ExecutionResult r =
            resultOf(service.execute({QStringLiteral("javascript"),
                                      QString::fromLatin1(kNodeFetchProgram).arg(port()), 40}),
                     120 * 1000);
        const QJsonObject out = QJsonDocument::fromJson(r.stdoutData).object();
        QVERIFY2(!out.isEmpty(), r.stdoutData + r.stderrData + r.error.toUtf8());
        QCOMPARE(out.value(u"allowed").toString(),
                 QStringLiteral("hello world.test:%1 /n").arg(port()));
        QVERIFY2(out.value(u"other").toString().startsWith(QStringLiteral("ERR")) ||
                     out.value(u"other").toString() == QStringLiteral("HTTP 403"),
                 qPrintable(out.value(u"other").toString()));
        QCOMPARE(m_world.requests, QByteArrayList{"/n"});
        shutDown(service, engine);
    }

    void curlUsesTheGateway()
    {
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxConfig config = egressConfig({QStringLiteral("world.test:") + port()});
        config.poolSize = 0;
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        m_world.requests.clear();
        const QString script =
            QStringLiteral("curl -sS http://world.test:%1/c1; echo; "
                           "curl -sS -o /dev/null -w '%{http_code}' http://other.test:%1/c2")
                .arg(port());
        const ExecutionResult r =
            resultOf(service.execute({QStringLiteral("bash"), script, 40}), 120 * 1000);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(QString::fromUtf8(r.stdoutData),
                 QStringLiteral("hello world.test:%1 /c1\n403").arg(port()));
        QCOMPARE(m_world.requests, QByteArrayList{"/c1"});
        shutDown(service, engine);
    }

    void httpsAndTheTlsServerName()
    {
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               egressConfig({QStringLiteral("world.test:") + tlsPort()}));
        m_tlsWorld.requests.clear();
        ExecutionRequest request(QStringLiteral("python"),
                                 QString::fromLatin1(kTlsProgram).arg(tlsPort()), 40);
        request.files.append({QStringLiteral("ca.pem"), m_caPem});
        const ExecutionResult r = resultOf(service.execute(request), 120 * 1000);
        const QJsonObject out = QJsonDocument::fromJson(r.stdoutData).object();
        QVERIFY2(!out.isEmpty(), r.stdoutData + r.stderrData + r.error.toUtf8());
        QCOMPARE(out.value(u"https").toString(),
                 QStringLiteral("hello world.test:%1 /s").arg(tlsPort()));
        QVERIFY2(out.value(u"same").toString().startsWith(QStringLiteral("answered HTTP/1.1 200")),
                 qPrintable(out.value(u"same").toString()));
        // The ClientHello named other.test in a tunnel to world.test: the gateway ends it.
        QVERIFY2(out.value(u"fronted").toString().startsWith(QStringLiteral("ERR")),
                 qPrintable(out.value(u"fronted").toString()));
        QCOMPARE(m_tlsWorld.requests, (QByteArrayList{"/s", "/t"}));
        shutDown(service, engine);
    }

    void runsTrustTheHostsAuthorities()
    {
        // Behind a proxy that inspects TLS, the host's trust store holds the proxy's authority,
        // which no image knows. The test's CA stands for it: the TLS world's certificate is
        // signed by it, and the server is given it as the host's trust store. An allow-list
        // run's stock clients, told of no authority, reach the world over HTTPS; the sandbox
        // came warm from the pool (the store does not change its key); a run without network
        // gets nothing of it.
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxConfig config = egressConfig({QStringLiteral("world.test:") + tlsPort()});
        config.warmLanguages = {QStringLiteral("python"), QStringLiteral("javascript")};
        config.installCaBundle = m_certs.filePath(QStringLiteral("ca.pem"));
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        service.warmUp();
        const Language *python = service.languages().find(QStringLiteral("python"));
        const SandboxSpec warm = SandboxSpec::forRun(*python, python->image, service.config(),
                                                     RunNetwork::decide(service.config()));
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(warm), 1, 60000);
        const int takes = service.pool()->warmTakes();
        m_tlsWorld.requests.clear();
        QJsonObject out = runJson(service, QString::fromLatin1(kHostTrustProgram).arg(tlsPort()));
        QCOMPARE(out.value(u"https").toString(),
                 QStringLiteral("hello world.test:%1 /h").arg(tlsPort()));
        QCOMPARE(out.value(u"file").toBool(), true);
        // (The supervisor takes its own variable out; the program sees the trust variables.)
        QCOMPARE(out.value(u"vars").toArray(), QJsonArray{QStringLiteral("SSL_CERT_FILE")});
        QCOMPARE(service.pool()->warmTakes(), takes + 1);

        const ExecutionResult node = resultOf(
            service.execute({QStringLiteral("javascript"),
                             QString::fromLatin1(kHostTrustNodeProgram).arg(tlsPort()), 40}),
            120 * 1000);
        QCOMPARE(QJsonDocument::fromJson(node.stdoutData).object().value(u"https").toString(),
                 QStringLiteral("hello world.test:%1 /n").arg(tlsPort()));
        QCOMPARE(m_tlsWorld.requests, (QByteArrayList{"/h", "/n"}));

        ExecutionRequest none(QStringLiteral("python"),
                              QString::fromLatin1(kHostTrustProgram).arg(tlsPort()), 40);
        none.network = RunNetwork::decide(service.config(), QStringList());
        const QJsonObject cut =
            QJsonDocument::fromJson(resultOf(service.execute(none), 120 * 1000).stdoutData)
                .object();
        QCOMPARE(cut.value(u"file").toBool(true), false);
        QCOMPARE(cut.value(u"vars").toArray(), QJsonArray());
        QVERIFY2(cut.value(u"https").toString().startsWith(QStringLiteral("ERR")),
                 qPrintable(cut.value(u"https").toString()));
        QCOMPARE(m_tlsWorld.requests, (QByteArrayList{"/h", "/n"}));
        shutDown(service, engine);
    }

    void withoutTheHostsStoreTheImagesDecides()
    {
        // The same run with the image's own store ('none'): the world's authority is unknown
        // to it, so the stock clients refuse the world's certificate and nothing reaches it.
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxConfig config = egressConfig({QStringLiteral("world.test:") + tlsPort()});
        config.poolSize = 0;
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        m_tlsWorld.requests.clear();
        const QJsonObject out =
            runJson(service, QString::fromLatin1(kHostTrustProgram).arg(tlsPort()));
        QVERIFY2(
            out.value(u"https").toString().contains(QStringLiteral("CERTIFICATE_VERIFY_FAILED")),
            qPrintable(out.value(u"https").toString()));
        QCOMPARE(out.value(u"file").toBool(true), false);
        const ExecutionResult node = resultOf(
            service.execute({QStringLiteral("javascript"),
                             QString::fromLatin1(kHostTrustNodeProgram).arg(tlsPort()), 40}),
            120 * 1000);
        const QString nodeOut =
            QJsonDocument::fromJson(node.stdoutData).object().value(u"https").toString();
        // (The test's server sends its own certificate alone, not the authority's.)
        QCOMPARE(nodeOut, QStringLiteral("ERR UNABLE_TO_VERIFY_LEAF_SIGNATURE"));
        QCOMPARE(m_tlsWorld.requests, QByteArrayList());
        shutDown(service, engine);
    }

    void openNetworkRunsTrustTheHostsAuthorities()
    {
        // --network: the open network has no gateway, and the same store is given to its runs;
        // without it the image's store refuses the world.
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        const QString program =
            QString::fromLatin1(kHostTrustOpenProgram).arg(tlsPort(), m_address);
        for (const bool hostStore : {true, false}) {
            SandboxConfig config = newConfig(QStringLiteral("egress-open-"));
            config.network = true;
            config.poolSize = 0;
            if (hostStore)
                config.installCaBundle = m_certs.filePath(QStringLiteral("ca.pem"));
            SandboxService service(&backend, LanguageRegistry::builtIn(), config);
            m_tlsWorld.requests.clear();
            const QString got = runJson(service, program).value(u"https").toString();
            if (hostStore) {
                QCOMPARE(got, QStringLiteral("hello world.test:%1 /o").arg(tlsPort()));
                QCOMPARE(m_tlsWorld.requests, QByteArrayList{"/o"});
            } else {
                QVERIFY2(got.contains(QStringLiteral("CERTIFICATE_VERIFY_FAILED")),
                         qPrintable(got));
                QCOMPARE(m_tlsWorld.requests, QByteArrayList());
            }
            shutDown(service, engine);
        }
    }

    void aKilledGatewayIsMadeAgain()
    {
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               egressConfig({QStringLiteral("world.test:") + port()}));
        service.warmUp();
        const Language *python = service.languages().find(QStringLiteral("python"));
        const SandboxSpec warm = SandboxSpec::forRun(*python, python->image, service.config(),
                                                     RunNetwork::decide(service.config()));
        const QString fetch = QString::fromLatin1(kFetchProgram).arg(port());
        QCOMPARE(runJson(service, fetch).value(u"got").toString(),
                 QStringLiteral("hello world.test:%1 /x").arg(port()));
        EgressGateway *gateway = backend.egressGateway();
        QVERIFY(gateway);
        QTRY_VERIFY_WITH_TIMEOUT(gateway->isRunning(), 10000);
        const int generation = gateway->generation();
        // The warm sandbox the pool made again after that run holds a grant on this gateway
        // (and the run's own sandbox, and its grant, are gone).
        QTRY_VERIFY_WITH_TIMEOUT(service.pool()->warmCount(warm) == 1 && gateway->grantCount() == 1,
                                 60000);
        EngineReply *kill = ContainersApi(&engine).kill(gateway->containerId(), "SIGKILL");
        QSignalSpy killed(kill, &EngineReply::finished);
        QVERIFY(killed.wait(10000));
        QVERIFY2(kill->ok(), qPrintable(kill->error().toString()));
        // Under load the engine takes its time: the killed one's removal is awaited first.
        QTRY_VERIFY_WITH_TIMEOUT(gateway->generation() > generation && gateway->isRunning(), 90000);
        // The warm sandbox, made for the old gateway, works through the new one.
        QCOMPARE(service.pool()->warmCount(warm), 1);
        QCOMPARE(runJson(service, fetch).value(u"got").toString(),
                 QStringLiteral("hello world.test:%1 /x").arg(port()));
        shutDown(service, engine);
    }

    void anUnlistedHostIsAskedAbout()
    {
        // The caller's policy asks for other hosts: the gateway holds each connection to one
        // until the run's answer (here the test's, as the window's would be): allowed once,
        // denied, allowed always (the run reaches it from then on without asking).
        prepareWorld();
        // An allowed-when-asked name is not a listing: it must still resolve outside the
        // private ranges, which the world's address is in on this machine.
        qputenv(EgressGateway::kTestPublicVar, (m_address + QStringLiteral("/32")).toUtf8());
        const auto unset = qScopeGuard([] { qunsetenv(EgressGateway::kTestPublicVar); });
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxConfig config = egressConfig({QStringLiteral("world.test:") + port()});
        config.poolSize = 0;
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        ExecutionRequest request(QStringLiteral("python"),
                                 QString::fromLatin1(kAskedProgram).arg(port()), 60);
        // As RunGate decides it for a caller whose policy asks for other hosts.
        AssistantPolicy asking;
        asking.otherHosts = AssistantPolicy::OtherHosts::Ask;
        request.network = RunNetwork::decide(service.config(), std::nullopt, &asking);
        Execution *execution = service.execute(request);
        QStringList asked;
        connect(execution, &Execution::connectionHeld, this,
                [&asked, execution, this](quint64 id, const QString &host, int heldPort) {
                    asked.append(QStringLiteral("%1:%2").arg(host).arg(heldPort));
                    const QString pattern = QStringLiteral("other.test:") + port();
                    if (asked.size() == 1)
                        execution->answerConnection(id, true);
                    else if (asked.size() == 2)
                        execution->answerConnection(id, false);
                    else
                        execution->answerConnection(id, true, pattern);
                });
        m_world.requests.clear();
        const ExecutionResult r = resultOf(execution, 120 * 1000);
        const QJsonObject out = QJsonDocument::fromJson(r.stdoutData).object();
        QVERIFY2(!out.isEmpty(), r.stdoutData + r.stderrData + r.error.toUtf8());
        const QString other = QStringLiteral("other.test:") + port();
        QCOMPARE(asked, QStringList(3, other));
        QCOMPARE(out.value(u"once").toString(), QStringLiteral("hello %1 /1").arg(other));
        QCOMPARE(out.value(u"denied").toString(), QStringLiteral("HTTP 403"));
        QCOMPARE(out.value(u"always").toString(), QStringLiteral("hello %1 /3").arg(other));
        QCOMPARE(out.value(u"after").toString(), QStringLiteral("hello %1 /4").arg(other));
        QCOMPARE(m_world.requests, (QByteArrayList{"/1", "/3", "/4"}));
        QStringList rules;
        for (const NetworkAttempt &a : r.network)
            rules.append(ExecutionResult::verdictName(a.verdict) + u' ' + a.rule);
        QCOMPARE(rules, (QStringList{QStringLiteral("allowed allowed when asked"),
                                     QStringLiteral("refused not on the allow-list, and denied "
                                                    "when asked"),
                                     QStringLiteral("allowed allowed when asked"),
                                     QStringLiteral("allowed ") + other}));
        shutDown(service, engine);
    }

    void aMissingGatewayImageFailsTheRunClearly()
    {
        prepareWorld();
        // Sandboxes that cannot have their gateway get no network, never an open one: the run
        // fails and says why.
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        backend.setGatewayImage(QStringLiteral("code-sandbox/no-such-gateway:latest"));
        SandboxConfig config = egressConfig({QStringLiteral("world.test")});
        config.poolSize = 0;
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        const ExecutionResult r = resultOf(
            service.execute({QStringLiteral("python"), QStringLiteral("print(1)"), 20}), 60000);
        QVERIFY2(r.error.contains(QStringLiteral("egress gateway")), qPrintable(r.error));
        QVERIFY2(r.error.contains(QStringLiteral("build-images.sh gateway")), qPrintable(r.error));
        QVERIFY(r.stdoutData.isEmpty());
        shutDown(service, engine);
    }
};

QTEST_GUILESS_MAIN(TestEgress)
#include "tst_egress.moc"
