#include "executionresult.h"
#include "preloadplanner.h"

#include <QTest>

namespace {
const QString kPython = QStringLiteral("python");

ExecutionResult importing(const QStringList &modules)
{
    ExecutionResult r;
    r.exitCode = 0;
    r.imports = modules;
    return r;
}

PreloadPlanner learning()
{
    PreloadPlanner p;
    p.setCandidates(kPython, {QStringLiteral("numpy"), QStringLiteral("pandas"),
                              QStringLiteral("matplotlib"), QStringLiteral("scipy")});
    return p;
}
} // namespace

class tst_PreloadPlanner : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void nothingUntilSeenMoreThanOnce();
    void mostUsedFirstAndOnlyTheImagesLibraries();
    void aWorkloadThatImportsNothingSoonPreloadsNothing();
    void rarelyUsedModulesAreNotPreloaded();
    void failedOrSlowModulesAreDropped();
    void theLineCarriesBudgetAndLearnedCosts();
    void budgetIsTheLeastOfSandboxLimitAndPoolShare();
    void aFixedListWins();
    void languagesWithoutCandidatesPreloadNothing();
    void moduleNames_data();
    void moduleNames();
    void nodeLearnsPackagesItsImageHas();
    void eachLanguageTakesItsOwnFromTheFixedList();
};

void tst_PreloadPlanner::nothingUntilSeenMoreThanOnce()
{
    PreloadPlanner p = learning();
    QVERIFY(p.plan(kPython).isEmpty());
    p.learn(kPython, importing({QStringLiteral("pandas")}));
    // One call is no pattern yet.
    QVERIFY(p.plan(kPython).isEmpty());
    QVERIFY(p.line(kPython, 100 << 20).isEmpty());
    p.learn(kPython, importing({QStringLiteral("pandas")}));
    QCOMPARE(p.plan(kPython), QStringList{QStringLiteral("pandas")});
}

void tst_PreloadPlanner::mostUsedFirstAndOnlyTheImagesLibraries()
{
    PreloadPlanner p = learning();
    for (int i = 0; i < 3; ++i) {
        p.learn(kPython, importing({QStringLiteral("numpy"), QStringLiteral("matplotlib.pyplot")}));
        p.learn(kPython, importing({QStringLiteral("matplotlib.pyplot"), QStringLiteral("mine"),
                                    QStringLiteral("scipy.stats.distributions")}));
        // The same name twice in one report counts once.
        p.learn(kPython, importing({QStringLiteral("matplotlib.pyplot"),
                                    QStringLiteral("matplotlib.pyplot")}));
    }
    // "mine" is not the image's; three levels deep is not learned.
    QCOMPARE(p.plan(kPython),
             QStringList({QStringLiteral("matplotlib.pyplot"), QStringLiteral("numpy")}));
}

void tst_PreloadPlanner::aWorkloadThatImportsNothingSoonPreloadsNothing()
{
    PreloadPlanner p = learning();
    for (int i = 0; i < 10; ++i)
        p.learn(kPython, importing({QStringLiteral("pandas")}));
    QCOMPARE(p.plan(kPython), QStringList{QStringLiteral("pandas")});
    int calls = 0;
    while (!p.plan(kPython).isEmpty() && calls < 1000) {
        p.learn(kPython, importing({}));
        ++calls;
    }
    // Ten pandas calls weigh less than 15 % of all within a few dozen print(1) calls.
    QVERIFY2(calls > 5 && calls <= 80, qPrintable(QString::number(calls)));
    QVERIFY(p.line(kPython, 100 << 20).isEmpty());
}

void tst_PreloadPlanner::rarelyUsedModulesAreNotPreloaded()
{
    PreloadPlanner p = learning();
    // scipy in one call of ten, pandas in every one.
    for (int i = 0; i < 60; ++i)
        p.learn(kPython, importing(i % 10 == 0 ? QStringList{QStringLiteral("pandas"),
                                                             QStringLiteral("scipy")}
                                               : QStringList{QStringLiteral("pandas")}));
    QCOMPARE(p.plan(kPython), QStringList{QStringLiteral("pandas")});
}

void tst_PreloadPlanner::failedOrSlowModulesAreDropped()
{
    PreloadPlanner p = learning();
    for (int i = 0; i < 3; ++i)
        p.learn(kPython, importing({QStringLiteral("numpy"), QStringLiteral("pandas")}));
    QCOMPARE(p.plan(kPython).size(), 2);
    ExecutionResult r = importing({QStringLiteral("numpy"), QStringLiteral("pandas")});
    r.preloaded = QStringList{QStringLiteral("numpy"), QStringLiteral("pandas")};
    r.preloadCosts = {1, 2};
    r.preloadDropped = QStringList{QStringLiteral("pandas")};
    p.learn(kPython, r);
    QCOMPARE(p.plan(kPython), QStringList{QStringLiteral("numpy")});
    for (int i = 0; i < 5; ++i)
        p.learn(kPython, importing({QStringLiteral("pandas")}));
    QVERIFY(!p.plan(kPython).contains(QStringLiteral("pandas")));
}

void tst_PreloadPlanner::theLineCarriesBudgetAndLearnedCosts()
{
    PreloadPlanner p = learning();
    for (int i = 0; i < 3; ++i)
        p.learn(kPython, importing({QStringLiteral("numpy"), QStringLiteral("pandas")}));
    ExecutionResult r = importing({QStringLiteral("numpy"), QStringLiteral("pandas")});
    r.preloaded = QStringList{QStringLiteral("numpy"), QStringLiteral("pandas")};
    r.preloadCosts = {12000000, 0};
    p.learn(kPython, r);
    // Sorted by weight, then name: numpy and pandas weigh the same.
    QCOMPARE(p.line(kPython, 134217728),
             QByteArray("preload 134217728 3000 numpy:12000000 pandas\n"));
    QVERIFY(p.line(kPython, 0).isEmpty());
}

void tst_PreloadPlanner::budgetIsTheLeastOfSandboxLimitAndPoolShare()
{
    const qint64 MiB = 1 << 20;
    QCOMPARE(PreloadPlanner::budget(512 * MiB, 4), 128 * MiB);
    QCOMPARE(PreloadPlanner::budget(4096 * MiB, 4), PreloadPlanner::kSandboxBudget);
    QCOMPARE(PreloadPlanner::budget(0, 2), PreloadPlanner::kSandboxBudget);
    QCOMPARE(PreloadPlanner::budget(4096 * MiB, 32), PreloadPlanner::kPoolBudget / 32);
    QCOMPARE(PreloadPlanner::budget(4096 * MiB, 0), PreloadPlanner::kSandboxBudget);
}

void tst_PreloadPlanner::aFixedListWins()
{
    PreloadPlanner p = learning();
    for (int i = 0; i < 3; ++i)
        p.learn(kPython, importing({QStringLiteral("pandas")}));
    p.setFixed(kPython, QStringList{QStringLiteral("sympy"), QStringLiteral("broken")});
    QCOMPARE(p.plan(kPython), QStringList({QStringLiteral("sympy"), QStringLiteral("broken")}));
    ExecutionResult failed;
    failed.preloaded = QStringList{QStringLiteral("sympy")};
    failed.preloadCosts = {1};
    failed.preloadDropped = QStringList{QStringLiteral("broken")};
    p.learn(kPython, failed);
    QCOMPARE(p.plan(kPython), QStringList{QStringLiteral("sympy")});
    p.setFixed(kPython, QStringList{});
    QVERIFY(p.plan(kPython).isEmpty());
    QVERIFY(p.preloads(kPython));
    p.setFixed(kPython, std::nullopt);
    QCOMPARE(p.plan(kPython), QStringList{QStringLiteral("pandas")});
}

void tst_PreloadPlanner::languagesWithoutCandidatesPreloadNothing()
{
    PreloadPlanner p = learning();
    const QString node = QStringLiteral("javascript");
    for (int i = 0; i < 3; ++i)
        p.learn(node, importing({QStringLiteral("lodash")}));
    QVERIFY(!p.preloads(node));
    QVERIFY(p.plan(node).isEmpty());
}

void tst_PreloadPlanner::moduleNames_data()
{
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<bool>("valid");
    QTest::newRow("python") << QByteArray("numpy") << true;
    QTest::newRow("python submodule") << QByteArray("matplotlib.pyplot") << true;
    QTest::newRow("underscore") << QByteArray("_private") << true;
    QTest::newRow("npm hyphen") << QByteArray("js-yaml") << true;
    QTest::newRow("npm digit first") << QByteArray("3d-view") << true;
    QTest::newRow("npm scoped") << QByteArray("@types/node") << true;
    QTest::newRow("npm scoped hyphens") << QByteArray("@my-org/the.pkg") << true;
    QTest::newRow("64 characters") << QByteArray(64, 'a') << true;
    QTest::newRow("empty") << QByteArray() << false;
    QTest::newRow("65 characters") << QByteArray(65, 'a') << false;
    QTest::newRow("relative") << QByteArray("./lodash") << false;
    QTest::newRow("parent") << QByteArray("..") << false;
    QTest::newRow("dot first") << QByteArray(".hidden") << false;
    QTest::newRow("hyphen first") << QByteArray("-x") << false;
    QTest::newRow("path") << QByteArray("lodash/fp") << false;
    QTest::newRow("absolute") << QByteArray("/usr/share/nodejs/lodash") << false;
    QTest::newRow("scope alone") << QByteArray("@types") << false;
    QTest::newRow("scope, no name") << QByteArray("@types/") << false;
    QTest::newRow("empty scope") << QByteArray("@/node") << false;
    QTest::newRow("scoped path") << QByteArray("@a/b/c") << false;
    QTest::newRow("two scopes") << QByteArray("@@a/b") << false;
    QTest::newRow("builtin scheme") << QByteArray("node:fs") << false;
    QTest::newRow("list separator") << QByteArray("a,b") << false;
    QTest::newRow("flag") << QByteArray("mem=1") << false;
    QTest::newRow("space") << QByteArray("a b") << false;
    QTest::newRow("latin-1") << QByteArray("caf\xe9") << false;
}

void tst_PreloadPlanner::moduleNames()
{
    QFETCH(QByteArray, name);
    QFETCH(bool, valid);
    QCOMPARE(PreloadPlanner::isModuleName(name), valid);
}

void tst_PreloadPlanner::nodeLearnsPackagesItsImageHas()
{
    PreloadPlanner p = learning();
    const QString node = QStringLiteral("javascript");
    p.setCandidates(
        node, {QStringLiteral("lodash"), QStringLiteral("cheerio"), QStringLiteral("js-yaml")});
    for (int i = 0; i < 2; ++i)
        p.learn(node, importing({QStringLiteral("lodash"), QStringLiteral("left-pad"),
                                 QStringLiteral("@types/node"), QStringLiteral("js-yaml"),
                                 QStringLiteral("cheerio")}));
    // Not the packages only a program brought; most used first, then by name.
    QCOMPARE(p.plan(node), QStringList({QStringLiteral("cheerio"), QStringLiteral("js-yaml"),
                                        QStringLiteral("lodash")}));
    QCOMPARE(p.line(node, 1 << 20), QByteArray("preload 1048576 3000 cheerio js-yaml lodash\n"));
    // Per language: Python learned nothing from it.
    QVERIFY(p.plan(kPython).isEmpty());
}

void tst_PreloadPlanner::eachLanguageTakesItsOwnFromTheFixedList()
{
    PreloadPlanner p = learning();
    const QString node = QStringLiteral("javascript");
    p.setCandidates(node, {QStringLiteral("lodash"), QStringLiteral("yaml")});
    p.setCandidates(kPython,
                    {QStringLiteral("numpy"), QStringLiteral("pandas"), QStringLiteral("yaml")});
    // The server's one list (--preload), given to every language that preloads.
    const QStringList fixed{QStringLiteral("pandas"),         QStringLiteral("lodash"),
                            QStringLiteral("numpy.linalg"),   QStringLiteral("yaml"),
                            QStringLiteral("no_such_module"), QStringLiteral("@scope/own")};
    p.setFixed(kPython, fixed);
    p.setFixed(node, fixed);
    // Each its image's, and those no image has (they are tried, and dropped where they fail).
    QCOMPARE(p.plan(kPython), QStringList({QStringLiteral("pandas"), QStringLiteral("numpy.linalg"),
                                           QStringLiteral("yaml"), QStringLiteral("no_such_module"),
                                           QStringLiteral("@scope/own")}));
    QCOMPARE(p.plan(node),
             QStringList({QStringLiteral("lodash"), QStringLiteral("yaml"),
                          QStringLiteral("no_such_module"), QStringLiteral("@scope/own")}));
    ExecutionResult failed;
    failed.preloadDropped = QStringList{QStringLiteral("no_such_module")};
    p.learn(node, failed);
    QVERIFY(!p.plan(node).contains(QStringLiteral("no_such_module")));
    QVERIFY(p.plan(kPython).contains(QStringLiteral("no_such_module")));
}

QTEST_GUILESS_MAIN(tst_PreloadPlanner)
#include "tst_preloadplanner.moc"
