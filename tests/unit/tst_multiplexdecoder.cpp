#include "multiplexdecoder.h"

#include <QTest>
#include <utility>

using Decoded = QList<std::pair<int, QByteArray>>;

namespace {
// One frame as the engine writes it: stream byte, three zero bytes, big-endian length, payload.
QByteArray frame(int stream, const QByteArray &payload)
{
    const quint32 n = quint32(payload.size());
    QByteArray header(8, '\0');
    header[0] = char(stream);
    header[4] = char(n >> 24);
    header[5] = char(n >> 16);
    header[6] = char(n >> 8);
    header[7] = char(n);
    return header + payload;
}

Decoded flatten(const QList<MultiplexDecoder::Frame> &frames)
{
    Decoded out;
    for (const auto &f : frames)
        out.append({f.stream, f.data});
    return out;
}

QByteArray pattern(qsizetype size)
{
    QByteArray b(size, Qt::Uninitialized);
    for (qsizetype i = 0; i < size; ++i)
        b[i] = char((i * 131 + 7) % 251);
    return b;
}
} // namespace

class tst_MultiplexDecoder : public QObject
{
    Q_OBJECT

private:
    // Streams small enough to be split at every offset.
    void addSmallStreams();

private Q_SLOTS:
    void wholeStream_data();
    void wholeStream();
    void splitAtEveryOffset_data();
    void splitAtEveryOffset();
    void byteByByte_data();
    void byteByByte();
    void largePayloadInChunks_data();
    void largePayloadInChunks();
    void partialFrameIsHeld();
    void invalidStream_data();
    void invalidStream();
    void staysBrokenAfterInvalidStream();
};

void tst_MultiplexDecoder::addSmallStreams()
{
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<Decoded>("expected");

    QTest::newRow("nothing") << QByteArray() << Decoded();
    QTest::newRow("stdout") << frame(1, "hello\n") << Decoded{{1, "hello\n"}};
    QTest::newRow("stderr") << frame(2, "Traceback\n") << Decoded{{2, "Traceback\n"}};
    QTest::newRow("stdin") << frame(0, "x") << Decoded{{0, "x"}};
    QTest::newRow("empty payload") << frame(1, QByteArray()) << Decoded{{1, QByteArray()}};
    QTest::newRow("empty between full") << frame(1, "a") + frame(2, QByteArray()) + frame(1, "b")
                                        << Decoded{{1, "a"}, {2, QByteArray()}, {1, "b"}};
    QTest::newRow("interleaved") << frame(1, "out 1\n") + frame(2, "err 1\n") + frame(1, "out 2\n")
                                 << Decoded{{1, "out 1\n"}, {2, "err 1\n"}, {1, "out 2\n"}};
    // Payload bytes that look like a header must not be taken for one.
    QTest::newRow("header-like payload")
        << frame(2, QByteArray("\x01\0\0\0\0\0\0\x05", 8)) + frame(1, QByteArray(1, '\0'))
        << Decoded{{2, QByteArray("\x01\0\0\0\0\0\0\x05", 8)}, {1, QByteArray(1, '\0')}};
    QTest::newRow("binary payload") << frame(1, pattern(300)) << Decoded{{1, pattern(300)}};
}

void tst_MultiplexDecoder::wholeStream_data()
{
    addSmallStreams();
    // 70000 and 16 MiB + 3 need the second and the first length byte.
    QTest::newRow("70000 bytes") << frame(1, pattern(70000)) << Decoded{{1, pattern(70000)}};
    const QByteArray big = pattern(16 * 1024 * 1024 + 3);
    QTest::newRow("16 MiB + 3 bytes")
        << frame(2, big) + frame(1, "tail") << Decoded{{2, big}, {1, "tail"}};
}

void tst_MultiplexDecoder::wholeStream()
{
    QFETCH(QByteArray, stream);
    QFETCH(Decoded, expected);

    MultiplexDecoder decoder;
    QList<MultiplexDecoder::Frame> frames;
    QVERIFY(decoder.feed(stream, frames));
    QCOMPARE(flatten(frames), expected);
    QVERIFY(!decoder.hasPartialFrame());
}

void tst_MultiplexDecoder::splitAtEveryOffset_data()
{
    addSmallStreams();
}

void tst_MultiplexDecoder::splitAtEveryOffset()
{
    QFETCH(QByteArray, stream);
    QFETCH(Decoded, expected);

    for (qsizetype at = 0; at <= stream.size(); ++at) {
        MultiplexDecoder decoder;
        QList<MultiplexDecoder::Frame> frames;
        QVERIFY(decoder.feed(stream.left(at), frames));
        QVERIFY(decoder.feed(stream.mid(at), frames));
        QVERIFY2(flatten(frames) == expected, qPrintable(QStringLiteral("split at %1").arg(at)));
        QVERIFY(!decoder.hasPartialFrame());
    }
}

void tst_MultiplexDecoder::byteByByte_data()
{
    addSmallStreams();
}

void tst_MultiplexDecoder::byteByByte()
{
    QFETCH(QByteArray, stream);
    QFETCH(Decoded, expected);

    MultiplexDecoder decoder;
    QList<MultiplexDecoder::Frame> frames;
    for (char c : stream)
        QVERIFY(decoder.feed(QByteArray(1, c), frames));
    QCOMPARE(flatten(frames), expected);
    QVERIFY(!decoder.hasPartialFrame());
}

void tst_MultiplexDecoder::largePayloadInChunks_data()
{
    QTest::addColumn<int>("chunkSize");
    QTest::newRow("1 byte") << 1;
    QTest::newRow("7 bytes") << 7;
    QTest::newRow("8 bytes") << 8;
    QTest::newRow("4095 bytes") << 4095;
    QTest::newRow("64 KiB") << 65536;
}

void tst_MultiplexDecoder::largePayloadInChunks()
{
    QFETCH(int, chunkSize);
    const QByteArray payload = pattern(200 * 1024 + 1);
    const QByteArray stream = frame(1, payload) + frame(2, "e");

    MultiplexDecoder decoder;
    QList<MultiplexDecoder::Frame> frames;
    for (qsizetype pos = 0; pos < stream.size(); pos += chunkSize)
        QVERIFY(decoder.feed(stream.mid(pos, chunkSize), frames));
    QCOMPARE(flatten(frames), (Decoded{{1, payload}, {2, "e"}}));
}

void tst_MultiplexDecoder::partialFrameIsHeld()
{
    const QByteArray stream = frame(1, "abcdef");
    MultiplexDecoder decoder;
    QList<MultiplexDecoder::Frame> frames;

    QVERIFY(decoder.feed(stream.left(5), frames)); // inside the header
    QVERIFY(frames.isEmpty());
    QVERIFY(decoder.hasPartialFrame());

    QVERIFY(decoder.feed(stream.mid(5, 6), frames)); // header and part of the payload
    QVERIFY(frames.isEmpty());
    QVERIFY(decoder.hasPartialFrame());

    QVERIFY(decoder.feed(stream.mid(11), frames));
    QCOMPARE(flatten(frames), (Decoded{{1, "abcdef"}}));
    QVERIFY(!decoder.hasPartialFrame());
}

void tst_MultiplexDecoder::invalidStream_data()
{
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<Decoded>("before"); // frames decoded before the bad header

    QTest::newRow("stream byte 3") << frame(3, "x") << Decoded();
    QTest::newRow("stream byte 0xff") << frame(0xff, "x") << Decoded();
    QTest::newRow("nonzero byte 1") << QByteArray("\x01\x01\0\0\0\0\0\x01x", 9) << Decoded();
    QTest::newRow("nonzero byte 3") << QByteArray("\x02\0\0\x7f\0\0\0\x01x", 9) << Decoded();
    // A TTY attach or an HTTP error body arrives unframed.
    QTest::newRow("plain text") << QByteArray("HTTP/1.1 500 Internal Server Error\r\n")
                                << Decoded();
    QTest::newRow("raw tty output") << QByteArray("hello world\n") << Decoded();
    QTest::newRow("garbage after a frame")
        << frame(1, "ok") + QByteArray("garbage!") << Decoded{{1, "ok"}};
}

void tst_MultiplexDecoder::invalidStream()
{
    QFETCH(QByteArray, stream);
    QFETCH(Decoded, before);

    MultiplexDecoder decoder;
    QList<MultiplexDecoder::Frame> frames;
    QVERIFY(!decoder.feed(stream, frames));
    QCOMPARE(flatten(frames), before);
}

void tst_MultiplexDecoder::staysBrokenAfterInvalidStream()
{
    MultiplexDecoder decoder;
    QList<MultiplexDecoder::Frame> frames;

    // Fewer than 8 bytes cannot be judged yet.
    QVERIFY(decoder.feed("HTTP/1", frames));
    QVERIFY(decoder.hasPartialFrame());
    QVERIFY(!decoder.feed(".1 200 OK\r\n", frames));

    QVERIFY(!decoder.feed(frame(1, "valid"), frames));
    QVERIFY(frames.isEmpty());
    QVERIFY(!decoder.hasPartialFrame());
}

QTEST_GUILESS_MAIN(tst_MultiplexDecoder)
#include "tst_multiplexdecoder.moc"
