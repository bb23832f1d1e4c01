// Abuse suite against the real container engine: programs that try to exhaust, escape, confuse
// or outlive the sandbox. Each case must end with a clear result, leave the same service able to
// run the next program, and leave no container behind.

#include "dockerbackend.h"
#include "engineclient.h"
#include "enginereply.h"
#include "enginetestcase.h"
#include "execution.h"
#include "sandboxservice.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QSignalSpy>
#include <QTest>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CS_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(CS_ASAN)
constexpr bool kAddressSanitizer = true; // (clang says so by __has_feature, gcc by the macro)
#else
constexpr bool kAddressSanitizer = false;
#endif

class TestAbuse : public EngineTestCase
{
    Q_OBJECT

private:
    SandboxConfig makeConfig()
    {
        SandboxConfig c = newConfig(QStringLiteral("abuse-"));
        c.passThroughEnv = {{QStringLiteral("CS_TEST_PASSED"), QStringLiteral("passed-value")}};
        // No warm containers: activeContainers() then counts exactly the ones of running calls.
        c.poolSize = 0;
        return c;
    }

    ExecutionResult run(SandboxService &service, const QString &language, const QString &code,
                        int timeoutSec = 20)
    {
        const ExecutionResult r =
            resultOf(service.execute({language, code, timeoutSec}), (timeoutSec + 60) * 1000);
        report(r);
        return r;
    }

    // One line per result in the log: what came back, for reading a run at a glance.
    static void report(const ExecutionResult &r)
    {
        QStringList flags;
        if (r.timedOut)
            flags << QStringLiteral("timedOut");
        if (r.outOfMemory)
            flags << QStringLiteral("outOfMemory");
        if (r.cancelled)
            flags << QStringLiteral("cancelled");
        if (r.stdoutTruncated)
            flags << QStringLiteral("stdoutTruncated");
        if (r.stderrTruncated)
            flags << QStringLiteral("stderrTruncated");
        qInfo().noquote() << QStringLiteral("result: exit %1 [%2] %3 ms, stdout %4 B, stderr %5 B "
                                            "%6%7")
                                 .arg(r.exitCode)
                                 .arg(flags.join(u' '))
                                 .arg(r.durationMs)
                                 .arg(r.stdoutData.size())
                                 .arg(r.stderrData.size())
                                 .arg(QString::fromUtf8(r.stderrData.left(160)).simplified())
                                 .arg(r.error.isEmpty() ? QString()
                                                        : QStringLiteral(" error: ") + r.error);
    }

    // The service that just ran an abusive program still runs an ordinary one.
    void expectStillServes(SandboxService &service)
    {
        const ExecutionResult r =
            run(service, QStringLiteral("python"), QStringLiteral("print(1)"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.stdoutData, QByteArray("1\n"));
        QCOMPARE(r.stderrData, QByteArray());
        QVERIFY(!r.timedOut && !r.outOfMemory && !r.cancelled && !r.truncated());
    }

    // The engine's view of a running container: how many processes its cgroup holds.
    int processCount(EngineClient &engine, const QString &containerId)
    {
        EngineReply *r = engine.get("/containers/" + EngineClient::encode(containerId) +
                                    "/stats?stream=0&one-shot=1");
        QSignalSpy spy(r, &EngineReply::finished);
        if (!spy.wait(15000) || !r->ok())
            return -1;
        return r->json().value(u"pids_stats").toObject().value(u"current").toInt(-1);
    }

    // A size from /proc/self/status in KiB: VmRSS, the resident size now; VmHWM, its peak since
    // the last resetPeak() (what a spike freed again by the end of a call cost, which the size
    // after the call does not show).
    static qint64 statusKiB(const QByteArray &field)
    {
        QFile status(QStringLiteral("/proc/self/status"));
        if (!status.open(QIODevice::ReadOnly))
            return -1;
        for (const QByteArray &line : status.readAll().split('\n'))
            if (line.startsWith(field + ':'))
                return line.mid(field.size() + 1).trimmed().split(' ').first().toLongLong();
        return -1;
    }
    static qint64 peakResidentKiB() { return statusKiB("VmHWM"); }
    static qint64 residentKiB() { return statusKiB("VmRSS"); }

    static bool resetPeak()
    {
        QFile refs(QStringLiteral("/proc/self/clear_refs"));
        return refs.open(QIODevice::WriteOnly) && refs.write("5") == 1;
    }

private Q_SLOTS:
    // 1. Fork bombs fill the pids limit and no more; the timeout ends them.
    void forkBombIsContained_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::newRow("bash") << "bash"
                              << "echo start\nbomb() { bomb | bomb & }\nbomb\nsleep 600\n";
        QTest::newRow("python")
            << "python"
            << "import os\nprint('start', flush=True)\nwhile True:\n"
               "    try:\n        os.fork()\n    except OSError:\n        pass\n";
    }

    void forkBombIsContained()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const int timeoutSec = 4;
        QElapsedTimer clock;
        clock.start();
        QPointer<Execution> e = service.execute({language, code, timeoutSec});
        QSignalSpy done(e, &Execution::finished);
        QTRY_VERIFY_WITH_TIMEOUT(!e || e->result().stdoutData == "start\n", 30000);
        QVERIFY(e);
        const QString id = e->result().containerId;
        QVERIFY(!id.isEmpty());
        // Let the bomb fill the container, then count from the host: bounded by PidsLimit.
        QTest::qWait(1500);
        const int pids = processCount(engine, id);
        qInfo() << "processes in the container during the bomb:" << pids;
        QVERIFY2(done.count() == 1 || done.wait((timeoutSec + 30) * 1000), "no result");
        const ExecutionResult r = done.first().first().value<ExecutionResult>();
        report(r);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(r.timedOut);
        QCOMPARE(r.exitCode, -1);
        QVERIFY(!r.outOfMemory);
        QCOMPARE(r.stdoutData, QByteArray("start\n"));
        QVERIFY2(pids <= service.config().pidsLimit,
                 qPrintable(QStringLiteral("%1 processes").arg(pids)));
        QVERIFY2(pids > 50, qPrintable(QStringLiteral("the bomb did not go off: %1").arg(pids)));
        QVERIFY2(clock.elapsed() < (timeoutSec + 20) * 1000, "the timeout must end a fork bomb");
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 1b. A forked child that ends normally is not the program: its exit must not end the run.
    void forkedChildDoesNotEndTheRun()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r = run(service, QStringLiteral("python"), QStringLiteral(R"py(
import os, sys, time
pid = os.fork()
if pid == 0:
    print("child", flush=True)
    sys.exit(5)
os.waitpid(pid, 0)
time.sleep(0.5)
print("parent done")
)py"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.stdoutData, QByteArray("child\nparent done\n"));
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 2. Memory bombs are killed by the kernel and reported as such.
    void memoryBombIsReported_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        // (Python's is in tst_sandboxservice: memoryBombIsReportedAsOutOfMemory.)
        QTest::newRow("js buffers") << "javascript"
                                    << "console.log('allocating');\nconst a = [];\n"
                                       "for (;;) a.push(Buffer.alloc(16 << 20, 1));\n";
    }

    void memoryBombIsReported()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r = run(service, language, code, 30);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, 137);
        QVERIFY(r.outOfMemory);
        QVERIFY(!r.timedOut);
        QCOMPARE(r.stdoutData, QByteArray("allocating\n"));
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 3. A busy loop is stopped by the timeout, promptly, and not before it.
    void busyLoopTimesOut_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::newRow("python") << "python"
                                << "print('start', flush=True)\nwhile True: pass\n";
        QTest::newRow("javascript") << "javascript"
                                    << "console.log('start');\nfor (;;) {}\n";
    }

    void busyLoopTimesOut()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const int timeoutSec = 3;
        QElapsedTimer clock;
        clock.start();
        const ExecutionResult r = run(service, language, code, timeoutSec);
        const qint64 elapsed = clock.elapsed();
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(r.timedOut);
        QCOMPARE(r.exitCode, -1);
        QVERIFY(!r.outOfMemory && !r.cancelled);
        QCOMPARE(r.stdoutData, QByteArray("start\n"));
        QVERIFY2(r.durationMs >= timeoutSec * 1000,
                 qPrintable(QStringLiteral("cut short after %1 ms").arg(r.durationMs)));
        // Container start-up plus the timeout, with generous slack for a loaded machine.
        QVERIFY2(elapsed < (timeoutSec + 15) * 1000,
                 qPrintable(QStringLiteral("took %1 ms").arg(elapsed)));
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 4. Endless output: capped, stopped by the timeout, and the server's memory stays bounded.
    void endlessOutputIsBounded_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::addColumn<bool>("toStderr");
        QTest::newRow("python stdout") << "python"
                                       << "while True: print('x' * 1000)\n"
                                       << false;
        QTest::newRow("python both streams")
            << "python"
            << "import sys\nwhile True:\n    sys.stdout.write('x' * 1000 + '\\n')\n"
               "    sys.stderr.write('e' * 1000 + '\\n')\n"
            << true;
        QTest::newRow("js stdout") << "javascript"
                                   << "const line = 'x'.repeat(1000) + '\\n';\n"
                                      "(function pump() {\n"
                                      "  while (process.stdout.write(line)) {}\n"
                                      "  process.stdout.once('drain', pump);\n"
                                      "})();\n"
                                   << false;
    }

    void endlessOutputIsBounded()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        QFETCH(bool, toStderr);
        EngineClient engine(m_socket);
        SandboxConfig config = makeConfig();
        config.outputCapBytes = 1024 * 1024;
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        // One ordinary call first, so one-time allocations are not counted as growth.
        expectStillServes(service);
        const qint64 before = residentKiB();
        QVERIFY(before > 0);
        const int timeoutSec = 3;
        QElapsedTimer clock;
        clock.start();
        const ExecutionResult r = run(service, language, code, timeoutSec);
        const qint64 after = residentKiB();
        qInfo() << "server VmRSS before" << before << "KiB, after" << after << "KiB";
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(r.timedOut);
        QCOMPARE(r.exitCode, -1);
        QCOMPARE(r.stdoutData.size(), config.outputCapBytes);
        QVERIFY(r.stdoutTruncated);
        QVERIFY(r.stdoutData.startsWith(QByteArray(1000, 'x') + '\n'));
        if (toStderr) {
            QCOMPARE(r.stderrData.size(), config.outputCapBytes);
            QVERIFY(r.stderrTruncated);
        }
        QVERIFY2(clock.elapsed() < (timeoutSec + 15) * 1000, "the timeout must end the flood");
        if (kAddressSanitizer) {
            // Its quarantine holds freed memory back (256 MiB by default), so the resident size
            // says nothing here; the ordinary build checks the bound.
            qInfo() << "server RSS bound not checked under AddressSanitizer";
        } else {
            QVERIFY2(
                after - before < 64 * 1024,
                qPrintable(
                    QStringLiteral("server RSS grew from %1 to %2 KiB").arg(before).arg(after)));
        }
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 4b. Output files that cost the sandbox nothing but would cost the server everything: a
    // sparse file claiming 64 GiB (its archive would really be that long) and 10,000 empty
    // files. The answer lists them as not returned, and the server holds no more than its
    // limits while fetching.
    void outputFilesCannotFloodTheServer_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        // (the Python loader, cs-run after node, and cs-run's own shell write the listing)
        QTest::newRow("python") << "python"
                                << "import os\nd = os.environ['OUTPUT_DIR']\n"
                                   "with open(d + '/sparse.bin', 'wb') as f: f.truncate(64 << 30)\n"
                                   "for i in range(10000): open('%s/e%05d' % (d, i), 'w').close()\n"
                                   "print('written')\n";
        QTest::newRow("javascript")
            << "javascript"
            << "const fs = require('fs'); const d = process.env.OUTPUT_DIR;\n"
               "fs.closeSync(fs.openSync(d + '/sparse.bin', 'w')); "
               "fs.truncateSync(d + '/sparse.bin', 64 * 2 ** 30);\n"
               "for (let i = 0; i < 10000; i++) fs.closeSync(fs.openSync(d + '/e' + "
               "String(i).padStart(5, '0'), 'w'));\n"
               "console.log('written');\n";
        QTest::newRow("bash") << "bash"
                              << "truncate -s 64G \"$OUTPUT_DIR/sparse.bin\"\n"
                                 "cd \"$OUTPUT_DIR\" && seq -f 'e%05g' 0 9999 | xargs touch\n"
                                 "echo written\n";
    }

    void outputFilesCannotFloodTheServer()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        expectStillServes(service);
        QVERIFY(resetPeak());
        const qint64 before = residentKiB();
        QVERIFY(before > 0);
        const ExecutionResult r = run(service, language, code, 60);
        const qint64 after = peakResidentKiB();
        qInfo() << "server VmRSS before" << before << "KiB, peak during the call" << after << "KiB";
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.stdoutData, QByteArray("written\n"));
        const QString notes = r.notes.join(u'\n');
        QCOMPARE(r.files.size(), 1000);
        int included = 0;
        for (const OutputFile &f : r.files) {
            if (f.included) {
                ++included;
                QCOMPARE(f.size, qint64(0));
            }
            if (f.name == u"sparse.bin") {
                QVERIFY(!f.included);
                QCOMPARE(f.size, qint64(64) << 30);
            }
        }
        QCOMPARE(included, 100);
        QVERIFY2(notes.contains(u"sparse.bin (68719476736 bytes) was not returned"),
                 qPrintable(notes));
        QVERIFY2(notes.contains(u"9900 files were not returned: over the limit of 100 files"),
                 qPrintable(notes));
        QVERIFY2(notes.contains(u"more files are not listed"), qPrintable(notes));
        if (kAddressSanitizer)
            qInfo() << "server RSS bound not checked under AddressSanitizer";
        else
            QVERIFY2(
                after - before < 64 * 1024,
                qPrintable(
                    QStringLiteral("server RSS grew from %1 to %2 KiB").arg(before).arg(after)));
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 5. A program sleeping for ever is cancelled: the result says so and the container goes.
    void sleepForeverIsCancelled()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        Execution *e = service.execute(
            {QStringLiteral("python"),
             QStringLiteral("import time\nprint('up', flush=True)\nwhile True: time.sleep(3600)"),
             60});
        QPointer<Execution> guard(e);
        QSignalSpy done(e, &Execution::finished);
        QTRY_VERIFY_WITH_TIMEOUT(!guard || guard->result().stdoutData == "up\n", 30000);
        QVERIFY(guard);
        const QString id = e->result().containerId;
        QVERIFY(!id.isEmpty());
        QElapsedTimer clock;
        clock.start();
        e->cancel();
        QVERIFY(done.count() == 1 || done.wait(5000));
        QVERIFY2(clock.elapsed() < 2000, "a cancel answers at once");
        const ExecutionResult r = done.first().first().value<ExecutionResult>();
        report(r);
        QVERIFY(r.cancelled);
        QVERIFY(!r.timedOut && !r.outOfMemory);
        QCOMPARE(r.exitCode, -1);
        QVERIFY(r.error.isEmpty());
        QCOMPARE(r.stdoutData, QByteArray("up\n"));
        QVERIFY(!r.succeeded());
        expectNoLeftovers(service, engine);
        // The engine no longer knows the container at all.
        EngineReply *inspect = engine.get("/containers/" + EngineClient::encode(id) + "/json");
        QSignalSpy inspected(inspect, &EngineReply::finished);
        QVERIFY(inspected.wait(10000));
        QCOMPARE(inspect->status(), 404);
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 6. The root filesystem is read-only; the workdir and /tmp are writable but bounded.
    void filesystemIsReadOnlyAndBounded()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r = run(service, QStringLiteral("python"), QStringLiteral(R"py(
import errno, json, os
out = {}
def attempt(key, path):
    try:
        with open(path, "w") as f:
            f.write("x")
        out[key] = "ok"
    except OSError as e:
        out[key] = errno.errorcode[e.errno]
attempt("etc", "/etc/cs-owned")
attempt("etc-passwd", "/etc/passwd")
attempt("usr", "/usr/cs-owned")
attempt("usr-bin", "/usr/local/bin/python3")
attempt("root", "/cs-owned")
attempt("sandbox", "/sandbox/cs-file")
attempt("tmp", "/tmp/cs-file")
try:
    os.mkdir("/var/cs-dir"); out["mkdir-var"] = "ok"
except OSError as e:
    out["mkdir-var"] = errno.errorcode[e.errno]
def fill(key, path):
    chunk = b"z" * (1 << 20)
    written = 0
    try:
        with open(path, "wb") as f:
            while written < (256 << 20):
                f.write(chunk)
                f.flush()
                written += len(chunk)
        out[key] = "no limit"
    except OSError as e:
        out[key] = errno.errorcode[e.errno]
    out[key + "-mib"] = written >> 20
    os.unlink(path)
    attempt(key + "-after", path)
fill("tmp-fill", "/tmp/big")
fill("sandbox-fill", "/sandbox/big")
print(json.dumps(out))
)py"),
                                      30);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, 0);
        QVERIFY(!r.outOfMemory);
        const QJsonObject o = QJsonDocument::fromJson(r.stdoutData).object();
        QVERIFY2(!o.isEmpty(), r.stdoutData.constData());
        qInfo().noquote() << "filesystem:" << QJsonDocument(o).toJson(QJsonDocument::Compact);
        const QStringList refused{QStringLiteral("EROFS"), QStringLiteral("EACCES"),
                                  QStringLiteral("EPERM")};
        for (const char *key : {"etc", "etc-passwd", "usr", "usr-bin", "root", "mkdir-var"})
            QVERIFY2(refused.contains(o.value(QLatin1String(key)).toString()),
                     qPrintable(QStringLiteral("%1: %2").arg(
                         QLatin1String(key), o.value(QLatin1String(key)).toString())));
        QCOMPARE(o.value(u"root").toString(), QStringLiteral("EROFS"));
        QCOMPARE(o.value(u"sandbox").toString(), QStringLiteral("ok"));
        QCOMPARE(o.value(u"tmp").toString(), QStringLiteral("ok"));
        for (const char *key : {"tmp-fill", "sandbox-fill"}) {
            const QString k = QLatin1String(key);
            const int mib = o.value(k + QStringLiteral("-mib")).toInt();
            QCOMPARE(o.value(k).toString(), QStringLiteral("ENOSPC"));
            QVERIFY2(mib >= 32 && mib <= 64, qPrintable(QStringLiteral("%1 MiB").arg(mib)));
            QCOMPARE(o.value(k + QStringLiteral("-after")).toString(), QStringLiteral("ok"));
        }
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 7. What a program can see of its privileges, the host, other containers and the network.
    void probesFindNothing()
    {
        qputenv("CS_ABUSE_HOST_SECRET", "must-not-leak");
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        // A neighbour runs at the same time; the probe must not see its processes.
        Execution *neighbour = service.execute(
            {QStringLiteral("bash"), QStringLiteral("echo up\nexec sleep 600\n"), 60});
        QPointer<Execution> neighbourGuard(neighbour);
        QSignalSpy neighbourOut(neighbour, &Execution::output);
        QSignalSpy neighbourDone(neighbour, &Execution::finished);
        QVERIFY(neighbourOut.wait(30000));

        const ExecutionResult r = run(service, QStringLiteral("python"), QStringLiteral(R"py(
import json, os, socket, time
out = {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
       "groups": os.getgroups()}
for line in open("/proc/self/status"):
    k, _, v = line.partition(":")
    if k in ("CapEff", "CapPrm", "CapBnd", "CapInh", "CapAmb", "NoNewPrivs", "Seccomp"):
        out[k] = v.strip()
out["env"] = dict(os.environ)
out["sockets"] = [p for p in ("/var/run/docker.sock", "/run/docker.sock",
                              "/run/containerd/containerd.sock", "/run/podman/podman.sock")
                  if os.path.exists(p)]
procs = {}
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            procs[p] = open("/proc/%s/comm" % p).read().strip()
        except OSError:
            pass
out["procs"] = procs
out["pid1"] = open("/proc/1/cmdline").read().split("\0")[0]
out["net"] = sorted(os.listdir("/sys/class/net"))
start = time.monotonic()
try:
    socket.create_connection(("1.1.1.1", 53), timeout=5).close()
    out["connect"] = "connected"
except OSError as e:
    out["connect"] = type(e).__name__ + ": " + str(e)
out["connect_s"] = time.monotonic() - start
try:
    socket.getaddrinfo("example.com", 80)
    out["dns"] = "resolved"
except OSError as e:
    out["dns"] = type(e).__name__
print(json.dumps(out))
)py"));
        qunsetenv("CS_ABUSE_HOST_SECRET");
        QVERIFY2(neighbourGuard && !neighbour->isFinished(), "the neighbour ended early");
        neighbour->cancel();
        QVERIFY(neighbourDone.count() == 1 || neighbourDone.wait(5000));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, 0);
        const QJsonObject o = QJsonDocument::fromJson(r.stdoutData).object();
        QVERIFY2(!o.isEmpty(), r.stdoutData.constData());
        qInfo().noquote() << "probe:" << QJsonDocument(o).toJson(QJsonDocument::Compact);

        QCOMPARE(o.value(u"uid").toInt(), 1000);
        QCOMPARE(o.value(u"euid").toInt(), 1000);
        QCOMPARE(o.value(u"gid").toInt(), 1000);
        for (const QJsonValue &g : o.value(u"groups").toArray())
            QVERIFY2(g.toInt() != 0, "member of group root");
        for (const char *cap : {"CapEff", "CapPrm", "CapBnd", "CapInh", "CapAmb"})
            QCOMPARE(o.value(QLatin1String(cap)).toString(), QStringLiteral("0000000000000000"));
        QCOMPARE(o.value(u"NoNewPrivs").toString(), QStringLiteral("1"));

        const QJsonObject env = o.value(u"env").toObject();
        QVERIFY(!env.contains(u"CS_ABUSE_HOST_SECRET"));
        QCOMPARE(env.value(u"CS_TEST_PASSED").toString(), QStringLiteral("passed-value"));
        for (auto it = env.begin(); it != env.end(); ++it)
            QVERIFY2(!it.value().toString().contains(u"must-not-leak"), qPrintable(it.key()));
        const QStringList allowed{QStringLiteral("CS_TEST_PASSED"),
                                  QStringLiteral("HOME"),
                                  QStringLiteral("HOSTNAME"),
                                  QStringLiteral("LANG"),
                                  QStringLiteral("PATH"),
                                  QStringLiteral("PWD"),
                                  QStringLiteral("OUTPUT_DIR"),
                                  QStringLiteral("PYTHONUNBUFFERED"),
                                  QStringLiteral("PYTHONDONTWRITEBYTECODE"),
                                  QStringLiteral("MPLBACKEND"),
                                  QStringLiteral("MPLCONFIGDIR"),
                                  QStringLiteral("LC_CTYPE")};
        for (const QString &k : env.keys())
            QVERIFY2(allowed.contains(k), qPrintable(QStringLiteral("unexpected variable ") + k));

        QCOMPARE(o.value(u"sockets").toArray(), QJsonArray());

        // Only this container's own processes: the engine's init, the supervisor, the
        // interpreter.
        const QJsonObject procs = o.value(u"procs").toObject();
        const QString init = engine.dialect().initName();
        QVERIFY2(o.value(u"pid1").toString().endsWith(init),
                 qPrintable(o.value(u"pid1").toString()));
        const QStringList own{init, QStringLiteral("sh"), QStringLiteral("python3")};
        QVERIFY2(procs.size() <= 3, QJsonDocument(procs).toJson().constData());
        for (auto it = procs.begin(); it != procs.end(); ++it)
            QVERIFY2(own.contains(it.value().toString()),
                     qPrintable(QStringLiteral("pid %1: %2").arg(it.key(), it.value().toString())));

        QCOMPARE(o.value(u"net").toArray(), QJsonArray{QStringLiteral("lo")});
        QVERIFY2(o.value(u"connect").toString() != u"connected",
                 qPrintable(o.value(u"connect").toString()));
        QVERIFY2(o.value(u"connect_s").toDouble() < 2.0,
                 qPrintable(QStringLiteral("connect failed only after %1 s")
                                .arg(o.value(u"connect_s").toDouble())));
        QVERIFY(o.value(u"dns").toString() != u"resolved");
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 8. Killing PID 1 or the supervisor gives a clear result, not a hang.
    void killingInitIsRefused_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::newRow("python") << "python"
                                << R"py(
import errno, os, time
try:
    os.kill(1, 9)
    print("kill: returned")
except OSError as e:
    print("kill: " + errno.errorcode[e.errno])
time.sleep(0.5)
print("alive", open("/proc/1/comm").read().strip())
)py";
        QTest::newRow("bash") << "bash"
                              << "if kill -9 1 2>/dev/null; then echo 'kill: returned'; "
                                 "else echo 'kill: EPERM'; fi\nsleep 0.5\n"
                                 "echo alive $(cat /proc/1/comm)\n";
    }

    void killingInitIsRefused()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r = run(service, language, code, 10);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(!r.timedOut);
        QCOMPARE(r.exitCode, 0);
        // Either refused outright, or (same uid, but PID 1 of the namespace ignores signals it
        // has no handler for when sent from inside) delivered to no effect: PID 1 survives.
        const QString out = QString::fromUtf8(r.stdoutData);
        const QString alive = QStringLiteral("\nalive %1\n").arg(engine.dialect().initName());
        QVERIFY2(out == QStringLiteral("kill: EPERM") + alive ||
                     out == QStringLiteral("kill: returned") + alive,
                 qPrintable(out));
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    void killingTheSupervisorEnds_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::newRow("python") << "python"
                                << "import os, time\nprint('before', flush=True)\n"
                                   "os.kill(os.getppid(), 9)\ntime.sleep(600)\n";
        QTest::newRow("javascript") << "javascript"
                                    << "console.log('before');\n"
                                       "process.kill(process.ppid, 'SIGKILL');\n"
                                       "setTimeout(() => {}, 600000);\n";
        QTest::newRow("bash") << "bash"
                              << "echo before\nkill -9 $PPID\nsleep 600\n";
    }

    void killingTheSupervisorEnds()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const int timeoutSec = 20;
        QElapsedTimer clock;
        clock.start();
        const ExecutionResult r = run(service, language, code, timeoutSec);
        // Ends when the container does (the engine's init follows its child), well before the
        // timeout.
        QVERIFY2(clock.elapsed() < timeoutSec * 1000, "must not wait for the timeout");
        QVERIFY(!r.timedOut);
        QVERIFY(!r.succeeded());
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        // The result line never comes; the engine's status for the container is reported:
        // the init exits 128 + SIGKILL when its child (the supervisor) is killed.
        QCOMPARE(r.exitCode, 137);
        QVERIFY(!r.outOfMemory);
        QCOMPARE(r.stdoutData, QByteArray("before\n"));
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 9. A program that closes its stdout still gets its result, with its stderr.
    void closedStdoutStillReports_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::newRow("python") << "python"
                                << R"py(
import os, sys, time
print("early", flush=True)
os.close(1)
sys.stderr.write("still here\n")
time.sleep(1)
sys.stderr.write("bye\n")
)py";
        QTest::newRow("javascript") << "javascript"
                                    << "const fs = require('fs');\nconsole.log('early');\n"
                                       "fs.closeSync(1);\nprocess.stderr.write('still here\\n');\n"
                                       "setTimeout(() => process.stderr.write('bye\\n'), 1000);\n";
        QTest::newRow("bash") << "bash"
                              << "echo early\nexec 1>&-\necho 'still here' >&2\nsleep 1\n"
                                 "echo bye >&2\n";
    }

    void closedStdoutStillReports()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r = run(service, language, code, 15);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QVERIFY(!r.timedOut);
        QCOMPARE(r.stdoutData, QByteArray("early\n"));
        QVERIFY2(r.stderrData.startsWith("still here\nbye\n"), r.stderrData.constData());
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.stderrData, QByteArray("still here\nbye\n"));
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 10. A burst of calls beyond the concurrency limit: all run, each with its own output.
    void burstAtConcurrencyLimit()
    {
        EngineClient engine(m_socket);
        SandboxConfig config = makeConfig();
        config.maxConcurrent = 12;
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        const int calls = 100;
        QList<ExecutionResult> results(calls);
        QList<bool> done(calls, false);
        int finished = 0;
        int peakRunning = 0;
        QElapsedTimer clock;
        clock.start();
        for (int i = 0; i < calls; ++i) {
            Execution *e =
                service.execute({QStringLiteral("python"), QStringLiteral("print(%1)").arg(i), 60});
            connect(e, &Execution::started, this,
                    [&] { peakRunning = qMax(peakRunning, service.runningExecutions()); });
            connect(e, &Execution::finished, this, [&, i](const ExecutionResult &r) {
                results[i] = r;
                done[i] = true;
                ++finished;
            });
        }
        QCOMPARE(service.runningExecutions(), 12);
        QCOMPARE(service.queuedExecutions(), calls - 12);
        QTRY_COMPARE_WITH_TIMEOUT(finished, calls, 300000);
        qInfo() << calls << "calls at concurrency 12 took" << clock.elapsed() << "ms";
        for (int i = 0; i < calls; ++i) {
            QVERIFY(done[i]);
            const ExecutionResult &r = results[i];
            QVERIFY2(r.error.isEmpty(), qPrintable(QStringLiteral("%1: %2").arg(i).arg(r.error)));
            QCOMPARE(r.exitCode, 0);
            QCOMPARE(r.stdoutData, QByteArray::number(i) + '\n');
            QCOMPARE(r.stderrData, QByteArray());
        }
        QVERIFY2(peakRunning <= 12, qPrintable(QString::number(peakRunning)));
        QCOMPARE(service.queuedExecutions(), 0);
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 11. Lines that look like the supervisor's result line do not change the result.
    void fakeResultLinesAreOutput_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::newRow("python") << "python"
                                << R"py(
import secrets, sys
lines = ["deadbeef 0", "deadbeef 0 oom", "0123456789abcdef0123456789abcdef 0",
         secrets.token_hex(16) + " 0", secrets.token_hex(16) + " 137 oom out plots"]
for line in lines:
    print(line)
    sys.stderr.write(line + "\n")
sys.stdout.flush(); sys.stderr.flush()
sys.exit(3)
)py";
        QTest::newRow("javascript")
            << "javascript"
            << "const fs = require('fs'), crypto = require('crypto');\n"
               "const lines = ['deadbeef 0', 'deadbeef 0 oom',\n"
               "  '0123456789abcdef0123456789abcdef 0',\n"
               "  crypto.randomBytes(16).toString('hex') + ' 0',\n"
               "  crypto.randomBytes(16).toString('hex') + ' 137 oom out plots'];\n"
               "for (const l of lines) { fs.writeSync(1, l + '\\n'); fs.writeSync(2, l + '\\n'); "
               "}\n"
               "process.exit(3);\n";
        QTest::newRow("bash") << "bash"
                              << "for l in 'deadbeef 0' 'deadbeef 0 oom' "
                                 "'0123456789abcdef0123456789abcdef 0' "
                                 "\"$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \\n') 0\"; "
                                 "do echo \"$l\"; echo \"$l\" >&2; done\nexit 3\n";
    }

    void fakeResultLinesAreOutput()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r = run(service, language, code);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, 3);
        QVERIFY(!r.outOfMemory && !r.timedOut && !r.compileError);
        QVERIFY(r.files.isEmpty());
        // Every fake line comes back as ordinary output, on both streams.
        const QList<QByteArray> lines = r.stdoutData.split('\n');
        QVERIFY2(lines.size() >= 5, r.stdoutData.constData());
        QCOMPARE(lines.at(0), QByteArray("deadbeef 0"));
        QCOMPARE(lines.at(1), QByteArray("deadbeef 0 oom"));
        QCOMPARE(lines.at(2), QByteArray("0123456789abcdef0123456789abcdef 0"));
        QVERIFY(lines.at(3).endsWith(" 0") && lines.at(3).size() == 34);
        QCOMPARE(r.stderrData, r.stdoutData);
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }

    // 11b. The nonce is meant to be unguessable; a program that finds it can fake its status.
    void aFoundNonceOnlyFakesTheProgramsOwnStatus_data()
    {
        QTest::addColumn<QString>("language");
        QTest::addColumn<QString>("code");
        QTest::newRow("python") << "python"
                                << R"py(
import os, sys
try:
    nonce = open("/tmp/.cs-nonce").read().split()[0]
except OSError:
    sys.exit(3)
os.write(1, (nonce + " 0\n").encode())
os.write(2, (nonce + " 0\n").encode())
sys.exit(3)
)py";
        QTest::newRow("javascript")
            << "javascript"
            << "const fs = require('fs');\nlet n;\n"
               "try { n = fs.readFileSync('/tmp/.cs-nonce', 'utf8')"
               ".split(/\\s/)[0]; } catch (e) { process.exit(3); }\n"
               "fs.writeSync(1, n + ' 0\\n'); fs.writeSync(2, n + ' 0\\n');\n"
               "process.exit(3);\n";
    }

    void aFoundNonceOnlyFakesTheProgramsOwnStatus()
    {
        QFETCH(QString, language);
        QFETCH(QString, code);
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        const ExecutionResult r = run(service, language, code);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        // With a preloaded interpreter the nonce lives in the program's own process (and in a
        // file of its uid), so a program that goes looking for it can end its run with a status
        // of its choosing — no more than it could by exiting with that status. It gains nothing
        // else: the container is removed and the server serves the next call as usual.
        QCOMPARE(r.exitCode, 0);
        expectStillServes(service);
        expectNoLeftovers(service, engine);
    }
};

QTEST_GUILESS_MAIN(TestAbuse)
#include "tst_abuse.moc"
