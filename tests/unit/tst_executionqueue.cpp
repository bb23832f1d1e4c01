// The queue in front of the sandboxes: at most N run, the next wait in order and learn their
// place, one beyond the waiting limit is refused at once, and a finished one frees its slot.

#include "execution.h"
#include "executionqueue.h"

#include <QSignalSpy>
#include <QTest>

class tst_ExecutionQueue : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void runsWaitsAndRefuses()
    {
        qRegisterMetaType<ExecutionResult>();
        QList<Execution *> launched;
        ExecutionQueue queue(
            2, 2, [&](const ExecutionQueue::Job &job) { launched.append(job.execution); });
        QSignalSpy idle(&queue, &ExecutionQueue::idle);
        QList<Execution *> runs;
        for (int i = 0; i < 5; ++i) {
            runs.append(
                new Execution({QStringLiteral("python"), QStringLiteral("print(%1)").arg(i)},
                              QStringLiteral("python"), 30, 1024, this));
            queue.submit({runs.last(), {}, QStringLiteral("image")});
        }
        QSignalSpy place(runs[3], &Execution::queued);
        QCOMPARE(launched, (QList<Execution *>{runs[0], runs[1]}));
        QCOMPARE(queue.running(), 2);
        QCOMPARE(queue.waiting(), 2);
        // The fifth is refused at once, saying why.
        QSignalSpy refused(runs[4], &Execution::finished);
        QVERIFY(refused.wait(2000));
        QVERIFY2(runs[4]->result().error.contains(
                     u"the server is busy: 2 runs are running and 2 more are waiting"),
                 qPrintable(runs[4]->result().error));
        queue.finished(runs[4]); // (its finish comes to the queue too: nothing changes)
        QCOMPARE(queue.waiting(), 2);

        // The waiting ones learn their place, and move up as slots free.
        QTRY_COMPARE(place.count(), 1);
        QCOMPARE(place.last().first().toInt(), 2);
        queue.finished(runs[0]);
        QCOMPARE(launched.last(), runs[2]);
        QCOMPARE(place.last().first().toInt(), 1);
        // A waiting one that ends (cancelled) gives up its place without running.
        queue.finished(runs[3]);
        QCOMPARE(queue.waiting(), 0);
        queue.finished(runs[1]);
        QCOMPARE(idle.count(), 0);
        queue.finished(runs[2]);
        QCOMPARE(queue.running(), 0);
        QCOMPARE(idle.count(), 1);
        QCOMPARE(launched.size(), 3);
    }

    void stoppedLaunchesNothing()
    {
        int launched = 0;
        ExecutionQueue queue(1, 5, [&](const ExecutionQueue::Job &) { ++launched; });
        auto *first = new Execution({QStringLiteral("python"), QString()}, QStringLiteral("python"),
                                    30, 1024, this);
        auto *second = new Execution({QStringLiteral("python"), QString()},
                                     QStringLiteral("python"), 30, 1024, this);
        queue.submit({first, {}, {}});
        queue.submit({second, {}, {}});
        queue.stop();
        queue.finished(first);
        QCOMPARE(launched, 1);
        QCOMPARE(queue.waiting(), 1);
    }
};

QTEST_GUILESS_MAIN(tst_ExecutionQueue)
#include "tst_executionqueue.moc"
