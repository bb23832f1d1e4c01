// Secrets bound to hosts against the real engine (--secret): programs in allow-list sandboxes
// hold a placeholder; the egress gateway puts the value in its place for the secret's hosts
// only, over TLS it terminates with the installation's authority, verifies the real server, and
// masks the value in what comes back. The value is searched for byte for byte in everything the
// run gives back. Nothing is left behind.
//
// The world is this test's own servers on the machine's first non-loopback address (as in
// tst_egress): world.test over TLS with a certificate of a test CA that stands for the host's
// trust store (--install-ca-file), other.test in plain HTTP, and bad.test over TLS with a
// certificate nobody trusts.

#include "assistantpolicy.h"
#include "dockerbackend.h"
#include "egressgateway.h"
#include "engineclient.h"
#include "enginetestcase.h"
#include "execution.h"
#include "interceptionauthority.h"
#include "runnetwork.h"
#include "sandboxservice.h"
#include "secretprograms.h"
#include "testcertificates.h"
#include "tunnelproxy.h"
#include "worldserver.h"

#include <QDir>
#include <QFile>
#include <QHostAddress>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslServer>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

namespace {
const QByteArray kValue = "sk-live-4d1c8a0f-real-value-never-in-a-sandbox";

} // namespace

class TestSecrets : public EngineTestCase
{
    Q_OBJECT

private:
    WorldServer<QTcpServer> m_world;
    WorldServer<QSslServer> m_tlsWorld;
    WorldServer<QSslServer> m_badWorld;
    QTemporaryDir m_dir;

    QString port(const QTcpServer &server) const { return QString::number(server.serverPort()); }

    SandboxConfig secretConfig()
    {
        SandboxConfig c = newConfig(QStringLiteral("secrets-"));
        c.secrets = {{QStringLiteral("API_KEY"),
                      {QStringLiteral("world.test:") + port(m_tlsWorld),
                       QStringLiteral("bad.test:") + port(m_badWorld)},
                      kValue}};
        c.egress = {QStringLiteral("other.test:") + port(m_world)};
        c.passThroughEnv = {{QStringLiteral("PLAIN_VAR"), QStringLiteral("visible")}};
        c.secretsAuthorityFolder = m_dir.filePath(QStringLiteral("authority"));
        // The host's trust store, as the gateway checks real servers with it.
        c.installCaBundle = m_dir.filePath(QStringLiteral("ca.pem"));
        c.poolSize = 1;
        c.warmLanguages = {};
        return c;
    }

    // The value, anywhere in what a run gave back.
    static QString leak(const ExecutionResult &r)
    {
        if (r.stdoutData.contains(kValue))
            return QStringLiteral("stdout");
        if (r.stderrData.contains(kValue))
            return QStringLiteral("stderr");
        if (QJsonDocument(r.toJson()).toJson().contains(kValue))
            return QStringLiteral("the result's JSON");
        for (const OutputFile &f : r.files)
            if (f.data.contains(kValue))
                return QStringLiteral("the file ") + f.name;
        if (r.error.toUtf8().contains(kValue))
            return QStringLiteral("the error");
        return {};
    }

    // The servers and the gateway's name map, once (EngineTestCase has initTestCase).
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
        QVERIFY(listenWithTls(m_badWorld, m_dir.filePath(QStringLiteral("bad.pem")),
                              m_dir.filePath(QStringLiteral("bad.key"))));
        m_world.echo = true;
        m_tlsWorld.echo = true;
        qputenv(EgressGateway::kTestHostsVar,
                QStringLiteral("world.test=%1,other.test=%1,bad.test=%1").arg(address).toUtf8());
        QVERIFY(hasGatewayImage());
    }

private Q_SLOTS:

    void aPythonProgramUsesTheKeyWithoutHoldingIt()
    {
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), secretConfig());
        m_tlsWorld.authorizations.clear();
        m_world.authorizations.clear();
        m_badWorld.requests.clear();
        const QString code = QString::fromLatin1(kSecretPythonProgram)
                                 .arg(port(m_tlsWorld), port(m_world), port(m_badWorld));
        const ExecutionResult r =
            resultOf(service.execute({QStringLiteral("python"), code, 60}), 180 * 1000);
        const QJsonObject out = QJsonDocument::fromJson(r.stdoutData).object();
        QVERIFY2(!out.isEmpty(), r.stdoutData + r.stderrData + r.error.toUtf8());
        const QString key = out.value(u"key").toString();
        QVERIFY2(key.startsWith(QStringLiteral("csb-secret-API_KEY-")), qPrintable(key));
        QCOMPARE(key.size(), int(qstrlen("csb-secret-API_KEY-")) + 32);
        // The host got the value; the program saw its own placeholder in the echo.
        QCOMPARE(m_tlsWorld.authorizations, QByteArrayList{"Bearer " + kValue});
        QCOMPARE(
            out.value(u"bound").toString(),
            QStringLiteral("hello world.test:%1 /bound auth=Bearer %2").arg(port(m_tlsWorld), key));
        // Another host gets the placeholder as it is.
        QCOMPARE(m_world.authorizations, QByteArrayList{"Bearer " + key.toUtf8()});
        QCOMPARE(
            out.value(u"other").toString(),
            QStringLiteral("hello other.test:%1 /other auth=Bearer %2").arg(port(m_world), key));
        // A bound host whose certificate the trust store does not know: refused, clearly, and
        // the request never reaches it.
        const QString untrusted = out.value(u"untrusted").toString();
        QVERIFY2(untrusted.startsWith(QStringLiteral("HTTP 502")) &&
                     untrusted.contains(QStringLiteral("not trusted")),
                 qPrintable(untrusted));
        QCOMPARE(m_badWorld.requests, QByteArrayList());
        // Pass-through variables work as before.
        QCOMPARE(out.value(u"plain_var").toString(), QStringLiteral("visible"));
        // The run's record: the secret added to world.test's request, by name, and not to
        // the others.
        QStringList seen;
        for (const NetworkAttempt &a : r.network)
            seen.append(
                QStringLiteral("%1 %2 [%3]")
                    .arg(a.host, ExecutionResult::verdictName(a.verdict), a.secrets.join(u',')));
        QVERIFY2(seen.contains(QStringLiteral("world.test allowed [API_KEY]")),
                 qPrintable(seen.join(QStringLiteral("; "))));
        QVERIFY2(seen.contains(QStringLiteral("other.test allowed []")),
                 qPrintable(seen.join(QStringLiteral("; "))));
        QVERIFY2(seen.contains(QStringLiteral("bad.test failed []")),
                 qPrintable(seen.join(QStringLiteral("; "))));
        QVERIFY2(r.files.size() == 1, "the program's file came back");
        const QString where = leak(r);
        QVERIFY2(where.isEmpty(), qPrintable(QStringLiteral("the value is in ") + where));
        // The authority was made where the config says, its key the user's alone.
        const QString keyFile = m_dir.filePath(QStringLiteral("authority/")) +
                                QLatin1String(InterceptionAuthority::kKeyFile);
        const QFileDevice::Permissions others = QFileDevice::ReadGroup | QFileDevice::WriteGroup |
                                                QFileDevice::ExeGroup | QFileDevice::ReadOther |
                                                QFileDevice::WriteOther | QFileDevice::ExeOther;
        QVERIFY(QFile::exists(keyFile));
        QCOMPARE(QFile::permissions(keyFile) & others, QFileDevice::Permissions());
        shutDown(service, engine);
    }

    void aNodeProgramToo()
    {
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), secretConfig());
        m_tlsWorld.authorizations.clear();
        const ExecutionResult r = resultOf(
            service.execute({QStringLiteral("javascript"),
                             QString::fromLatin1(kSecretNodeProgram).arg(port(m_tlsWorld)), 60}),
            180 * 1000);
        const QJsonObject out = QJsonDocument::fromJson(r.stdoutData).object();
        QVERIFY2(!out.isEmpty(), r.stdoutData + r.stderrData + r.error.toUtf8());
        const QString key = out.value(u"key").toString();
        QVERIFY2(key.startsWith(QStringLiteral("csb-secret-API_KEY-")), qPrintable(key));
        QCOMPARE(m_tlsWorld.authorizations, QByteArrayList{"Bearer " + kValue});
        QCOMPARE(
            out.value(u"got").toString(),
            QStringLiteral("hello world.test:%1 /node auth=Bearer %2").arg(port(m_tlsWorld), key));
        const QString where = leak(r);
        QVERIFY2(where.isEmpty(), qPrintable(QStringLiteral("the value is in ") + where));
        shutDown(service, engine);
    }

    void aPolicyChoosesTheSecrets()
    {
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), secretConfig());
        const auto keyOf = [&](const std::optional<QStringList> &names) {
            ExecutionRequest request(
                QStringLiteral("python"),
                QStringLiteral("import os; print(os.environ.get('API_KEY', 'unset')[:19])"), 30);
            // What RunGate decides under a caller's policy that names these.
            AssistantPolicy policy;
            policy.secrets = names;
            request.network = RunNetwork::decide(service.config(), std::nullopt, &policy);
            return resultOf(service.execute(request), 120 * 1000).stdoutData.trimmed();
        };
        QCOMPARE(keyOf(QStringList()), QByteArray("unset"));
        QCOMPARE(keyOf(QStringList{QStringLiteral("OTHER")}), QByteArray("unset"));
        QCOMPARE(keyOf(QStringList{QStringLiteral("API_KEY")}), QByteArray("csb-secret-API_KEY-"));
        QCOMPARE(keyOf(std::nullopt), QByteArray("csb-secret-API_KEY-"));
        shutDown(service, engine);
    }

    void aRunWithoutNetworkGetsNoSecret()
    {
        prepareWorld();
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), secretConfig());
        ExecutionRequest request(
            QStringLiteral("python"),
            QStringLiteral("import os; print(repr(os.environ.get('API_KEY')))"), 30);
        request.network = RunNetwork::decide(service.config(), QStringList());
        const ExecutionResult r = resultOf(service.execute(request), 120 * 1000);
        QCOMPARE(r.stdoutData.trimmed(), QByteArray("None"));
        shutDown(service, engine);
    }
};

QTEST_GUILESS_MAIN(TestSecrets)
#include "tst_secrets.moc"
