#include "httprequestparser.h"

#include <QTest>
#include <memory>
#include <utility>

using State = HttpRequestParser::State;
Q_DECLARE_METATYPE(HttpRequestParser::State)

namespace {
constexpr qint64 kDefaultBody = HttpRequestParser::kDefaultMaxBodyBytes;
constexpr qint64 kDefaultHeader = HttpRequestParser::kDefaultMaxHeaderBytes;

QByteArray withLength(const QByteArray &head, const QByteArray &body)
{
    return head + "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

// "Name: value\n" per header, so that whole header lists compare in one QCOMPARE.
QByteArray render(const QList<QPair<QByteArray, QByteArray>> &headers)
{
    QByteArray out;
    for (const auto &h : headers)
        out += h.first + ": " + h.second + '\n';
    return out;
}

// What a parse produced, comparable as a whole.
struct Outcome
{
    State state = State::Incomplete;
    QByteArray method, path, query, headers, body;
    bool keepAlive = false;
    qsizetype used = 0;

    bool operator==(const Outcome &o) const
    {
        return state == o.state && method == o.method && path == o.path && query == o.query &&
               headers == o.headers && body == o.body && keepAlive == o.keepAlive && used == o.used;
    }
};

Outcome outcomeOf(const HttpRequestParser &parser, qsizetype used)
{
    Outcome o;
    o.state = parser.state();
    o.used = used;
    if (o.state == State::Complete) {
        o.method = parser.request().method;
        o.path = parser.request().path;
        o.query = parser.request().query;
        o.headers = render(parser.request().headers);
        o.body = parser.request().body;
        o.keepAlive = parser.keepAlive();
    }
    return o;
}

QByteArray describe(const Outcome &o)
{
    return "state " + QByteArray::number(int(o.state)) + ", used " + QByteArray::number(o.used) +
           ", " + o.method + ' ' + o.path + " ? " + o.query + " | " +
           o.headers.toPercentEncoding() + " | " + o.body.toPercentEncoding();
}

HttpRequestParser *makeParser(qint64 maxHeader, qint64 maxBody)
{
    auto *parser = new HttpRequestParser;
    parser->setMaxHeaderBytes(maxHeader);
    parser->setMaxBodyBytes(maxBody);
    return parser;
}

// Feeds `input` in two pieces the way a connection does: the second only while the first did
// not end the request.
qsizetype feedInTwo(HttpRequestParser &parser, const QByteArray &input, qsizetype at)
{
    qsizetype used = parser.feed(input.left(at));
    if (parser.state() == State::Incomplete)
        used += parser.feed(input.mid(at));
    return used;
}
} // namespace

class tst_HttpRequestParser : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void request_data();
    void request();
    void requestSplitAtEveryOffset_data() { request_data(); }
    void requestSplitAtEveryOffset();
    void requestByteByByte_data() { request_data(); }
    void requestByteByByte();
    void pausedAtHeadersAtEveryOffset_data() { request_data(); }
    void pausedAtHeadersAtEveryOffset();

    void headerLookup_data();
    void headerLookup();

    void pipelined_data();
    void pipelined();

    void expectContinue_data();
    void expectContinue();

    void bodyLimitBeforeBodyArrives_data();
    void bodyLimitBeforeBodyArrives();

    void feedAfterEndConsumesNothing_data();
    void feedAfterEndConsumesNothing();
    void resetKeepsLimits();
};

void tst_HttpRequestParser::request_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<qint64>("maxHeader");
    QTest::addColumn<qint64>("maxBody");
    QTest::addColumn<State>("state");
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<QByteArray>("query");
    QTest::addColumn<QByteArray>("headers"); // rendered
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("keepAlive");

    const QByteArray json = R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})";
    const QByteArray none;

    QTest::newRow("get without body")
        << QByteArray(
               "GET /mcp HTTP/1.1\r\nHost: localhost:8080\r\nAccept: text/event-stream\r\n\r\n")
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("GET")
        << QByteArray("/mcp") << none
        << QByteArray("Host: localhost:8080\nAccept: text/event-stream\n") << none << true;
    QTest::newRow("post with content-length")
        << withLength("POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n", json)
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("POST")
        << QByteArray("/mcp") << none
        << QByteArray("Host: h\nContent-Type: application/json\nContent-Length: " +
                      QByteArray::number(json.size()) + "\n")
        << json << true;
    QTest::newRow("binary body with crlfs")
        << withLength("PUT /blob HTTP/1.1\r\n", QByteArray("\0\x01\xff\r\n\r\nGET / HTTP/1.1", 21))
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("PUT")
        << QByteArray("/blob") << none << QByteArray("Content-Length: 21\n")
        << QByteArray("\0\x01\xff\r\n\r\nGET / HTTP/1.1", 21) << true;
    QTest::newRow("content-length zero")
        << QByteArray("DELETE /mcp HTTP/1.1\r\nMcp-Session-Id: abc\r\nContent-Length: 0\r\n\r\n")
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("DELETE")
        << QByteArray("/mcp") << none << QByteArray("Mcp-Session-Id: abc\nContent-Length: 0\n")
        << none << true;
    QTest::newRow("chunked") << QByteArray(
                                    "POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    "5\r\nhello\r\n7\r\n, world\r\n1\r\n!\r\n0\r\n\r\n")
                             << kDefaultHeader << kDefaultBody << State::Complete
                             << QByteArray("POST") << QByteArray("/mcp") << none
                             << QByteArray("Transfer-Encoding: chunked\n")
                             << QByteArray("hello, world!") << true;
    QTest::newRow("chunked with extensions and trailer")
        << QByteArray("POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "4;name=value\r\nWiki\r\nB;flag\r\npedia\r\n\r\nin\r\n"
                      "0\r\nX-Checksum: 0xabc\r\n\r\n")
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("POST")
        << QByteArray("/mcp") << none << QByteArray("Transfer-Encoding: chunked\n")
        << QByteArray("Wikipedia\r\n\r\nin") << true;
    QTest::newRow("chunked empty")
        << QByteArray("POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("POST")
        << QByteArray("/mcp") << none << QByteArray("Transfer-Encoding: chunked\n") << none << true;
    QTest::newRow("chunked upper-case hex")
        << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "A\r\n0123456789\r\n0\r\n\r\n")
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("POST")
        << QByteArray("/") << none << QByteArray("Transfer-Encoding: chunked\n")
        << QByteArray("0123456789") << true;

    QTest::newRow("query split") << QByteArray("GET /mcp?session=abc&x=1 HTTP/1.1\r\n\r\n")
                                 << kDefaultHeader << kDefaultBody << State::Complete
                                 << QByteArray("GET") << QByteArray("/mcp")
                                 << QByteArray("session=abc&x=1") << none << none << true;
    QTest::newRow("empty query") << QByteArray("GET /mcp? HTTP/1.1\r\n\r\n") << kDefaultHeader
                                 << kDefaultBody << State::Complete << QByteArray("GET")
                                 << QByteArray("/mcp") << none << none << none << true;
    QTest::newRow("question mark in query")
        << QByteArray("GET /a/b?x=?y HTTP/1.1\r\n\r\n") << kDefaultHeader << kDefaultBody
        << State::Complete << QByteArray("GET") << QByteArray("/a/b") << QByteArray("x=?y") << none
        << none << true;
    QTest::newRow("fragment dropped")
        << QByteArray("GET /mcp?a=b#top HTTP/1.1\r\n\r\n") << kDefaultHeader << kDefaultBody
        << State::Complete << QByteArray("GET") << QByteArray("/mcp") << QByteArray("a=b") << none
        << none << true;
    QTest::newRow("percent-encoding kept")
        << QByteArray("GET /a%20b?q=%2F HTTP/1.1\r\n\r\n") << kDefaultHeader << kDefaultBody
        << State::Complete << QByteArray("GET") << QByteArray("/a%20b") << QByteArray("q=%2F")
        << none << none << true;
    QTest::newRow("absolute form")
        << QByteArray("POST http://localhost:8080/mcp?a=b HTTP/1.1\r\nContent-Length: 0\r\n\r\n")
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("POST")
        << QByteArray("/mcp") << QByteArray("a=b") << QByteArray("Content-Length: 0\n") << none
        << true;
    QTest::newRow("absolute form without path")
        << QByteArray("GET http://localhost:8080 HTTP/1.1\r\n\r\n") << kDefaultHeader
        << kDefaultBody << State::Complete << QByteArray("GET") << QByteArray("/") << none << none
        << none << true;
    QTest::newRow("asterisk form") << QByteArray("OPTIONS * HTTP/1.1\r\n\r\n") << kDefaultHeader
                                   << kDefaultBody << State::Complete << QByteArray("OPTIONS")
                                   << QByteArray("*") << none << none << none << true;

    QTest::newRow("header case kept")
        << QByteArray("GET / HTTP/1.1\r\ncontent-TYPE: Text/Plain\r\nMCP-SESSION-ID: Ab\r\n\r\n")
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("GET") << QByteArray("/")
        << none << QByteArray("content-TYPE: Text/Plain\nMCP-SESSION-ID: Ab\n") << none << true;
    QTest::newRow("header folding")
        << QByteArray("GET / HTTP/1.1\r\nX-Folded: one\r\n  two\r\n\tthree\r\nX-Next: n\r\n\r\n")
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("GET") << QByteArray("/")
        << none << QByteArray("X-Folded: one two three\nX-Next: n\n") << none << true;
    QTest::newRow("folding after an empty value")
        << QByteArray("GET / HTTP/1.1\r\nX-Folded:\r\n  only\r\n\r\n") << kDefaultHeader
        << kDefaultBody << State::Complete << QByteArray("GET") << QByteArray("/") << none
        << QByteArray("X-Folded: only\n") << none << true;
    QTest::newRow("whitespace around values trimmed")
        << QByteArray("GET / HTTP/1.1\r\nX-Pad:   padded  value \t\r\nX-Tight:v\r\n\r\n")
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("GET") << QByteArray("/")
        << none << QByteArray("X-Pad: padded  value\nX-Tight: v\n") << none << true;
    QTest::newRow("empty value and repeated names")
        << QByteArray("GET / HTTP/1.1\r\nX-Empty:\r\nX-Rep: 1\r\nX-Rep: 2\r\n\r\n")
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("GET") << QByteArray("/")
        << none << QByteArray("X-Empty: \nX-Rep: 1\nX-Rep: 2\n") << none << true;
    QTest::newRow("bare line feeds")
        << QByteArray("GET /lf HTTP/1.1\nHost: h\n\n") << kDefaultHeader << kDefaultBody
        << State::Complete << QByteArray("GET") << QByteArray("/lf") << none
        << QByteArray("Host: h\n") << none << true;
    QTest::newRow("empty line before request")
        << QByteArray("\r\nGET / HTTP/1.1\r\n\r\n") << kDefaultHeader << kDefaultBody
        << State::Complete << QByteArray("GET") << QByteArray("/") << none << none << none << true;
    QTest::newRow("head") << QByteArray("HEAD /mcp HTTP/1.1\r\n\r\n") << kDefaultHeader
                          << kDefaultBody << State::Complete << QByteArray("HEAD")
                          << QByteArray("/mcp") << none << none << none << true;

    QTest::newRow("connection close")
        << QByteArray("GET / HTTP/1.1\r\nConnection: close\r\n\r\n") << kDefaultHeader
        << kDefaultBody << State::Complete << QByteArray("GET") << QByteArray("/") << none
        << QByteArray("Connection: close\n") << none << false;
    QTest::newRow("http/1.0") << QByteArray("GET / HTTP/1.0\r\n\r\n") << kDefaultHeader
                              << kDefaultBody << State::Complete << QByteArray("GET")
                              << QByteArray("/") << none << none << none << false;
    QTest::newRow("http/1.0 keep-alive")
        << QByteArray("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n") << kDefaultHeader
        << kDefaultBody << State::Complete << QByteArray("GET") << QByteArray("/") << none
        << QByteArray("Connection: keep-alive\n") << none << true;
    QTest::newRow("upgrade request served as plain http")
        << QByteArray("GET / HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")
        << kDefaultHeader << kDefaultBody << State::Complete << QByteArray("GET") << QByteArray("/")
        << none << QByteArray("Connection: Upgrade\nUpgrade: h2c\n") << none << true;

    QTest::newRow("incomplete header")
        << QByteArray("POST /mcp HTTP/1.1\r\nContent-Le") << kDefaultHeader << kDefaultBody
        << State::Incomplete << none << none << none << none << none << false;
    QTest::newRow("incomplete body")
        << QByteArray("POST /mcp HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc") << kDefaultHeader
        << kDefaultBody << State::Incomplete << none << none << none << none << none << false;
    QTest::newRow("incomplete chunked body")
        << QByteArray("POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
        << kDefaultHeader << kDefaultBody << State::Incomplete << none << none << none << none
        << none << false;

    const auto malformed = [&](const char *name, const QByteArray &input) {
        QTest::newRow(name) << input << kDefaultHeader << kDefaultBody << State::Malformed << none
                            << none << none << none << none << false;
    };
    malformed("garbage", "garbage\r\n\r\n");
    malformed("binary garbage", QByteArray("\x16\x03\x01\x02\0\x01\0\x01\xfc\x03\x03", 11));
    malformed("a response, not a request", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    malformed("lower-case method", "get / HTTP/1.1\r\n\r\n");
    malformed("no version", "GET /\r\n\r\n");
    malformed("http/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    malformed("space in header name", "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n");
    malformed("space before colon", "POST / HTTP/1.1\r\nContent-Length : 1\r\n\r\nx");
    malformed("control character in header name", "GET / HTTP/1.1\r\nX\x01Y: z\r\n\r\n");
    malformed("nul in header value", QByteArray("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", 27));
    malformed("bad content-length", "POST / HTTP/1.1\r\nContent-Length: ten\r\n\r\n");
    malformed("two content-lengths",
              "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd");
    malformed("content-length and chunked",
              "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
              "3\r\nabc\r\n0\r\n\r\n");
    malformed("unknown transfer-coding", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\nabc");
    malformed("bad chunk size", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    malformed("chunk longer than declared",
              "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n");

    // Limits. Header bytes count the target, names and values plus 4 per field.
    const QByteArray longValue(300, 'v');
    QTest::newRow("header value over limit")
        << QByteArray("GET / HTTP/1.1\r\nX-Long: " + longValue + "\r\n\r\n") << qint64(256)
        << kDefaultBody << State::HeadersTooLarge << none << none << none << none << none << false;
    QTest::newRow("header over limit before its end")
        << QByteArray("GET / HTTP/1.1\r\nX-Long: " + longValue) << qint64(256) << kDefaultBody
        << State::HeadersTooLarge << none << none << none << none << none << false;
    QByteArray manyHeaders = "GET / HTTP/1.1\r\n";
    for (int i = 0; i < 40; ++i)
        manyHeaders += "X-" + QByteArray::number(i % 10) + ": v\r\n"; // 5 + 1 + 4 bytes each
    QTest::newRow("many small headers over limit")
        << QByteArray(manyHeaders + "\r\n") << qint64(256) << kDefaultBody << State::HeadersTooLarge
        << none << none << none << none << none << false;
    QTest::newRow("target over limit")
        << QByteArray("GET /" + QByteArray(300, 'p') + " HTTP/1.1\r\n\r\n") << qint64(256)
        << kDefaultBody << State::HeadersTooLarge << none << none << none << none << none << false;
    QTest::newRow("header just under limit")
        << QByteArray("GET /x HTTP/1.1\r\nX-Long: " + QByteArray(240, 'v') + "\r\n\r\n")
        << qint64(256) << kDefaultBody << State::Complete << QByteArray("GET") << QByteArray("/x")
        << none << QByteArray("X-Long: " + QByteArray(240, 'v') + '\n') << none << true;
    QTest::newRow("trailer over limit")
        << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n"
                      "X-Trailer: " +
                      longValue + "\r\n\r\n")
        << qint64(256) << kDefaultBody << State::HeadersTooLarge << none << none << none << none
        << none << false;

    QTest::newRow("content-length over limit")
        << withLength("POST / HTTP/1.1\r\n", "0123456789a") << kDefaultHeader << qint64(10)
        << State::BodyTooLarge << none << none << none << none << none << false;
    QTest::newRow("content-length at limit")
        << withLength("POST / HTTP/1.1\r\n", "0123456789") << kDefaultHeader << qint64(10)
        << State::Complete << QByteArray("POST") << QByteArray("/") << none
        << QByteArray("Content-Length: 10\n") << QByteArray("0123456789") << true;
    QTest::newRow("chunked over limit mid-stream")
        << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "4\r\n0123\r\n4\r\n4567\r\n4\r\n89ab\r\n4\r\ncdef\r\n")
        << kDefaultHeader << qint64(10) << State::BodyTooLarge << none << none << none << none
        << none << false;
    QTest::newRow("chunked at limit")
        << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "4\r\n0123\r\n6\r\n456789\r\n0\r\n\r\n")
        << kDefaultHeader << qint64(10) << State::Complete << QByteArray("POST") << QByteArray("/")
        << none << QByteArray("Transfer-Encoding: chunked\n") << QByteArray("0123456789") << true;
    QTest::newRow("huge chunk size declared")
        << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFF\r\nab")
        << kDefaultHeader << qint64(10) << State::BodyTooLarge << none << none << none << none
        << none << false;
}

void tst_HttpRequestParser::request()
{
    QFETCH(QByteArray, input);
    QFETCH(qint64, maxHeader);
    QFETCH(qint64, maxBody);
    QFETCH(State, state);
    QFETCH(QByteArray, method);
    QFETCH(QByteArray, path);
    QFETCH(QByteArray, query);
    QFETCH(QByteArray, headers);
    QFETCH(QByteArray, body);
    QFETCH(bool, keepAlive);

    std::unique_ptr<HttpRequestParser> parser(makeParser(maxHeader, maxBody));
    const qsizetype used = parser->feed(input);
    QCOMPARE(parser->state(), state);
    QCOMPARE(parser->errorString().isEmpty(),
             state == State::Complete || state == State::Incomplete);
    if (state == State::Incomplete)
        QCOMPARE(used, input.size());
    if (state != State::Complete)
        return;
    QCOMPARE(used, input.size());
    QCOMPARE(parser->request().method, method);
    QCOMPARE(parser->request().path, path);
    QCOMPARE(parser->request().query, query);
    QCOMPARE(render(parser->request().headers), headers);
    QCOMPARE(parser->request().body, body);
    QCOMPARE(parser->keepAlive(), keepAlive);
}

void tst_HttpRequestParser::requestSplitAtEveryOffset()
{
    QFETCH(QByteArray, input);
    QFETCH(qint64, maxHeader);
    QFETCH(qint64, maxBody);
    QFETCH(State, state);

    std::unique_ptr<HttpRequestParser> whole(makeParser(maxHeader, maxBody));
    const Outcome expected = outcomeOf(*whole, whole->feed(input));
    QCOMPARE(expected.state, state);
    for (qsizetype at = 0; at <= input.size(); ++at) {
        std::unique_ptr<HttpRequestParser> parser(makeParser(maxHeader, maxBody));
        const qsizetype used = feedInTwo(*parser, input, at);
        const Outcome got = outcomeOf(*parser, used);
        if (state != State::Complete && state != State::Incomplete) {
            // Where an error is noticed depends on the split; that it is, does not.
            QVERIFY2(got.state == state, qPrintable(QStringLiteral("split at %1").arg(at)));
            continue;
        }
        QVERIFY2(got == expected, qPrintable(QStringLiteral("split at %1: %2 instead of %3")
                                                 .arg(at)
                                                 .arg(QString::fromLatin1(describe(got)),
                                                      QString::fromLatin1(describe(expected)))));
    }
}

// Pausing after the header (so that a connection can refuse a request before its body) changes
// nothing about what is parsed, wherever the input is split.
void tst_HttpRequestParser::pausedAtHeadersAtEveryOffset()
{
    QFETCH(QByteArray, input);
    QFETCH(qint64, maxHeader);
    QFETCH(qint64, maxBody);
    QFETCH(State, state);

    std::unique_ptr<HttpRequestParser> whole(makeParser(maxHeader, maxBody));
    const Outcome expected = outcomeOf(*whole, whole->feed(input));
    for (qsizetype at = 0; at <= input.size(); ++at) {
        std::unique_ptr<HttpRequestParser> parser(makeParser(maxHeader, maxBody));
        parser->setPauseAfterHeaders(true);
        QByteArray pending = input.left(at);
        QByteArray rest = input.mid(at);
        qsizetype used = 0;
        int pauses = 0;
        while (parser->state() == State::Incomplete) {
            if (pending.isEmpty()) {
                if (rest.isEmpty())
                    break;
                pending = std::exchange(rest, {});
            }
            const qsizetype n = parser->feed(pending);
            used += n;
            pending.remove(0, n);
            if (parser->isPausedAtHeaders()) {
                ++pauses;
                QVERIFY(parser->headersComplete());
                QVERIFY2(parser->request().body.isEmpty(), "a body byte was read before resume()");
                QCOMPARE(parser->feed(pending), 0); // nothing more until resume()
                parser->resume();
            } else if (parser->state() == State::Incomplete && !pending.isEmpty()) {
                break;
            }
        }
        const Outcome got = outcomeOf(*parser, used);
        if (state != State::Complete && state != State::Incomplete) {
            QVERIFY2(got.state == state, qPrintable(QStringLiteral("split at %1").arg(at)));
            continue;
        }
        QVERIFY2(pauses <= 1, qPrintable(QStringLiteral("split at %1").arg(at)));
        if (state == State::Complete)
            QVERIFY2(pauses == 1, qPrintable(QStringLiteral("split at %1").arg(at)));
        QVERIFY2(got == expected, qPrintable(QStringLiteral("split at %1: %2 instead of %3")
                                                 .arg(at)
                                                 .arg(QString::fromLatin1(describe(got)),
                                                      QString::fromLatin1(describe(expected)))));
    }
}

void tst_HttpRequestParser::requestByteByByte()
{
    QFETCH(QByteArray, input);
    QFETCH(qint64, maxHeader);
    QFETCH(qint64, maxBody);
    QFETCH(State, state);

    std::unique_ptr<HttpRequestParser> whole(makeParser(maxHeader, maxBody));
    const Outcome expected = outcomeOf(*whole, whole->feed(input));
    std::unique_ptr<HttpRequestParser> parser(makeParser(maxHeader, maxBody));
    qsizetype used = 0;
    for (qsizetype i = 0; i < input.size() && parser->state() == State::Incomplete; ++i)
        used += parser->feed(input.constData() + i, 1);
    QCOMPARE(parser->state(), state);
    if (state == State::Complete || state == State::Incomplete)
        QCOMPARE(describe(outcomeOf(*parser, used)), describe(expected));
}

void tst_HttpRequestParser::headerLookup_data()
{
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<QByteArray>("value");

    QTest::newRow("as sent") << QByteArray("Content-Type") << QByteArray("application/json");
    QTest::newRow("lower case") << QByteArray("content-type") << QByteArray("application/json");
    QTest::newRow("upper case") << QByteArray("CONTENT-TYPE") << QByteArray("application/json");
    QTest::newRow("sent in lower case")
        << QByteArray("Mcp-Session-Id") << QByteArray("4f66ad9a-11");
    QTest::newRow("value with colon") << QByteArray("x-forwarded") << QByteArray("a: b");
    QTest::newRow("empty value") << QByteArray("X-Empty") << QByteArray();
    QTest::newRow("first of repeated") << QByteArray("accept") << QByteArray("application/json");
    QTest::newRow("missing") << QByteArray("X-Missing") << QByteArray();
    QTest::newRow("prefix of a name") << QByteArray("Content") << QByteArray();
}

void tst_HttpRequestParser::headerLookup()
{
    QFETCH(QByteArray, name);
    QFETCH(QByteArray, value);

    const QByteArray input = "POST /mcp HTTP/1.1\r\n"
                             "Content-Type: application/json\r\n"
                             "mcp-session-id: 4f66ad9a-11\r\n"
                             "X-Forwarded: a: b\r\n"
                             "X-Empty:\r\n"
                             "Accept: application/json\r\n"
                             "Accept: text/event-stream\r\n"
                             "Content-Length: 2\r\n"
                             "\r\n{}";
    for (qsizetype at = 0; at <= input.size(); ++at) {
        HttpRequestParser parser;
        feedInTwo(parser, input, at);
        QCOMPARE(parser.state(), State::Complete);
        QVERIFY2(parser.request().header(name) == value,
                 qPrintable(QStringLiteral("split at %1").arg(at)));
    }
}

void tst_HttpRequestParser::pipelined_data()
{
    QTest::addColumn<QByteArray>("first");
    QTest::addColumn<QByteArray>("second");
    QTest::addColumn<State>("secondState");
    QTest::addColumn<QByteArray>("secondPath");
    QTest::addColumn<QByteArray>("secondBody");

    const QByteArray lengthOne = withLength("POST /one HTTP/1.1\r\n", "one");
    const QByteArray chunkedOne =
        "POST /one HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\none\r\n0\r\n\r\n";
    const QByteArray getOne = "GET /one HTTP/1.1\r\n\r\n";
    const QByteArray upgradeOne =
        "GET /one HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n";
    const QByteArray lengthTwo = withLength("POST /two HTTP/1.1\r\n", "two");
    const QByteArray getTwo = "GET /two HTTP/1.1\r\n\r\n";

    QTest::newRow("length then length")
        << lengthOne << lengthTwo << State::Complete << QByteArray("/two") << QByteArray("two");
    QTest::newRow("chunked then length")
        << chunkedOne << lengthTwo << State::Complete << QByteArray("/two") << QByteArray("two");
    QTest::newRow("get then get") << getOne << getTwo << State::Complete << QByteArray("/two")
                                  << QByteArray();
    QTest::newRow("length then get")
        << lengthOne << getTwo << State::Complete << QByteArray("/two") << QByteArray();
    QTest::newRow("upgrade request then get")
        << upgradeOne << getTwo << State::Complete << QByteArray("/two") << QByteArray();
    QTest::newRow("get then half a request")
        << getOne << QByteArray("POST /two HTTP/1.1\r\nContent-") << State::Incomplete
        << QByteArray() << QByteArray();
    QTest::newRow("get then garbage") << getOne << QByteArray("garbage\r\n\r\n") << State::Malformed
                                      << QByteArray() << QByteArray();
}

void tst_HttpRequestParser::pipelined()
{
    QFETCH(QByteArray, first);
    QFETCH(QByteArray, second);
    QFETCH(State, secondState);
    QFETCH(QByteArray, secondPath);
    QFETCH(QByteArray, secondBody);

    const QByteArray both = first + second;
    HttpRequestParser parser;
    QCOMPARE(parser.feed(both), first.size());
    QCOMPARE(parser.state(), State::Complete);
    QCOMPARE(parser.request().path, QByteArray("/one"));
    QVERIFY(parser.keepAlive());

    parser.reset();
    QCOMPARE(parser.state(), State::Incomplete);
    QVERIFY(!parser.headersComplete());
    QCOMPARE(parser.request().path, QByteArray()); // no leftovers of the first
    QCOMPARE(parser.request().headers.size(), 0);

    const qsizetype used = parser.feed(both.mid(first.size()));
    QCOMPARE(parser.state(), secondState);
    if (secondState == State::Complete) {
        QCOMPARE(used, second.size());
        QCOMPARE(parser.request().path, secondPath);
        QCOMPARE(parser.request().body, secondBody);
    }
}

void tst_HttpRequestParser::expectContinue_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<State>("state"); // after the head alone
    QTest::addColumn<bool>("expectsContinue");

    QTest::newRow("100-continue")
        << QByteArray("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        << State::Incomplete << true;
    QTest::newRow("any case")
        << QByteArray("POST / HTTP/1.1\r\nEXPECT: 100-Continue\r\nContent-Length: 5\r\n\r\n")
        << State::Incomplete << true;
    QTest::newRow("chunked")
        << QByteArray("POST / HTTP/1.1\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n"
                      "\r\n")
        << State::Incomplete << true;
    QTest::newRow("no expectation")
        << QByteArray("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n") << State::Incomplete << false;
    QTest::newRow("http/1.0 ignores it")
        << QByteArray("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        << State::Incomplete << false;
    QTest::newRow("too large: refused before the body")
        << QByteArray("POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n")
        << State::BodyTooLarge << false;
}

void tst_HttpRequestParser::expectContinue()
{
    QFETCH(QByteArray, head);
    QFETCH(State, state);
    QFETCH(bool, expectsContinue);

    HttpRequestParser parser;
    parser.setMaxBodyBytes(10);
    QCOMPARE(parser.feed(head.left(head.size() - 2)), head.size() - 2);
    QVERIFY(!parser.headersComplete()); // not before the empty line
    QVERIFY(!parser.expectsContinue());
    parser.feed(head.right(2));
    QCOMPARE(parser.state(), state);
    QCOMPARE(parser.headersComplete(), true);
    QCOMPARE(parser.expectsContinue(), expectsContinue);
}

void tst_HttpRequestParser::bodyLimitBeforeBodyArrives_data()
{
    QTest::addColumn<QByteArray>("input");

    QTest::newRow("content-length")
        << QByteArray("POST / HTTP/1.1\r\nContent-Length: 104857600\r\n\r\n");
    QTest::newRow("chunk size") << QByteArray(
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n6400000\r\n");
}

void tst_HttpRequestParser::bodyLimitBeforeBodyArrives()
{
    QFETCH(QByteArray, input);

    HttpRequestParser parser; // default limit: 4 MiB
    parser.feed(input);
    QCOMPARE(parser.state(), State::BodyTooLarge);
    QVERIFY(parser.errorString().contains("limit"));
    QCOMPARE(parser.request().body.size(), 0);
}

void tst_HttpRequestParser::feedAfterEndConsumesNothing_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<State>("state");

    QTest::newRow("complete") << QByteArray("GET / HTTP/1.1\r\n\r\n") << State::Complete;
    QTest::newRow("malformed") << QByteArray("garbage\r\n\r\n") << State::Malformed;
}

void tst_HttpRequestParser::feedAfterEndConsumesNothing()
{
    QFETCH(QByteArray, input);
    QFETCH(State, state);

    HttpRequestParser parser;
    parser.feed(input);
    QCOMPARE(parser.state(), state);
    QCOMPARE(parser.feed("GET / HTTP/1.1\r\n\r\n"), 0);
    QCOMPARE(parser.feed(nullptr, 0), 0);
    QCOMPARE(parser.state(), state);
}

void tst_HttpRequestParser::resetKeepsLimits()
{
    HttpRequestParser parser;
    parser.setMaxBodyBytes(3);
    parser.feed(withLength("POST / HTTP/1.1\r\n", "abcd"));
    QCOMPARE(parser.state(), State::BodyTooLarge);
    parser.reset();
    QCOMPARE(parser.errorString(), QByteArray());
    parser.feed(withLength("POST / HTTP/1.1\r\n", "abcd"));
    QCOMPARE(parser.state(), State::BodyTooLarge);
    parser.reset();
    parser.feed(withLength("POST / HTTP/1.1\r\n", "abc"));
    QCOMPARE(parser.state(), State::Complete);
    QCOMPARE(parser.takeRequest().body, QByteArray("abc"));
    QCOMPARE(parser.request().body, QByteArray());
}

QTEST_GUILESS_MAIN(tst_HttpRequestParser)
#include "tst_httprequestparser.moc"
