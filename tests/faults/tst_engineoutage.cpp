// The container engine missing at start, and going away in the middle of a run and coming back.
// The service talks to the real engine through EngineProxy, which can cut every connection and
// stop listening (an engine stopped) and listen again on the same path (the engine restarted).

#include "containerpool.h"
#include "dockerbackend.h"
#include "engineclient.h"
#include "enginefakes.h"
#include "enginelocator.h"
#include "enginereply.h"
#include "execution.h"
#include "executionrequest.h"
#include "leftoversweeper.h"
#include "runnetwork.h"
#include "sandboxservice.h"
#include "sandboxsite.h"
#include "sandboxspec.h"

#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUuid>
#include <cstring>
#include <memory>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace {
constexpr int kFastMs = 3000; // "fails fast": a call against a missing engine
}

class TestEngineOutage : public QObject
{
    Q_OBJECT

private:
    SandboxConfig makeConfig(int poolSize = 0)
    {
        SandboxConfig c;
        c.instanceId =
            QStringLiteral("faults-") + QUuid::createUuid().toString(QUuid::WithoutBraces);
        m_instances.append(c.instanceId);
        c.poolSize = poolSize;
        c.warmLanguages = {QStringLiteral("python")};
        return c;
    }

    // Runs and waits at most `boundMs`; `ms` gets the time taken, -1 when it did not finish.
    ExecutionResult run(SandboxService &service, const ExecutionRequest &request, int boundMs,
                        qint64 *ms = nullptr)
    {
        QElapsedTimer clock;
        clock.start();
        Execution *e = service.execute(request);
        QSignalSpy spy(e, &Execution::finished);
        const bool done = spy.wait(boundMs);
        if (ms)
            *ms = done ? clock.elapsed() : -1;
        return done ? spy.first().first().value<ExecutionResult>() : ExecutionResult{};
    }

    ExecutionResult python(SandboxService &service, const QString &code, qint64 *ms = nullptr)
    {
        return run(service, {QStringLiteral("python"), code, 20}, 60000, ms);
    }

    // A call while the engine is missing: fast, and the error says where and what to do.
    void expectUnreachable(const ExecutionResult &r, qint64 ms, const QString &socket)
    {
        QVERIFY2(ms >= 0, "the call did not finish");
        QVERIFY2(ms < kFastMs, qPrintable(QStringLiteral("took %1 ms").arg(ms)));
        QVERIFY(!r.succeeded());
        QVERIFY2(r.error.contains(QStringLiteral("cannot reach the container engine at ") + socket),
                 qPrintable(r.error));
        QVERIFY2(r.error.contains(u"Is Docker running?") && r.error.contains(u"--engine"),
                 qPrintable(r.error));
    }

    // Containers of `instance` the real engine still has; removes them, and returns how many.
    int sweepLeftovers(const QString &instance)
    {
        EngineClient engine(m_real);
        const QStringList ids = LeftoverSweeper::containersOf(engine, instance);
        LeftoverSweeper::sweep(m_real, instance);
        const QStringList after = LeftoverSweeper::containersOf(engine, instance);
        if (!after.isEmpty())
            qWarning() << "could not sweep" << after;
        return int(ids.size());
    }

    QString m_real;
    QTemporaryDir m_dir;
    QStringList m_instances;

private Q_SLOTS:
    void initTestCase()
    {
        qRegisterMetaType<ExecutionResult>();
        QVERIFY(m_dir.isValid());
        m_real = EngineLocator::locate(QString()).socketPath;
        EngineClient engine(m_real);
        EngineReply *r = engine.ping();
        QSignalSpy spy(r, &EngineReply::finished);
        QVERIFY(spy.wait(10000));
        QVERIFY2(r->ok(), qPrintable(QStringLiteral("no container engine at %1: %2")
                                         .arg(m_real, r->error().toString())));
    }

    void cleanup() { LeftoverSweeper::sweepAfterFailure(m_real, m_instances); }

    // 1. Nothing listens where the engine should be. Every kind of call fails at once, saying
    // which socket and how to fix it — with the pool on and warming, as the server starts.
    void unreachableAtStart_data()
    {
        QTest::addColumn<QString>("socket");
        QTest::addColumn<bool>("staleFile");
        QTest::addColumn<QString>("reason");
        QTest::newRow("no socket file")
            << m_dir.filePath(QStringLiteral("none.sock")) << false << "no socket there";
        QTest::newRow("stale socket file, nobody listening")
            << m_dir.filePath(QStringLiteral("stale.sock")) << true << "connection refused";
        QTest::newRow("no such directory")
            << QStringLiteral("/nonexistent/run/docker.sock") << false << "no socket there";
    }

    void unreachableAtStart()
    {
        QFETCH(QString, socket);
        QFETCH(bool, staleFile);
        QFETCH(QString, reason);
        int fd = -1;
        if (staleFile) {
            // What a crashed engine leaves: the socket file, bound but not listening.
            fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
            sockaddr_un addr{};
            addr.sun_family = AF_UNIX;
            const QByteArray p = QFile::encodeName(socket);
            std::strncpy(addr.sun_path, p.constData(), sizeof addr.sun_path - 1);
            QVERIFY(::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
        }
        const auto closeFd = qScopeGuard([fd, socket] {
            if (fd >= 0) {
                ::close(fd);
                QFile::remove(socket);
            }
        });

        EngineClient engine(socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig(2));
        service.reapOrphans();
        service.warmUp();

        qint64 ms = 0;
        ExecutionResult r = python(service, QStringLiteral("print(1)"), &ms);
        expectUnreachable(r, ms, socket);
        QVERIFY2(r.error.contains(reason), qPrintable(r.error));
        qInfo().noquote() << "error:" << r.error;

        r = run(service, {QStringLiteral("javascript"), QStringLiteral("console.log(1)")}, 60000,
                &ms);
        expectUnreachable(r, ms, socket);

        ExecutionRequest withFiles(QStringLiteral("python"), QStringLiteral("print(1)"));
        withFiles.files = {{QStringLiteral("data/in.txt"), "x"}};
        r = run(service, withFiles, 60000, &ms);
        expectUnreachable(r, ms, socket);

        // The same engine error for library installs.
        QElapsedTimer clock;
        clock.start();
        Execution *install = service.runInstall(
            service.sites().first(), *service.languages().find(QStringLiteral("python")),
            QStringLiteral("cs-faults-never-created"), QStringLiteral("true"));
        QSignalSpy installed(install, &Execution::finished);
        QVERIFY(installed.wait(kFastMs));
        const auto ir = installed.first().first().value<ExecutionResult>();
        QVERIFY2(ir.error.contains(u"could not create the library volume: cannot reach the "
                                   u"container engine at ") &&
                     ir.error.contains(socket),
                 qPrintable(ir.error));

        // languageVersion() reports failure as an empty version, at once.
        bool answered = false;
        QString version = QStringLiteral("unset");
        clock.restart();
        service.languageVersion(QStringLiteral("python"), [&](const QString &v) {
            answered = true;
            version = v;
        });
        QTRY_VERIFY_WITH_TIMEOUT(answered, kFastMs);
        QCOMPARE(version, QString());

        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, kFastMs);
        QCOMPARE(service.runningExecutions(), 0);
    }

    // 1b. The engine comes up after the server: the next call uses it, without a restart.
    void unreachableAtStartThenUp()
    {
        EngineProxy proxy(m_dir.filePath(QStringLiteral("late.sock")), m_real);
        EngineClient engine(proxy.path());
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        qint64 ms = 0;
        ExecutionResult r = python(service, QStringLiteral("print(1)"), &ms);
        expectUnreachable(r, ms, proxy.path());

        QVERIFY(proxy.start());
        r = python(service, QStringLiteral("print('up')"), &ms);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.stdoutData, QByteArray("up\n"));
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, 15000);
        QCOMPARE(sweepLeftovers(service.config().instanceId), 0);
    }

    // 1c. The engine creates a container but its answer never comes (the client gives up
    // waiting): the call fails, and the container the engine made anyway is found by its name
    // and removed, though nobody learnt its id.
    void createAnsweredTooLate()
    {
        EngineProxy proxy(m_dir.filePath(QStringLiteral("slow.sock")), m_real);
        QVERIFY(proxy.start());
        EngineClient engine(proxy.path());
        engine.setRequestTimeout(2000);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
        proxy.setDropCreateAnswers(true);
        const ExecutionResult r = python(service, QStringLiteral("print(1)"));
        QVERIFY(!r.succeeded());
        QVERIFY2(r.error.contains(u"did not answer"), qPrintable(r.error));
        proxy.setDropCreateAnswers(false);

        EngineClient real(m_real);
        const QString instance = service.config().instanceId;
        QCOMPARE(LeftoverSweeper::containersOf(real, instance).size(), 1);
        QTRY_COMPARE_WITH_TIMEOUT(LeftoverSweeper::containersOf(real, instance).size(), 0, 20000);
        // The next call is unaffected.
        const ExecutionResult next = python(service, QStringLiteral("print('next')"));
        QVERIFY2(next.error.isEmpty(), qPrintable(next.error));
        QCOMPARE(next.stdoutData, QByteArray("next\n"));
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, 15000);
        QCOMPARE(sweepLeftovers(instance), 0);
    }

    // 2. The engine stops while a program runs, stays away for a while, and comes back.
    void engineStoppedMidRunAndBack()
    {
        EngineProxy proxy(m_dir.filePath(QStringLiteral("engine.sock")), m_real);
        QVERIFY(proxy.start());
        EngineClient engine(proxy.path());
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());

        // Up and negotiated, with kept-alive connections to lose.
        ExecutionResult r = python(service, QStringLiteral("print('before')"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.stdoutData, QByteArray("before\n"));

        Execution *longRun = service.execute(
            {QStringLiteral("python"),
             QStringLiteral("import time; print('up', flush=True); time.sleep(30)"), 60});
        QByteArray printed;
        connect(longRun, &Execution::output, this,
                [&printed](int, const QByteArray &bytes) { printed += bytes; });
        QSignalSpy finished(longRun, &Execution::finished);
        // (print() may send "up" and the newline as two frames)
        QTRY_COMPARE_WITH_TIMEOUT(printed, QByteArray("up\n"), 30000);

        // The engine goes away.
        QElapsedTimer clock;
        clock.start();
        proxy.stop();
        QVERIFY2(finished.wait(10000), "the running call hung after the engine went away");
        const qint64 endedMs = clock.elapsed();
        const auto cut = finished.first().first().value<ExecutionResult>();
        qInfo().noquote() << "running call, engine gone after" << endedMs << "ms:" << cut.error;
        QVERIFY2(endedMs < kFastMs, qPrintable(QString::number(endedMs)));
        QVERIFY(!cut.succeeded());
        QVERIFY(!cut.timedOut);
        QCOMPARE(cut.stdoutData, QByteArray("up\n"));
        QVERIFY2(!cut.error.isEmpty(), "a run cut by the engine's end must say so");
        QVERIFY2(cut.error.contains(u"engine"), qPrintable(cut.error));

        // While it is away, calls fail at once and say why.
        for (int i = 0; i < 2; ++i) {
            qint64 ms = 0;
            r = python(service, QStringLiteral("print(1)"), &ms);
            expectUnreachable(r, ms, proxy.path());
        }
        EngineReply *ping = engine.ping();
        QSignalSpy pinged(ping, &EngineReply::finished);
        QVERIFY(pinged.wait(kFastMs));
        QCOMPARE(ping->error().kind, EngineError::Kind::Unreachable);

        // Back on the same path: the same service and client carry on.
        QVERIFY(proxy.start());
        r = python(service, QStringLiteral("print('after')"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.stdoutData, QByteArray("after\n"));
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, 15000);
        QCOMPARE(service.runningExecutions(), 0);

        // The container of the cut run could not be removed while the engine was away; its
        // removal is retried until the engine is back, so nothing is left.
        const int leftovers = sweepLeftovers(service.config().instanceId);
        qInfo() << "containers left behind by the outage:" << leftovers;
        QVERIFY2(leftovers <= 1, "more than the cut run's container was left behind");
        QCOMPARE(leftovers, 0);
    }

    // 2b. The same with a warm pool: the pooled containers die with their streams, refills fail
    // while the engine is away, and the pool fills again once it is back.
    void engineStoppedWithWarmPool()
    {
        EngineProxy proxy(m_dir.filePath(QStringLiteral("pooled.sock")), m_real);
        QVERIFY(proxy.start());
        EngineClient engine(proxy.path());
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig(1));
        QVERIFY(service.pool());
        service.pool()->setRetryDelayMs(200);
        const Language &py = *service.languages().find(QStringLiteral("python"));
        const SandboxSpec spec = SandboxSpec::forRun(py, py.image, service.config(),
                                                     RunNetwork::decide(service.config()));
        service.warmUp();
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(spec), 1, 30000);

        proxy.stop();
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(spec), 0, kFastMs);
        QTest::qWait(1000); // refills fail meanwhile
        qint64 ms = 0;
        ExecutionResult r = python(service, QStringLiteral("print(1)"), &ms);
        expectUnreachable(r, ms, proxy.path());

        QVERIFY(proxy.start());
        // The pool's retry (backing off from 200 ms) fills it again, without a call.
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(spec), 1, 30000);
        r = python(service, QStringLiteral("print('after')"));
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.stdoutData, QByteArray("after\n"));

        service.pool()->clear();
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, 15000);
        const int leftovers = sweepLeftovers(service.config().instanceId);
        qInfo() << "containers left behind by the outage (warm pool):" << leftovers;
        QVERIFY2(leftovers <= 1, "more than the pooled container was left behind");
        QCOMPARE(leftovers, 0);
    }

    // 3. Of two engines, one is slow to answer its health questions (a busy machine): no new
    // run goes there meanwhile, but the runs it has finish. One that stops answering altogether
    // fails its runs after SandboxSite::kGiveUpMs, saying so, and the other engine's go on.
    void slowEngineKeepsItsRuns()
    {
        EngineProxy proxy(m_dir.filePath(QStringLiteral("slowping.sock")), m_real);
        QVERIFY(proxy.start());
        EngineClient slowEngine(proxy.path());
        EngineClient otherEngine(m_real);
        DockerBackend slow(&slowEngine);
        DockerBackend other(&otherEngine);
        SandboxService service({&slow, &other}, LanguageRegistry::builtIn(), makeConfig());
        SandboxSite *site = service.sites().first();
        QTRY_VERIFY_WITH_TIMEOUT(site->state() == SandboxSite::State::Up, 15000);

        // Both idle: the first run goes to the first engine, the second to the other.
        const auto startTwo = [&](const QString &code) {
            QList<QPair<QPointer<Execution>, std::shared_ptr<QByteArray>>> runs;
            for (int i = 0; i < 2; ++i) {
                Execution *e = service.execute({QStringLiteral("python"), code, 120});
                auto printed = std::make_shared<QByteArray>();
                connect(e, &Execution::output, e,
                        [printed](int, const QByteArray &bytes) { *printed += bytes; });
                runs.append({e, printed});
            }
            return runs;
        };
        auto runs = startTwo(
            QStringLiteral("import time\nprint('up', flush=True)\ntime.sleep(8)\nprint('done')"));
        QSignalSpy first(runs[0].first, &Execution::finished);
        QSignalSpy second(runs[1].first, &Execution::finished);
        QTRY_VERIFY_WITH_TIMEOUT(
            runs[0].second->startsWith("up") && runs[1].second->startsWith("up"), 60000);
        QCOMPARE(site->running(), 1);

        proxy.setPingDelayMs(6000);
        QTRY_VERIFY_WITH_TIMEOUT(site->state() == SandboxSite::State::Down, 15000);
        QVERIFY2(site->error().contains(u"did not answer within"), qPrintable(site->error()));
        QVERIFY(first.count() == 1 || first.wait(60000));
        QVERIFY(second.count() == 1 || second.wait(60000));
        for (const QSignalSpy *spy : {&first, &second}) {
            const auto r = spy->first().first().value<ExecutionResult>();
            QVERIFY2(r.succeeded(), qPrintable(r.error));
            QCOMPARE(r.stdoutData, QByteArray("up\ndone\n"));
        }
        // Its late answer counts: it is Up again without any change.
        QTRY_VERIFY_WITH_TIMEOUT(site->state() == SandboxSite::State::Up, 30000);

        // Silent from now on: its run fails, naming the engine and why; the other's goes on.
        proxy.setPingDelayMs(0);
        runs = startTwo(QStringLiteral("import time\nprint('up', flush=True)\ntime.sleep(600)"));
        QSignalSpy lost(runs[0].first, &Execution::finished);
        QSignalSpy kept(runs[1].first, &Execution::finished);
        QTRY_VERIFY_WITH_TIMEOUT(
            runs[0].second->startsWith("up") && runs[1].second->startsWith("up"), 60000);
        QCOMPARE(site->running(), 1);
        proxy.setPingDelayMs(-1);
        QVERIFY(lost.wait(SandboxSite::kGiveUpMs + 30000));
        const auto r = lost.first().first().value<ExecutionResult>();
        QVERIFY(!r.succeeded());
        QVERIFY2(r.error.contains(proxy.path()) && r.error.contains(u"has not answered for"),
                 qPrintable(r.error));
        QCOMPARE(kept.count(), 0);
        runs[1].first->cancel();
        QVERIFY(kept.count() == 1 || kept.wait(30000));

        proxy.setPingDelayMs(0);
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, 30000);
        QCOMPARE(sweepLeftovers(service.config().instanceId), 0);
    }
};

QTEST_GUILESS_MAIN(TestEngineOutage)
#include "tst_engineoutage.moc"
