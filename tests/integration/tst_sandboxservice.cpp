// Integration tests against the real container engine: hardening read back from inside the
// container, timeouts, output caps, environment, archive transfer, and cleanup on every path.

#include "assistantpolicy.h"
#include "containersapi.h"
#include "dockerbackend.h"
#include "engineclient.h"
#include "enginedialect.h"
#include "enginereply.h"
#include "enginetestcase.h"
#include "execution.h"
#include "imagesapi.h"
#include "imagewording.h"
#include "librarycache.h"
#include "runnetwork.h"
#include "sandboxservice.h"
#include "systemapi.h"
#include "tararchive.h"
#include "tunnelproxy.h"
#include "volumesapi.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QMap>
#include <QPointer>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTest>

class TestSandboxService : public EngineTestCase
{
    Q_OBJECT

private:
    SandboxConfig makeConfig()
    {
        SandboxConfig c = newConfig();
        c.passThroughEnv = {{QStringLiteral("CS_TEST_PASSED"), QStringLiteral("passed-value")}};
        c.outputCapBytes = 64 * 1024;
        return c;
    }

    ExecutionResult run(SandboxService &service, const QString &language, const QString &code,
                        int timeoutSec = 20)
    {
        return resultOf(service.execute({language, code, timeoutSec}), (timeoutSec + 60) * 1000);
    }

    // A JavaScript run whose one library cannot be installed through the gateway: its result,
    // and nothing of it left (containers, the gateway and its networks, the half-made volume).
    ExecutionResult failedInstall(const LanguageRegistry &languages, const QString &library)
    {
        EngineClient engine(m_socket);
        SandboxConfig config = makeConfig();
        config.allowInstall = true;
        config.installTimeoutSec = 150;
        DockerBackend backend(&engine);
        SandboxService service(&backend, languages, config);
        ExecutionRequest request(QStringLiteral("javascript"),
                                 QStringLiteral("console.log(require('left-pad')('7', 3, '0'))"),
                                 30);
        request.libraries = {library};
        const QString volume = LibraryCache::volumeName(
            *languages.find(QStringLiteral("javascript")), request.libraries);
        const ExecutionResult r = resultOf(service.execute(request), 240000);
        [&] {
            QVERIFY(r.stdoutData.isEmpty());
            expectNoLeftovers(service, engine);
            shutDown(service, engine);
            const auto volumeGone = [&engine, &volume] {
                EngineReply *inspect = VolumesApi(&engine).inspect(volume);
                QSignalSpy spy(inspect, &EngineReply::finished);
                return spy.wait(10000) && inspect->error().isNotFound();
            };
            QTRY_VERIFY_WITH_TIMEOUT(volumeGone(), 15000);
        }();
        return r;
    }

    // Containers of this test's instance that still exist in the engine.
    int leftovers(EngineClient &engine, const QString &instance)
    {
        return int(LeftoverSweeper::containersOf(engine, instance).size());
    }

private Q_SLOTS:
    void hardeningIsInForce()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r = run(service, QStringLiteral("python"), QStringLiteral(R"py(
import os, json, pathlib
out = {"uid": os.getuid(), "gid": os.getgid()}
out["net"] = sorted(os.listdir("/sys/class/net"))
try:
    open("/usr/owned", "w"); out["rootfs"] = "writable"
except OSError as e:
    out["rootfs"] = e.strerror
for line in open("/proc/self/status"):
    if line.startswith(("CapEff", "CapPrm", "CapBnd", "NoNewPrivs")):
        k, v = line.split(":"); out[k] = v.strip()
for p in ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory.max"):
    if os.path.exists(p): out["mem"] = open(p).read().strip()
for p in ("/sys/fs/cgroup/pids/pids.max", "/sys/fs/cgroup/pids.max"):
    if os.path.exists(p): out["pids"] = open(p).read().strip()
pathlib.Path("/sandbox/x").write_text("ok"); out["workdir"] = "writable"
out["pid1"] = open("/proc/1/cmdline").read().split("\0")[0]
print(json.dumps(out))
)py"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.stdoutData).object();
        QVERIFY2(!o.isEmpty(), r.stdoutData.constData());
        QCOMPARE(o.value(u"uid").toInt(), 1000);
        QCOMPARE(o.value(u"net").toArray(), QJsonArray{QStringLiteral("lo")});
        QCOMPARE(o.value(u"rootfs").toString(), QStringLiteral("Read-only file system"));
        QCOMPARE(o.value(u"CapEff").toString(), QStringLiteral("0000000000000000"));
        QCOMPARE(o.value(u"CapPrm").toString(), QStringLiteral("0000000000000000"));
        QCOMPARE(o.value(u"NoNewPrivs").toString(), QStringLiteral("1"));
        QCOMPARE(o.value(u"mem").toString(), QStringLiteral("536870912"));
        QCOMPARE(o.value(u"pids").toString(), QStringLiteral("256"));
        QCOMPARE(o.value(u"workdir").toString(), QStringLiteral("writable"));
        // Init: true puts docker-init at PID 1, which reaps orphans.
        QVERIFY2(o.value(u"pid1").toString().contains(u"init"),
                 qPrintable(o.value(u"pid1").toString()));
        expectNoLeftovers(service, engine);
    }

    void environmentHasOnlyPassThrough()
    {
        qputenv("CS_TEST_HOST_ONLY", "must-not-leak");
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r = run(service, QStringLiteral("javascript"),
                                      QStringLiteral("console.log(JSON.stringify(process.env))"));
        QCOMPARE(r.exitCode, 0);
        const QJsonObject env = QJsonDocument::fromJson(r.stdoutData).object();
        QCOMPARE(env.value(u"CS_TEST_PASSED").toString(), QStringLiteral("passed-value"));
        QVERIFY(!env.contains(u"CS_TEST_HOST_ONLY"));
        const QStringList allowed{QStringLiteral("CS_TEST_PASSED"), QStringLiteral("HOME"),
                                  QStringLiteral("HOSTNAME"),       QStringLiteral("LANG"),
                                  QStringLiteral("PATH"),           QStringLiteral("PWD"),
                                  QStringLiteral("OUTPUT_DIR")};
        for (const QString &k : env.keys())
            QVERIFY2(allowed.contains(k), qPrintable(QStringLiteral("unexpected variable ") + k));
        expectNoLeftovers(service, engine);
    }

    void outcomes_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("stdoutHas");
        QTest::addColumn<QString>("stderrHas");
        QTest::newRow("python ok") << "python"
                                   << "print('hi')" << 0 << "hi\n"
                                   << "";
        QTest::newRow("python exception") << "python"
                                          << "raise ValueError('boom')" << 1 << ""
                                          << "ValueError: boom";
        QTest::newRow("python exit 3") << "python"
                                       << "import sys; print('x'); sys.exit(3)" << 3 << "x\n"
                                       << "";
        QTest::newRow("python no newline") << "python"
                                           << "import sys; sys.stdout.write('a')" << 0 << "a"
                                           << "";
        QTest::newRow("python unicode") << "python"
                                        << "print('héllo ✓')" << 0 << "héllo ✓\n"
                                        << "";
        QTest::newRow("python syntax error") << "python"
                                             << "def (" << 1 << ""
                                             << "SyntaxError";
        QTest::newRow("js ok") << "javascript"
                               << "console.log(6*7)" << 0 << "42\n"
                               << "";
        QTest::newRow("js stderr") << "js"
                                   << "console.error('warn'); process.exit(2)" << 2 << ""
                                   << "warn";
        QTest::newRow("js throw") << "javascript"
                                  << "throw new Error('bad')" << 1 << ""
                                  << "Error: bad";
        QTest::newRow("empty program") << "python"
                                       << "" << 0 << ""
                                       << "";
    }

    // With --allow-network-for-install and --pass-through-env, the install container (network,
    // package code from the registry) must not get the pass-through values; the run does.
    void installContainerGetsNoPassThroughVariables()
    {
        EngineClient engine(m_socket);
        SandboxConfig config = makeConfig();
        config.allowInstall = true;
        // As the command line sets them: the host's trust store and proxy (the registry may sit
        // behind a TLS-inspecting proxy).
        if (QFileInfo::exists(QStringLiteral("/etc/ssl/certs/ca-certificates.crt")))
            config.installCaBundle = QStringLiteral("/etc/ssl/certs/ca-certificates.crt");
        for (const char *name :
             {"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"})
            if (qEnvironmentVariableIsSet(name))
                config.installEnv.append(QString::fromLatin1(name) + u'=' +
                                         qEnvironmentVariable(name));
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        const Language *js = service.languages().find(QStringLiteral("javascript"));
        QVERIFY(js);
        const QStringList libraries{QStringLiteral("left-pad@1.3.0")};
        const QString volume = LibraryCache::volumeName(*js, libraries);
        EngineReply *before = VolumesApi(&engine).inspect(volume);
        QSignalSpy beforeDone(before, &EngineReply::finished);
        QVERIFY(beforeDone.wait(10000));
        const bool cached = before->ok();
        // A volume this test installed goes once no container uses it, however the test ends.
        const auto removeVolume = qScopeGuard([&] {
            if (cached)
                return;
            for (int i = 0; i < 150 && service.activeContainers() > 0; ++i)
                QTest::qWait(100);
            EngineReply *del = VolumesApi(&engine).remove(volume);
            QSignalSpy delDone(del, &EngineReply::finished);
            if (!delDone.wait(10000) || !del->ok())
                qWarning() << "could not remove" << volume << del->error().toString();
        });

        // The install container's configuration, asked of the engine as soon as it runs, and
        // the connections it made.
        QPointer<EngineReply> inspect;
        QList<NetworkAttempt> installConnections;
        connect(&service, &SandboxService::executionStarted, this, [&](Execution *e) {
            if (!e->request().code.contains(QStringLiteral("/opt/cs-libs/.complete")))
                return;
            connect(e, &Execution::started, this,
                    [&, e] { inspect = ContainersApi(&engine).inspect(e->result().containerId); });
            connect(e, &Execution::finished, this,
                    [&](const ExecutionResult &r) { installConnections = r.network; });
        });
        ExecutionRequest request(QStringLiteral("javascript"),
                                 QStringLiteral("console.log(process.env.CS_TEST_PASSED, "
                                                "require('left-pad')('7', 3, '0'))"),
                                 60);
        request.libraries = libraries;
        const ExecutionResult r = resultOf(service.execute(request), 300000);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.stdoutData, QByteArray("passed-value 007\n"));
        QVERIFY2(inspect, "the install container was never seen running");
        if (!inspect->isFinished())
            QVERIFY(QSignalSpy(inspect.data(), &EngineReply::finished).wait(10000));
        QVERIFY2(inspect->ok(), qPrintable(inspect->error().toString()));
        const QJsonObject cfg = inspect->json().value(u"Config").toObject();
        QCOMPARE(cfg.value(u"Labels").toObject().value(u"code-sandbox.role").toString(),
                 QStringLiteral("install"));
        const QJsonArray env = cfg.value(u"Env").toArray();
        QVERIFY(!env.isEmpty());
        for (const QJsonValue &v : env) {
            QVERIFY2(!v.toString().startsWith(u"CS_TEST_PASSED="), qPrintable(v.toString()));
            QVERIFY2(!v.toString().contains(u"passed-value"), qPrintable(v.toString()));
        }
        // It reached the registry through the egress gateway, on the gateway's internal network,
        // not the engine's bridge. (The networks it is on: Podman names a custom network's
        // NetworkMode "bridge".)
        const QString mode = inspect->json()
                                 .value(u"NetworkSettings")
                                 .toObject()
                                 .value(u"Networks")
                                 .toObject()
                                 .keys()
                                 .join(u',');
        QVERIFY2(mode.startsWith(u"code-sandbox-egress-") && !mode.contains(u','),
                 qPrintable(mode));
        if (!cached) {
            QVERIFY(!installConnections.isEmpty());
            for (const NetworkAttempt &a : std::as_const(installConnections)) {
                QCOMPARE(a.host, QStringLiteral("registry.npmjs.org"));
                QCOMPARE(int(a.verdict), int(NetworkAttempt::Verdict::Allowed));
            }
        }
        expectNoLeftovers(service, engine);
        shutDown(service, engine);
    }

    // An install reaches its language's index and nothing else: a package from another host
    // fails, and the error says which connection was refused and where installs may go.
    void installReachesOnlyItsIndex()
    {
        const ExecutionResult r =
            failedInstall(LanguageRegistry::builtIn(),
                          QStringLiteral("http://downloads.example.invalid/left-pad.tgz"));
        QVERIFY2(r.error.contains(u"The install was refused a connection to "
                                  u"downloads.example.invalid:80 (not on the allow-list)"),
                 qPrintable(r.error));
        QVERIFY2(r.error.contains(u"installs reach only the package index of javascript "
                                  u"(registry.npmjs.org)"),
                 qPrintable(r.error));
    }

    // The same install that works through the registry fails, saying why, when the registry is
    // not the language's index (here: an index on another host, as a mirror would be).
    void installWithoutItsIndexIsRefused()
    {
        LanguageRegistry languages;
        for (Language l : LanguageRegistry::builtIn().all()) {
            if (l.name == u"javascript")
                l.indexHosts = {QStringLiteral("npm.mirror.invalid")};
            languages.add(l);
        }
        // (Not the version other tests install: a volume of it left cached would need no
        // network.)
        const ExecutionResult r = failedInstall(languages, QStringLiteral("left-pad@1.2.0"));
        QVERIFY2(r.error.contains(u"The install was refused a connection to "
                                  u"registry.npmjs.org:443 (not on the allow-list)"),
                 qPrintable(r.error));
        QVERIFY2(r.error.contains(u"(npm.mirror.invalid)"), qPrintable(r.error));
    }

    // Behind a proxy of the host's (HTTPS_PROXY, with a credential) an install still goes
    // through the egress gateway, which goes out through that proxy: the proxy sees a CONNECT
    // to the registry with its credential; the install container is on the gateway's network
    // and holds neither the proxy's address nor its credential.
    void anInstallBehindTheHostsProxyGoesThroughIt()
    {
        TunnelProxy proxy;
        QVERIFY(proxy.listen(QHostAddress::AnyIPv4));
        const QString address = outwardAddress();
        QVERIFY2(!address.isEmpty(), "the machine has no non-loopback IPv4 address");
        EngineClient engine(m_socket);
        SandboxConfig config = makeConfig();
        config.allowInstall = true;
        config.installTimeoutSec = 150;
        const QString proxyUrl =
            QStringLiteral("http://corp:s3cret@%1:%2").arg(address).arg(proxy.serverPort());
        config.installEnv = {QStringLiteral("HTTPS_PROXY=") + proxyUrl,
                             QStringLiteral("NO_PROXY=localhost")};
        if (QFileInfo::exists(QStringLiteral("/etc/ssl/certs/ca-certificates.crt")))
            config.installCaBundle = QStringLiteral("/etc/ssl/certs/ca-certificates.crt");
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        // (A version no other test installs: a cached volume would need no network.)
        const QStringList libraries{QStringLiteral("left-pad@1.1.3")};
        const QString volume = LibraryCache::volumeName(
            *service.languages().find(QStringLiteral("javascript")), libraries);
        // Gone however the test ends: retried while a container that used it is being removed.
        const auto removeVolume = qScopeGuard([&] {
            for (int i = 0; i < 150; ++i) {
                EngineReply *drop = VolumesApi(&engine).remove(volume);
                if (QSignalSpy(drop, &EngineReply::finished).wait(10000) &&
                    (drop->ok() || drop->error().isNotFound()))
                    return;
                QTest::qWait(100);
            }
        });
        QPointer<EngineReply> inspect;
        connect(&service, &SandboxService::executionStarted, this, [&](Execution *e) {
            if (e->request().code.contains(QStringLiteral("/opt/cs-libs/.complete")))
                connect(e, &Execution::started, this, [&, e] {
                    inspect = ContainersApi(&engine).inspect(e->result().containerId);
                });
        });
        ExecutionRequest request(QStringLiteral("javascript"),
                                 QStringLiteral("console.log(require('left-pad')('7', 3, '0'))"),
                                 60);
        request.libraries = libraries;
        const ExecutionResult r = resultOf(service.execute(request), 300000);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.stdoutData, QByteArray("007\n"));
        QVERIFY2(proxy.requests.contains("CONNECT registry.npmjs.org:443 HTTP/1.1"),
                 proxy.requests.join(", ").constData());
        for (const QByteArray &authorization : std::as_const(proxy.authorizations))
            QCOMPARE(authorization, "Basic " + QByteArray("corp:s3cret").toBase64());
        QVERIFY2(inspect, "the install container was never seen running");
        if (!inspect->isFinished())
            QVERIFY(QSignalSpy(inspect.data(), &EngineReply::finished).wait(10000));
        QVERIFY2(inspect->ok(), qPrintable(inspect->error().toString()));
        const QByteArray seen = QJsonDocument(inspect->json()).toJson();
        QVERIFY(!seen.contains("s3cret"));
        QVERIFY(!seen.contains(QByteArray::number(proxy.serverPort())));
        const QStringList networks = inspect->json()
                                         .value(u"NetworkSettings")
                                         .toObject()
                                         .value(u"Networks")
                                         .toObject()
                                         .keys();
        QCOMPARE(networks.size(), 1);
        QVERIFY2(networks.first().startsWith(u"code-sandbox-egress-"),
                 qPrintable(networks.first()));
        expectNoLeftovers(service, engine);
        shutDown(service, engine);
    }

    // Runs beyond the concurrency limit wait in a queue of bounded length; one more is refused
    // at once, and the others still run.
    void queueIsBounded()
    {
        EngineClient engine(m_socket);
        SandboxConfig config = makeConfig();
        config.maxConcurrent = 1;
        config.maxQueued = 2;
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        // (Results are taken as they come: a finished execution is deleted soon after.)
        QMap<int, ExecutionResult> results;
        for (int i = 0; i < 4; ++i) {
            Execution *e = service.execute(
                {QStringLiteral("python"),
                 QStringLiteral("import time; time.sleep(1); print(%1)").arg(i), 20});
            connect(e, &Execution::finished, this,
                    [&results, i](const ExecutionResult &r) { results.insert(i, r); });
        }
        QTRY_VERIFY_WITH_TIMEOUT(results.contains(3), 5000);
        QVERIFY(results.size() == 1);
        QVERIFY2(results.value(3).error.contains(u"the server is busy: 1 runs are running and 2 "
                                                 u"more are waiting"),
                 qPrintable(results.value(3).error));
        QTRY_COMPARE_WITH_TIMEOUT(results.size(), 4, 60000);
        for (int i = 0; i < 3; ++i) {
            QVERIFY2(results.value(i).error.isEmpty(), qPrintable(results.value(i).error));
            QCOMPARE(results.value(i).stdoutData, QByteArray::number(i) + '\n');
        }
        expectNoLeftovers(service, engine);
    }

    void outcomes()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        QFETCH(int, exitCode);
        QFETCH(QString, stdoutHas);
        QFETCH(QString, stderrHas);
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r = run(service, language, code);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, exitCode);
        QVERIFY(!r.timedOut);
        if (stdoutHas.isEmpty())
            QVERIFY2(r.stdoutData.isEmpty() || exitCode != 0, r.stdoutData.constData());
        else
            QCOMPARE(QString::fromUtf8(r.stdoutData), stdoutHas);
        if (stderrHas.isEmpty())
            QCOMPARE(r.stderrData, QByteArray());
        else
            QVERIFY2(r.stderrData.contains(stderrHas.toUtf8()), r.stderrData.constData());
        expectNoLeftovers(service, engine);
    }

    void timeoutKillsTheProgram_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::newRow("python busy loop") << "python"
                                          << "print('start', flush=True)\nwhile True: pass";
        QTest::newRow("js busy loop") << "javascript"
                                      << "console.log('start'); for(;;){}";
        QTest::newRow("python sleep") << "python"
                                      << "import time; print('start'); time.sleep(600)";
    }

    void timeoutKillsTheProgram()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        QElapsedTimer clock;
        clock.start();
        const ExecutionResult r = run(service, language, code, 2);
        QVERIFY(r.timedOut);
        QCOMPARE(r.exitCode, -1);
        QVERIFY(!r.succeeded());
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("start\n"));
        QVERIFY2(clock.elapsed() < 20000, "a 2 s timeout must end the call promptly");
        expectNoLeftovers(service, engine);
    }

    void outputIsCapped()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r =
            run(service, QStringLiteral("python"),
                QStringLiteral(
                    "import sys\nsys.stdout.write('x' * 1000000)\nsys.stderr.write('e' * 10)\n"));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.stdoutData.size(), 64 * 1024);
        QVERIFY(r.stdoutTruncated);
        QCOMPARE(r.stderrData, QByteArray("eeeeeeeeee"));
        QVERIFY(!r.stderrTruncated);
        expectNoLeftovers(service, engine);
    }

    void endlessOutputIsStoppedByTimeout()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r = run(service, QStringLiteral("python"),
                                      QStringLiteral("while True: print('y' * 1000)"), 3);
        QVERIFY(r.timedOut);
        QCOMPARE(r.stdoutData.size(), 64 * 1024);
        QVERIFY(r.stdoutTruncated);
        expectNoLeftovers(service, engine);
    }

    void memoryBombIsReportedAsOutOfMemory()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r =
            run(service, QStringLiteral("python"),
                QStringLiteral("print('allocating', flush=True)\nx = bytearray(2 * 1024**3)\n"
                               "print('survived')"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, 137);
        QVERIFY(r.outOfMemory);
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("allocating\n"));
        // The service is unharmed: the next program runs normally.
        const ExecutionResult next =
            run(service, QStringLiteral("python"), QStringLiteral("print(7)"));
        QCOMPARE(next.exitCode, 0);
        QVERIFY(!next.outOfMemory);
        expectNoLeftovers(service, engine);
    }

    void aRuntimeTheEngineCannotGiveIsRefused()
    {
        // Docker: a runtime it has not registered. Podman: any runtime but its default, which
        // its Docker-compatible API would ignore (the run would go without the wall it asked
        // for). Refused with why, and nothing created.
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        backend.setRuntime(QStringLiteral("runsc-not-registered"));
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        ExecutionResult r = run(service, QStringLiteral("python"), QStringLiteral("print(1)"));
        QVERIFY(r.stdoutData.isEmpty());
        const bool podman = engine.dialect().kind() == EngineDialect::Kind::Podman;
        const QString podmanWords = QStringLiteral("is Podman, whose Docker-compatible API runs "
                                                   "every container under its default runtime");
        if (podman)
            QVERIFY2(r.error.contains(podmanWords), qPrintable(r.error));
        else
            QVERIFY2(r.error.contains(u"has no container runtime \"runsc-not-registered\""),
                     qPrintable(r.error));

        // A run that requires gVisor, on an engine whose gVisor cannot be had (this suite's
        // engines run runc).
        DockerBackend plain(&engine);
        plain.setRuntime(QString());
        SandboxService other(&plain, LanguageRegistry::builtIn(), makeConfig());
        ExecutionRequest gvisor(QStringLiteral("python"), QStringLiteral("print(1)"), 20);
        AssistantPolicy requiring;
        requiring.isolation = QLatin1String(SandboxSpec::kIsolationGvisor);
        gvisor.network = RunNetwork::decide(other.config(), std::nullopt, &requiring);
        r = resultOf(other.execute(gvisor), 80000);
        QVERIFY(r.stdoutData.isEmpty());
        QVERIFY2(r.error.contains(podman ? podmanWords : QStringLiteral("has no gVisor runtime")),
                 qPrintable(r.error));
        QVERIFY2(r.error.contains(u"gVisor"), qPrintable(r.error));
        expectNoLeftovers(service, engine);
        expectNoLeftovers(other, engine);
    }

    void runsUnderTheEnginesGvisor()
    {
        // Podman with runsc as its default runtime (podman.sh's second service): every sandbox
        // is under gVisor, and a run that requires it is placed there.
        if (qEnvironmentVariable("CS_EXPECT_GVISOR") != u"1")
            QSKIP("the engine's default runtime is not gVisor (podman.sh sets CS_EXPECT_GVISOR)");
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        backend.setRuntime(QString());
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        ExecutionRequest request(QStringLiteral("python"),
                                 QStringLiteral("import os, platform\n"
                                                "print(platform.release(), os.getuid())"),
                                 20);
        // As RunGate decides it for a caller whose policy requires gVisor.
        AssistantPolicy gvisor;
        gvisor.isolation = QLatin1String(SandboxSpec::kIsolationGvisor);
        request.network = RunNetwork::decide(service.config(), std::nullopt, &gvisor);
        ExecutionResult r = resultOf(service.execute(request), 80000);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        // gVisor's kernel, not the host's; the sandbox's user.
        QCOMPARE(r.stdoutData, QByteArray("4.4.0 1000\n"));
        QCOMPARE(r.runtime, QStringLiteral("runsc"));
        // The timeout holds under it too.
        r = run(service, QStringLiteral("python"), QStringLiteral("import time; time.sleep(60)"),
                2);
        QVERIFY(r.timedOut);
        expectNoLeftovers(service, engine);
    }

    void missingImageIsExplained()
    {
        EngineClient engine(m_socket);
        LanguageRegistry languages = LanguageRegistry::builtIn();
        languages.setImage(QStringLiteral("python"),
                           QStringLiteral("code-sandbox/does-not-exist:latest"));
        DockerBackend backend(&engine);
        SandboxService service(&backend, languages, makeConfig());
        // The fact from the sandbox room, the advice in the words the app gives it.
        service.setMissingImageWording(&ImageWording::missingHint);
        const ExecutionResult r =
            run(service, QStringLiteral("python"), QStringLiteral("print(1)"));
        QVERIFY(r.error.contains(u"code-sandbox/does-not-exist:latest"));
        QVERIFY2(r.error.contains(u"build-images.sh python"), qPrintable(r.error));
        expectNoLeftovers(service, engine);
    }

    void unreachableEngineIsExplained()
    {
        EngineClient engine(QStringLiteral("/nonexistent/engine.sock"));
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r =
            run(service, QStringLiteral("python"), QStringLiteral("print(1)"));
        QVERIFY2(r.error.contains(u"cannot reach the container engine at /nonexistent/engine.sock"),
                 qPrintable(r.error));
        QCOMPARE(service.activeContainers(), 0);
        // A second call fails the same way (the client retries the engine each time).
        const ExecutionResult again =
            run(service, QStringLiteral("python"), QStringLiteral("print(1)"));
        QVERIFY(again.error.contains(u"cannot reach"));
    }

    void cancelRemovesTheContainer()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        Execution *e = service.execute(
            {QStringLiteral("python"),
             QStringLiteral("import time; print('up', flush=True); time.sleep(600)"), 60});
        QSignalSpy out(e, &Execution::output);
        QSignalSpy done(e, &Execution::finished);
        QVERIFY(out.wait(30000));
        e->cancel();
        QVERIFY(done.wait(5000) || done.count() == 1);
        QVERIFY(done.first().first().value<ExecutionResult>().cancelled);
        expectNoLeftovers(service, engine);
    }

    void shutdownRemovesEverything()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        QList<Execution *> running;
        for (int i = 0; i < 3; ++i)
            running.append(service.execute(
                {QStringLiteral("python"), QStringLiteral("import time; time.sleep(600)"), 120}));
        QSignalSpy started(running.last(), &Execution::started);
        QVERIFY(started.wait(30000));
        QSignalSpy finished(&service, &SandboxService::shutdownFinished);
        service.shutdown();
        QVERIFY(finished.wait(15000));
        QCOMPARE(service.activeContainers(), 0);
        QCOMPARE(leftovers(engine, service.config().instanceId), 0);
        // Nothing new starts once shut down.
        const ExecutionResult r =
            run(service, QStringLiteral("python"), QStringLiteral("print(1)"));
        QVERIFY(r.error.contains(u"shutting down"));
    }

    void archiveRoundTrip()
    {
        // Files into and out of a container through the archive endpoint and libarchive.
        EngineClient engine(m_socket);
        const QJsonObject spec{
            {QStringLiteral("Image"), QStringLiteral("code-sandbox/python:latest")},
            {QStringLiteral("Cmd"), QJsonArray{QStringLiteral("true")}},
            {QStringLiteral("Labels"),
             QJsonObject{{QStringLiteral("code-sandbox"), QStringLiteral("1")}}}};
        EngineReply *created = engine.post("/containers/create", spec);
        QSignalSpy c(created, &EngineReply::finished);
        QVERIFY(c.wait(10000));
        QVERIFY2(created->ok(), qPrintable(created->error().toString()));
        const QString id = created->json().value(u"Id").toString();
        const QByteArray payload("binary\0data\n", 12);
        const QByteArray tar = TarArchive::pack({{QStringLiteral("in.bin"), payload, 0644, false}});
        EngineReply *put = ContainersApi(&engine).putArchive(id, QStringLiteral("/tmp"), tar);
        QSignalSpy p(put, &EngineReply::finished);
        QVERIFY(p.wait(10000));
        QVERIFY2(put->ok(), qPrintable(put->error().toString()));
        EngineReply *got = ContainersApi(&engine).getArchive(id, QStringLiteral("/tmp/in.bin"));
        QSignalSpy g(got, &EngineReply::finished);
        QVERIFY(g.wait(10000));
        QVERIFY2(got->ok(), qPrintable(got->error().toString()));
        QString err;
        const auto entries = TarArchive::unpack(got->body(), 1 << 20, &err);
        EngineReply *removed = engine.del("/containers/" + id.toLatin1() + "?force=1");
        QSignalSpy r(removed, &EngineReply::finished);
        QVERIFY(r.wait(10000));
        QVERIFY(removed->ok());
        QVERIFY2(err.isEmpty(), qPrintable(err));
        QCOMPARE(entries.size(), 1);
        QCOMPARE(entries.first().path, QStringLiteral("in.bin"));
        QCOMPARE(entries.first().data, payload);
    }

    void notFoundCarriesTheEngineMessage()
    {
        EngineClient engine(m_socket);
        EngineReply *r = ContainersApi(&engine).inspect(QStringLiteral("no-such-container-xyz"));
        QSignalSpy spy(r, &EngineReply::finished);
        QVERIFY(spy.wait(10000));
        QCOMPARE(r->status(), 404);
        QVERIFY(r->error().isNotFound());
        QVERIFY2(r->error().message.contains(u"no-such-container-xyz"),
                 qPrintable(r->error().message));
    }

    // The engine's other resources, as the typed API asks them: the image a language runs (and
    // one that does not exist), and what the engine says of itself.
    void imagesAndSystem()
    {
        EngineClient engine(m_socket);
        const auto answer = [](EngineReply *r) {
            QSignalSpy spy(r, &EngineReply::finished);
            spy.wait(10000);
            return r;
        };
        EngineReply *python = answer(ImagesApi(&engine).inspect(
            LanguageRegistry::builtIn().find(QStringLiteral("python"))->image));
        QVERIFY2(python->ok(), qPrintable(python->error().toString()));
        QVERIFY(!python->json().value(u"Id").toString().isEmpty());
        EngineReply *missing =
            answer(ImagesApi(&engine).inspect(QStringLiteral("code-sandbox/does-not-exist:0")));
        QVERIFY(missing->error().isNotFound());
        EngineReply *info = answer(SystemApi(&engine).info());
        QVERIFY2(info->ok(), qPrintable(info->error().toString()));
        QVERIFY(!info->json().value(u"ServerVersion").toString().isEmpty());
    }

    void connectionsAreReused()
    {
        // Many sequential requests must not each open a new connection: check that they all
        // succeed quickly on a kept-alive socket (the engine answers keep-alive by default).
        // (/_ping, not /version: Podman takes about a second to answer /version.)
        EngineClient engine(m_socket);
        for (int i = 0; i < 50; ++i) {
            EngineReply *r = engine.get("/_ping");
            QSignalSpy spy(r, &EngineReply::finished);
            QVERIFY(spy.wait(10000));
            QVERIFY(r->ok());
            r->deleteLater();
        }
        QCOMPARE(engine.findChildren<QObject *>(QString(), Qt::FindDirectChildrenOnly).size() <= 3,
                 true);
    }
};

QTEST_GUILESS_MAIN(TestSandboxService)
#include "tst_sandboxservice.moc"
