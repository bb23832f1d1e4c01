// Imports paid ahead (PreloadPlanner, the loaders' "preload" line) against the real engine: what
// calls import is learned and imported by warm sandboxes while they wait, nothing of one call
// reaches another through it, --preload fixes the list, the memory budget and failing modules
// bound it, and a program's own module of the same name wins; for Python, and for Node
// (JavaScript's require(), TypeScript's import).

#include "containerpool.h"
#include "dockerbackend.h"
#include "engineclient.h"
#include "enginetestcase.h"
#include "execution.h"
#include "runnetwork.h"
#include "sandboxservice.h"
#include "sandboxspec.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QTest>

class TestPreload : public EngineTestCase
{
    Q_OBJECT

private:
    SandboxConfig config(const std::optional<QStringList> &preload = std::nullopt)
    {
        SandboxConfig c = newConfig();
        c.poolSize = 1;
        c.poolMax = 1; // (calls in quick succession would grow it)
        c.warmLanguages = {m_language};
        c.preload = preload;
        return c;
    }

    ExecutionResult run(SandboxService &service, const QString &code,
                        const QList<InputFile> &files = {})
    {
        ExecutionRequest request{m_language, code, 60};
        request.files = files;
        return resultOf(service.execute(request), 120000);
    }

    // The next run's sandbox is warm and has had the time to import what it was asked to: the
    // loader stops preloading when the program arrives, so an early call would see only part of
    // the list, and importing pandas and pyplot takes from about a second on a quiet 2-core
    // machine to many on a busy one. So it waits for the work to end, not for a time: until the
    // instance's running sandboxes (the warm one, and the last run's while it goes) each used
    // under 20 ms of CPU in two seconds in a row, by the engine's stats.
    void waitWarm(SandboxService &service)
    {
        const Language *language = service.languages().find(m_language);
        const SandboxSpec spec = SandboxSpec::forRun(*language, language->image, service.config(),
                                                     RunNetwork::decide(service.config()));
        QTRY_COMPARE_WITH_TIMEOUT(service.pool()->warmCount(spec), 1, 60000);
        EngineClient engine(m_socket);
        QHash<QString, qint64> last; // container id -> CPU used (ns) at the last look
        int quietSeconds = 0;
        QElapsedTimer waited;
        waited.start();
        while (quietSeconds < 2 && waited.elapsed() < 60000) {
            QHash<QString, qint64> now;
            for (const QString &id : runningOf(engine, service.config().instanceId))
                now.insert(id, cpuUsedNs(engine, id));
            bool quiet = !last.isEmpty();
            for (auto it = now.cbegin(); it != now.cend(); ++it)
                quiet =
                    quiet && last.contains(it.key()) && it.value() - last.value(it.key()) < kIdleNs;
            quietSeconds = quiet ? quietSeconds + 1 : 0;
            last = now;
            QTest::qWait(1000);
        }
        QVERIFY2(quietSeconds >= 2, "the warm sandbox was still busy after 60 s");
    }

    // Under this much CPU in a second, a sandbox is waiting, not importing.
    static constexpr qint64 kIdleNs = 20'000'000;

    static QStringList runningOf(EngineClient &engine, const QString &instance)
    {
        const QJsonObject filters{
            {QStringLiteral("label"),
             QJsonArray{QStringLiteral("code-sandbox.instance=") + instance}},
            {QStringLiteral("status"), QJsonArray{QStringLiteral("running")}}};
        EngineReply *r = engine.get("/containers/json?filters=" +
                                    QUrl::toPercentEncoding(QString::fromUtf8(
                                        QJsonDocument(filters).toJson(QJsonDocument::Compact))));
        QSignalSpy spy(r, &EngineReply::finished);
        QStringList ids;
        if (spy.wait(10000) && r->ok())
            for (const QJsonValue &v : QJsonDocument::fromJson(r->body()).array())
                ids.append(v.toObject().value(u"Id").toString());
        return ids;
    }

    // The CPU time a container has used, from one reading of its stats; 0 when it is gone.
    static qint64 cpuUsedNs(EngineClient &engine, const QString &id)
    {
        EngineReply *r =
            engine.get("/containers/" + id.toLatin1() + "/stats?stream=false&one-shot=true");
        QSignalSpy spy(r, &EngineReply::finished);
        if (!spy.wait(10000) || !r->ok())
            return 0;
        return r->json()
            .value(u"cpu_stats")
            .toObject()
            .value(u"cpu_usage")
            .toObject()
            .value(u"total_usage")
            .toInteger();
    }

    // `code` in a warm sandbox that got as far as importing all of `expected`. Should one not have
    // (a pause of the imports long enough to look idle, on a loaded machine), the next is tried,
    // at most three. The caller checks what came.
    ExecutionResult runPreloaded(SandboxService &service, const QString &code,
                                 const QStringList &expected, const QList<InputFile> &files = {})
    {
        ExecutionResult r;
        for (int attempt = 0; attempt < 3; ++attempt) {
            waitWarm(service);
            r = run(service, code, files);
            if (r.preloaded == expected)
                break;
            qWarning() << "preloaded" << r.preloaded << "of" << expected << "- trying again";
        }
        return r;
    }

    // The language the helpers run (init() sets Python).
    QString m_language;

    // What the program sees of the modules in question.
    static constexpr const char *kLoaded =
        "import sys\n"
        "print(sorted(m for m in ('numpy', 'pandas', 'matplotlib.pyplot') if m in sys.modules))\n"
        "print(getattr(sys.modules.get('pandas'), 'left_by_another_call', None))\n";

    // A JavaScript program: whether lodash or cheerio was loaded before its first line, whether
    // a property an earlier call set on lodash is there, and a result computed with both.
    static constexpr const char *kRequires =
        "const before = Object.keys(require.cache).filter((f) => "
        "/\\/(lodash|cheerio)\\//.test(f));\n"
        "const _ = require('lodash');\n"
        "const cheerio = require('cheerio');\n"
        "const $ = cheerio.load('<ul><li>a</li><li>b</li><li>c</li></ul>');\n"
        "const items = $('li').map((i, el) => $(el).text()).get();\n"
        "console.log(before.length > 0, _.leftByAnotherCall, _.chunk(items, 2).join('|'));\n"
        "_.leftByAnotherCall = 'secret';\n";

private Q_SLOTS:
    void init() { m_language = QStringLiteral("python"); }

    void learnsWhatCallsImportAndImportsItAhead()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config());
        service.warmUp();
        waitWarm(service);
        // Nothing learned yet: a warm sandbox imports nothing.
        ExecutionResult r = run(service, QString::fromLatin1(kLoaded));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("[]\nNone\n"));
        QCOMPARE(r.preloaded, QStringList());
        QCOMPARE(r.imports, QStringList());

        // Two calls import pandas (one in a function it calls) and change it.
        const QString usesPandas = QStringLiteral(R"py(
import pandas as pd
import json, os.path
pd.left_by_another_call = "secret"
def plot():
    from matplotlib import pyplot as plt
    return plt
plot()
print(pd.DataFrame({"a": range(1000)}).a.sum())
)py");
        for (int i = 0; i < 2; ++i) {
            r = run(service, usesPandas);
            QCOMPARE(r.exitCode, 0);
            QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("499500\n"));
            // The standard library's modules are not reported; `from matplotlib import pyplot`
            // is pyplot.
            QCOMPARE(r.imports,
                     QStringList({QStringLiteral("pandas"), QStringLiteral("matplotlib.pyplot")}));
        }
        // The sandbox the pool made during the second call was asked before it was learned:
        // one more call takes it.
        waitWarm(service);
        run(service, QStringLiteral("print(1)"));
        r = runPreloaded(service, QString::fromLatin1(kLoaded),
                         {QStringLiteral("matplotlib.pyplot"), QStringLiteral("pandas")});
        QCOMPARE(r.exitCode, 0);
        // Imported ahead, and fresh: nothing the earlier calls did to pandas is in it.
        QCOMPARE(QString::fromUtf8(r.stdoutData),
                 QStringLiteral("['matplotlib.pyplot', 'numpy', 'pandas']\nNone\n"));
        QCOMPARE(r.preloaded,
                 QStringList({QStringLiteral("matplotlib.pyplot"), QStringLiteral("pandas")}));
        QCOMPARE(r.preloadDropped, QStringList());
        for (const qint64 cost : r.preloadCosts)
            QVERIFY2(cost > 0 && cost < qint64(192) << 20, qPrintable(QString::number(cost)));

        // A run of pandas now is the one a live session would make: the import is done.
        r = run(service, usesPandas);
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("499500\n"));
        shutDown(service, engine);
    }

    void aFixedListFailingModulesAndTheMemoryBudget()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxConfig c =
            config(QStringList{QStringLiteral("no_such_module"), QStringLiteral("numpy"),
                               QStringLiteral("pandas"), QStringLiteral("matplotlib.pyplot")});
        // A quarter of 128 MiB: numpy (about 16 MiB) fits; pandas (24 more) is imported, as its
        // cost is not known yet, and takes the sandbox past it, so pyplot is not.
        c.memoryBytes = qint64(128) << 20;
        SandboxService service(&backend, LanguageRegistry::builtIn(), c);
        service.warmUp();
        waitWarm(service);
        ExecutionResult r = run(service, QString::fromLatin1(kLoaded));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.preloadDropped, QStringList{QStringLiteral("no_such_module")});
        QVERIFY2(r.preloaded.startsWith(QStringLiteral("numpy")),
                 qPrintable(r.preloaded.join(',')));
        QVERIFY2(!r.preloaded.contains(QStringLiteral("matplotlib.pyplot")),
                 qPrintable(r.preloaded.join(',')));
        QCOMPARE(QString::fromUtf8(r.stdoutData).section(u'\n', 0, 0),
                 QStringLiteral("[%1]").arg(r.preloaded.contains(QStringLiteral("pandas"))
                                                ? QStringLiteral("'numpy', 'pandas'")
                                                : QStringLiteral("'numpy'")));
        // The module that failed is not asked for again.
        waitWarm(service);
        r = run(service, QStringLiteral("print(1)"));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.preloadDropped, QStringList());
        QVERIFY(r.preloaded.contains(QStringLiteral("numpy")));
        // What pandas took last time does not fit beside numpy: it is skipped, not imported.
        QVERIFY2(!r.preloaded.contains(QStringLiteral("pandas")),
                 qPrintable(r.preloaded.join(',')));
        shutDown(service, engine);
    }

    void preloadNoneImportsNothing()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config(QStringList{}));
        service.warmUp();
        for (int i = 0; i < 3; ++i) {
            waitWarm(service);
            const ExecutionResult r = run(service, QStringLiteral("import numpy\nprint(1)"));
            QCOMPARE(r.exitCode, 0);
            QCOMPARE(r.preloaded, QStringList());
        }
        shutDown(service, engine);
    }

    void aProgramThatSetsMplbackendGetsItsBackendAndItsFigure()
    {
        // pyplot preloaded (and its first figure drawn ahead); matplotlib reads MPLBACKEND when
        // imported, so this program must get one imported after its setting.
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               config(QStringList{QStringLiteral("matplotlib.pyplot")}));
        service.warmUp();
        const ExecutionResult r = runPreloaded(service, QStringLiteral(R"py(
import os
os.environ["MPLBACKEND"] = "pdf"
import matplotlib
import matplotlib.pyplot as plt
plt.plot([1, 2, 3])
plt.show()
print(matplotlib.get_backend())
)py"),
                                               {QStringLiteral("matplotlib.pyplot")});
        QCOMPARE(r.preloaded, QStringList{QStringLiteral("matplotlib.pyplot")});
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("pdf\n"));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.files.size(), 1);
        QCOMPARE(r.files.at(0).name, QStringLiteral("figure-0001.png"));
        QVERIFY(r.files.at(0).data.startsWith("\x89PNG"));
        shutDown(service, engine);
    }

    void theProgramsOwnModuleWins()
    {
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               config(QStringList{QStringLiteral("tabulate")}));
        service.warmUp();
        const ExecutionResult r =
            runPreloaded(service, QStringLiteral("import tabulate\nprint(tabulate.WHOSE)"),
                         {QStringLiteral("tabulate")},
                         {{QStringLiteral("tabulate.py"), QByteArray("WHOSE = 'mine'\n")}});
        QCOMPARE(r.preloaded, QStringList{QStringLiteral("tabulate")});
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("mine\n"));
        QCOMPARE(r.exitCode, 0);
        shutDown(service, engine);
    }

    void nodeLearnsWhatCallsRequireAndRequiresItAhead()
    {
        m_language = QStringLiteral("javascript");
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config());
        service.warmUp();
        // Nothing learned yet: nothing loaded ahead.
        for (int i = 0; i < 2; ++i) {
            waitWarm(service);
            const ExecutionResult r = run(service, QString::fromLatin1(kRequires));
            QCOMPARE(r.exitCode, 0);
            QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("false undefined a,b|c\n"));
            QCOMPARE(r.preloaded, QStringList());
            // The packages required, in order; not Node's builtins nor the program's own files.
            QCOMPARE(r.imports, QStringList({QStringLiteral("lodash"), QStringLiteral("cheerio")}));
        }
        // The sandbox the pool made during the second call was asked before it was learned.
        waitWarm(service);
        run(service, QStringLiteral("console.log(1)"));
        const ExecutionResult r =
            runPreloaded(service, QString::fromLatin1(kRequires),
                         {QStringLiteral("cheerio"), QStringLiteral("lodash")});
        QCOMPARE(r.exitCode, 0);
        // Loaded ahead, and fresh: what the earlier calls did to lodash is not in it.
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("true undefined a,b|c\n"));
        QCOMPARE(r.preloaded, QStringList({QStringLiteral("cheerio"), QStringLiteral("lodash")}));
        QCOMPARE(r.preloadDropped, QStringList());
        QCOMPARE(r.imports, QStringList({QStringLiteral("lodash"), QStringLiteral("cheerio")}));
        for (const qint64 cost : r.preloadCosts)
            QVERIFY2(cost > 0 && cost < qint64(192) << 20, qPrintable(QString::number(cost)));
        shutDown(service, engine);
    }

    void nodeFixedListInTypeScript()
    {
        // One list for every language: TypeScript takes lodash (its image's) and the package no
        // image has, not numpy (Python's).
        m_language = QStringLiteral("typescript");
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(
            &backend, LanguageRegistry::builtIn(),
            config(QStringList{QStringLiteral("no-such-package"), QStringLiteral("numpy"),
                               QStringLiteral("lodash")}));
        service.warmUp();
        const QString code = QStringLiteral("import _ from 'lodash';\n"
                                            "const total: number = _.sum([1, 2, 3]);\n"
                                            "console.log(total, _ === require('lodash'));\n");
        // (The first sandbox: it alone tries the package that fails, before lodash.)
        waitWarm(service);
        ExecutionResult r = run(service, code);
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("6 true\n"));
        QCOMPARE(r.preloaded, QStringList{QStringLiteral("lodash")});
        QCOMPARE(r.preloadDropped, QStringList{QStringLiteral("no-such-package")});
        QCOMPARE(r.imports, QStringList{QStringLiteral("lodash")});
        // The package that failed is not asked for again (the sandbox the pool made during that
        // call was asked before: one more call takes it); a compile error still reports.
        waitWarm(service);
        run(service, QStringLiteral("console.log(1);"));
        r = runPreloaded(service, QStringLiteral("const x: number = ;\n"),
                         {QStringLiteral("lodash")});
        QVERIFY(r.compileError);
        QCOMPARE(r.preloaded, QStringList{QStringLiteral("lodash")});
        QCOMPARE(r.preloadDropped, QStringList());
        shutDown(service, engine);
    }

    void nodeProgramsOwnModuleWins()
    {
        m_language = QStringLiteral("javascript");
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(),
                               config(QStringList{QStringLiteral("lodash")}));
        service.warmUp();
        // Its node_modules comes first in Node's lookup, and ./lodash is a file of its own.
        const ExecutionResult r = runPreloaded(
            service,
            QStringLiteral("console.log(require('lodash').whose, require('./lodash').whose);"),
            {QStringLiteral("lodash")},
            {{QStringLiteral("node_modules/lodash/index.js"),
              QByteArray("module.exports = { whose: 'mine' };\n")},
             {QStringLiteral("lodash.js"), QByteArray("exports.whose = 'local';\n")}});
        QCOMPARE(r.preloaded, QStringList{QStringLiteral("lodash")});
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("mine local\n"));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.imports, QStringList{QStringLiteral("lodash")});
        shutDown(service, engine);
    }

    void nodeLoaderFlagsAreCheckedByTheSupervisor()
    {
        // The Node loader's flags reach the result line through a file of the program's uid, so
        // a program can write what it likes there: cs-run passes on only name=value words of
        // the loader's kind (not its own mem= and cpu=), at most 3500 bytes of them, so that
        // the line stays one the server reads.
        m_language = QStringLiteral("javascript");
        EngineClient engine(m_socket);
        DockerBackend backend(&engine);
        SandboxService service(&backend, LanguageRegistry::builtIn(), config(QStringList{}));
        service.warmUp();
        waitWarm(service);
        const ExecutionResult r = run(service, QStringLiteral(R"js(
const fs = require('fs');
const file = '/tmp/.cs-nonce';
const nonce = fs.readFileSync(file, 'utf8').split(/\s/)[0];
process.on('exit', () => fs.writeFileSync(file, nonce + ' preloaded=made-up:1 mem=1 cpu=1' +
  ' imports=$(id),x;y out plots imports=' + 'a,'.repeat(2000) + ' preload-dropped=late\n'));
console.log('ok');
)js"));
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(QString::fromUtf8(r.stdoutData), QStringLiteral("ok\n"));
        QCOMPARE(r.preloaded, QStringList{QStringLiteral("made-up")});
        QCOMPARE(r.preloadCosts, QList<qint64>{1});
        QCOMPARE(r.imports, QStringList());
        QCOMPARE(r.preloadDropped, QStringList());
        QVERIFY2(r.peakMemoryBytes > 1, qPrintable(QString::number(r.peakMemoryBytes)));
        QVERIFY(r.files.isEmpty());
        shutDown(service, engine);
    }
};

QTEST_GUILESS_MAIN(TestPreload)
#include "tst_preload.moc"
