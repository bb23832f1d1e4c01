// The warm pool against the real engine: isolation between pooled runs, bursts beyond the pool
// and the concurrency limit, refilling, and removal of pooled containers at shutdown.

#include "containerpool.h"
#include "dockerbackend.h"
#include "engineclient.h"
#include "enginereply.h"
#include "enginetestcase.h"
#include "execution.h"
#include "imagescripts.h"
#include "runnetwork.h"
#include "sandboxservice.h"
#include "sandboxsite.h"
#include "sandboxspec.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTest>
#include <QUrl>
#include <QUuid>

class TestContainerPool : public EngineTestCase
{
    Q_OBJECT

private:
    SandboxConfig makeConfig(int poolSize, int maxConcurrent = 0, int poolMax = 0)
    {
        SandboxConfig c = newConfig();
        c.poolSize = poolSize;
        c.maxConcurrent = maxConcurrent;
        c.poolMax = poolMax;
        return c;
    }

    // `count` programs at once; every answer checked. Returns how many got a warm container.
    int burst(SandboxService &service, int count, const QString &tag)
    {
        const int warmBefore = service.pool()->warmTakes();
        QList<QSharedPointer<QSignalSpy>> spies;
        for (int i = 0; i < count; ++i) {
            Execution *e = service.execute(
                {QStringLiteral("python"), QStringLiteral("print('%1', %2)").arg(tag).arg(i), 60});
            spies.append(QSharedPointer<QSignalSpy>::create(e, &Execution::finished));
        }
        for (int i = 0; i < count; ++i) {
            if (spies[i]->count() == 0 && !spies[i]->wait(120000))
                return -1;
            const auto r = spies[i]->first().first().value<ExecutionResult>();
            if (!r.error.isEmpty() || r.exitCode != 0 ||
                QString::fromUtf8(r.stdoutData) != QStringLiteral("%1 %2\n").arg(tag).arg(i))
                return -1;
        }
        return service.pool()->warmTakes() - warmBefore;
    }

    SandboxSpec pythonSpec(const SandboxService &service)
    {
        const Language *python = service.languages().find(QStringLiteral("python"));
        return SandboxSpec::forRun(*python, python->image, service.config(),
                                   RunNetwork::decide(service.config()));
    }

    ExecutionResult run(SandboxService &service, const QString &code)
    {
        return resultOf(service.execute({QStringLiteral("python"), code, 30}), 90000);
    }

    QStringList engineContainers(EngineClient &engine, const QString &instance)
    {
        return LeftoverSweeper::containersOf(engine, instance);
    }

    void shutDownClean(SandboxService &service, EngineClient &engine)
    {
        QSignalSpy done(&service, &SandboxService::shutdownFinished);
        service.shutdown();
        QVERIFY(done.wait(20000));
        QCOMPARE(service.activeContainers(), 0);
        QCOMPARE(engineContainers(engine, service.config().instanceId), QStringList());
        // Their work volumes too, even those of sandboxes removed from outside.
        QCOMPARE(LeftoverSweeper::volumesOf(engine, service.config().instanceId), QStringList());
    }

    // The engine's answer to a GET, as JSON; empty when it has none.
    static QJsonObject getJson(EngineClient &engine, const QByteArray &path)
    {
        EngineReply *r = engine.get(path);
        QSignalSpy s(r, &EngineReply::finished);
        if (!s.wait(10000) || !r->ok())
            return {};
        return r->json();
    }

    // An image ID as both engines write it (Podman without the "sha256:").
    static QString imageId(const QString &id)
    {
        return id.startsWith(QLatin1String("sha256:")) ? id.mid(7) : id;
    }

    // The instance's containers for `language`: id -> [the ID of the image it runs, the name it
    // was made from, the supervisor's argument of `sh -c`].
    QHash<QString, QStringList> sandboxesOf(EngineClient &engine, SandboxService &service,
                                            const QString &language)
    {
        QHash<QString, QStringList> out;
        for (const QString &id : engineContainers(engine, service.config().instanceId)) {
            const QJsonObject c = getJson(engine, "/containers/" + id.toLatin1() + "/json");
            const QJsonObject config = c.value(u"Config").toObject();
            if (config.value(u"Labels").toObject().value(u"code-sandbox.language").toString() !=
                language)
                continue;
            out.insert(id,
                       {imageId(c.value(u"Image").toString()), config.value(u"Image").toString(),
                        config.value(u"Cmd").toArray().at(2).toString()});
        }
        return out;
    }

    SandboxSpec specFor(const SandboxService &service, const QString &language)
    {
        const Language *l = service.languages().find(language);
        return SandboxSpec::forRun(*l, l->image, service.config(),
                                   RunNetwork::decide(service.config()));
    }

    // Runs `code` in the instance's one warm `language` sandbox once it is the only sandbox of
    // that language (the used ones gone); `sandbox` gets what sandboxesOf says of it.
    void runInTheWarmOne(EngineClient &engine, SandboxService &service, const QString &language,
                         const QString &code, ExecutionResult *result, QStringList *sandbox)
    {
        QHash<QString, QStringList> warm;
        QTRY_VERIFY_WITH_TIMEOUT(service.pool()->warmCount(specFor(service, language)) == 1 &&
                                     (warm = sandboxesOf(engine, service, language)).size() == 1,
                                 30000);
        *sandbox = warm.cbegin().value();
        *result = resultOf(service.execute({language, code, 30}), 90000);
        QVERIFY2(
            warm.cbegin().key().startsWith(result->containerId.left(12)),
            qPrintable(result->containerId + QStringLiteral(" is not ") + warm.cbegin().key()));
    }

private Q_SLOTS:
    void pooledRunSeesNothingOfAnEarlierOne()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig(1));
        service.warmUp();
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(pythonSpec(service)), 1, 30000);
        const ExecutionResult first = run(service, QStringLiteral(R"py(
import os, socket
open("/sandbox/left-behind", "w").write("secret")
open("/tmp/left-behind", "w").write("secret")
os.environ["LEAK"] = "1"
print(socket.gethostname())
)py"));
        QCOMPARE(first.exitCode, 0);
        // The next run gets the container the pool started while the first one ran.
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(pythonSpec(service)), 1, 30000);
        const ExecutionResult second = run(service, QStringLiteral(R"py(
import os, socket
print(os.path.exists("/sandbox/left-behind"), os.path.exists("/tmp/left-behind"),
      "LEAK" in os.environ, sorted(os.listdir("/sandbox")))
print(socket.gethostname())
)py"));
        QCOMPARE(second.exitCode, 0);
        const QStringList lines = QString::fromUtf8(second.stdoutData).split(u'\n');
        QCOMPARE(lines.value(0), QStringLiteral("False False False ['main.py', 'outputs']"));
        QVERIFY(lines.value(1) != QString::fromUtf8(first.stdoutData).trimmed());
        QVERIFY(first.containerId != second.containerId);
        shutDownClean(service, engine);
    }

    void burstBeyondPoolAndLimit()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        // The pool may not grow here (--pool-max 2): the burst is beyond pool and limit.
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig(2, 4, 2));
        service.warmUp();
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(pythonSpec(service)), 2, 30000);
        QList<Execution *> executions;
        QList<QSharedPointer<QSignalSpy>> spies;
        int queuedSignals = 0;
        for (int i = 0; i < 12; ++i) {
            Execution *e = service.execute(
                {QStringLiteral("python"),
                 QStringLiteral("import time; time.sleep(0.3); print(%1 * 7)").arg(i), 60});
            connect(e, &Execution::queued, this, [&queuedSignals] { ++queuedSignals; });
            spies.append(QSharedPointer<QSignalSpy>::create(e, &Execution::finished));
            executions.append(e);
        }
        QVERIFY(service.runningExecutions() <= 4);
        QCOMPARE(service.queuedExecutions(), 8);
        for (int i = 0; i < 12; ++i) {
            QVERIFY(spies[i]->count() == 1 || spies[i]->wait(120000));
            const auto r = spies[i]->first().first().value<ExecutionResult>();
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QCOMPARE(r.exitCode, 0);
            QCOMPARE(QString::fromUtf8(r.stdoutData), QString::number(i * 7) + u'\n');
        }
        QVERIFY(queuedSignals >= 8); // each queued call heard its place at least once
        // Never more pooled containers than its cap, even after the burst.
        QVERIFY(service.pool()->pooledCount(pythonSpec(service)) <= 2);
        QVERIFY(service.pool()->totalCount() <= 4); // two languages
        shutDownClean(service, engine);
    }

    void poolFollowsDemand()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        // Base 2, at most 6, four programs at once (the other two of a burst of 6 queue).
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig(2, 4, 6));
        // No quiet spell counts until the two bursts are through: on a loaded machine refilling
        // the pool can take longer than any short spell, and the pool would shrink between them.
        service.warmUp();
        const SandboxSpec spec = pythonSpec(service);
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(spec), 2, 30000);
        QCOMPARE(service.pool()->targetSize(spec), 2);

        // The first burst of 6 finds 2 warm; the pool learns it and grows to 6.
        const int firstWarm = burst(service, 6, QStringLiteral("first"));
        QVERIFY(firstWarm >= 0);
        QVERIFY2(firstWarm < 6, qPrintable(QString::number(firstWarm)));
        QCOMPARE(service.pool()->targetSize(spec), 6);
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(spec), 6, 60000);

        // The next burst of 6 is served warm, every call of it.
        QCOMPARE(burst(service, 6, QStringLiteral("second")), 6);
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(spec), 6, 60000);

        // A quiet spell (made short now): back to the base, the surplus removed from the engine.
        service.pool()->setShrinkAfterMs(1000);
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->targetSize(spec), 2, 20000);
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->pooledCount(spec), 2, 20000);
        // (two python, two javascript)
        QTRY_COMPARE_WITH_TIMEOUT(engineContainers(engine, service.config().instanceId).size(), 4,
                                  30000);
        shutDownClean(service, engine);
    }

    void usedContainersAreRemovedWhenCallsStopWaiting()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        // One program at a time: the second and third calls wait while the first runs.
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig(2, 1, 2));
        service.warmUp();
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(pythonSpec(service)), 2, 30000);
        SandboxSite *site = service.sites().first();
        QList<QSharedPointer<QSignalSpy>> spies;
        for (int i = 0; i < 3; ++i)
            spies.append(QSharedPointer<QSignalSpy>::create(
                service.execute({QStringLiteral("python"), QStringLiteral("print(%1)").arg(i), 30}),
                &Execution::finished));
        for (int i = 0; i < 3; ++i) {
            QVERIFY(spies[i]->count() == 1 || spies[i]->wait(60000));
            const auto r = spies[i]->first().first().value<ExecutionResult>();
            QCOMPARE(QString::fromUtf8(r.stdoutData), QString::number(i) + u'\n');
        }
        // While calls waited, no used container was removed: the engine's time went to them.
        QCOMPARE(site->deferredRemovals(), 3);
        // Quiet now: they go, and only the pool is left.
        QTRY_COMPARE_WITH_TIMEOUT(site->deferredRemovals(), 0, 5000);
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), service.pool()->totalCount(), 15000);
        shutDownClean(service, engine);
    }

    void usedContainerWaitsIdleForItsRemoval()
    {
        // A used sandbox is left up, idle, until its removal (the engine's teardown of it waits
        // for a quiet moment with the removal), and what its program left running is gone as
        // soon as the result is out.
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        // One program at a time: the second call waits while the first runs, then runs 3 s.
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig(2, 1, 2));
        service.warmUp();
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(pythonSpec(service)), 2, 30000);
        SandboxSite *site = service.sites().first();
        QSignalSpy first(service.execute({QStringLiteral("python"),
                                          QStringLiteral("import subprocess\n"
                                                         "subprocess.Popen(['sleep', '4242'])\n"
                                                         "print('left one behind')"),
                                          30}),
                         &Execution::finished);
        QSignalSpy second(service.execute({QStringLiteral("python"),
                                           QStringLiteral("import time\ntime.sleep(3)\n"
                                                          "print('done')"),
                                           30}),
                          &Execution::finished);
        QVERIFY(first.wait(60000));
        QCOMPARE(QString::fromUtf8(first.first().first().value<ExecutionResult>().stdoutData),
                 QStringLiteral("left one behind\n"));
        QTRY_COMPARE_WITH_TIMEOUT(site->deferredRemovals(), 1, 10000);
        // While the second runs: no container of the instance has stopped (the first one waits
        // for its removal; the others run or, refills, are still being made), and none runs the
        // sleep the first program started.
        const QStringList ids = engineContainers(engine, service.config().instanceId);
        QVERIFY(ids.size() >= 4);
        for (const QString &id : ids) {
            EngineReply *inspect = engine.get("/containers/" + id.toLatin1() + "/json");
            QSignalSpy i(inspect, &EngineReply::finished);
            QVERIFY(i.wait(10000));
            const QString status =
                inspect->json().value(u"State").toObject().value(u"Status").toString();
            QVERIFY2(status == u"running" || status == u"created", qPrintable(id + u' ' + status));
            if (status != u"running")
                continue;
            // The supervisor ends what the program left as soon as the program's interpreter
            // has exited, which follows its result line by a moment (longer on a busy machine):
            // the sleep goes within a few seconds (the container still waits for its removal, which
            // comes once the second call is done).
            const auto processes = [&engine, &id] {
                EngineReply *top = engine.get("/containers/" + id.toLatin1() + "/top");
                QSignalSpy t(top, &EngineReply::finished);
                if (!t.wait(10000) || !top->ok())
                    return QStringLiteral("(no answer: %1)").arg(top->error().toString());
                return QString::fromUtf8(top->body());
            };
            QTRY_VERIFY2_WITH_TIMEOUT(!processes().contains(u"sleep 4242"),
                                      qPrintable(processes().right(800)), 5000);
        }
        QVERIFY(second.count() == 1 || second.wait(60000));
        QTRY_COMPARE_WITH_TIMEOUT(site->deferredRemovals(), 0, 5000);
        shutDownClean(service, engine);
    }

    void killedPooledContainerIsReplaced()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig(2));
        service.warmUp();
        const SandboxSpec spec = pythonSpec(service);
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(spec), 2, 30000);
        const QStringList before = engineContainers(engine, service.config().instanceId);
        QCOMPARE(before.size(), 4); // two python, two javascript
        // Removed from outside as `docker rm -f` does, without its volumes: shutDownClean checks
        // that its work volume does not outlive the service.
        EngineReply *killed = engine.del("/containers/" + before.first().toLatin1() + "?force=1");
        QSignalSpy k(killed, &EngineReply::finished);
        QVERIFY(k.wait(10000));
        QVERIFY(killed->ok());
        QTRY_VERIFY_WITH_TIMEOUT(
            !engineContainers(engine, service.config().instanceId).contains(before.first()) &&
                engineContainers(engine, service.config().instanceId).size() == 4,
            30000);
        const ExecutionResult r = run(service, QStringLiteral("print('still fine')"));
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("still fine\n"));
        shutDownClean(service, engine);
    }

    void missingImageDoesNotSpin()
    {
        EngineClient engine(m_socket);
        LanguageRegistry languages = LanguageRegistry::builtIn();
        languages.setImage(QStringLiteral("python"), QStringLiteral("code-sandbox/missing:latest"));
        DockerBackend backend(&engine);
        SandboxService service(&backend, languages, makeConfig(2));
        service.pool()->setRetryDelayMs(200);
        service.warmUp();
        // Failed attempts back off (0.2 s, 0.4 s, 0.8 s …) and stop after a few.
        QTest::qWait(3000);
        const ExecutionResult r = run(service, QStringLiteral("print(1)"));
        QVERIFY2(r.error.contains(u"code-sandbox/missing:latest"), qPrintable(r.error));
        QCOMPARE(service.pool()->warmCount(pythonSpec(service)), 0);
        shutDownClean(service, engine);
    }

    void sandboxesRunTheImagesScripts()
    {
        // The images of containers/build-images.sh carry cs-run and the loaders and name them in a
        // label. Once the backend has read it, a sandbox's command names those files instead of
        // holding their text (about 40 KB that the engine would store and pass on for each
        // container), and the sandbox is made from that very image, by its ID.
        EngineClient engine(m_socket);
        const QStringList names = ImageScripts::names();
        QHash<QString, QString> ids;
        for (const auto &[image, loader] : {std::pair{"python", 1}, std::pair{"node", 2}}) {
            const QJsonObject info =
                getJson(engine, "/images/code-sandbox/" + QByteArray(image) + ":latest/json");
            const QStringList carried =
                ImageScripts::fromLabel(info.value(u"Config")
                                            .toObject()
                                            .value(u"Labels")
                                            .toObject()
                                            .value(QLatin1String(ImageScripts::kLabel))
                                            .toString());
            QVERIFY2(
                carried.contains(names.at(0)) && carried.contains(names.at(loader)),
                qPrintable(QStringLiteral("code-sandbox/%1:latest carries %2, not this "
                                          "build's %3: containers/build-images.sh %1")
                               .arg(QLatin1String(image), carried.join(u','), names.join(u','))));
            ids.insert(QLatin1String(image), imageId(info.value(u"Id").toString()));
        }
        DockerBackend backend(&engine);
        // One warm sandbox per language (the pool may not grow): the one each call gets.
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig(1, 0, 1));
        service.warmUp();
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(pythonSpec(service)), 1, 30000);
        // The pool's first sandboxes too, made as the server starts: their creates wait for the
        // engine's answer about the image (Podman's `top` hangs on the inline text's 64 KiB).
        const QString sourced = QStringLiteral(". /usr/local/share/code-sandbox/") + names.at(0);
        QStringList sandbox;
        ExecutionResult py;
        runInTheWarmOne(engine, service, QStringLiteral("python"),
                        QStringLiteral("import sys\nprint(sys.argv)\nsys.exit(3)"), &py, &sandbox);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(QStringList({sandbox.value(0), sandbox.value(2)}),
                 QStringList({ids.value("python"), sourced}));
        QCOMPARE(QString::fromUtf8(py.stdoutData), QStringLiteral("['main.py']\n"));
        QCOMPARE(py.exitCode, 3);
        // Tracebacks as `python3 main.py` prints them: the compiled loader is the one sent.
        ExecutionResult raised;
        runInTheWarmOne(engine, service, QStringLiteral("python"),
                        QStringLiteral("x = 1\nraise ValueError('no')"), &raised, &sandbox);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(QStringList({sandbox.value(0), sandbox.value(2)}),
                 QStringList({ids.value("python"), sourced}));
        QCOMPARE(QString::fromUtf8(raised.stderrData),
                 QStringLiteral("Traceback (most recent call last):\n  File "
                                "\"/sandbox/main.py\", line 2, in <module>\n    raise "
                                "ValueError('no')\nValueError: no\n"));
        ExecutionResult js;
        runInTheWarmOne(
            engine, service, QStringLiteral("javascript"),
            QStringLiteral("console.log(process.argv.slice(1), require.main === module)"), &js,
            &sandbox);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(QStringList({sandbox.value(0), sandbox.value(2)}),
                 QStringList({ids.value("node"), sourced}));
        QCOMPARE(QString::fromUtf8(js.stdoutData), QStringLiteral("[ '/sandbox/main.js' ] true\n"));
        QCOMPARE(js.exitCode, 0);
        shutDownClean(service, engine);
    }

    void imageWithoutTheScriptsGetsTheirText()
    {
        // Any image with a shell and the interpreter works: one whose label names none of this
        // build's scripts (here the python image, committed with the label changed) gets their
        // text on the command line, by its tag.
        EngineClient engine(m_socket);
        const QString instance = newConfig().instanceId;
        EngineReply *made = engine.post(
            "/containers/create", {{"Image", "code-sandbox/python:latest"},
                                   {"Cmd", QJsonArray{"true"}},
                                   {"Labels", QJsonObject{{"code-sandbox.instance", instance}}}});
        QSignalSpy m(made, &EngineReply::finished);
        QVERIFY(m.wait(10000));
        QVERIFY2(made->ok(), qPrintable(made->error().toString()));
        const QByteArray container = made->json().value(u"Id").toString().toLatin1();
        const QByteArray tag =
            "unlabelled-" + QUuid::createUuid().toByteArray(QUuid::Id128).left(12);
        // The label both ways: Docker takes the configuration's, Podman the change.
        EngineReply *commit = engine.post(
            "/commit?container=" + container + "&repo=code-sandbox/test&tag=" + tag + "&changes=" +
                QUrl::toPercentEncoding(QStringLiteral("LABEL %1=other-scripts")
                                            .arg(QLatin1String(ImageScripts::kLabel))),
            {{"Labels", QJsonObject{{QLatin1String(ImageScripts::kLabel), "other-scripts"}}}});
        QSignalSpy c(commit, &EngineReply::finished);
        QVERIFY(c.wait(30000));
        EngineReply *gone = engine.del("/containers/" + container + "?force=1");
        QSignalSpy g(gone, &EngineReply::finished);
        QVERIFY(g.wait(10000));
        QVERIFY2(commit->ok(), qPrintable(commit->error().toString()));
        const QString image = QStringLiteral("code-sandbox/test:") + QString::fromLatin1(tag);
        const auto removeImage = qScopeGuard([&engine, image] {
            EngineReply *r = engine.del("/images/" + image.toLatin1() + "?force=1");
            QSignalSpy s(r, &EngineReply::finished);
            s.wait(10000);
        });
        QCOMPARE(getJson(engine, "/images/" + image.toLatin1() + "/json")
                     .value(u"Config")
                     .toObject()
                     .value(u"Labels")
                     .toObject()
                     .value(QLatin1String(ImageScripts::kLabel))
                     .toString(),
                 QStringLiteral("other-scripts"));
        LanguageRegistry languages = LanguageRegistry::builtIn();
        languages.setImage(QStringLiteral("python"), image);
        DockerBackend backend(&engine);
        SandboxService service(&backend, languages, makeConfig(1, 0, 1));
        service.warmUp();
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(pythonSpec(service)), 1, 30000);
        QCOMPARE(run(service, QStringLiteral("print(1)")).exitCode, 0);
        QStringList sandbox;
        ExecutionResult r;
        runInTheWarmOne(engine, service, QStringLiteral("python"),
                        QStringLiteral("import sys\nprint(sys.argv)"), &r, &sandbox);
        if (QTest::currentTestFailed())
            return;
        // (Podman names it localhost/code-sandbox/test:…)
        QVERIFY2(sandbox.value(1).endsWith(image), qPrintable(sandbox.value(1)));
        QVERIFY2(sandbox.value(2).startsWith(QStringLiteral("#!/bin/sh\n# cs-run")),
                 qPrintable(sandbox.value(2).left(80)));
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("['main.py']\n"));
        shutDownClean(service, engine);
    }

    void poolZeroCreatesPerCall()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig(0));
        QVERIFY(service.pool() == nullptr);
        service.warmUp();
        QCOMPARE(engineContainers(engine, service.config().instanceId), QStringList());
        const ExecutionResult r = run(service, QStringLiteral("print(2)"));
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("2\n"));
        shutDownClean(service, engine);
    }
};

QTEST_GUILESS_MAIN(TestContainerPool)
#include "tst_containerpool.moc"
