// Integration tests against engines that are not a local socket: a dockerd on tcp:// with TLS
// client certificates, one reached over ssh (docker system dial-stdio), and a Docker context made
// by the Docker CLI pointing at the TLS one. The engines are the `engines` fixture's
// (tests/engines/engines.sh), described by its env file. Each address answers ping and version,
// is the daemon the fixture says it is, and runs a program end to end through DockerBackend and
// SandboxService (which proves the hijacked attach stream over that transport); each kind of
// broken address fails fast with an error naming it; nothing is left on any engine.

#include "dockerbackend.h"
#include "engineaddress.h"
#include "engineclient.h"
#include "enginelocator.h"
#include "enginereply.h"
#include "enginetransport.h"
#include "execution.h"
#include "executionrequest.h"
#include "leftoversweeper.h"
#include "sandboxservice.h"
#include "systemapi.h"

#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <QUuid>

namespace {

// A failure must come well within this: the connect bound, and ssh's own, are 10 s.
constexpr int kFailWithinMs = 3 * EngineTransport::kConnectTimeoutMs;

QMap<QString, QString> readEnvFile(const QString &path)
{
    QMap<QString, QString> values;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return values;
    for (const QByteArray &line : f.readAll().split('\n')) {
        const qsizetype eq = line.indexOf('=');
        if (eq > 0 && !line.startsWith('#'))
            values.insert(QString::fromUtf8(line.left(eq)).trimmed(),
                          QString::fromUtf8(line.mid(eq + 1)).trimmed());
    }
    return values;
}

// The answer to a request, waited for (empty reply state on a hang).
EngineReply *waitFor(EngineReply *reply, int ms = kFailWithinMs)
{
    QSignalSpy spy(reply, &EngineReply::finished);
    if (!reply->isFinished())
        spy.wait(ms);
    return reply;
}

} // namespace

class tst_RemoteEngines : public QObject
{
    Q_OBJECT

private:
    QMap<QString, QString> m_env;
    QTemporaryDir m_dockerConfig; // the context's DOCKER_CONFIG
    QStringList m_instances;

    QString env(const char *key) const { return m_env.value(QString::fromLatin1(key)); }

    // How ssh fails with a config like the fixture's whose `key` line says `value` instead.
    EngineError failureWithSshConfig(const QTemporaryDir &dir, const QByteArray &key,
                                     const QByteArray &value)
    {
        QFile fixture(env("CS_SSH_CONFIG"));
        if (!fixture.open(QIODevice::ReadOnly))
            return EngineError::of(EngineError::Kind::Protocol, QStringLiteral("no fixture"));
        QByteArray config;
        for (const QByteArray &line : fixture.readAll().split('\n'))
            config +=
                line.trimmed().startsWith(key) ? "    " + key + ' ' + value + '\n' : line + '\n';
        QFile bad(dir.filePath(QStringLiteral("ssh_config")));
        if (!bad.open(QIODevice::WriteOnly))
            return EngineError::of(EngineError::Kind::Protocol, QStringLiteral("no config"));
        bad.write(config);
        bad.close();
        qputenv("CODE_SANDBOX_SSH_CONFIG", bad.fileName().toLocal8Bit());
        const EngineError e = failureOf(sshAddress());
        qputenv("CODE_SANDBOX_SSH_CONFIG", env("CS_SSH_CONFIG").toLocal8Bit());
        return e;
    }

    // Addresses found the way the app finds them.
    EngineAddress tlsAddress() const
    {
        EngineLocator::Options o;
        o.engines = {env("CS_TLS_ENGINE")};
        const QString certs = env("CS_TLS_CERT_PATH");
        o.tlsCa = certs + QStringLiteral("/ca.pem");
        o.tlsCert = certs + QStringLiteral("/cert.pem");
        o.tlsKey = certs + QStringLiteral("/key.pem");
        const EngineLocator::Result r =
            EngineLocator::locate(o, QProcessEnvironment(), [](const QString &) { return false; });
        return r.ok() ? r.address : EngineAddress();
    }

    EngineAddress sshAddress() const
    {
        const EngineLocator::Result r = EngineLocator::locate(
            env("CS_SSH_ENGINE"), QProcessEnvironment(), [](const QString &) { return false; });
        return r.ok() ? r.address : EngineAddress();
    }

    // DOCKER_CONTEXT as the Docker CLI would read it, from the context the CLI made.
    EngineAddress contextAddress() const
    {
        QProcessEnvironment e;
        e.insert(QStringLiteral("DOCKER_CONFIG"), m_dockerConfig.path());
        e.insert(QStringLiteral("DOCKER_CONTEXT"), QStringLiteral("cs-tls"));
        const EngineLocator::Result r =
            EngineLocator::locate(QString(), e, [](const QString &) { return false; });
        return r.ok() ? r.address : EngineAddress();
    }

    EngineAddress addressFor(const QString &kind) const
    {
        if (kind == u"tls")
            return tlsAddress();
        if (kind == u"ssh")
            return sshAddress();
        return contextAddress();
    }

    // The same daemon through its local socket (the fixture's own door to it).
    QString unixFor(const QString &kind) const
    {
        return EngineLocator::socketPathFromUrl(kind == u"ssh" ? env("CS_SSH_UNIX")
                                                               : env("CS_TLS_UNIX"));
    }

    static QString engineId(EngineClient &engine)
    {
        EngineReply *r = waitFor(SystemApi(&engine).info());
        return r->ok() ? r->json().value(u"ID").toString() : r->error().toString();
    }

    // A request through `address`, which must fail: its error.
    static EngineError failureOf(const EngineAddress &address)
    {
        EngineClient engine(address);
        EngineReply *r = waitFor(engine.ping());
        if (!r->isFinished())
            return EngineError::of(EngineError::Kind::Timeout, QStringLiteral("<no answer>"));
        if (r->ok())
            return {};
        return r->error();
    }

    static QString freePort()
    {
        QTcpServer server;
        server.listen(QHostAddress::LocalHost);
        const QString port = QString::number(server.serverPort());
        server.close();
        return port;
    }

private Q_SLOTS:
    void initTestCase()
    {
        qRegisterMetaType<ExecutionResult>();
        const QString file = qEnvironmentVariable("CS_ENGINES_ENV", QStringLiteral(CS_ENGINES_ENV));
        m_env = readEnvFile(file);
        QVERIFY2(!env("CS_TLS_ENGINE").isEmpty() && !env("CS_SSH_ENGINE").isEmpty(),
                 qPrintable(QStringLiteral("no engines fixture at %1 (tests/engines/engines.sh "
                                           "start DIR writes it)")
                                .arg(file)));
        qputenv("CODE_SANDBOX_SSH_CONFIG", env("CS_SSH_CONFIG").toLocal8Bit());

        // The context is made by the Docker CLI itself, pointing at the TLS engine.
        const QString docker = QStandardPaths::findExecutable(QStringLiteral("docker"));
        QVERIFY2(!docker.isEmpty(), "the docker CLI is needed to make a context");
        QVERIFY(m_dockerConfig.isValid());
        QProcess p;
        QProcessEnvironment pe = QProcessEnvironment::systemEnvironment();
        pe.insert(QStringLiteral("DOCKER_CONFIG"), m_dockerConfig.path());
        p.setProcessEnvironment(pe);
        const QString certs = env("CS_TLS_CERT_PATH");
        p.start(docker, {QStringLiteral("context"), QStringLiteral("create"),
                         QStringLiteral("cs-tls"), QStringLiteral("--docker"),
                         QStringLiteral("host=%1,ca=%2/ca.pem,cert=%2/cert.pem,key=%2/key.pem")
                             .arg(env("CS_TLS_ENGINE"), certs)});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    }

    void pingAndVersion_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("display");
        QTest::newRow("tcp+TLS") << "tls" << env("CS_TLS_ENGINE") + QStringLiteral(" (TLS)");
        QTest::newRow("ssh") << "ssh" << env("CS_SSH_ENGINE");
        QTest::newRow("Docker context")
            << "context"
            << QStringLiteral("context cs-tls \u2192 %1 (TLS)").arg(env("CS_TLS_ENGINE"));
    }

    void pingAndVersion()
    {
        QFETCH(QString, kind);
        QFETCH(QString, display);
        const EngineAddress address = addressFor(kind);
        QVERIFY(address.isValid());
        EngineClient engine(address);
        QCOMPARE(engine.endpoint(), display);
        EngineReply *ping = waitFor(engine.ping());
        QVERIFY2(ping->ok(), qPrintable(ping->error().toString()));
        QCOMPARE(ping->body(), QByteArray("OK"));
        QVERIFY(!engine.apiVersion().isEmpty());
        QVERIFY(!engine.versionInfo().value(u"Version").toString().isEmpty());
        EngineReply *version = waitFor(SystemApi(&engine).version());
        QVERIFY2(version->ok(), qPrintable(version->error().toString()));
        QCOMPARE(version->json().value(u"Version"), engine.versionInfo().value(u"Version"));
        // It is the daemon the fixture says, not the main engine.
        EngineClient local(unixFor(kind));
        const QString id = engineId(engine);
        QCOMPARE(id, engineId(local));
        EngineClient main(EngineLocator::socketPathFromUrl(env("CS_MAIN_ENGINE")));
        QVERIFY(id != engineId(main));
    }

    void runsAProgram_data() { pingAndVersion_data(); }

    void runsAProgram()
    {
        QFETCH(QString, kind);
        const EngineAddress address = addressFor(kind);
        QVERIFY(address.isValid());
        EngineClient engine(address);
        engine.setRequestTimeout(120000);
        DockerBackend backend(&engine);
        SandboxConfig config;
        config.instanceId =
            QStringLiteral("test-remote-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
        m_instances.append(config.instanceId);
        {
            SandboxService service(&backend, LanguageRegistry::builtIn(), config);
            Execution *e = service.execute({QStringLiteral("python"),
                                            QStringLiteral("import sys\nprint(6*7)\n"
                                                           "print('to stderr', file=sys.stderr)"),
                                            30});
            QSignalSpy finished(e, &Execution::finished);
            QVERIFY(finished.wait(120000));
            const ExecutionResult r = finished.first().first().value<ExecutionResult>();
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QCOMPARE(r.exitCode, 0);
            QCOMPARE(r.stdoutData, QByteArray("42\n"));
            QCOMPARE(r.stderrData, QByteArray("to stderr\n"));
            QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, 30000);
        }
        // The engine agrees: nothing of this instance is left there.
        QTRY_COMPARE_WITH_TIMEOUT(LeftoverSweeper::containersOf(engine, config.instanceId),
                                  QStringList(), 30000);
    }

    void tlsWithoutClientCertificate()
    {
        EngineAddress a = tlsAddress();
        a.certFile.clear();
        a.keyFile.clear();
        const EngineError e = failureOf(a);
        QCOMPARE(int(e.kind), int(EngineError::Kind::Unreachable));
        QVERIFY2(e.message.contains(a.display()), qPrintable(e.message));
        QVERIFY2(e.message.contains(u"TLS"), qPrintable(e.message));
    }

    void tlsWithTheWrongCa()
    {
        // The client's certificate is no CA of the engine's: the handshake fails on our side.
        EngineAddress a = tlsAddress();
        a.caFile = a.certFile;
        const EngineError e = failureOf(a);
        QCOMPARE(int(e.kind), int(EngineError::Kind::Unreachable));
        QVERIFY2(e.message.contains(a.display() + QStringLiteral(": TLS handshake failed")),
                 qPrintable(e.message));
    }

    void tlsWithoutACa()
    {
        // The fixture's client certificate and key in a DOCKER_CERT_PATH without ca.pem: refused
        // before anything is sent, naming the folder.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString certs = env("CS_TLS_CERT_PATH");
        for (const char *name : {"cert.pem", "key.pem"})
            QVERIFY(
                QFile::copy(certs + u'/' + QLatin1String(name), dir.filePath(QLatin1String(name))));
        QProcessEnvironment vars;
        vars.insert(QStringLiteral("DOCKER_HOST"), env("CS_TLS_ENGINE"));
        vars.insert(QStringLiteral("DOCKER_TLS_VERIFY"), QStringLiteral("1"));
        vars.insert(QStringLiteral("DOCKER_CERT_PATH"), dir.path());
        const auto none = [](const QString &) { return false; };
        const EngineLocator::Result r = EngineLocator::locate(EngineLocator::Options(), vars, none);
        QVERIFY(!r.ok());
        QVERIFY2(r.error.contains(
                     QStringLiteral("uses TLS but names no CA (no ca.pem in %1)").arg(dir.path())),
                 qPrintable(r.error));

        // Asked for, this machine's store is used, and it does not know the engine's CA.
        EngineLocator::Options o;
        o.engines = {env("CS_TLS_ENGINE")};
        o.tlsCa = QLatin1String(EngineLocator::kSystemCa);
        o.tlsCert = certs + QStringLiteral("/cert.pem");
        o.tlsKey = certs + QStringLiteral("/key.pem");
        const EngineLocator::Result system = EngineLocator::locate(o, QProcessEnvironment(), none);
        QVERIFY2(system.ok(), qPrintable(system.error));
        const EngineError e = failureOf(system.address);
        QCOMPARE(int(e.kind), int(EngineError::Kind::Unreachable));
        QVERIFY2(
            e.message.contains(system.address.display() + QStringLiteral(": TLS handshake failed")),
            qPrintable(e.message));
    }

    void sshWithAnUnknownKey()
    {
        // A config like the fixture's, with a key the server does not know.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QProcess keygen;
        keygen.start(QStringLiteral("ssh-keygen"),
                     {QStringLiteral("-q"), QStringLiteral("-t"), QStringLiteral("ed25519"),
                      QStringLiteral("-N"), QString(), QStringLiteral("-f"),
                      dir.filePath("stranger")});
        QVERIFY(keygen.waitForFinished(30000));
        QCOMPARE(keygen.exitCode(), 0);
        const EngineError e =
            failureWithSshConfig(dir, "IdentityFile", dir.filePath("stranger").toLocal8Bit());
        QCOMPARE(int(e.kind), int(EngineError::Kind::Unreachable));
        QVERIFY2(e.message.contains(sshAddress().display() + QStringLiteral(": ")),
                 qPrintable(e.message));
        QVERIFY2(e.message.contains(u"Permission denied (publickey"), qPrintable(e.message));
    }

    void sshToAnUnknownHost()
    {
        // The right key, but a host key nobody vouched for: BatchMode refuses, no question.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const EngineError e =
            failureWithSshConfig(dir, "UserKnownHostsFile", dir.filePath("none").toLocal8Bit());
        QCOMPARE(int(e.kind), int(EngineError::Kind::Unreachable));
        QVERIFY2(e.message.contains(sshAddress().display()), qPrintable(e.message));
        QVERIFY2(e.message.contains(u"Host key verification failed"), qPrintable(e.message));
    }

    void closedPorts()
    {
        const QString port = freePort();
        // TLS on a closed port.
        EngineAddress tls = tlsAddress();
        tls.port = port.toInt();
        EngineError e = failureOf(tls);
        QCOMPARE(int(e.kind), int(EngineError::Kind::Unreachable));
        QVERIFY2(e.message.contains(QStringLiteral("tcp://127.0.0.1:%1 (TLS): ").arg(port)),
                 qPrintable(e.message));
        QVERIFY2(e.message.contains(u"refused"), qPrintable(e.message));
        // ssh to a closed port.
        EngineAddress ssh = sshAddress();
        ssh.port = port.toInt();
        e = failureOf(ssh);
        QCOMPARE(int(e.kind), int(EngineError::Kind::Unreachable));
        QVERIFY2(e.message.contains(ssh.display()), qPrintable(e.message));
        QVERIFY2(e.message.contains(u"refused"), qPrintable(e.message));
    }

    void aSilentPortTimesOut()
    {
        // Accepts the connection and never says a word: the TLS handshake cannot finish, and the
        // connect bound ends it with the address named.
        QTcpServer silent;
        QVERIFY(silent.listen(QHostAddress::LocalHost));
        EngineAddress a = tlsAddress();
        a.port = silent.serverPort();
        const EngineError e = failureOf(a);
        QCOMPARE(int(e.kind), int(EngineError::Kind::Unreachable));
        QVERIFY2(e.message.contains(QStringLiteral("%1: not connected within %2 s")
                                        .arg(a.display())
                                        .arg(EngineTransport::kConnectTimeoutMs / 1000)),
                 qPrintable(e.message));
    }

    void cleanupTestCase()
    {
        // No container of these tests on any engine, the main one included; what a failed test
        // left is removed either way, so that it does not stay behind.
        QStringList left;
        for (const char *key : {"CS_TLS_UNIX", "CS_SSH_UNIX", "CS_MAIN_ENGINE"}) {
            const QString socket = EngineLocator::socketPathFromUrl(env(key));
            EngineClient engine(socket);
            for (const QString &instance : std::as_const(m_instances)) {
                left += LeftoverSweeper::containersOf(engine, instance);
                LeftoverSweeper::sweep(socket, instance);
            }
        }
        QCOMPARE(left, QStringList());
    }
};

QTEST_GUILESS_MAIN(tst_RemoteEngines)
#include "tst_remoteengines.moc"
