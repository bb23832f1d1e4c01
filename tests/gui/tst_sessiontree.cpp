// The runs list as a tree: runs of one sandbox session under the session's row, single runs at the
// top level, fed with journal events as the window receives them. No engine: the events are made
// here. Every model is also checked by Qt's own model tester (structure, signals, parents).

#include "runfiltermodel.h"
#include "runlistmodel.h"
#include "sessiontreemodel.h"

#include <QAbstractItemModelTester>
#include <QJsonArray>
#include <QJsonObject>
#include <QPersistentModelIndex>
#include <QSignalSpy>
#include <QTest>

namespace {
const QString kSession = QStringLiteral("s-inst0001-0123456789ab");

RunRecord makeRun(const QString &id, const QDateTime &created, const QString &sessionId = {},
                  const QString &language = QStringLiteral("python"))
{
    RunRecord r;
    r.id = id;
    r.instanceId = QStringLiteral("instance-a");
    r.source = QStringLiteral("claude-code");
    r.tool =
        sessionId.isEmpty() ? QStringLiteral("execute_code") : QStringLiteral("run_python_code");
    r.sessionId = sessionId;
    r.language = language;
    r.code = QStringLiteral("print('hello from %1')").arg(id);
    r.createdAt = created;
    r.status = RunRecord::Status::Queued;
    return r;
}

JournalEvent created(const RunRecord &r)
{
    return {JournalEvent::Type::Created, r, 1, {}, {}};
}

JournalEvent finished(RunRecord r, RunRecord::Status status)
{
    r.status = status;
    r.exitCode = status == RunRecord::Status::Ok ? 0 : 1;
    r.durationMs = 300;
    r.finishedAt = QDateTime::currentDateTimeUtc();
    return {JournalEvent::Type::Finished, r, 1, {}, {}};
}

JournalEvent sessionState(const QString &sessionId, const QString &state)
{
    JournalEvent e;
    e.type = JournalEvent::Type::Session;
    e.run.sessionId = sessionId;
    e.run.language = QStringLiteral("python");
    e.sessionState = state;
    return e;
}

// A snapshot as SessionManager keeps it: "<session>.<number>", after a run, from a parent.
SessionSnapshot snapshot(const QString &session, int number, const QString &run,
                         const QString &parent = {})
{
    SessionSnapshot s;
    s.sessionId = session;
    s.number = number;
    s.id = QStringLiteral("%1.%2").arg(session).arg(number);
    s.afterCall = number;
    s.afterRun = run;
    s.parent = parent;
    s.createdAt = QDateTime::currentDateTimeUtc();
    s.bytes = 2048;
    s.kind = QStringLiteral("python");
    s.language = QStringLiteral("python");
    return s;
}

QString runId(const QModelIndex &index)
{
    return index.data(RunListModel::RunIdRole).toString();
}

QString text(const QAbstractItemModel &model, int row, int column,
             const QModelIndex &parent = QModelIndex())
{
    return model.index(row, column, parent).data().toString();
}
} // namespace

class SessionTreeTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sessionRunsAreGrouped();
    void stateChangesShowOnTheSessionRow();
    void aNewRunJoinsItsSessionAtTheTop();
    void filtersKeepTheSessionOfAMatchingRun();
    void trimAndHistoryKeepTheTree();
    void snapshotsShowAsStepsWithBranches();
    void aForkIsListedBeforeItsFirstRun();
};

void SessionTreeTest::sessionRunsAreGrouped()
{
    RunListModel runs;
    SessionTreeModel tree(&runs);
    QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QDateTime t0 = QDateTime::currentDateTimeUtc();
    runs.apply(created(makeRun(QStringLiteral("a"), t0, kSession)));
    runs.apply(created(makeRun(QStringLiteral("b"), t0.addSecs(1))));
    runs.apply(created(makeRun(QStringLiteral("c"), t0.addSecs(2), kSession)));

    // Two rows: the session (where its newest run is) and the single run.
    QCOMPARE(tree.rowCount(), 2);
    const QModelIndex session = tree.index(0, 0);
    QVERIFY(session.data(SessionTreeModel::IsSessionRole).toBool());
    QCOMPARE(session.data(SessionTreeModel::SessionIdRole).toString(), kSession);
    QCOMPARE(session.data(SessionTreeModel::RunCountRole).toInt(), 2);
    QCOMPARE(tree.rowCount(session), 2);
    QVERIFY(tree.hasChildren(session));
    // It stands for its newest run.
    QCOMPARE(runId(session), QStringLiteral("c"));
    QCOMPARE(text(tree, 0, RunListModel::SessionColumn), QStringLiteral("01234567"));
    QCOMPARE(text(tree, 0, RunListModel::DurationColumn), QStringLiteral("2 runs"));
    QCOMPARE(text(tree, 0, RunListModel::LanguageColumn), QStringLiteral("python"));
    QVERIFY(session.siblingAtColumn(RunListModel::SessionColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(kSession));
    // Its runs, newest first, numbered in the order they ran.
    QCOMPARE(runId(tree.index(0, 0, session)), QStringLiteral("c"));
    QCOMPARE(runId(tree.index(1, 0, session)), QStringLiteral("a"));
    QCOMPARE(text(tree, 0, RunListModel::SessionColumn, session), QStringLiteral("#2"));
    QCOMPARE(text(tree, 1, RunListModel::SessionColumn, session), QStringLiteral("#1"));
    QCOMPARE(tree.index(1, 0, session).parent(), session);
    QCOMPARE(tree.index(0, RunListModel::LanguageColumn, session).data().toString(),
             QStringLiteral("python"));
    // The single run: top level, no children, its data as the list's.
    const QModelIndex single = tree.index(1, 0);
    QCOMPARE(runId(single), QStringLiteral("b"));
    QVERIFY(!single.data(SessionTreeModel::IsSessionRole).toBool());
    QCOMPARE(tree.rowCount(single), 0);
    QVERIFY(!single.parent().isValid());
    QCOMPARE(text(tree, 1, RunListModel::StatusColumn),
             text(runs, runs.rowOf(QStringLiteral("b")), RunListModel::StatusColumn));
    // Found by id.
    QCOMPARE(tree.indexOfRun(QStringLiteral("a")), tree.index(1, 0, session));
    QCOMPARE(tree.indexOfRun(QStringLiteral("b")), single);
    QCOMPARE(tree.indexOfSession(kSession), session);
    QVERIFY(!tree.indexOfRun(QStringLiteral("nope")).isValid());

    // A run of the session ends: its row and the session's change.
    QSignalSpy changed(&tree, &QAbstractItemModel::dataChanged);
    runs.apply(finished(makeRun(QStringLiteral("a"), t0, kSession), RunRecord::Status::Ok));
    QCOMPARE(text(tree, 1, RunListModel::StatusColumn, session), QStringLiteral("OK"));
    bool sessionRowChanged = false;
    for (const QList<QVariant> &args : std::as_const(changed))
        sessionRowChanged |= args.at(0).toModelIndex() == session;
    QVERIFY(sessionRowChanged);
}

void SessionTreeTest::stateChangesShowOnTheSessionRow()
{
    RunListModel runs;
    SessionTreeModel tree(&runs);
    QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QDateTime t0 = QDateTime::currentDateTimeUtc();
    runs.apply(created(makeRun(QStringLiteral("a"), t0, kSession)));
    runs.apply(created(makeRun(QStringLiteral("b"), t0.addSecs(1), kSession)));
    const QModelIndex status = tree.index(0, RunListModel::StatusColumn);
    QCOMPARE(status.data().toString(), QString()); // nothing heard yet

    QSignalSpy changed(&tree, &QAbstractItemModel::dataChanged);
    runs.apply(sessionState(kSession, QStringLiteral("busy")));
    QVERIFY(changed.count() >= 1);
    QCOMPARE(changed.last().at(0).toModelIndex().row(), 0);
    QVERIFY(!changed.last().at(0).toModelIndex().parent().isValid());
    QCOMPARE(status.data().toString(), QStringLiteral("Busy"));
    QCOMPARE(tree.index(0, 0).data(SessionTreeModel::SessionStateRole).toString(),
             QStringLiteral("busy"));
    QVERIFY(!status.data(Qt::DecorationRole).value<QIcon>().isNull());
    runs.apply(sessionState(kSession, QStringLiteral("idle")));
    QCOMPARE(status.data().toString(), QStringLiteral("Idle"));
    runs.apply(sessionState(kSession, QStringLiteral("ended")));
    QCOMPARE(status.data().toString(), QStringLiteral("Ended"));
    QVERIFY(tree.index(0, 0).data(Qt::ToolTipRole).toString().contains(u"ended"));
    // The session's runs keep their own statuses.
    QCOMPARE(tree.index(0, RunListModel::StatusColumn, tree.index(0, 0)).data().toString(),
             QStringLiteral("Queued"));
}

void SessionTreeTest::aNewRunJoinsItsSessionAtTheTop()
{
    RunListModel runs;
    SessionTreeModel tree(&runs);
    QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QDateTime t0 = QDateTime::currentDateTimeUtc();
    runs.apply(created(makeRun(QStringLiteral("a"), t0, kSession)));
    runs.apply(created(makeRun(QStringLiteral("b"), t0.addSecs(1))));
    QCOMPARE(runId(tree.index(0, 0)), QStringLiteral("b"));
    const QPersistentModelIndex single = tree.index(0, 0);
    const QPersistentModelIndex session = tree.index(1, 0);
    const QPersistentModelIndex oldRun = tree.index(0, 0, session);

    QSignalSpy inserted(&tree, &QAbstractItemModel::rowsInserted);
    QSignalSpy moved(&tree, &QAbstractItemModel::rowsMoved);
    QSignalSpy reset(&tree, &QAbstractItemModel::modelReset);
    runs.apply(created(makeRun(QStringLiteral("c"), t0.addSecs(2), kSession)));
    // The session comes to the top with its new run first; nothing was reset, so views keep
    // what is selected and expanded.
    QCOMPARE(reset.count(), 0);
    QCOMPARE(moved.count(), 1);
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(inserted.first().at(0).toModelIndex(), QModelIndex(session));
    QCOMPARE(inserted.first().at(1).toInt(), 0);
    QCOMPARE(tree.rowCount(), 2);
    QCOMPARE(session.row(), 0);
    QCOMPARE(single.row(), 1);
    QCOMPARE(runId(single), QStringLiteral("b"));
    QCOMPARE(tree.rowCount(session), 2);
    QCOMPARE(runId(tree.index(0, 0, session)), QStringLiteral("c"));
    QCOMPARE(oldRun.row(), 1);
    QCOMPARE(runId(oldRun), QStringLiteral("a"));
    QCOMPARE(runId(session), QStringLiteral("c"));
    QCOMPARE(text(tree, 0, RunListModel::SessionColumn), QStringLiteral("01234567"));
    QCOMPARE(text(tree, 0, RunListModel::DurationColumn), QStringLiteral("2 runs"));

    // Again while it is at the top: no move, one more child.
    runs.apply(created(makeRun(QStringLiteral("d"), t0.addSecs(3), kSession)));
    QCOMPARE(moved.count(), 1);
    QCOMPARE(inserted.count(), 2);
    QCOMPARE(tree.rowCount(session), 3);
    QCOMPARE(text(tree, 0, RunListModel::SessionColumn, session), QStringLiteral("#3"));
    QCOMPARE(text(tree, 0, RunListModel::DurationColumn), QStringLiteral("3 runs"));
    // A second session starts: a row of its own, on top.
    runs.apply(created(makeRun(QStringLiteral("e"), t0.addSecs(4), QStringLiteral("s-x-ffff"))));
    QCOMPARE(tree.rowCount(), 3);
    QCOMPARE(tree.index(0, 0).data(SessionTreeModel::SessionIdRole).toString(),
             QStringLiteral("s-x-ffff"));
    QCOMPARE(session.row(), 1);
}

void SessionTreeTest::filtersKeepTheSessionOfAMatchingRun()
{
    RunListModel runs;
    SessionTreeModel tree(&runs);
    RunFilterModel filter;
    filter.setSourceModel(&tree);
    QAbstractItemModelTester tester(&filter,
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QDateTime t0 = QDateTime::currentDateTimeUtc();
    const RunRecord a = makeRun(QStringLiteral("a"), t0, kSession);
    RunRecord b = makeRun(QStringLiteral("b"), t0.addSecs(1), kSession);
    b.code = QStringLiteral("print('needle')");
    const RunRecord c =
        makeRun(QStringLiteral("c"), t0.addSecs(2), QString(), QStringLiteral("javascript"));
    runs.apply(created(a));
    runs.apply(created(b));
    runs.apply(created(c));
    runs.apply(finished(a, RunRecord::Status::Error));
    runs.apply(finished(b, RunRecord::Status::Ok));
    runs.apply(finished(c, RunRecord::Status::Ok));
    QCOMPARE(filter.rowCount(), 2);

    // A status only one run of the session has: the session, with that run alone.
    filter.setStatus(RunRecord::Status::Error);
    QCOMPARE(filter.rowCount(), 1);
    QModelIndex session = filter.index(0, 0);
    QVERIFY(session.data(SessionTreeModel::IsSessionRole).toBool());
    QCOMPARE(filter.rowCount(session), 1);
    QCOMPARE(runId(filter.index(0, 0, session)), QStringLiteral("a"));
    // Text found in the other run of the session.
    filter.setStatus(std::nullopt);
    filter.setText(QStringLiteral("NEEDLE"));
    QCOMPARE(filter.rowCount(), 1);
    session = filter.index(0, 0);
    QCOMPARE(filter.rowCount(session), 1);
    QCOMPARE(runId(filter.index(0, 0, session)), QStringLiteral("b"));
    // A language none of its runs has: the session goes, the single run stays.
    filter.setText(QString());
    filter.setLanguage(QStringLiteral("javascript"));
    QCOMPARE(filter.rowCount(), 1);
    QCOMPARE(runId(filter.index(0, 0)), QStringLiteral("c"));
    QVERIFY(!filter.index(0, 0).data(SessionTreeModel::IsSessionRole).toBool());
    // Its own id finds the session (the search covers a run's session).
    filter.setLanguage(QString());
    filter.setText(QStringLiteral("0123456789ab"));
    QCOMPARE(filter.rowCount(), 1);
    QCOMPARE(filter.rowCount(filter.index(0, 0)), 2);
    // A run that comes to match while live shows with its session.
    filter.setText(QString());
    filter.setStatus(RunRecord::Status::Running);
    QCOMPARE(filter.rowCount(), 0);
    RunRecord d = makeRun(QStringLiteral("d"), t0.addSecs(3), kSession);
    runs.apply(created(d));
    QCOMPARE(filter.rowCount(), 0);
    JournalEvent started;
    started.type = JournalEvent::Type::Started;
    started.run = d;
    runs.apply(started);
    QCOMPARE(filter.rowCount(), 1);
    QCOMPARE(filter.rowCount(filter.index(0, 0)), 1);
    QCOMPARE(runId(filter.index(0, 0, filter.index(0, 0))), QStringLiteral("d"));
    // All filters off: everything.
    filter.setStatus(std::nullopt);
    QCOMPARE(filter.rowCount(), 2);
    QCOMPARE(filter.rowCount(filter.index(0, 0)), 3);
}

void SessionTreeTest::trimAndHistoryKeepTheTree()
{
    RunListModel runs;
    SessionTreeModel tree(&runs);
    QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QDateTime t0 = QDateTime::currentDateTimeUtc();
    runs.apply(created(makeRun(QStringLiteral("a"), t0, kSession)));
    runs.apply(created(makeRun(QStringLiteral("b"), t0.addSecs(1))));
    runs.apply(created(makeRun(QStringLiteral("c"), t0.addSecs(2), kSession)));
    runs.apply(created(makeRun(QStringLiteral("d"), t0.addSecs(3))));
    const QPersistentModelIndex session = tree.index(1, 0);
    const QPersistentModelIndex newestOfSession = tree.index(0, 0, session);
    const QPersistentModelIndex oldest = tree.index(1, 0, session);
    QCOMPARE(runId(oldest), QStringLiteral("a"));

    // The oldest run goes: the session keeps its other run, selections stay where they were.
    QSignalSpy reset(&tree, &QAbstractItemModel::modelReset);
    runs.setLimits(3, 100);
    QCOMPARE(reset.count(), 0);
    QVERIFY(!oldest.isValid());
    QVERIFY(session.isValid());
    QCOMPARE(session.row(), 1);
    QCOMPARE(tree.rowCount(session), 1);
    QCOMPARE(runId(newestOfSession), QStringLiteral("c"));
    QCOMPARE(session.data(SessionTreeModel::RunCountRole).toInt(), 1);

    // Older runs from the history, one of them of the session: in time order, in their session.
    runs.setLimits(100, 100);
    runs.addHistory({makeRun(QStringLiteral("h1"), t0.addSecs(-10), kSession),
                     makeRun(QStringLiteral("h2"), t0.addSecs(-5))});
    QCOMPARE(reset.count(), 0);
    QCOMPARE(tree.rowCount(), 4); // d, session, b, h2
    QCOMPARE(session.row(), 1);
    QCOMPARE(tree.rowCount(session), 2);
    QCOMPARE(runId(tree.index(1, 0, session)), QStringLiteral("h1"));
    QCOMPARE(runId(tree.index(3, 0)), QStringLiteral("h2"));
    QCOMPARE(newestOfSession.row(), 0);
    // The session goes with its last run.
    runs.setLimits(2, 100); // keeps d and c
    QVERIFY(session.isValid());
    QCOMPARE(tree.rowCount(), 2);
    runs.setLimits(1, 100);
    QVERIFY(!session.isValid());
    QCOMPARE(tree.rowCount(), 1);
    QVERIFY(!tree.indexOfSession(kSession).isValid());
}

void SessionTreeTest::snapshotsShowAsStepsWithBranches()
{
    RunListModel runs;
    SessionTreeModel tree(&runs);
    QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QDateTime t0 = QDateTime::currentDateTimeUtc();
    for (int i = 0; i < 4; ++i)
        runs.apply(created(makeRun(QStringLiteral("r%1").arg(i + 1), t0.addSecs(i), kSession)));
    runs.apply(created(makeRun(QStringLiteral("single"), t0.addSecs(5))));
    const QModelIndex session = tree.indexOfSession(kSession);
    const auto cell = [&](const QString &run, int role = Qt::DisplayRole) {
        return tree.indexOfRun(run, RunListModel::SessionColumn).data(role);
    };
    // Nothing known yet: runs as before.
    QCOMPARE(cell(QStringLiteral("r1")).toString(), QStringLiteral("#1"));
    QVERIFY(cell(QStringLiteral("r1"), Qt::DecorationRole).isNull());

    // r1 → r2, then a rewind to r1's step: r3 branches from it, r4 goes on from r3. (r2's step
    // kept only part of the state.)
    const QString s1 = kSession + QStringLiteral(".1");
    const QString s3 = kSession + QStringLiteral(".3");
    SessionSnapshot partial = snapshot(kSession, 2, QStringLiteral("r2"), s1);
    partial.notKept = QJsonArray{QJsonObject{{QStringLiteral("name"), QStringLiteral("conn")},
                                             {QStringLiteral("type"), QStringLiteral("socket")}}};
    QSignalSpy changed(&tree, &QAbstractItemModel::dataChanged);
    tree.setSnapshots(kSession, {snapshot(kSession, 1, QStringLiteral("r1")), partial,
                                 snapshot(kSession, 3, QStringLiteral("r3"), s1),
                                 snapshot(kSession, 4, QStringLiteral("r4"), s3)});
    QVERIFY(!changed.isEmpty());
    QCOMPARE(tree.indexOfRun(QStringLiteral("r2")).data(SessionTreeModel::SnapshotIdRole),
             QVariant(kSession + QStringLiteral(".2")));
    QCOMPARE(cell(QStringLiteral("r1")).toString(), QStringLiteral("#1"));
    QCOMPARE(cell(QStringLiteral("r2")).toString(), QStringLiteral("#2"));
    QCOMPARE(cell(QStringLiteral("r3")).toString(), QStringLiteral("#3 ← #1"));
    QCOMPARE(cell(QStringLiteral("r4")).toString(), QStringLiteral("#4"));
    QCOMPARE(tree.indexOfRun(QStringLiteral("r3")).data(SessionTreeModel::BranchFromRole),
             QVariant(s1));
    QCOMPARE(tree.indexOfRun(QStringLiteral("r4")).data(SessionTreeModel::BranchFromRole),
             QVariant(QString()));
    QVERIFY(!cell(QStringLiteral("r1"), Qt::DecorationRole).value<QIcon>().isNull());
    const QString tip = cell(QStringLiteral("r2"), Qt::ToolTipRole).toString();
    QVERIFY2(tip.contains(u"Not kept: conn (socket)") && tip.contains(u"after call 2") &&
                 tip.contains(u"KiB"),
             qPrintable(tip));
    QVERIFY(cell(QStringLiteral("r3"), Qt::ToolTipRole).toString().contains(u"Branches from #1"));
    // The single run knows nothing of snapshots.
    QCOMPARE(tree.indexOfRun(QStringLiteral("single")).data(SessionTreeModel::SnapshotIdRole),
             QVariant());

    // Where the live session is now.
    tree.setCurrentSnapshot(kSession, s1);
    QVERIFY(
        tree.indexOfRun(QStringLiteral("r1")).data(SessionTreeModel::IsCurrentStepRole).toBool());
    QVERIFY(
        !tree.indexOfRun(QStringLiteral("r4")).data(SessionTreeModel::IsCurrentStepRole).toBool());
    QVERIFY(cell(QStringLiteral("r1"), Qt::ToolTipRole).toString().contains(u"at this step now"));
    tree.setCurrentSnapshot(kSession, QString()); // it ended
    QVERIFY(
        !tree.indexOfRun(QStringLiteral("r1")).data(SessionTreeModel::IsCurrentStepRole).toBool());

    // A step deleted: its run has none; the step after it does not turn into a branch.
    tree.setSnapshots(kSession, {snapshot(kSession, 1, QStringLiteral("r1")),
                                 snapshot(kSession, 3, QStringLiteral("r3"), s1),
                                 snapshot(kSession, 4, QStringLiteral("r4"), s3)});
    QCOMPARE(tree.indexOfRun(QStringLiteral("r2")).data(SessionTreeModel::SnapshotIdRole),
             QVariant(QString()));
    QVERIFY(cell(QStringLiteral("r2"), Qt::DecorationRole).isNull());
    QCOMPARE(cell(QStringLiteral("r3")).toString(), QStringLiteral("#3 ← #1"));
    QCOMPARE(cell(QStringLiteral("r4")).toString(), QStringLiteral("#4"));
    QCOMPARE(session.data(SessionTreeModel::ForkedFromRole), QVariant(QString()));
}

void SessionTreeTest::aForkIsListedBeforeItsFirstRun()
{
    RunListModel runs;
    SessionTreeModel tree(&runs);
    QAbstractItemModelTester tester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
    const QDateTime t0 = QDateTime::currentDateTimeUtc().addSecs(-60);
    runs.apply(created(makeRun(QStringLiteral("a"), t0, kSession)));
    runs.apply(created(makeRun(QStringLiteral("b"), t0.addSecs(1), kSession)));
    tree.setSnapshots(
        kSession, {snapshot(kSession, 1, QStringLiteral("a")),
                   snapshot(kSession, 2, QStringLiteral("b"), kSession + QStringLiteral(".1"))});
    const QString fork = QStringLiteral("s-inst0001-fedcba987654");
    const QPersistentModelIndex parent = tree.indexOfSession(kSession);

    QSignalSpy inserted(&tree, &QAbstractItemModel::rowsInserted);
    tree.addFork(fork, QStringLiteral("python"), kSession + QStringLiteral(".1"));
    QCOMPARE(inserted.count(), 1);
    QPersistentModelIndex row = tree.indexOfSession(fork);
    QCOMPARE(row.row(), 0);
    QCOMPARE(parent.row(), 1);
    QCOMPARE(tree.rowCount(row), 0);
    QVERIFY(row.data(SessionTreeModel::IsSessionRole).toBool());
    QCOMPARE(row.data(SessionTreeModel::ForkedFromRole), QVariant(kSession + QStringLiteral(".1")));
    QCOMPARE(row.data(RunListModel::RunIdRole), QVariant(QString()));
    QCOMPARE(text(tree, 0, RunListModel::SessionColumn), QStringLiteral("fedcba98"));
    QCOMPARE(text(tree, 0, RunListModel::SourceColumn), QStringLiteral("← 0123 #1"));
    QCOMPARE(text(tree, 0, RunListModel::DurationColumn), QStringLiteral("no runs yet"));
    QCOMPARE(text(tree, 0, RunListModel::LanguageColumn), QStringLiteral("python"));
    QVERIFY(!text(tree, 0, RunListModel::TimeColumn).isEmpty());
    QVERIFY(!tree.index(0, RunListModel::SessionColumn).data(Qt::DecorationRole).isNull());
    QVERIFY(tree.index(0, RunListModel::SourceColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(u"Forked from 01234567 #1"));

    // The history adds an older run (the tree is rebuilt): the fork stays, where it started.
    runs.addHistory({makeRun(QStringLiteral("old"), t0.addSecs(-30))});
    QVERIFY(row.isValid());
    QCOMPARE(row.row(), 0);
    QCOMPARE(tree.rowCount(), 3);
    // Its first run joins it; the link stays.
    runs.apply(created(makeRun(QStringLiteral("f1"), QDateTime::currentDateTimeUtc(), fork)));
    QCOMPARE(tree.rowCount(), 3);
    QCOMPARE(row.row(), 0);
    QCOMPARE(tree.rowCount(row), 1);
    QCOMPARE(runId(row), QStringLiteral("f1"));
    QCOMPARE(text(tree, 0, RunListModel::DurationColumn), QStringLiteral("1 run"));
    // An assistant's fork (fork_session) is known by its first step's parent, another session's.
    const QString other = QStringLiteral("s-inst0001-aaaabbbbcccc");
    runs.apply(created(makeRun(QStringLiteral("o1"), QDateTime::currentDateTimeUtc(), other)));
    QCOMPARE(tree.indexOfSession(other).data(SessionTreeModel::ForkedFromRole),
             QVariant(QString()));
    tree.setSnapshots(other,
                      {snapshot(other, 1, QStringLiteral("o1"), kSession + QStringLiteral(".2"))});
    QCOMPARE(tree.indexOfSession(other).data(SessionTreeModel::ForkedFromRole),
             QVariant(kSession + QStringLiteral(".2")));
    QCOMPARE(tree.indexOfRun(QStringLiteral("o1")).data(SessionTreeModel::BranchFromRole),
             QVariant(QString()));
    QCOMPARE(tree.indexOfSession(other, RunListModel::SourceColumn).data().toString(),
             QStringLiteral("← 0123 #2"));
}

QTEST_MAIN(SessionTreeTest)
#include "tst_sessiontree.moc"
