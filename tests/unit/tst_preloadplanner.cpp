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

QTEST_GUILESS_MAIN(tst_PreloadPlanner)
#include "tst_preloadplanner.moc"
