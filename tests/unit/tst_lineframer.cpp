#include "lineframer.h"

#include <QTest>

namespace {
struct Collected
{
    QByteArrayList lines;
    int oversized = 0;
    QByteArray rest;
};

// Runs `pieces` through a fresh framer and flushes it at the end, as the stdio transport does.
Collected run(const QByteArrayList &pieces, qsizetype maxLine)
{
    LineFramer framer(maxLine);
    Collected c;
    for (const QByteArray &piece : pieces) {
        const LineFramer::Output out = framer.feed(piece);
        c.lines += out.lines;
        c.oversized += out.oversized;
    }
    c.rest = framer.flush();
    return c;
}
} // namespace

class tst_LineFramer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void frames_data();
    void wholeInput_data() { frames_data(); }
    void wholeInput();
    void splitAtEveryOffset_data() { frames_data(); }
    void splitAtEveryOffset();
    void byteByByte_data() { frames_data(); }
    void byteByByte();

    void lineArrivesWhenItsNewlineDoes();
    void oversizedCountedOncePerLine();
    void flushResetsDiscarding();
};

void tst_LineFramer::frames_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<int>("maxLine");
    QTest::addColumn<QByteArrayList>("lines");
    QTest::addColumn<int>("oversized");
    QTest::addColumn<QByteArray>("rest"); // what flush() returns at the end

    const int big = 1024;
    QTest::newRow("nothing") << QByteArray() << big << QByteArrayList() << 0 << QByteArray();
    QTest::newRow("one line") << QByteArray("{\"id\":1}\n") << big << QByteArrayList{"{\"id\":1}"}
                              << 0 << QByteArray();
    QTest::newRow("three lines") << QByteArray("a\nbb\nccc\n") << big
                                 << QByteArrayList{"a", "bb", "ccc"} << 0 << QByteArray();
    QTest::newRow("crlf") << QByteArray("a\r\nb\r\n") << big << QByteArrayList{"a", "b"} << 0
                          << QByteArray();
    QTest::newRow("cr inside a line is kept")
        << QByteArray("a\rb\n") << big << QByteArrayList{"a\rb"} << 0 << QByteArray();
    QTest::newRow("empty lines skipped") << QByteArray("\n\r\n  \n{}\n\t\r\n\n[]\n") << big
                                         << QByteArrayList{"{}", "[]"} << 0 << QByteArray();
    QTest::newRow("spaces around content kept")
        << QByteArray(" {} \n") << big << QByteArrayList{" {} "} << 0 << QByteArray();
    QTest::newRow("unterminated last line")
        << QByteArray("a\nlast") << big << QByteArrayList{"a"} << 0 << QByteArray("last");
    QTest::newRow("unterminated with cr")
        << QByteArray("a\r") << big << QByteArrayList() << 0 << QByteArray("a");
    QTest::newRow("unterminated whitespace")
        << QByteArray("x\n \t ") << big << QByteArrayList{"x"} << 0 << QByteArray();
    QTest::newRow("binary bytes") << QByteArray("\xff\0\x01\n", 4) << big
                                  << QByteArrayList{QByteArray("\xff\0\x01", 3)} << 0
                                  << QByteArray();

    QTest::newRow("exactly the limit")
        << QByteArray("01234567\n") << 8 << QByteArrayList{"01234567"} << 0 << QByteArray();
    QTest::newRow("oversized then a line")
        << QByteArray("0123456789\nok\n") << 8 << QByteArrayList{"ok"} << 1 << QByteArray();
    QTest::newRow("line, oversized, line") << QByteArray("ok\n0123456789abcdef\nfine\n") << 8
                                           << QByteArrayList{"ok", "fine"} << 1 << QByteArray();
    QTest::newRow("two oversized")
        << QByteArray("aaaaaa\nbbbbbbb\nc\n") << 4 << QByteArrayList{"c"} << 2 << QByteArray();
    QTest::newRow("oversized then unterminated")
        << QByteArray("0123456789\ntail") << 8 << QByteArrayList() << 1 << QByteArray("tail");
    QTest::newRow("oversized unterminated")
        << QByteArray("0123456789abc") << 8 << QByteArrayList() << 1 << QByteArray();
}

void tst_LineFramer::wholeInput()
{
    QFETCH(QByteArray, input);
    QFETCH(int, maxLine);
    QFETCH(QByteArrayList, lines);
    QFETCH(int, oversized);
    QFETCH(QByteArray, rest);

    const Collected c = run({input}, maxLine);
    QCOMPARE(c.lines, lines);
    QCOMPARE(c.oversized, oversized);
    QCOMPARE(c.rest, rest);
}

void tst_LineFramer::splitAtEveryOffset()
{
    QFETCH(QByteArray, input);
    QFETCH(int, maxLine);
    QFETCH(QByteArrayList, lines);
    QFETCH(int, oversized);
    QFETCH(QByteArray, rest);

    for (qsizetype at = 0; at <= input.size(); ++at) {
        const QString where = QStringLiteral("split at %1").arg(at);
        const Collected c = run({input.left(at), input.mid(at)}, maxLine);
        QVERIFY2(c.lines == lines, qPrintable(where));
        QVERIFY2(c.oversized == oversized, qPrintable(where));
        QVERIFY2(c.rest == rest, qPrintable(where));
    }
}

void tst_LineFramer::byteByByte()
{
    QFETCH(QByteArray, input);
    QFETCH(int, maxLine);
    QFETCH(QByteArrayList, lines);
    QFETCH(int, oversized);
    QFETCH(QByteArray, rest);

    QByteArrayList pieces;
    for (char c : input)
        pieces.append(QByteArray(1, c));
    const Collected c = run(pieces, maxLine);
    QCOMPARE(c.lines, lines);
    QCOMPARE(c.oversized, oversized);
    QCOMPARE(c.rest, rest);
}

void tst_LineFramer::lineArrivesWhenItsNewlineDoes()
{
    LineFramer framer;
    QCOMPARE(framer.feed("{\"jsonrpc\":").lines, QByteArrayList());
    QCOMPARE(framer.feed("\"2.0\"}").lines, QByteArrayList());
    QCOMPARE(framer.feed("\n{").lines, QByteArrayList{"{\"jsonrpc\":\"2.0\"}"});
    QCOMPARE(framer.feed("}\n").lines, QByteArrayList{"{}"});
    QCOMPARE(framer.flush(), QByteArray());
}

void tst_LineFramer::oversizedCountedOncePerLine()
{
    // The count is reported by the feed that crosses the limit, not again by later pieces.
    LineFramer framer(4);
    QCOMPARE(framer.feed("abcdef").oversized, 1);
    QCOMPARE(framer.feed("ghijkl").oversized, 0);
    const LineFramer::Output out = framer.feed("mn\nok\n");
    QCOMPARE(out.oversized, 0);
    QCOMPARE(out.lines, QByteArrayList{"ok"});
}

void tst_LineFramer::flushResetsDiscarding()
{
    LineFramer framer(4);
    QCOMPARE(framer.feed("toolong").oversized, 1);
    QCOMPARE(framer.flush(), QByteArray());
    // A new stream starts clean: its first line is not taken for the rest of the dropped one.
    QCOMPARE(framer.feed("ok\n").lines, QByteArrayList{"ok"});
}

QTEST_GUILESS_MAIN(tst_LineFramer)
#include "tst_lineframer.moc"
