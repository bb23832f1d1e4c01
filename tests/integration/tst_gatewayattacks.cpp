// The egress gateway under attack, against the real engine and the real gateway container, with
// stock Python clients inside allow-list sandboxes (issue 53's holes, each under its number):
// a request whose Host or target names another site than the one allowed (1, 3, 6, 7), the
// secret's value echoed in a header's name (8), a chunked upload's framing (9), a running
// sandbox's credential used from another sandbox (10), and one sandbox holding hundreds of
// tunnels and idle connections while another one works (2, 4): the other one is served, the
// gateway does not restart, and its threads and memory stay bounded (reported).
//
// The world is this test's own servers on the machine's first non-loopback address (as in
// tst_egress): world.test and echo.test in plain HTTP, world.test over TLS with a certificate of
// a test CA the gateway trusts (--install-ca-file); evil.test names the same address, so that a
// request that reached it through another site's name would be seen.

#include "containersapi.h"
#include "dockerbackend.h"
#include "egressgateway.h"
#include "engineclient.h"
#include "enginereply.h"
#include "enginetestcase.h"
#include "execution.h"
#include "gatewayattackprograms.h"
#include "sandboxservice.h"
#include "testcertificates.h"
#include "tunnelproxy.h"
#include "worldserver.h"

#include <QElapsedTimer>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSslServer>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

namespace {
const QByteArray kValue = "sk-live-53-attack-value-never-in-a-sandbox";
} // namespace

class TestGatewayAttacks : public EngineTestCase
{
    Q_OBJECT

private:
    WorldServer<QTcpServer> m_world;
    WorldServer<QSslServer> m_tlsWorld;
    QTemporaryDir m_dir;

    QString plainPort() const { return QString::number(m_world.serverPort()); }
    QString tlsPort() const { return QString::number(m_tlsWorld.serverPort()); }

    SandboxConfig attackConfig()
    {
        SandboxConfig c = newConfig(QStringLiteral("attacks-"));
        c.egress = {QStringLiteral("world.test:") + plainPort(),
                    QStringLiteral("echo.test:") + plainPort(),
                    QStringLiteral("world.test:") + tlsPort()};
        c.secrets = {{QStringLiteral("API_KEY"),
                      {QStringLiteral("world.test:") + tlsPort(),
                       QStringLiteral("echo.test:") + plainPort()},
                      kValue}};
        c.secretsAuthorityFolder = m_dir.filePath(QStringLiteral("authority"));
        c.installCaBundle = m_dir.filePath(QStringLiteral("ca.pem"));
        c.poolSize = 1;
        c.warmLanguages = {};
        return c;
    }

    void prepareWorld()
    {
        if (m_world.isListening())
            return;
        QVERIFY(m_dir.isValid());
        QVERIFY2(makeTestCertificates(m_dir.path()),
                 "openssl could not make the test certificates");
        const QString address = outwardAddress();
        QVERIFY2(!address.isEmpty(), "the machine has no non-loopback IPv4 address");
        QVERIFY(m_world.listen(QHostAddress::AnyIPv4));
        QVERIFY(listenWithTls(m_tlsWorld, m_dir.filePath(QStringLiteral("server.pem")),
                              m_dir.filePath(QStringLiteral("server.key"))));
        m_world.echo = true;
        m_tlsWorld.echo = true;
        m_tlsWorld.echoInHeaderName = true;
        qputenv(EgressGateway::kTestHostsVar,
                QStringLiteral("world.test=%1,echo.test=%1,evil.test=%1").arg(address).toUtf8());
        QVERIFY(hasGatewayImage());
    }

    static QString attack(const char *program)
    {
        return QString::fromLatin1(kAttackPrelude) + QString::fromLatin1(program);
    }

    // The JSON object a program printed (its last line), or a warning with all it said.
    static QJsonObject jsonOf(const ExecutionResult &r)
    {
        const QList<QByteArray> lines = r.stdoutData.trimmed().split('\n');
        const QJsonObject out = QJsonDocument::fromJson(lines.last()).object();
        if (out.isEmpty())
            qWarning().noquote() << "exit" << r.exitCode << "stdout" << r.stdoutData << "stderr"
                                 << r.stderrData << r.error;
        return out;
    }

    // The first JSON line `execution` prints while it runs (within waitMs), or {}.
    static QJsonObject firstLineOf(Execution *execution, int waitMs)
    {
        QByteArray seen;
        QJsonObject line;
        QObject context;
        QObject::connect(execution, &Execution::output, &context,
                         [&](int stream, const QByteArray &bytes) {
                             if (stream != 1 || !line.isEmpty())
                                 return;
                             seen += bytes;
                             const qsizetype end = seen.indexOf('\n');
                             if (end >= 0)
                                 line = QJsonDocument::fromJson(seen.left(end)).object();
                         });
        QElapsedTimer clock;
        clock.start();
        while (line.isEmpty() && clock.elapsed() < waitMs)
            QTest::qWait(50);
        return line;
    }

    // The gateway container's thread count and memory, as the engine sees them.
    static QString gatewayUsage(EngineClient &engine, const QString &id, qint64 *pids)
    {
        EngineReply *r = ContainersApi(&engine).stats(id);
        QSignalSpy spy(r, &EngineReply::finished);
        if (!spy.wait(15000) || !r->ok())
            return QStringLiteral("(no stats)");
        const QJsonObject stats = r->json();
        *pids = qint64(stats.value(u"pids_stats").toObject().value(u"current").toDouble(-1));
        const qint64 memory =
            qint64(stats.value(u"memory_stats").toObject().value(u"usage").toDouble(-1));
        return QStringLiteral("%1 threads, %2 MiB")
            .arg(*pids)
            .arg(double(memory) / 1048576.0, 0, 'f', 1);
    }

private Q_SLOTS:

    // Holes 1, 3, 6, 7, 8, 9: what a request names is what the gateway checked.
    void hostsAndTargetsAreTheAllowedOnes()
    {
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), attackConfig());
        m_world.requests.clear();
        m_world.heads.clear();
        m_world.authorizations.clear();
        m_tlsWorld.requests.clear();
        const ExecutionResult r = resultOf(
            service.execute({QStringLiteral("python"),
                             attack(kHostAndTargetProgram).arg(plainPort(), tlsPort()), 60}),
            180 * 1000);
        const QJsonObject out = jsonOf(r);
        QVERIFY(!out.isEmpty());
        const QString key = out.value(u"key").toString();
        QVERIFY2(key.startsWith(QStringLiteral("csb-secret-API_KEY-")), qPrintable(key));
        // 1 and 6: refused, with why; the origin never saw them.
        QVERIFY2(out.value(u"1").toString().startsWith(
                     QStringLiteral("421 Code Sandbox egress gateway: the Host header names "
                                    "evil.test")),
                 qPrintable(out.value(u"1").toString()));
        QVERIFY2(out.value(u"6").toString().startsWith(QStringLiteral("421 ")),
                 qPrintable(out.value(u"6").toString()));
        // The same request with its own Host: the value reached echo.test, the program saw
        // its placeholder.
        QCOMPARE(
            out.value(u"1-own").toString(),
            QStringLiteral("200 hello echo.test:%1 /h1-own auth=Bearer %2").arg(plainPort(), key));
        // 3: another site's absolute target inside the bound host's TLS.
        QVERIFY2(out.value(u"3").toString().startsWith(QStringLiteral("HTTP/1.1 421")),
                 qPrintable(out.value(u"3").toString()));
        // 7: the plain tunnel ends without an answer from anyone.
        QCOMPARE(out.value(u"7").toString(), QString());
        // 8: the header's name came back with the placeholder in it.
        QCOMPARE(out.value(u"8").toArray(), QJsonArray{QStringLiteral("X-Echo-") + key});
        // 9: the chunked body reached the origin chunked.
        QVERIFY2(out.value(u"9").toString().startsWith(QStringLiteral("200 hello world.test")),
                 qPrintable(out.value(u"9").toString()));
        QByteArray upload;
        for (const QByteArray &head : std::as_const(m_world.heads))
            if (head.startsWith("POST /h9 "))
                upload = head;
        QVERIFY2(upload.toLower().contains("\r\ntransfer-encoding: chunked\r\n"),
                 upload.constData());
        // Nothing for another site reached the world, and the value went to echo.test once
        // (the request with its own Host) and to the TLS world once (h8), never elsewhere.
        for (const QByteArray &head : std::as_const(m_world.heads))
            QVERIFY2(!head.toLower().contains("evil.test"), head.constData());
        QVERIFY(!m_world.requests.contains("/h1"));
        QVERIFY(!m_world.requests.contains("/h6"));
        QCOMPARE(m_world.authorizations.count("Bearer " + kValue), 1);
        QCOMPARE(m_tlsWorld.requests, QByteArrayList{"/h8"});
        QVERIFY(!r.stdoutData.contains(kValue));
        QVERIFY(!r.stderrData.contains(kValue));
        shutDown(service, engine);
    }

    // Hole 10: a credential works only from its own sandbox's address.
    void aCredentialWorksOnlyInItsSandbox()
    {
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), attackConfig());
        Execution *holder = service.execute(
            {QStringLiteral("python"), QString::fromLatin1(kHoldCredentialProgram), 60});
        const QJsonObject held = firstLineOf(holder, 120 * 1000);
        const QString proxy = held.value(u"proxy").toString();
        QVERIFY2(proxy.contains(u'@'), qPrintable(proxy));
        m_world.requests.clear();
        const ExecutionResult borrower = resultOf(
            service.execute({QStringLiteral("python"),
                             QString::fromLatin1(kBorrowCredentialProgram).arg(proxy, plainPort()),
                             60}),
            180 * 1000);
        const QJsonObject out = jsonOf(borrower);
        QCOMPARE(out.value(u"borrowed").toString(), QStringLiteral("HTTP 407"));
        QCOMPARE(out.value(u"own").toString(),
                 QStringLiteral("hello world.test:%1 /borrowed auth=").arg(plainPort()));
        QCOMPARE(m_world.requests, QByteArrayList{"/borrowed"});
        QVERIFY(resultOf(holder, 60 * 1000).exitCode == 0);
        shutDown(service, engine);
    }

    // Holes 2 and 4: one sandbox floods the shared gateway; another one is served all along, the
    // gateway keeps running (no restart), and its threads stay under its pids limit.
    void oneSandboxCannotCrashOrStarveTheGateway()
    {
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), attackConfig());
        Execution *flood =
            service.execute({QStringLiteral("python"), attack(kFloodProgram).arg(tlsPort()), 90});
        const QJsonObject flooded = firstLineOf(flood, 150 * 1000);
        qInfo().noquote() << "the flooding sandbox got:"
                          << QJsonDocument(flooded).toJson(QJsonDocument::Compact);
        EgressGateway *gateway = backend.egressGateway();
        QVERIFY(gateway && gateway->isRunning());
        const int generation = gateway->generation();
        qint64 pids = -1;
        const QString during = gatewayUsage(engine, gateway->containerId(), &pids);
        qInfo().noquote() << "the gateway while flooded:" << during;
        const ExecutionResult work =
            resultOf(service.execute({QStringLiteral("python"),
                                      QString::fromLatin1(kWorkProgram).arg(plainPort()), 90}),
                     180 * 1000);
        const QJsonObject done = jsonOf(work);
        QVERIFY2(done.value(u"ok").toInt() == 25,
                 QJsonDocument(done).toJson(QJsonDocument::Compact).constData());
        QCOMPARE(gateway->generation(), generation);
        QVERIFY(gateway->isRunning());
        QVERIFY2(pids > 0 && pids < 600, qPrintable(during));
        // Its share and no more: the rest refused with 429 at once, idle ones too.
        QVERIFY2(flooded.value(u"held").toInt() <= 64,
                 qPrintable(QString::number(flooded.value(u"held").toInt())));
        QVERIFY(flooded.value(u"tunnels").toObject().value(u"429").toInt() >= 300 - 64);
        QVERIFY(flooded.value(u"idle_refused").toInt() > 0);
        resultOf(flood, 90 * 1000);
        qInfo().noquote() << "the gateway after:"
                          << gatewayUsage(engine, gateway->containerId(), &pids);
        shutDown(service, engine);
    }
};

QTEST_GUILESS_MAIN(TestGatewayAttacks)
#include "tst_gatewayattacks.moc"
