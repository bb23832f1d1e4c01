#include "exitmarkerscanner.h"

#include <QTest>

namespace {
// Shaped like the real ones: 128 random bits in hex.
const QByteArray kNonce = "3f9a1c0b7e2d4a6f8b1c2d3e4f5a6b7c";

struct Scanned
{
    QByteArray output;
    bool found = false;
    int status = -1;
};

// Feeds `pieces` through a fresh scanner and flushes it at the end of the stream.
Scanned scan(const QByteArrayList &pieces)
{
    ExitMarkerScanner scanner(kNonce);
    Scanned s;
    for (const QByteArray &piece : pieces)
        s.output += scanner.feed(piece);
    s.output += scanner.flush();
    s.found = scanner.found();
    s.status = scanner.status();
    return s;
}
} // namespace

class tst_ExitMarkerScanner : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void streams_data();
    void wholeStream_data() { streams_data(); }
    void wholeStream();
    void splitAtEveryOffset_data() { streams_data(); }
    void splitAtEveryOffset();
    void byteByByte_data() { streams_data(); }
    void byteByByte();

    void statusSplitAcrossFeeds();
    void outputPassedOnOnceItCannotBeTheNonce();
    void nothingAfterTheMarker();
    void flushWithoutMarker();
    void outOfMemoryFlag_data();
    void outOfMemoryFlag();
    void flags_data();
    void usageValues_data();
    void usageValues();
    void flags();
    void moduleLists();
    void overlongStatusLine();
    void statusLineAtTheLengthLimit();
};

void tst_ExitMarkerScanner::outOfMemoryFlag_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("status");
    QTest::addColumn<bool>("oom");
    QTest::newRow("killed for memory") << QByteArray(" 137 oom\n") << 137 << true;
    QTest::newRow("killed otherwise") << QByteArray(" 137\n") << 137 << false;
    QTest::newRow("other word") << QByteArray(" 137 oomx\n") << 137 << false;
    QTest::newRow("normal exit") << QByteArray(" 0\n") << 0 << false;
}

void tst_ExitMarkerScanner::outOfMemoryFlag()
{
    QFETCH(QByteArray, line);
    QFETCH(int, status);
    QFETCH(bool, oom);
    // Split at every offset: the flag must survive arriving in pieces.
    const QByteArray stream = "out\n" + kNonce + line;
    for (qsizetype cut = 0; cut <= stream.size(); ++cut) {
        ExitMarkerScanner s(kNonce);
        QByteArray visible = s.feed(stream.left(cut));
        visible += s.feed(stream.mid(cut));
        QCOMPARE(visible, QByteArray("out\n"));
        QVERIFY(s.found());
        QCOMPARE(s.status(), status);
        QCOMPARE(s.outOfMemory(), oom);
    }
}

void tst_ExitMarkerScanner::usageValues_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<qint64>("mem");
    QTest::addColumn<qint64>("cpu");
    QTest::addColumn<bool>("plots");
    QTest::newRow("both") << QByteArray(" 0 mem=4493312 cpu=90\n") << qint64(4493312) << qint64(90)
                          << false;
    QTest::newRow("after file flags") << QByteArray(" 1 out plots mem=536870912 cpu=0\n")
                                      << qint64(536870912) << qint64(0) << true;
    QTest::newRow("none (an older supervisor)")
        << QByteArray(" 0 plots\n") << qint64(-1) << qint64(-1) << true;
    QTest::newRow("not a number") << QByteArray(" 0 mem=lots cpu=-5\n") << qint64(-1) << qint64(-1)
                                  << false;
    QTest::newRow("a name that only starts alike")
        << QByteArray(" 0 memory=5 cpus=2\n") << qint64(-1) << qint64(-1) << false;
    QTest::newRow("longest line the supervisor writes")
        << QByteArray(" 137 oom compile out plots mem=9223372036854775807 cpu=99999999999\n")
        << qint64(9223372036854775807LL) << qint64(99999999999LL) << true;
}

void tst_ExitMarkerScanner::usageValues()
{
    QFETCH(QByteArray, line);
    QFETCH(qint64, mem);
    QFETCH(qint64, cpu);
    QFETCH(bool, plots);
    const QByteArray stream = "out\n" + kNonce + line;
    for (qsizetype cut = 0; cut <= stream.size(); ++cut) {
        ExitMarkerScanner s(kNonce);
        QByteArray visible = s.feed(stream.left(cut));
        visible += s.feed(stream.mid(cut));
        QCOMPARE(visible, QByteArray("out\n"));
        QVERIFY(s.found());
        QCOMPARE(s.value("mem"), mem);
        QCOMPARE(s.value("cpu"), cpu);
        QCOMPARE(s.hasFlag("plots"), plots);
    }
}

void tst_ExitMarkerScanner::flags_data()
{
    QTest::addColumn<QByteArray>("line");
    QTest::addColumn<int>("status");
    QTest::addColumn<bool>("oom");
    QTest::addColumn<bool>("compile");
    QTest::addColumn<bool>("out");
    QTest::addColumn<bool>("plots");

    QTest::newRow("build failed") << QByteArray(" 1 compile\n") << 1 << false << true << false
                                  << false;
    QTest::newRow("outputs and plots")
        << QByteArray(" 0 out plots\n") << 0 << false << false << true << true;
    QTest::newRow("plots before outputs")
        << QByteArray(" 0 plots out\n") << 0 << false << false << true << true;
    QTest::newRow("plots only") << QByteArray(" 0 plots\n") << 0 << false << false << false << true;
    QTest::newRow("killed for memory, with outputs")
        << QByteArray(" 137 oom out\n") << 137 << true << false << true << false;
    QTest::newRow("every flag") << QByteArray(" 137 oom compile out plots\n") << 137 << true << true
                                << true << true;
    QTest::newRow("no flags") << QByteArray(" 0\n") << 0 << false << false << false << false;
    QTest::newRow("word that starts like a flag")
        << QByteArray(" 2 compilex\n") << 2 << false << false << false << false;
    QTest::newRow("word that ends like a flag")
        << QByteArray(" 0 layout\n") << 0 << false << false << false << false;
    QTest::newRow("flags are case-sensitive")
        << QByteArray(" 0 OUT Plots\n") << 0 << false << false << false << false;
    QTest::newRow("flags glued together")
        << QByteArray(" 0 out,plots\n") << 0 << false << false << false << false;
    QTest::newRow("extra spaces and cr")
        << QByteArray("  1   compile  out \r\n") << 1 << false << true << true << false;
    QTest::newRow("tab between words")
        << QByteArray(" 0\tout\n") << 0 << false << false << true << false;
    QTest::newRow("flags after a bad status")
        << QByteArray(" x out\n") << -1 << false << false << true << false;
}

void tst_ExitMarkerScanner::flags()
{
    QFETCH(QByteArray, line);
    QFETCH(int, status);
    QFETCH(bool, oom);
    QFETCH(bool, compile);
    QFETCH(bool, out);
    QFETCH(bool, plots);

    // Split at every offset: the flags must survive arriving in pieces.
    const QByteArray stream = "out\n" + kNonce + line + "late out plots\n";
    for (qsizetype cut = 0; cut <= stream.size(); ++cut) {
        const QString where = QStringLiteral("split at %1").arg(cut);
        ExitMarkerScanner s(kNonce);
        QByteArray visible = s.feed(stream.left(cut));
        visible += s.feed(stream.mid(cut));
        visible += s.flush();
        QVERIFY2(visible == "out\n", qPrintable(where));
        QVERIFY2(s.found(), qPrintable(where));
        QVERIFY2(s.status() == status, qPrintable(where));
        QVERIFY2(s.outOfMemory() == oom, qPrintable(where));
        QVERIFY2(s.hasFlag("oom") == oom, qPrintable(where));
        QVERIFY2(s.hasFlag("compile") == compile, qPrintable(where));
        QVERIFY2(s.hasFlag("out") == out, qPrintable(where));
        QVERIFY2(s.hasFlag("plots") == plots, qPrintable(where));
        // The status itself is not a flag, nor is the nothing between words.
        QVERIFY2(!s.hasFlag(QByteArray::number(status)), qPrintable(where));
        QVERIFY2(!s.hasFlag(QByteArray()), qPrintable(where));
    }
}

void tst_ExitMarkerScanner::moduleLists()
{
    // The Python loader's longest line: 14 preloaded modules with their costs, 16 imports, all
    // 64 characters long, after the usual flags. It is a status line all the same.
    const QByteArray name(64, 'm');
    QByteArrayList preloaded, imports;
    for (int i = 0; i < 14; ++i)
        preloaded.append(name + ":1234567890");
    for (int i = 0; i < 16; ++i)
        imports.append(name);
    const QByteArray line =
        " 0 out plots mem=123456789012 cpu=1234567 preloaded=" + preloaded.join(',') +
        " preload-dropped=" + imports.mid(0, 14).join(',') + " imports=" + imports.join(',') + "\n";
    ExitMarkerScanner s(kNonce);
    QCOMPARE(s.feed("out\n" + kNonce + line), QByteArray("out\n"));
    QVERIFY(s.found());
    QCOMPARE(s.list("preloaded").size(), 14);
    QCOMPARE(s.list("preloaded").first(), name + ":1234567890");
    QCOMPARE(s.list("imports").size(), 16);
    QCOMPARE(s.list("preload-dropped").size(), 14);
    QVERIFY(s.list("preload").isEmpty());
    QCOMPARE(s.value("cpu"), 1234567);

    ExitMarkerScanner small(kNonce);
    small.feed(kNonce + " 0 imports=pandas,matplotlib.pyplot\n");
    QCOMPARE(small.list("imports"), QByteArrayList({"pandas", "matplotlib.pyplot"}));
    QVERIFY(small.list("preloaded").isEmpty());
}

void tst_ExitMarkerScanner::overlongStatusLine()
{
    // More than kMaxStatusLine bytes after the nonce without a newline is not a status line: the
    // scanner gives up (found, no status, no flags) and drops the rest.
    const QByteArray tail =
        " 0 out plots " + QByteArray(ExitMarkerScanner::kMaxStatusLine - 12, 'x');
    QCOMPARE(tail.size(), ExitMarkerScanner::kMaxStatusLine + 1);
    const QByteArray stream = "before\n" + kNonce + tail;
    for (qsizetype cut = 0; cut <= stream.size(); ++cut) {
        const QString where = QStringLiteral("split at %1").arg(cut);
        ExitMarkerScanner s(kNonce);
        QByteArray visible = s.feed(stream.left(cut));
        visible += s.feed(stream.mid(cut));
        visible += s.feed("\nafter\n");
        visible += s.flush();
        QVERIFY2(visible == "before\n", qPrintable(where));
        QVERIFY2(s.found(), qPrintable(where));
        QVERIFY2(s.status() == -1, qPrintable(where));
        QVERIFY2(!s.hasFlag("out"), qPrintable(where));
        QVERIFY2(!s.hasFlag("plots"), qPrintable(where));
    }
}

void tst_ExitMarkerScanner::statusLineAtTheLengthLimit()
{
    // kMaxStatusLine bytes after the nonce are still waited on: the newline decides.
    const QByteArray tail = " 3 out " + QByteArray(ExitMarkerScanner::kMaxStatusLine - 7, ' ');
    QCOMPARE(tail.size(), ExitMarkerScanner::kMaxStatusLine);
    ExitMarkerScanner s(kNonce);
    QCOMPARE(s.feed("x" + kNonce + tail), QByteArray("x"));
    QVERIFY(!s.found());
    QCOMPARE(s.feed("\n"), QByteArray());
    QVERIFY(s.found());
    QCOMPARE(s.status(), 3);
    QVERIFY(s.hasFlag("out"));
}

void tst_ExitMarkerScanner::streams_data()
{
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<QByteArray>("output");
    QTest::addColumn<bool>("found");
    QTest::addColumn<int>("status");

    const QByteArray &n = kNonce;
    QTest::newRow("status 0 after output") << "hello\n" + n + " 0\n"
                                           << QByteArray("hello\n") << true << 0;
    QTest::newRow("output without trailing newline") << "hello" + n + " 3\n"
                                                     << QByteArray("hello") << true << 3;
    QTest::newRow("no output") << n + " 0\n" << QByteArray() << true << 0;
    QTest::newRow("status 1") << "Traceback\n" + n + " 1\n"
                              << QByteArray("Traceback\n") << true << 1;
    QTest::newRow("status 137") << n + " 137\n" << QByteArray() << true << 137;
    QTest::newRow("status 255") << n + " 255\n" << QByteArray() << true << 255;
    QTest::newRow("negative status") << n + " -7\n" << QByteArray() << true << -7;
    QTest::newRow("largest int status") << n + " 2147483647\n"
                                        << QByteArray() << true << 2147483647;
    QTest::newRow("status beyond int") << n + " 99999999999\n" << QByteArray() << true << -1;
    QTest::newRow("status not a number") << n + " abc\n" << QByteArray() << true << -1;
    QTest::newRow("empty status") << n + "\n" << QByteArray() << true << -1;
    QTest::newRow("status with cr") << n + " 4\r\n" << QByteArray() << true << 4;
    QTest::newRow("data after the marker dropped") << "out\n" + n + " 0\nlate output\n"
                                                   << QByteArray("out\n") << true << 0;
    QTest::newRow("second marker ignored") << "a" + n + " 1\n" + n + " 2\n"
                                           << QByteArray("a") << true << 1;
    QTest::newRow("nonce prefix in output passed through")
        << "id " + n.left(12) + " is not it\n" + n + " 0\n"
        << "id " + n.left(12) + " is not it\n"
        << true << 0;
    QTest::newRow("nonce minus its last byte in output") << n.chopped(1) + "!\n" + n + " 5\n"
                                                         << n.chopped(1) + "!\n"
                                                         << true << 5;
    QTest::newRow("nonce prefix right before the nonce") << n.left(20) + n + " 6\n"
                                                         << n.left(20) << true << 6;
    QTest::newRow("binary output") << QByteArray("\0\xff\n", 3) + n + " 0\n"
                                   << QByteArray("\0\xff\n", 3) << true << 0;
    QTest::newRow("no marker") << QByteArray("just output\n") << QByteArray("just output\n")
                               << false << -1;
    QTest::newRow("no marker, ends in a nonce prefix")
        << "abc " + n.left(10) << "abc " + n.left(10) << false << -1;
    QTest::newRow("nonce without its status line")
        << "x" + n + " 0" << QByteArray("x") << false << -1;
    QTest::newRow("empty stream") << QByteArray() << QByteArray() << false << -1;
}

void tst_ExitMarkerScanner::wholeStream()
{
    QFETCH(QByteArray, stream);
    QFETCH(QByteArray, output);
    QFETCH(bool, found);
    QFETCH(int, status);

    const Scanned s = scan({stream});
    QCOMPARE(s.output, output);
    QCOMPARE(s.found, found);
    QCOMPARE(s.status, status);
}

void tst_ExitMarkerScanner::splitAtEveryOffset()
{
    QFETCH(QByteArray, stream);
    QFETCH(QByteArray, output);
    QFETCH(bool, found);
    QFETCH(int, status);

    for (qsizetype at = 0; at <= stream.size(); ++at) {
        const QString where = QStringLiteral("split at %1").arg(at);
        const Scanned s = scan({stream.left(at), stream.mid(at)});
        QVERIFY2(s.output == output, qPrintable(where));
        QVERIFY2(s.found == found, qPrintable(where));
        QVERIFY2(s.status == status, qPrintable(where));
    }
}

void tst_ExitMarkerScanner::byteByByte()
{
    QFETCH(QByteArray, stream);
    QFETCH(QByteArray, output);
    QFETCH(bool, found);
    QFETCH(int, status);

    QByteArrayList pieces;
    for (char c : stream)
        pieces.append(QByteArray(1, c));
    const Scanned s = scan(pieces);
    QCOMPARE(s.output, output);
    QCOMPARE(s.found, found);
    QCOMPARE(s.status, status);
}

void tst_ExitMarkerScanner::statusSplitAcrossFeeds()
{
    ExitMarkerScanner scanner(kNonce);
    QCOMPARE(scanner.feed("out" + kNonce + " 4"), QByteArray("out"));
    QVERIFY(!scanner.found());
    QCOMPARE(scanner.feed("2"), QByteArray());
    QVERIFY(!scanner.found());
    QCOMPARE(scanner.feed("\n"), QByteArray());
    QVERIFY(scanner.found());
    QCOMPARE(scanner.status(), 42);
}

void tst_ExitMarkerScanner::outputPassedOnOnceItCannotBeTheNonce()
{
    // Held back only while it could still grow into the nonce, so output is not delayed.
    ExitMarkerScanner scanner(kNonce);
    QCOMPARE(scanner.feed("progress 10%\n"), QByteArray("progress 10%\n"));
    QCOMPARE(scanner.feed("x" + kNonce.left(10)), QByteArray("x"));
    QCOMPARE(scanner.feed(kNonce.mid(10, 5)), QByteArray());
    QCOMPARE(scanner.feed("?"), kNonce.left(15) + "?");
    QVERIFY(!scanner.found());
}

void tst_ExitMarkerScanner::nothingAfterTheMarker()
{
    ExitMarkerScanner scanner(kNonce);
    QCOMPARE(scanner.feed("done\n" + kNonce + " 0\n"), QByteArray("done\n"));
    QVERIFY(scanner.found());
    QCOMPARE(scanner.feed("faked " + kNonce + " 1\n"), QByteArray());
    QCOMPARE(scanner.flush(), QByteArray());
    QCOMPARE(scanner.status(), 0);
}

void tst_ExitMarkerScanner::flushWithoutMarker()
{
    ExitMarkerScanner scanner(kNonce);
    QCOMPARE(scanner.feed("killed mid-line " + kNonce.left(3)), QByteArray("killed mid-line "));
    QCOMPARE(scanner.flush(), kNonce.left(3));
    QCOMPARE(scanner.flush(), QByteArray());
    QVERIFY(!scanner.found());
    QCOMPARE(scanner.status(), -1);
}

QTEST_GUILESS_MAIN(tst_ExitMarkerScanner)
#include "tst_exitmarkerscanner.moc"
