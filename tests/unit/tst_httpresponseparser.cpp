#include "httpresponseparser.h"

#include <QTest>

using State = HttpResponseParser::State;
Q_DECLARE_METATYPE(HttpResponseParser::State)

namespace {
QByteArray withLength(const QByteArray &head, const QByteArray &body)
{
    return head + "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

// Feeds `input` in two pieces the way a connection does: the second piece only while the first
// did not end the response. Returns how many bytes were consumed in all.
qsizetype feedInTwo(HttpResponseParser &parser, const QByteArray &input, qsizetype at)
{
    qsizetype used = parser.feed(input.left(at));
    if (parser.state() == State::Incomplete)
        used += parser.feed(input.mid(at));
    return used;
}

const QByteArray kUpgradeHead = "HTTP/1.1 101 UPGRADED\r\n"
                                "Content-Type: application/vnd.docker.multiplexed-stream\r\n"
                                "Connection: Upgrade\r\n"
                                "Upgrade: tcp\r\n"
                                "\r\n";
} // namespace

class tst_HttpResponseParser : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void response_data();
    void response();
    void responseSplitAtEveryOffset_data() { response_data(); }
    void responseSplitAtEveryOffset();
    void responseByteByByte_data() { response_data(); }
    void responseByteByByte();

    void headerLookup_data();
    void headerLookup();

    void upgrade_data();
    void upgrade();
    void upgradeSplitAtEveryOffset_data() { upgrade_data(); }
    void upgradeSplitAtEveryOffset();

    void pipelined_data();
    void pipelined();

    void feedAfterCompleteConsumesNothing();
    void takeBody();

    void bodyCap_data();
    void bodyCap();
};

void tst_HttpResponseParser::response_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<bool>("eof"); // the peer closes the connection after `input`
    QTest::addColumn<State>("state");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("keepAlive");
    QTest::addColumn<QByteArray>("error");

    const QByteArray json = R"({"Id":"4f66ad9a","Warnings":[]})";
    QTest::newRow("content-length")
        << withLength("HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n", json) << false
        << State::Complete << 201 << json << true << QByteArray();
    QTest::newRow("content-length zero")
        << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") << false << State::Complete
        << 200 << QByteArray() << true << QByteArray();
    QTest::newRow("error status with body")
        << withLength("HTTP/1.1 404 Not Found\r\n", R"({"message":"No such image"})") << false
        << State::Complete << 404 << QByteArray(R"({"message":"No such image"})") << true
        << QByteArray();
    QTest::newRow("binary body") << withLength("HTTP/1.1 200 OK\r\n",
                                               QByteArray("\0\x01\xff\r\n\r\n", 7))
                                 << false << State::Complete << 200
                                 << QByteArray("\0\x01\xff\r\n\r\n", 7) << true << QByteArray();
    QTest::newRow("chunked") << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                           "5\r\nhello\r\n7\r\n, world\r\n1\r\n!\r\n0\r\n\r\n")
                             << false << State::Complete << 200 << QByteArray("hello, world!")
                             << true << QByteArray();
    QTest::newRow("chunked with extensions and trailer")
        << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "4;name=value\r\nWiki\r\n5;flag\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n"
                      "0\r\nX-Checksum: 0xabc\r\n\r\n")
        << false << State::Complete << 200 << QByteArray("Wikipedia in\r\n\r\nchunks.") << true
        << QByteArray();
    QTest::newRow("chunked empty")
        << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") << false
        << State::Complete << 200 << QByteArray() << true << QByteArray();
    QTest::newRow("204 no body") << QByteArray(
                                        "HTTP/1.1 204 No Content\r\nApi-Version: 1.43\r\n\r\n")
                                 << false << State::Complete << 204 << QByteArray() << true
                                 << QByteArray();
    QTest::newRow("304 no body") << QByteArray("HTTP/1.1 304 Not Modified\r\n\r\n") << false
                                 << State::Complete << 304 << QByteArray() << true << QByteArray();
    QTest::newRow("connection close with length")
        << withLength("HTTP/1.1 200 OK\r\nConnection: close\r\n", "ok") << false << State::Complete
        << 200 << QByteArray("ok") << false << QByteArray();
    QTest::newRow("http/1.0 keep-alive")
        << withLength("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n", "ok") << false
        << State::Complete << 200 << QByteArray("ok") << true << QByteArray();
    QTest::newRow("http/1.0 with length")
        << withLength("HTTP/1.0 200 OK\r\n", "ok") << false << State::Complete << 200
        << QByteArray("ok") << false << QByteArray();
    QTest::newRow("close-delimited")
        << QByteArray("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nlog line 1\nlog line 2\n")
        << true << State::Complete << 200 << QByteArray("log line 1\nlog line 2\n") << false
        << QByteArray();
    QTest::newRow("close-delimited http/1.0")
        << QByteArray("HTTP/1.0 200 OK\r\n\r\nold") << true << State::Complete << 200
        << QByteArray("old") << false << QByteArray();
    QTest::newRow("close-delimited empty")
        << QByteArray("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n") << true << State::Complete
        << 200 << QByteArray() << false << QByteArray();

    const QByteArray midBody = "connection closed in the middle of a response body";
    const QByteArray midHeader = "connection closed before a complete response header";
    QTest::newRow("truncated body then eof")
        << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") << true << State::Error
        << 200 << QByteArray("abc") << false << midBody;
    QTest::newRow("truncated chunk then eof")
        << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel") << true
        << State::Error << 200 << QByteArray("hel") << false << midBody;
    QTest::newRow("missing last chunk then eof")
        << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n") << true
        << State::Error << 200 << QByteArray("hi") << false << midBody;
    QTest::newRow("truncated header then eof")
        << QByteArray("HTTP/1.1 200 OK\r\nContent-Len") << true << State::Error << 0 << QByteArray()
        << false << midHeader;
    QTest::newRow("nothing then eof")
        << QByteArray() << true << State::Error << 0 << QByteArray() << false << midHeader;
    QTest::newRow("incomplete without eof")
        << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") << false
        << State::Incomplete << 200 << QByteArray("abc") << false << QByteArray();

    QTest::newRow("garbage") << QByteArray("garbage\r\n\r\n") << false << State::Error << 0
                             << QByteArray() << false
                             << QByteArray("HPE_INVALID_CONSTANT: invalid constant string");
    QTest::newRow("binary garbage")
        << QByteArray("\x01\0\0\0\0\0\0\x02hi", 10) << false << State::Error << 0 << QByteArray()
        << false << QByteArray("HPE_INVALID_CONSTANT: invalid constant string");
    QTest::newRow("a request, not a response")
        << QByteArray("GET /version HTTP/1.1\r\nHost: docker\r\n\r\n") << false << State::Error << 0
        << QByteArray() << false << QByteArray("HPE_INVALID_CONSTANT: invalid constant string");
    QTest::newRow("bad status code")
        << QByteArray("HTTP/1.1 2x0 OK\r\n\r\n") << false << State::Error << 0 << QByteArray()
        << false << QByteArray("HPE_INVALID_STATUS: invalid HTTP status code");
    QTest::newRow("bad content-length")
        << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n") << false << State::Error
        << 0 << QByteArray() << false
        << QByteArray("HPE_INVALID_CONTENT_LENGTH: invalid character in content-length header");
    QTest::newRow("bad chunk size")
        << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n") << false
        << State::Error << 200 << QByteArray() << false
        << QByteArray("HPE_INVALID_CHUNK_SIZE: invalid character in chunk size header");
}

void tst_HttpResponseParser::response()
{
    QFETCH(QByteArray, input);
    QFETCH(bool, eof);
    QFETCH(State, state);
    QFETCH(int, status);
    QFETCH(QByteArray, body);
    QFETCH(bool, keepAlive);
    QFETCH(QByteArray, error);

    HttpResponseParser parser;
    const qsizetype used = parser.feed(input);
    if (eof) {
        QCOMPARE(parser.state(), State::Incomplete); // only the end of the stream decides
        QCOMPARE(used, input.size());
        parser.finishOnEof();
    }
    QCOMPARE(parser.state(), state);
    QCOMPARE(parser.status(), status);
    QCOMPARE(parser.body(), body);
    QCOMPARE(parser.errorString(), error);
    if (state == State::Complete) {
        QCOMPARE(used, input.size());
        QCOMPARE(parser.keepAlive(), keepAlive);
    }
}

void tst_HttpResponseParser::responseSplitAtEveryOffset()
{
    QFETCH(QByteArray, input);
    QFETCH(bool, eof);
    QFETCH(State, state);
    QFETCH(int, status);
    QFETCH(QByteArray, body);
    QFETCH(bool, keepAlive);
    QFETCH(QByteArray, error);

    for (qsizetype at = 0; at <= input.size(); ++at) {
        const QByteArray where = "split at " + QByteArray::number(at);
        HttpResponseParser parser;
        const qsizetype used = feedInTwo(parser, input, at);
        if (eof)
            parser.finishOnEof();
        QVERIFY2(parser.state() == state, where.constData());
        QVERIFY2(parser.status() == status, where.constData());
        QVERIFY2(parser.body() == body, where.constData());
        QVERIFY2(parser.errorString() == error, where.constData());
        if (state == State::Complete) {
            QVERIFY2(used == input.size(), where.constData());
            QVERIFY2(parser.keepAlive() == keepAlive, where.constData());
        }
    }
}

void tst_HttpResponseParser::responseByteByByte()
{
    QFETCH(QByteArray, input);
    QFETCH(bool, eof);
    QFETCH(State, state);
    QFETCH(int, status);
    QFETCH(QByteArray, body);
    QFETCH(bool, keepAlive);
    QFETCH(QByteArray, error);

    HttpResponseParser parser;
    qsizetype used = 0;
    for (qsizetype i = 0; i < input.size() && parser.state() == State::Incomplete; ++i)
        used += parser.feed(input.constData() + i, 1);
    if (eof)
        parser.finishOnEof();
    QCOMPARE(parser.state(), state);
    QCOMPARE(parser.status(), status);
    QCOMPARE(parser.body(), body);
    QCOMPARE(parser.errorString(), error);
    if (state == State::Complete) {
        QCOMPARE(used, input.size());
        QCOMPARE(parser.keepAlive(), keepAlive);
    }
}

void tst_HttpResponseParser::headerLookup_data()
{
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<QByteArray>("value");

    QTest::newRow("as sent") << QByteArray("Content-Type") << QByteArray("application/json");
    QTest::newRow("lower case") << QByteArray("content-type") << QByteArray("application/json");
    QTest::newRow("upper case") << QByteArray("CONTENT-TYPE") << QByteArray("application/json");
    QTest::newRow("value with colon")
        << QByteArray("docker-experimental") << QByteArray("false: really");
    QTest::newRow("empty value") << QByteArray("X-Empty") << QByteArray();
    QTest::newRow("first of repeated") << QByteArray("x-repeated") << QByteArray("one");
    QTest::newRow("missing") << QByteArray("X-Missing") << QByteArray();
    QTest::newRow("prefix of a name") << QByteArray("Content") << QByteArray();
}

void tst_HttpResponseParser::headerLookup()
{
    QFETCH(QByteArray, name);
    QFETCH(QByteArray, value);

    const QByteArray input = "HTTP/1.1 200 OK\r\n"
                             "Content-Type: application/json\r\n"
                             "Docker-Experimental: false: really\r\n"
                             "X-Empty:\r\n"
                             "X-Repeated: one\r\n"
                             "X-Repeated: two\r\n"
                             "Content-Length: 2\r\n"
                             "\r\n{}";
    // Split at every offset so that names and values arriving in pieces are covered too.
    for (qsizetype at = 0; at <= input.size(); ++at) {
        HttpResponseParser parser;
        feedInTwo(parser, input, at);
        QCOMPARE(parser.state(), State::Complete);
        QVERIFY2(parser.header(name) == value, qPrintable(QStringLiteral("split at %1").arg(at)));
    }
}

void tst_HttpResponseParser::upgrade_data()
{
    QTest::addColumn<QByteArray>("stream"); // raw bytes that follow the 101 response

    QTest::newRow("no stream bytes yet") << QByteArray();
    QTest::newRow("a frame") << QByteArray("\x01\0\0\0\0\0\0\x03hi\n", 11);
    QTest::newRow("bytes that look like http") << QByteArray("HTTP/1.1 200 OK\r\n\r\n");
}

void tst_HttpResponseParser::upgrade()
{
    QFETCH(QByteArray, stream);

    const QByteArray input = kUpgradeHead + stream;
    HttpResponseParser parser;
    QCOMPARE(parser.feed(input), kUpgradeHead.size());
    QCOMPARE(parser.state(), State::Upgraded);
    QCOMPARE(parser.status(), 101);
    QCOMPARE(parser.header("upgrade"), QByteArray("tcp"));
    QCOMPARE(parser.body(), QByteArray());
    QCOMPARE(parser.feed(stream), 0); // the rest belongs to the hijacked stream
}

void tst_HttpResponseParser::upgradeSplitAtEveryOffset()
{
    QFETCH(QByteArray, stream);

    const QByteArray input = kUpgradeHead + stream;
    for (qsizetype at = 0; at <= input.size(); ++at) {
        const QByteArray where = "split at " + QByteArray::number(at);
        HttpResponseParser parser;
        QVERIFY2(feedInTwo(parser, input, at) == kUpgradeHead.size(), where.constData());
        QVERIFY2(parser.state() == State::Upgraded, where.constData());
        QVERIFY2(parser.status() == 101, where.constData());
    }
}

void tst_HttpResponseParser::pipelined_data()
{
    QTest::addColumn<QByteArray>("first");
    QTest::addColumn<QByteArray>("second");
    QTest::addColumn<int>("secondStatus");
    QTest::addColumn<QByteArray>("secondBody");

    const QByteArray lengthOne = withLength("HTTP/1.1 200 OK\r\n", "one");
    const QByteArray chunkedOne =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\none\r\n0\r\n\r\n";
    const QByteArray noContent = "HTTP/1.1 204 No Content\r\n\r\n";
    const QByteArray lengthTwo = withLength("HTTP/1.1 404 Not Found\r\n", "two");

    QTest::newRow("length then length") << lengthOne << lengthTwo << 404 << QByteArray("two");
    QTest::newRow("chunked then length") << chunkedOne << lengthTwo << 404 << QByteArray("two");
    QTest::newRow("204 then length") << noContent << lengthTwo << 404 << QByteArray("two");
    QTest::newRow("length then 204") << lengthOne << noContent << 204 << QByteArray();
    QTest::newRow("length then garbage") << lengthOne << QByteArray("garbage") << 0 << QByteArray();
}

void tst_HttpResponseParser::pipelined()
{
    QFETCH(QByteArray, first);
    QFETCH(QByteArray, second);
    QFETCH(int, secondStatus);
    QFETCH(QByteArray, secondBody);

    const QByteArray both = first + second;
    HttpResponseParser parser;
    QCOMPARE(parser.feed(both), first.size());
    QCOMPARE(parser.state(), State::Complete);
    QVERIFY(parser.keepAlive());

    parser.reset();
    QCOMPARE(parser.state(), State::Incomplete);
    QCOMPARE(parser.status(), 0);
    QCOMPARE(parser.body(), QByteArray());
    QCOMPARE(parser.header("content-length"), QByteArray()); // no leftovers of the first

    const qsizetype used = parser.feed(both.mid(first.size()));
    QCOMPARE(parser.status(), secondStatus);
    if (secondStatus == 0) {
        QCOMPARE(parser.state(), State::Error);
    } else {
        QCOMPARE(parser.state(), State::Complete);
        QCOMPARE(used, second.size());
        QCOMPARE(parser.body(), secondBody);
    }
}

void tst_HttpResponseParser::feedAfterCompleteConsumesNothing()
{
    HttpResponseParser parser;
    const QByteArray response = withLength("HTTP/1.1 200 OK\r\n", "abc");
    QCOMPARE(parser.feed(response), response.size());
    QCOMPARE(parser.feed(response), 0);
    QCOMPARE(parser.body(), QByteArray("abc"));
    QCOMPARE(parser.feed(nullptr, 0), 0);
    QCOMPARE(parser.state(), State::Complete);
}

void tst_HttpResponseParser::takeBody()
{
    HttpResponseParser parser;
    parser.feed(withLength("HTTP/1.1 200 OK\r\n", "payload"));
    QCOMPARE(parser.takeBody(), QByteArray("payload"));
    QCOMPARE(parser.body(), QByteArray());
    QCOMPARE(parser.state(), State::Complete);
}

void tst_HttpResponseParser::bodyCap_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<qint64>("cap");
    QTest::addColumn<bool>("tooLarge");
    const QByteArray ten(10, 'x');
    const QByteArray chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                               "6\r\nxxxxxx\r\n5\r\nxxxxx\r\n0\r\n\r\n";
    QTest::newRow("length at the cap")
        << withLength("HTTP/1.1 200 OK\r\n", ten) << qint64(10) << false;
    QTest::newRow("length over the cap")
        << withLength("HTTP/1.1 200 OK\r\n", ten + 'y') << qint64(10) << true;
    QTest::newRow("chunked over the cap") << chunked << qint64(10) << true;
    QTest::newRow("chunked under the cap") << chunked << qint64(11) << false;
    // What a sparse file's archive looks like: a length far beyond what is ever sent.
    QTest::newRow("claimed 64 GiB")
        << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 68719476736\r\n\r\n") +
               QByteArray(4096, '\0')
        << qint64(1024) << true;
    QTest::newRow("no cap") << withLength("HTTP/1.1 200 OK\r\n", ten) << qint64(-1) << false;
}

// A body past the cap ends the response as an error at once, holding no more than the cap,
// however the bytes arrive.
void tst_HttpResponseParser::bodyCap()
{
    QFETCH(QByteArray, input);
    QFETCH(qint64, cap);
    QFETCH(bool, tooLarge);
    for (qsizetype at = 0; at <= input.size(); at += 7) {
        HttpResponseParser parser;
        parser.setMaxBodySize(cap);
        feedInTwo(parser, input, at);
        QCOMPARE(parser.bodyTooLarge(), tooLarge);
        if (tooLarge) {
            QCOMPARE(parser.state(), State::Error);
            QVERIFY(parser.body().size() <= cap);
            QVERIFY2(parser.errorString().contains("longer than"), parser.errorString());
        } else {
            QCOMPARE(parser.state(), State::Complete);
        }
        // The cap stays for the next response on the connection.
        parser.reset();
        parser.feed(input);
        QCOMPARE(parser.bodyTooLarge(), tooLarge);
    }
}

QTEST_GUILESS_MAIN(tst_HttpResponseParser)
#include "tst_httpresponseparser.moc"
