// The window's models and the widgets that show a run, fed with journal events as they arrive
// from this process or a headless instance. No engine: the events are made here.

#include "envvarsview.h"
#include "imagestrip.h"
#include "networkview.h"
#include "outputview.h"
#include "rundetailspane.h"
#include "runfiltermodel.h"
#include "runlistmodel.h"
#include "sessiontreemodel.h"
#include "showntext.h"

#include <QBuffer>
#include <QCheckBox>
#include <QFormLayout>
#include <QImage>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>
#include <QTextBlock>

namespace {
RunRecord makeRun(const QString &id, const QString &language, const QDateTime &created,
                  const QString &source = QStringLiteral("claude-code"))
{
    RunRecord r;
    r.id = id;
    r.instanceId = QStringLiteral("instance-a");
    r.instancePid = 4242;
    r.source = source;
    r.tool = QStringLiteral("execute_code");
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

JournalEvent output(const QString &id, int stream, const QByteArray &data)
{
    JournalEvent e;
    e.type = JournalEvent::Type::Output;
    e.run.id = id;
    e.stream = stream;
    e.data = data;
    return e;
}

JournalEvent finished(RunRecord r, RunRecord::Status status, int exitCode)
{
    r.status = status;
    r.exitCode = exitCode;
    r.durationMs = 1234;
    r.finishedAt = QDateTime::currentDateTimeUtc();
    return {JournalEvent::Type::Finished, r, 1, {}, {}};
}

QByteArray png(int w, int h)
{
    QImage image(w, h, QImage::Format_RGB32);
    image.fill(Qt::darkCyan);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    return bytes;
}

// Every text a person could read in the widget tree.
QStringList visibleTexts(QWidget *root)
{
    QStringList texts;
    for (QLabel *label : root->findChildren<QLabel *>())
        texts << label->text();
    for (QTableWidget *table : root->findChildren<QTableWidget *>()) {
        for (int r = 0; r < table->rowCount(); ++r)
            for (int c = 0; c < table->columnCount(); ++c)
                if (table->item(r, c))
                    texts << table->item(r, c)->text();
    }
    for (QPlainTextEdit *edit : root->findChildren<QPlainTextEdit *>())
        texts << edit->toPlainText();
    return texts;
}
} // namespace

class ModelsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void detailsNameThePreloadedModules();
    void newestFirstAndLive();
    void finishedKeepsLiveOnlyValues();
    void startedNamesTheEngine();
    void eventsForUnknownRuns();
    void historyIsMergedInTimeOrder();
    void instanceGoneEndsItsRuns();
    void trimmedRunsComeBackFromTheLoader();
    void searchResultsOutliveTheLimit();
    void outputOfAPeerIsCapped();
    void sessionStatesShowWithTheirRuns();
    void filters_data();
    void filters();
    void outputViewColoursStreams();
    void outputViewIsBounded();
    void outputViewShowsTheTailOfALargeRun();
    void outputViewDecodesSplitUtf8();
    void envValuesStayMasked();
    void boundSecretsShowWithoutAValue();
    void secretsAddedAreMarkedInTheNetworkTab();
    void detailsPaneShowsFilesAndMasksValues();
    void requestDataIsShownAsText();
    void connectionsShowLiveInTheNetworkTab();
};

void ModelsTest::newestFirstAndLive()
{
    RunListModel model;
    QSignalSpy appended(&model, &RunListModel::outputAppended);
    const QDateTime t0 = QDateTime::currentDateTimeUtc();
    model.apply(created(makeRun(QStringLiteral("a"), QStringLiteral("python"), t0)));
    model.apply(created(makeRun(QStringLiteral("b"), QStringLiteral("bash"), t0.addSecs(1))));
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.runAt(0)->id, QStringLiteral("b"));
    QCOMPARE(model.rowOf(QStringLiteral("a")), 1);
    QCOMPARE(model.index(0, RunListModel::StatusColumn).data().toString(),
             QStringLiteral("Queued"));

    JournalEvent started;
    started.type = JournalEvent::Type::Started;
    started.run.id = QStringLiteral("a");
    model.apply(started);
    QCOMPARE(model.index(1, RunListModel::StatusColumn).data().toString(),
             QStringLiteral("Running"));
    model.apply(output(QStringLiteral("a"), 1, "one\n"));
    model.apply(output(QStringLiteral("a"), 2, "oops\n"));
    model.apply(output(QStringLiteral("a"), 1, "two\n"));
    QCOMPARE(appended.count(), 3);
    QCOMPARE(model.run(QStringLiteral("a"))->stdoutText(), QByteArray("one\ntwo\n"));
    QCOMPARE(model.run(QStringLiteral("a"))->output.size(), 3); // order kept
    QVERIFY(model.index(1, 0).data(RunListModel::SearchRole).toString().contains(u"oops"));

    RunRecord done = *model.run(QStringLiteral("a"));
    model.apply(finished(done, RunRecord::Status::Ok, 0));
    QCOMPARE(model.index(1, RunListModel::StatusColumn).data().toString(), QStringLiteral("OK"));
    QCOMPARE(model.index(1, RunListModel::ExitCodeColumn).data().toInt(), 0);
    QCOMPARE(model.index(1, RunListModel::DurationColumn).data().toString(),
             QStringLiteral("1.23 s"));
    QVERIFY(!model.index(1, RunListModel::StatusColumn).data(Qt::DecorationRole).isNull());
    QCOMPARE(model.languages(), (QStringList{QStringLiteral("bash"), QStringLiteral("python")}));
}

void ModelsTest::finishedKeepsLiveOnlyValues()
{
    RunListModel model;
    RunRecord r =
        makeRun(QStringLiteral("a"), QStringLiteral("python"), QDateTime::currentDateTimeUtc());
    r.envNames = {QStringLiteral("API_KEY")};
    r.envValues = {{QStringLiteral("API_KEY"), QStringLiteral("sk-live")}};
    model.apply(created(r));
    // A finished record from another process may come without values (they are not stored).
    RunRecord end = r;
    end.envValues.clear();
    model.apply(finished(end, RunRecord::Status::Error, 3));
    QCOMPARE(model.run(QStringLiteral("a"))->envValues.size(), 1);
    QCOMPARE(model.run(QStringLiteral("a"))->exitCode, 3);
}

void ModelsTest::startedNamesTheEngine()
{
    // With several engines a run learns its engine when it starts (it is placed then), from this
    // process or from a headless instance; a start without one (one engine) changes nothing.
    RunListModel model;
    const QDateTime t0 = QDateTime::currentDateTimeUtc();
    model.apply(created(makeRun(QStringLiteral("a"), QStringLiteral("python"), t0)));
    model.apply(created(makeRun(QStringLiteral("b"), QStringLiteral("python"), t0.addSecs(1))));
    JournalEvent started;
    started.type = JournalEvent::Type::Started;
    started.run.id = QStringLiteral("a");
    started.run.engine = QStringLiteral("ssh://ci@build-host");
    model.apply(started);
    started.run.id = QStringLiteral("b");
    started.run.engine.clear();
    model.apply(started);
    QCOMPARE(model.run(QStringLiteral("a"))->engine, QStringLiteral("ssh://ci@build-host"));
    QCOMPARE(model.run(QStringLiteral("b"))->engine, QString());
    QCOMPARE(model.run(QStringLiteral("b"))->status, RunRecord::Status::Running);
    // The search finds runs by their engine.
    RunFilterModel filter;
    filter.setSourceModel(&model);
    filter.setText(QStringLiteral("build-host"));
    QCOMPARE(filter.rowCount(), 1);
    QCOMPARE(filter.index(0, 0).data(RunListModel::RunIdRole).toString(), QStringLiteral("a"));
}

void ModelsTest::eventsForUnknownRuns()
{
    RunListModel model;
    model.apply(output(QStringLiteral("ghost"), 1, "x"));
    JournalEvent started;
    started.type = JournalEvent::Type::Started;
    started.run.id = QStringLiteral("ghost");
    model.apply(started);
    QCOMPARE(model.rowCount(), 0);
    // The end of a run whose start was missed carries the whole record: it is shown.
    RunRecord r =
        makeRun(QStringLiteral("late"), QStringLiteral("go"), QDateTime::currentDateTimeUtc());
    r.appendOutput(1, "hello\n");
    model.apply(finished(r, RunRecord::Status::Ok, 0));
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.run(QStringLiteral("late"))->stdoutText(), QByteArray("hello\n"));
}

void ModelsTest::historyIsMergedInTimeOrder()
{
    RunListModel model;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    model.apply(created(makeRun(QStringLiteral("live"), QStringLiteral("python"), now)));
    RunRecord old1 = makeRun(QStringLiteral("old1"), QStringLiteral("ruby"), now.addDays(-2));
    RunRecord old2 = makeRun(QStringLiteral("old2"), QStringLiteral("r"), now.addDays(-1));
    old1.status = old2.status = RunRecord::Status::Ok;
    RunRecord dup = makeRun(QStringLiteral("live"), QStringLiteral("python"), now);
    model.addHistory({old2, old1, dup});
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.runAt(0)->id, QStringLiteral("live"));
    QCOMPARE(model.runAt(1)->id, QStringLiteral("old2"));
    QCOMPARE(model.runAt(2)->id, QStringLiteral("old1"));
    // Live events still reach the right record after the reorder.
    model.apply(output(QStringLiteral("live"), 1, "still here"));
    QCOMPARE(model.run(QStringLiteral("live"))->stdoutText(), QByteArray("still here"));
}

void ModelsTest::instanceGoneEndsItsRuns()
{
    RunListModel model;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    RunRecord mine = makeRun(QStringLiteral("a"), QStringLiteral("python"), now);
    RunRecord other = makeRun(QStringLiteral("b"), QStringLiteral("python"), now);
    other.instanceId = QStringLiteral("instance-b");
    model.apply(created(mine));
    model.apply(created(other));
    model.markInstanceGone(QStringLiteral("instance-a"));
    QCOMPARE(model.run(QStringLiteral("a"))->status, RunRecord::Status::Error);
    QVERIFY(model.run(QStringLiteral("a"))->error.contains(u"ended"));
    QCOMPARE(model.run(QStringLiteral("b"))->status, RunRecord::Status::Queued);
}

void ModelsTest::trimmedRunsComeBackFromTheLoader()
{
    RunListModel model;
    QHash<QString, RunRecord> stored;
    model.setLoader(
        [&stored](const QString &id) -> std::optional<RunRecord> {
            if (!stored.contains(id))
                return std::nullopt;
            return stored.value(id);
        },
        [&stored](const QString &id) { return stored.contains(id); });
    model.setLimits(5, 2);
    const QDateTime t0 = QDateTime::currentDateTimeUtc();
    for (int i = 0; i < 8; ++i) {
        RunRecord r = makeRun(QString::number(i), QStringLiteral("python"), t0.addSecs(i));
        model.apply(created(r));
        r.appendOutput(1, QByteArray("output of ") + QByteArray::number(i));
        // Run 3 was never stored (an instance with --no-history): its output must stay.
        if (i != 3)
            stored.insert(r.id, r);
        model.apply(finished(r, RunRecord::Status::Ok, 0));
    }
    QCOMPARE(model.rowCount(), 5); // the three oldest went
    QCOMPARE(model.rowOf(QStringLiteral("2")), -1);
    int complete = 0;
    for (int row = 0; row < model.rowCount(); ++row)
        complete += model.runAt(row)->complete ? 1 : 0;
    QCOMPARE(complete, 3); // the two newest, and the one the history does not have
    QVERIFY(model.run(QStringLiteral("3"))->complete);
    QCOMPARE(model.run(QStringLiteral("3"))->stdoutText(), QByteArray("output of 3"));
    const RunRecord *older = model.run(QStringLiteral("4"));
    QVERIFY(!older->complete);
    QVERIFY(older->output.isEmpty());
    const RunRecord *loaded = model.complete(QStringLiteral("4"));
    QVERIFY(loaded->complete);
    QCOMPARE(loaded->stdoutText(), QByteArray("output of 4"));
}

void ModelsTest::searchResultsOutliveTheLimit()
{
    RunListModel model;
    model.setLimits(4, 4);
    const QDateTime t0 = QDateTime::currentDateTimeUtc();
    QList<RunRecord> found;
    for (int i = 0; i < 3; ++i) {
        RunRecord r = makeRun(QStringLiteral("found%1").arg(i), QStringLiteral("python"),
                              t0.addDays(-10 + i));
        r.status = RunRecord::Status::Ok;
        found.append(r);
    }
    for (int i = 0; i < 4; ++i)
        model.apply(created(makeRun(QString::number(i), QStringLiteral("python"), t0.addSecs(i))));
    // A search brings three runs older than all four: the list is over its limit, and the
    // oldest of the others go, not what was just found.
    model.addHistory(found, true);
    QCOMPARE(model.rowCount(), 4);
    QStringList ids;
    for (int row = 0; row < model.rowCount(); ++row)
        ids.append(model.runAt(row)->id);
    QCOMPARE(ids, (QStringList{QStringLiteral("3"), QStringLiteral("found2"),
                               QStringLiteral("found1"), QStringLiteral("found0")}));
    // New runs keep coming: still the others go first...
    model.apply(created(makeRun(QStringLiteral("4"), QStringLiteral("python"), t0.addSecs(4))));
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.rowOf(QStringLiteral("3")), -1);
    QVERIFY(model.rowOf(QStringLiteral("found0")) >= 0);
    // ...and once a new search replaces the results, the old ones are ordinary again.
    model.addHistory({}, true);
    model.apply(created(makeRun(QStringLiteral("5"), QStringLiteral("python"), t0.addSecs(5))));
    QCOMPARE(model.rowCount(), 4);
    QCOMPARE(model.rowOf(QStringLiteral("found0")), -1);
    QCOMPARE(model.runAt(0)->id, QStringLiteral("5"));
    // Results that would fill the list by themselves are not kept: a new run still shows.
    model.addHistory(found, true);
    model.setLimits(3, 3);
    model.apply(created(makeRun(QStringLiteral("6"), QStringLiteral("python"), t0.addSecs(6))));
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.runAt(0)->id, QStringLiteral("6"));
    // A history load at start is not a search: it is trimmed like live runs.
    RunListModel plain;
    plain.setLimits(2, 2);
    plain.addHistory(found);
    QCOMPARE(plain.rowCount(), 2);
    QCOMPARE(plain.rowOf(QStringLiteral("found0")), -1);
}

void ModelsTest::outputOfAPeerIsCapped()
{
    RunListModel model;
    model.apply(created(
        makeRun(QStringLiteral("a"), QStringLiteral("python"), QDateTime::currentDateTimeUtc())));
    const QByteArray chunk(1024 * 1024, 'y');
    for (qint64 sent = 0; sent < 2 * RunListModel::kMaxRunOutput; sent += chunk.size())
        model.apply(output(QStringLiteral("a"), 1, chunk));
    const RunRecord *run = model.run(QStringLiteral("a"));
    QVERIFY(run->stdoutText().size() <= RunListModel::kMaxRunOutput);
    QVERIFY(run->stdoutText().size() > RunListModel::kMaxRunOutput / 2);
    QVERIFY(run->truncated);
}

void ModelsTest::sessionStatesShowWithTheirRuns()
{
    RunListModel model;
    RunRecord a =
        makeRun(QStringLiteral("a"), QStringLiteral("python"), QDateTime::currentDateTimeUtc());
    a.sessionId = QStringLiteral("s-0123456789ab");
    model.apply(created(a));
    QCOMPARE(model.index(0, RunListModel::SessionColumn).data().toString(),
             QStringLiteral("s-012345"));
    QVERIFY(model.index(0, RunListModel::SessionColumn)
                .data(Qt::ToolTipRole)
                .toString()
                .contains(u"s-0123456789ab"));
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
    // As it crosses the monitor socket.
    JournalEvent busy;
    busy.type = JournalEvent::Type::Session;
    busy.run.sessionId = a.sessionId;
    busy.run.language = QStringLiteral("python");
    busy.sessionState = QStringLiteral("busy");
    const std::optional<JournalEvent> received = JournalEvent::fromJson(busy.toJson());
    QVERIFY(received);
    model.apply(*received);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(model.index(0, RunListModel::SessionColumn).data().toString(),
             QStringLiteral("s-012345 · busy"));
    busy.sessionState = QStringLiteral("expired");
    model.apply(busy);
    QCOMPARE(model.sessionState(a.sessionId), QStringLiteral("expired"));
    QVERIFY(model.index(0, RunListModel::SessionColumn).data().toString().endsWith(u"expired"));
    // A session event without a session is not an event.
    QJsonObject broken = busy.toJson();
    broken.remove(QStringLiteral("session"));
    QVERIFY(!JournalEvent::fromJson(broken));
}

void ModelsTest::filters_data()
{
    QTest::addColumn<int>("status"); // -1: any
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QStringList>("expected");
    const QStringList all{QStringLiteral("c"), QStringLiteral("b"), QStringLiteral("a")};
    QTest::newRow("none") << -1 << QString() << QString() << all;
    QTest::newRow("ok") << int(RunRecord::Status::Ok) << QString() << QString()
                        << QStringList{QStringLiteral("a")};
    QTest::newRow("timed out") << int(RunRecord::Status::TimedOut) << QString() << QString()
                               << QStringList{QStringLiteral("c")};
    QTest::newRow("language") << -1 << QStringLiteral("javascript") << QString()
                              << QStringList{QStringLiteral("b")};
    QTest::newRow("text in output, any case")
        << -1 << QString() << QStringLiteral("TRACEBACK") << QStringList{QStringLiteral("b")};
    QTest::newRow("text in code") << -1 << QString() << QStringLiteral("from a")
                                  << QStringList{QStringLiteral("a")};
    QTest::newRow("text in source")
        << -1 << QString() << QStringLiteral("gemini") << QStringList{QStringLiteral("c")};
    QTest::newRow("nothing matches")
        << -1 << QStringLiteral("python") << QStringLiteral("traceback") << QStringList{};
}

void ModelsTest::filters()
{
    QFETCH(int, status);
    QFETCH(QString, language);
    QFETCH(QString, text);
    QFETCH(QStringList, expected);
    RunListModel model;
    const QDateTime t0 = QDateTime::currentDateTimeUtc();
    RunRecord a = makeRun(QStringLiteral("a"), QStringLiteral("python"), t0);
    RunRecord b = makeRun(QStringLiteral("b"), QStringLiteral("javascript"), t0.addSecs(1));
    RunRecord c = makeRun(QStringLiteral("c"), QStringLiteral("python"), t0.addSecs(2),
                          QStringLiteral("gemini-cli"));
    b.appendOutput(2, "Traceback: something\n");
    model.apply(finished(a, RunRecord::Status::Ok, 0));
    model.apply(finished(b, RunRecord::Status::Error, 1));
    model.apply(finished(c, RunRecord::Status::TimedOut, -1));
    RunFilterModel filter;
    filter.setSourceModel(&model);
    filter.setStatus(status < 0 ? std::nullopt
                                : std::optional<RunRecord::Status>(RunRecord::Status(status)));
    filter.setLanguage(language);
    filter.setText(text);
    QStringList ids;
    for (int row = 0; row < filter.rowCount(); ++row)
        ids << filter.index(row, 0).data(RunListModel::RunIdRole).toString();
    QCOMPARE(ids, expected);
}

void ModelsTest::outputViewColoursStreams()
{
    OutputView view;
    view.appendChunk(1, "out line\n");
    view.appendChunk(2, "err line\n");
    view.flushPending();
    const QTextBlock first = view.document()->findBlockByNumber(0);
    const QTextBlock second = view.document()->findBlockByNumber(1);
    QCOMPARE(first.text(), QStringLiteral("out line"));
    QCOMPARE(second.text(), QStringLiteral("err line"));
    const QColor outColour = first.begin().fragment().charFormat().foreground().color();
    const QColor errColour = second.begin().fragment().charFormat().foreground().color();
    QVERIFY(outColour != errColour);
    QCOMPARE(errColour, QColor(0xd6, 0x3b, 0x3b));
}

void ModelsTest::outputViewIsBounded()
{
    OutputView view;
    view.resize(600, 400);
    view.show();
    // 6 MB in 4 KiB chunks, as a flooding program sends them: the chunks are gathered, and the
    // document keeps at most kMaxLines lines.
    const QByteArray line(63, 'x');
    QByteArray chunk;
    while (chunk.size() < 4096)
        chunk += line + '\n';
    for (int i = 0; i < 1500; ++i)
        view.appendChunk(1 + (i % 7 == 0), chunk);
    QTRY_VERIFY(view.document()->blockCount() > 1000);
    view.flushPending();
    QVERIFY(view.document()->blockCount() <= OutputView::kMaxLines);
    QVERIFY(view.document()->characterCount() < 64 * (OutputView::kMaxLines + 2));
}

void ModelsTest::outputViewShowsTheTailOfALargeRun()
{
    // A finished run with 100 000 short lines (about 1 MB) is selected: only the last kMaxLines
    // are drawn, the newest last.
    QList<OutputChunk> chunks;
    for (int part = 0; part < 10; ++part) {
        QByteArray data;
        for (int i = part * 10000; i < (part + 1) * 10000; ++i)
            data += "line " + QByteArray::number(i) + '\n';
        chunks.append({part % 2 ? 2 : 1, data});
    }
    OutputView view;
    view.setChunks(chunks);
    QVERIFY(view.document()->blockCount() <= OutputView::kMaxLines + 1);
    QVERIFY(view.document()->blockCount() >= OutputView::kMaxLines - 1);
    const QString text = view.toPlainText();
    QVERIFY(text.contains(u"line 99999"));
    QVERIFY(!text.contains(u"line 79999\n"));
    QVERIFY(text.startsWith(u"line 80000") || text.startsWith(u"line 80001"));
}

void ModelsTest::outputViewDecodesSplitUtf8()
{
    OutputView view;
    const QByteArray text = QStringLiteral("naïve → ✓\n").toUtf8();
    for (char byte : text)
        view.appendChunk(1, QByteArray(1, byte));
    view.flushPending();
    QCOMPARE(view.document()->firstBlock().text(), QStringLiteral("naïve → ✓"));
}

void ModelsTest::envValuesStayMasked()
{
    EnvVarsView view;
    view.setVariables({QStringLiteral("API_KEY"), QStringLiteral("REGION")},
                      {{QStringLiteral("API_KEY"), QStringLiteral("sk-secret-123")},
                       {QStringLiteral("REGION"), QStringLiteral("eu-west")}});
    auto *table = view.findChild<QTableWidget *>(QStringLiteral("envTable"));
    auto *reveal = view.findChild<QCheckBox *>(QStringLiteral("revealCheck"));
    QVERIFY(table && reveal);
    QCOMPARE(table->rowCount(), 2);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("API_KEY"));
    QCOMPARE(table->item(0, 1)->text(), EnvVarsView::mask());
    QVERIFY(!visibleTexts(&view).join(u'|').contains(u"sk-secret-123"));
    reveal->setChecked(true);
    QCOMPARE(table->item(0, 1)->text(), QStringLiteral("sk-secret-123"));
    // Another run: masked again, whatever was revealed before.
    view.setVariables({QStringLiteral("API_KEY")},
                      {{QStringLiteral("API_KEY"), QStringLiteral("sk-other")}});
    QVERIFY(!view.isRevealed());
    QCOMPARE(table->item(0, 1)->text(), EnvVarsView::mask());
    // From the history: names only.
    view.setVariables({QStringLiteral("API_KEY")}, {});
    QVERIFY(table->item(0, 1)->text().contains(u"not kept"));
}

void ModelsTest::boundSecretsShowWithoutAValue()
{
    // A pass-through variable and two bound secrets: the secrets have rows of their own that
    // name their hosts, and no value, revealed or not.
    EnvVarsView view;
    const QList<BoundSecret> secrets{
        {QStringLiteral("API_KEY"),
         {QStringLiteral("api.example.com"), QStringLiteral("*.example.org")}},
        {QStringLiteral("<b>HOOK</b>"), {QStringLiteral("hooks.example.net")}}};
    view.setVariables({QStringLiteral("REGION")},
                      {{QStringLiteral("REGION"), QStringLiteral("eu-west")}}, secrets);
    auto *table = view.findChild<QTableWidget *>(QStringLiteral("envTable"));
    auto *reveal = view.findChild<QCheckBox *>(QStringLiteral("revealCheck"));
    QVERIFY(table && reveal);
    QCOMPARE(table->rowCount(), 3);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("REGION"));
    QCOMPARE(table->item(0, 1)->text(), EnvVarsView::mask());
    QCOMPARE(table->item(1, 0)->text(), QStringLiteral("API_KEY"));
    QCOMPARE(table->item(1, 1)->text(),
             QStringLiteral("bound secret — added by the gateway for api.example.com, "
                            "*.example.org"));
    QVERIFY(table->item(1, 1)->toolTip().contains(u"api.example.com"));
    // A name is shown as the text it is.
    QCOMPARE(table->item(2, 0)->text(), QStringLiteral("<b>HOOK</b>"));
    QCOMPARE(table->item(2, 1)->text(), EnvVarsView::boundText(secrets.at(1)));
    QVERIFY(table->item(2, 1)->text().contains(u"hooks.example.net"));
    // Revealing shows the pass-through value; a secret's row stays what it was.
    reveal->setChecked(true);
    QCOMPARE(table->item(0, 1)->text(), QStringLiteral("eu-west"));
    QCOMPARE(table->item(1, 1)->text(), EnvVarsView::boundText(secrets.at(0)));

    // Secrets alone (a run from the history, or no pass-through): their rows, nothing to reveal.
    view.setVariables({}, {}, secrets);
    QCOMPARE(table->rowCount(), 2);
    QVERIFY(!table->isHidden());
    QVERIFY(reveal->isHidden());
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("API_KEY"));
    QVERIFY(visibleTexts(&view).join(u'|').contains(u"Bound secrets"));

    // In the details pane: counted in the tab, shown by name, never a value (a record has none:
    // the value is only in the gateway).
    RunDetailsPane pane;
    RunRecord r =
        makeRun(QStringLiteral("s"), QStringLiteral("python"), QDateTime::currentDateTimeUtc());
    r.envNames = {QStringLiteral("REGION")};
    r.envValues = {{QStringLiteral("REGION"), QStringLiteral("eu-west")}};
    r.secrets = secrets;
    pane.showRun(&r);
    QCOMPARE(pane.tabs()->tabText(pane.tabs()->indexOf(pane.envView())),
             QStringLiteral("&Environment (3)"));
    auto *paneTable = pane.envView()->findChild<QTableWidget *>(QStringLiteral("envTable"));
    QCOMPARE(paneTable->rowCount(), 3);
    QCOMPARE(paneTable->item(1, 1)->text(), EnvVarsView::boundText(secrets.at(0)));
    // A run going on learns nothing new of them; the same rows stay.
    r.status = RunRecord::Status::Running;
    pane.updateRun(r);
    QCOMPARE(paneTable->rowCount(), 3);
}

void ModelsTest::secretsAddedAreMarkedInTheNetworkTab()
{
    NetworkView view;
    NetworkAttempt plain;
    plain.id = 1;
    plain.host = QStringLiteral("pypi.org");
    plain.port = 443;
    plain.verdict = NetworkAttempt::Verdict::Allowed;
    plain.rule = QStringLiteral("pypi.org");
    // Without a secret anywhere, no column for them.
    view.setConnections({plain});
    QVERIFY(view.isColumnHidden(NetworkView::SecretsColumn));
    QVERIFY(view.topLevelItem(0)->text(NetworkView::SecretsColumn).isEmpty());

    NetworkAttempt added = plain;
    added.id = 2;
    added.host = QStringLiteral("api.example.com");
    added.rule = QStringLiteral("api.example.com");
    added.secrets = {QStringLiteral("API_KEY")};
    NetworkAttempt two = added;
    two.id = 3;
    two.secrets = {QStringLiteral("API_KEY"), QStringLiteral("<i>OTHER</i>")};
    view.setConnections({plain, added, two});
    QVERIFY(!view.isColumnHidden(NetworkView::SecretsColumn));
    QCOMPARE(view.headerItem()->text(NetworkView::SecretsColumn), QStringLiteral("Secrets added"));
    QVERIFY(view.topLevelItem(0)->text(NetworkView::SecretsColumn).isEmpty());
    QCOMPARE(view.topLevelItem(1)->text(NetworkView::SecretsColumn),
             QStringLiteral("secret added: API_KEY"));
    QVERIFY(view.topLevelItem(1)->toolTip(NetworkView::SecretsColumn).contains(u"API_KEY"));
    QCOMPARE(view.topLevelItem(2)->text(NetworkView::SecretsColumn),
             QStringLiteral("secrets added: API_KEY, <i>OTHER</i>"));

    // Live, in the details pane: the attempt comes again once the gateway added the secret.
    RunListModel model;
    RunRecord r =
        makeRun(QStringLiteral("k"), QStringLiteral("python"), QDateTime::currentDateTimeUtc());
    model.apply(created(r));
    RunDetailsPane pane;
    pane.showRun(model.run(QStringLiteral("k")));
    QObject::connect(&model, &RunListModel::runChanged, &pane, [&](const QString &id) {
        if (const RunRecord *run = model.run(id))
            pane.updateRun(*run);
    });
    JournalEvent e;
    e.type = JournalEvent::Type::Connection;
    e.run.id = QStringLiteral("k");
    e.connection = added;
    e.connection.secrets.clear();
    model.apply(e);
    QVERIFY(pane.networkView()->isColumnHidden(NetworkView::SecretsColumn));
    e.connection.secrets = added.secrets;
    model.apply(e);
    QCOMPARE(pane.networkView()->topLevelItemCount(), 1);
    QVERIFY(!pane.networkView()->isColumnHidden(NetworkView::SecretsColumn));
    QCOMPARE(pane.networkView()->topLevelItem(0)->text(NetworkView::SecretsColumn),
             QStringLiteral("secret added: API_KEY"));
}

void ModelsTest::detailsNameThePreloadedModules()
{
    const auto detail = [](const RunDetailsPane &pane, const QString &label) -> QString {
        auto *form = pane.findChild<QFormLayout *>();
        for (int row = 0; form && row < form->rowCount(); ++row) {
            QLayoutItem *name = form->itemAt(row, QFormLayout::LabelRole);
            QLayoutItem *value = form->itemAt(row, QFormLayout::FieldRole);
            auto *n = qobject_cast<QLabel *>(name ? name->widget() : nullptr);
            auto *v = qobject_cast<QLabel *>(value ? value->widget() : nullptr);
            if (n && v && n->text() == label)
                return v->text();
        }
        return QStringLiteral("(no such row)");
    };
    RunDetailsPane pane;
    RunRecord r =
        makeRun(QStringLiteral("p"), QStringLiteral("python"), QDateTime::currentDateTimeUtc());
    pane.showRun(&r);
    // A run without preloading has no row for it.
    QCOMPARE(detail(pane, QStringLiteral("Preloaded")), QStringLiteral("(no such row)"));
    RunRecord p = r;
    p.id = QStringLiteral("q");
    p.preloaded = {QStringLiteral("pandas"), QStringLiteral("matplotlib.pyplot")};
    pane.showRun(&p);
    QCOMPARE(detail(pane, QStringLiteral("Preloaded")),
             QStringLiteral("pandas, matplotlib.pyplot"));
}

void ModelsTest::detailsPaneShowsFilesAndMasksValues()
{
    RunDetailsPane pane;
    RunRecord r =
        makeRun(QStringLiteral("a"), QStringLiteral("python"), QDateTime::currentDateTimeUtc());
    r.envNames = {QStringLiteral("TOKEN")};
    r.envValues = {{QStringLiteral("TOKEN"), QStringLiteral("tok-very-secret")}};
    r.appendOutput(1, "line\n");
    r.files.append({OutputFile::Kind::Plot, QStringLiteral("figure-0001.png"), png(64, 48), 0,
                    QStringLiteral("image/png"), true});
    r.files.append({OutputFile::Kind::Output, QStringLiteral("table.csv"), "a,b\n1,2\n", 8,
                    QStringLiteral("text/csv"), true});
    r = finished(r, RunRecord::Status::Ok, 0).run;
    pane.showRun(&r);
    QCOMPARE(pane.imageStrip()->imageCount(), 1);
    QCOMPARE(pane.imageStrip()->listedFileCount(), 1);
    QVERIFY(pane.tabs()->tabText(2).contains(u"(2)"));
    QVERIFY(pane.outputView()->toPlainText().contains(u"exit code 0"));
    const QString texts = visibleTexts(&pane).join(u'|');
    QVERIFY(texts.contains(u"TOKEN"));
    QVERIFY(!texts.contains(u"tok-very-secret"));

    // Live output of the shown run streams in; output of another run does not.
    RunRecord live =
        makeRun(QStringLiteral("b"), QStringLiteral("bash"), QDateTime::currentDateTimeUtc());
    pane.showRun(&live);
    pane.appendOutput(QStringLiteral("b"), 1, "tick\n");
    pane.appendOutput(QStringLiteral("a"), 1, "not mine\n");
    pane.outputView()->flushPending();
    QCOMPARE(pane.outputView()->toPlainText(), QStringLiteral("tick\n"));
}

void ModelsTest::connectionsShowLiveInTheNetworkTab()
{
    // A run in the allow-list mode: each connection the gateway decided arrives as it happens,
    // again with its bytes once it ended; the Network tab appears with the first and counts the
    // refused ones; the finished record carries them all.
    RunListModel model;
    RunRecord r =
        makeRun(QStringLiteral("n"), QStringLiteral("python"), QDateTime::currentDateTimeUtc());
    model.apply(created(r));
    RunDetailsPane pane;
    pane.showRun(model.run(QStringLiteral("n")));
    QVERIFY(!pane.tabs()->isTabVisible(pane.tabs()->indexOf(pane.networkPage())));
    QObject::connect(&model, &RunListModel::runChanged, &pane, [&](const QString &id) {
        if (const RunRecord *run = model.run(id))
            pane.updateRun(*run);
    });
    const auto connection = [](quint64 id, const QString &host, NetworkAttempt::Verdict v,
                               const QString &rule) {
        JournalEvent e;
        e.type = JournalEvent::Type::Connection;
        e.run.id = QStringLiteral("n");
        e.connection.id = id;
        e.connection.host = host;
        e.connection.port = 443;
        e.connection.verdict = v;
        e.connection.rule = rule;
        return e;
    };
    JournalEvent allowed = connection(1, QStringLiteral("pypi.org"),
                                      NetworkAttempt::Verdict::Allowed, QStringLiteral("pypi.org"));
    model.apply(allowed);
    model.apply(connection(2, QStringLiteral("<b>evil</b>.example"),
                           NetworkAttempt::Verdict::Refused,
                           QStringLiteral("not on the allow-list")));
    allowed.connection.bytesUp = 517;
    allowed.connection.bytesDown = 2048;
    allowed.connection.ms = 80;
    model.apply(allowed);
    // Another run's connection is not this one's.
    JournalEvent stray = connection(9, QStringLiteral("x.test"), NetworkAttempt::Verdict::Allowed,
                                    QStringLiteral("x.test"));
    stray.run.id = QStringLiteral("other");
    model.apply(stray);

    const RunRecord *run = model.run(QStringLiteral("n"));
    QCOMPARE(run->connections.size(), 2);
    QCOMPARE(run->connections.at(0).bytesDown, qint64(2048));
    const int tab = pane.tabs()->indexOf(pane.networkPage());
    QVERIFY(pane.tabs()->isTabVisible(tab));
    QCOMPARE(pane.tabs()->tabText(tab), QStringLiteral("&Network (1 refused)"));
    QTreeWidget *view = pane.networkView();
    QCOMPARE(view->topLevelItemCount(), 2);
    QCOMPARE(view->topLevelItem(0)->text(NetworkView::HostColumn), QStringLiteral("pypi.org:443"));
    QCOMPARE(view->topLevelItem(0)->text(NetworkView::VerdictColumn), QStringLiteral("allowed"));
    QCOMPARE(view->topLevelItem(0)->text(NetworkView::TimeColumn), QStringLiteral("80 ms"));
    QCOMPARE(view->topLevelItem(1)->text(NetworkView::HostColumn),
             QStringLiteral("<b>evil</b>.example:443"));
    QCOMPARE(view->topLevelItem(1)->text(NetworkView::RuleColumn),
             QStringLiteral("not on the allow-list"));
    QVERIFY(view->topLevelItem(1)->text(NetworkView::SentColumn).isEmpty());

    // "Allow for this assistant": only for a connection refused for not being on the list.
    auto *allow = pane.findChild<QPushButton *>(QStringLiteral("allowHostButton"));
    QVERIFY(allow);
    QVERIFY(!allow->isEnabled());
    QSignalSpy asked(&pane, &RunDetailsPane::allowHostRequested);
    view->setCurrentItem(view->topLevelItem(0)); // the allowed one
    QVERIFY(!allow->isEnabled());
    view->setCurrentItem(view->topLevelItem(1));
    QVERIFY(allow->isEnabled());
    allow->click();
    QCOMPARE(asked.size(), 1);
    QCOMPARE(asked.first().at(0).toString(), r.source);
    QCOMPARE(asked.first().at(1).toString(), QStringLiteral("<b>evil</b>.example"));
    pane.setAllowHostOutcome(QStringLiteral("<b>done</b>"));
    QCOMPARE(pane.findChild<QLabel *>(QStringLiteral("allowHostOutcome"))->textFormat(),
             Qt::PlainText);
    // A name that leads inward is not a list's to allow.
    JournalEvent inward =
        connection(3, QStringLiteral("db.internal"), NetworkAttempt::Verdict::Refused,
                   QStringLiteral("db.internal resolves to 10.0.0.5, a private "
                                  "address; list the host itself to reach it"));
    model.apply(inward);
    view->setCurrentItem(view->topLevelItem(2));
    QVERIFY(!allow->isEnabled());
    QCOMPARE(NetworkView::patternFor(inward.connection), QStringLiteral("db.internal"));
    inward.connection.host = QStringLiteral("2001:db8::1");
    inward.connection.port = 8443;
    QCOMPARE(NetworkView::patternFor(inward.connection), QStringLiteral("[2001:db8::1]:8443"));

    // A connection held while the window asks shows as waiting, then as decided (same id).
    JournalEvent held =
        connection(4, QStringLiteral("files.example"), NetworkAttempt::Verdict::Held, QString());
    model.apply(held);
    QCOMPARE(view->topLevelItemCount(), 4);
    QCOMPARE(view->topLevelItem(3)->text(NetworkView::VerdictColumn), QStringLiteral("asking"));
    QCOMPARE(view->topLevelItem(3)->text(NetworkView::RuleColumn),
             QStringLiteral("held until you answer the question in the window"));
    QCOMPARE(pane.tabs()->tabText(tab), QStringLiteral("&Network (2 refused)"));
    held.connection.verdict = NetworkAttempt::Verdict::Allowed;
    held.connection.rule = QStringLiteral("allowed when asked");
    model.apply(held);
    QCOMPARE(view->topLevelItemCount(), 4);
    QCOMPARE(view->topLevelItem(3)->text(NetworkView::VerdictColumn), QStringLiteral("allowed"));
    QCOMPARE(view->topLevelItem(3)->text(NetworkView::RuleColumn),
             QStringLiteral("allowed when asked"));
    run = model.run(QStringLiteral("n"));

    // The end carries them all (a window that opened mid-run gets them from it).
    RunRecord end = *run;
    end.connections.removeFirst();
    model.apply(finished(end, RunRecord::Status::Ok, 0));
    QCOMPARE(end.connections.size(), 3);
    QCOMPARE(model.run(QStringLiteral("n"))->connections, end.connections);
    QCOMPARE(pane.networkView()->topLevelItemCount(), 3);
}

void ModelsTest::requestDataIsShownAsText()
{
    // What an assistant, a program or a headless instance chose (names, errors) reaches labels
    // and tooltips, which would read it as HTML when it starts like HTML: "<!--" would hide the
    // rest. Everything here is shown as the text it is.
    const QString source = QStringLiteral("<b>bold</b> client <!--");
    const QString session = QStringLiteral("<b></b><!--session-->");
    const QString error = QStringLiteral("failed <b>here</b> <!-- hidden -->");
    const QString fileName = QStringLiteral("<b>x</b><!--out.csv");
    RunListModel model;
    RunRecord r = makeRun(QStringLiteral("a"), QStringLiteral("python"),
                          QDateTime::currentDateTimeUtc(), source);
    r.tool = QStringLiteral("<b>t</b><!--tool");
    r.sessionId = session;
    r.files.append({OutputFile::Kind::Output, fileName, "1", 1, QStringLiteral("text/csv"), true});
    model.apply(created(r));
    r.error = error;
    model.apply(finished(r, RunRecord::Status::Error, -1));
    const RunRecord *run = model.run(QStringLiteral("a"));
    QVERIFY(run);

    RunDetailsPane pane;
    pane.showRun(run);
    const QString shown = shownTexts(&pane);
    for (const QString &expected : {source, session, error, r.tool})
        QVERIFY2(shown.contains(expected),
                 qPrintable(expected + QStringLiteral("\n---\n") + shown));
    const auto *subtitleLabel = pane.findChild<QLabel *>(QStringLiteral("runSubtitle"));
    QVERIFY(subtitleLabel);
    const QString subtitle = shownText(subtitleLabel);
    QVERIFY2(subtitle.contains(source) && subtitle.contains(session), qPrintable(subtitle));
    auto *files = pane.imageStrip()->findChild<QListWidget *>(QStringLiteral("fileList"));
    QCOMPARE(files->count(), 1);
    QVERIFY2(shownToolTip(files->item(0)->toolTip()).contains(fileName),
             qPrintable(files->item(0)->toolTip()));

    const auto tip = [](const QModelIndex &index) {
        return shownToolTip(index.data(Qt::ToolTipRole).toString());
    };
    QVERIFY(tip(model.index(0, RunListModel::SourceColumn)).contains(error));
    QVERIFY(tip(model.index(0, RunListModel::SessionColumn)).contains(session));
    SessionTreeModel tree(&model);
    const QModelIndex sessionRow = tree.index(0, RunListModel::SessionColumn);
    QVERIFY(sessionRow.data(SessionTreeModel::IsSessionRole).toBool());
    QVERIFY2(tip(sessionRow).contains(session), qPrintable(tip(sessionRow)));
    QVERIFY(tip(tree.index(0, RunListModel::SessionColumn, tree.index(0, 0))).contains(session));
}

QTEST_MAIN(ModelsTest)
#include "tst_models.moc"
