#include "httpresponder.h"
#include "httpresponseparser.h"
#include "httpserver.h"

#include <QElapsedTimer>
#include <QPointer>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>
#include <functional>
#include <memory>
#include <vector>

using Headers = HttpResponder::Headers;

namespace {
constexpr int kTimeoutMs = 10000; // generous: the suite also runs under valgrind

QByteArray withLength(const QByteArray &head, const QByteArray &body)
{
    return head + "Content-Length: " + QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

// One response as the client saw it.
struct Response
{
    int status = 0;
    QByteArray statusLine;
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray body;

    bool has(const QByteArray &name) const
    {
        for (const auto &h : headers)
            if (h.first.compare(name, Qt::CaseInsensitive) == 0)
                return true;
        return false;
    }
    QByteArray header(const QByteArray &name) const
    {
        for (const auto &h : headers)
            if (h.first.compare(name, Qt::CaseInsensitive) == 0)
                return h.second;
        return {};
    }
};

// Status line and fields of a response head ending in an empty line.
Response parseHead(const QByteArray &head)
{
    Response r;
    QList<QByteArray> lines = head.left(head.size() - 4).split('\n');
    for (QByteArray &line : lines)
        if (line.endsWith('\r'))
            line.chop(1);
    r.statusLine = lines.value(0);
    r.status = r.statusLine.mid(9, 3).toInt();
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines[i].indexOf(':');
        r.headers.append({lines[i].left(colon), lines[i].mid(colon + 1).trimmed()});
    }
    return r;
}

// A raw TCP client. The server runs in this thread, so waiting means spinning the event loop
// (QTRY_*), never waitForReadyRead().
class Client
{
public:
    explicit Client(quint16 port)
    {
        QObject::connect(&m_socket, &QTcpSocket::readyRead, [this] {
            if (!m_paused)
                received += m_socket.readAll();
        });
        m_socket.connectToHost(QHostAddress::LocalHost, port);
        m_socket.waitForConnected(kTimeoutMs); // the kernel completes it; no server turn needed
    }

    QTcpSocket &socket() { return m_socket; }
    bool isConnected() const { return m_socket.state() == QAbstractSocket::ConnectedState; }
    void send(const QByteArray &bytes) { m_socket.write(bytes); }
    // While paused, the bytes stay in the kernel as with a client that is slow to read.
    void pauseReading(bool paused)
    {
        m_paused = paused;
        m_socket.setReadBufferSize(paused ? 1 : 0);
        if (!paused)
            received += m_socket.readAll();
    }

    // Takes one complete response off the received bytes, if there is one.
    bool takeResponse(Response &out, bool toHead = false)
    {
        const qsizetype headEnd = received.indexOf("\r\n\r\n");
        if (headEnd < 0)
            return false;
        qsizetype used = headEnd + 4;
        QByteArray body;
        if (!toHead) {
            HttpResponseParser parser;
            used = parser.feed(received);
            if (parser.state() != HttpResponseParser::State::Complete)
                return false;
            body = parser.body();
        }
        out = parseHead(received.left(headEnd + 4));
        out.body = body;
        received.remove(0, used);
        return true;
    }

    // Spins the event loop until takeResponse() succeeds. (QTRY_VERIFY would evaluate the
    // consuming call once more after it succeeded.)
    bool waitForResponse(Response &out, bool toHead = false)
    {
        QDeadlineTimer deadline(kTimeoutMs);
        while (!takeResponse(out, toHead)) {
            if (deadline.hasExpired())
                return false;
            QTest::qWait(5);
        }
        return true;
    }

    QByteArray received;

private:
    QTcpSocket m_socket;
    bool m_paused = false;
};

struct Received
{
    HttpRequest request;
    QPointer<HttpResponder> responder;
};
} // namespace

class tst_HttpServer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void simpleRequest_data();
    void simpleRequest();
    void headRequest();
    void invalidResponseHeadersDropped();
    void keepAlive_data();
    void keepAlive();
    void pipelined_data();
    void pipelined();
    void streaming_data();
    void streaming();
    void streamToHttp10Client();
    void tooLarge_data();
    void tooLarge();
    void expectContinue();
    void malformed_data();
    void malformed();
    void clientDisconnect_data();
    void clientDisconnect();
    void connectionClose_data();
    void connectionClose();
    void idleTimeout_data();
    void idleTimeout();
    void streamOutlivesIdleTimeout();
    void abandonedResponder_data();
    void abandonedResponder();
    void noHandler();
    void listenFailure();
    void headDeadlineIgnoresDrippedBytes();
    void bodyDeadlineIgnoresDrippedBytes();
    void headCheckBeforeBody_data();
    void headCheckBeforeBody();
    void floodOfHalfHeadsDoesNotLockOut();
    void unadmittedCapsCloseTheOldest();
    void admittedCap();
    void peerKey_data();
    void peerKey();

private:
    std::unique_ptr<Client> connectClient() { return std::make_unique<Client>(m_server->port()); }

    HttpServer *m_server = nullptr;
    QList<Received> m_received;
    std::function<void(const HttpRequest &, HttpResponder *)> m_handler;
};

void tst_HttpServer::init()
{
    m_server = new HttpServer;
    connect(m_server, &HttpServer::requestReceived, this,
            [this](const HttpRequest &request, HttpResponder *responder) {
                m_received.append({request, responder});
                if (m_handler)
                    m_handler(request, responder);
            });
    QVERIFY2(m_server->listen(QHostAddress::LocalHost, 0), qPrintable(m_server->errorString()));
    QVERIFY(m_server->port() != 0);
}

void tst_HttpServer::cleanup()
{
    delete m_server;
    m_server = nullptr;
    m_received.clear();
    m_handler = nullptr;
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
}

void tst_HttpServer::simpleRequest_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<QByteArray>("query");
    QTest::addColumn<QByteArray>("requestBody");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("responseBody");
    QTest::addColumn<QByteArray>("statusLine");

    const QByteArray call = R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})";
    const QByteArray result = R"({"jsonrpc":"2.0","id":1,"result":{"tools":[]}})";
    QTest::newRow("post json")
        << withLength("POST /mcp?debug=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test: yes\r\n", call)
        << QByteArray("POST") << QByteArray("/mcp") << QByteArray("debug=1") << call << 200
        << result << QByteArray("HTTP/1.1 200 OK");
    QTest::newRow("chunked request body")
        << QByteArray("POST /mcp HTTP/1.1\r\nX-Test: yes\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
        << QByteArray("POST") << QByteArray("/mcp") << QByteArray() << QByteArray("abcde") << 200
        << QByteArray("ok") << QByteArray("HTTP/1.1 200 OK");
    QTest::newRow("405") << QByteArray("GET /mcp HTTP/1.1\r\nX-Test: yes\r\n\r\n")
                         << QByteArray("GET") << QByteArray("/mcp") << QByteArray() << QByteArray()
                         << 405 << QByteArray("use POST\n")
                         << QByteArray("HTTP/1.1 405 Method Not Allowed");
    QTest::newRow("202 without body")
        << withLength("POST /mcp HTTP/1.1\r\nX-Test: yes\r\n", "{}") << QByteArray("POST")
        << QByteArray("/mcp") << QByteArray() << QByteArray("{}") << 202 << QByteArray()
        << QByteArray("HTTP/1.1 202 Accepted");
    QTest::newRow("204") << QByteArray("DELETE /mcp HTTP/1.1\r\nX-Test: yes\r\n\r\n")
                         << QByteArray("DELETE") << QByteArray("/mcp") << QByteArray()
                         << QByteArray() << 204 << QByteArray()
                         << QByteArray("HTTP/1.1 204 No Content");
    QTest::newRow("431 phrase") << QByteArray("GET /x HTTP/1.1\r\nX-Test: yes\r\n\r\n")
                                << QByteArray("GET") << QByteArray("/x") << QByteArray()
                                << QByteArray() << 431 << QByteArray("no")
                                << QByteArray("HTTP/1.1 431 Request Header Fields Too Large");
    QTest::newRow("unregistered status")
        << QByteArray("GET /x HTTP/1.1\r\nX-Test: yes\r\n\r\n") << QByteArray("GET")
        << QByteArray("/x") << QByteArray() << QByteArray() << 299 << QByteArray("odd")
        << QByteArray("HTTP/1.1 299 ");
}

void tst_HttpServer::simpleRequest()
{
    QFETCH(QByteArray, request);
    QFETCH(QByteArray, method);
    QFETCH(QByteArray, path);
    QFETCH(QByteArray, query);
    QFETCH(QByteArray, requestBody);
    QFETCH(int, status);
    QFETCH(QByteArray, responseBody);
    QFETCH(QByteArray, statusLine);

    m_handler = [&](const HttpRequest &, HttpResponder *responder) {
        responder->respond(status, {{"Content-Type", "application/json"}, {"X-Echo", "1"}},
                           responseBody);
    };
    auto client = connectClient();
    client->send(request);
    Response response;
    QVERIFY(client->waitForResponse(response));

    QCOMPARE(m_received.size(), 1);
    const HttpRequest &seen = m_received[0].request;
    QCOMPARE(seen.method, method);
    QCOMPARE(seen.path, path);
    QCOMPARE(seen.query, query);
    QCOMPARE(seen.body, requestBody);
    QCOMPARE(seen.header("x-test"), QByteArray("yes"));
    QCOMPARE(seen.peer, QHostAddress(QHostAddress::LocalHost));

    QCOMPARE(response.statusLine, statusLine);
    QCOMPARE(response.status, status);
    QCOMPARE(response.body, responseBody);
    QCOMPARE(response.header("X-Echo"), QByteArray("1"));
    QCOMPARE(response.header("Connection"), QByteArray("keep-alive"));
    QVERIFY(response.has("Date"));
    QVERIFY(!response.has("Transfer-Encoding"));
    if (status == 204)
        QVERIFY(!response.has("Content-Length")); // RFC 9110 8.6
    else
        QCOMPARE(response.header("Content-Length"), QByteArray::number(responseBody.size()));
    QCOMPARE(client->received, QByteArray());      // nothing beyond the response
    QTRY_VERIFY(m_received[0].responder.isNull()); // deleted once answered
    QVERIFY(client->isConnected());
}

void tst_HttpServer::headRequest()
{
    m_handler = [](const HttpRequest &request, HttpResponder *responder) {
        responder->respond(200, {{"Content-Type", "text/plain"}}, "body of " + request.path);
    };
    auto client = connectClient();
    client->send("HEAD /resource HTTP/1.1\r\n\r\n");
    Response response;
    QVERIFY(client->waitForResponse(response, true));
    QCOMPARE(response.status, 200);
    QCOMPARE(response.header("Content-Length"), QByteArray("17")); // as for GET
    QCOMPARE(response.body, QByteArray());

    // Stray body bytes would spoil the next response on the connection.
    client->send("GET /next HTTP/1.1\r\n\r\n");
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.body, QByteArray("body of /next"));
    QCOMPARE(client->received, QByteArray());
}

void tst_HttpServer::invalidResponseHeadersDropped()
{
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("invalid HTTP response header dropped"));
    m_handler = [](const HttpRequest &, HttpResponder *responder) {
        responder->respond(200,
                           {{"X-Ok", "1"},
                            {"X-Bad", "a\r\nSet-Cookie: stolen"},
                            {"Content-Length", "999"},
                            {"Transfer-Encoding", "chunked"}},
                           "abc");
    };
    auto client = connectClient();
    client->send("GET / HTTP/1.1\r\n\r\n");
    Response response;
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.header("X-Ok"), QByteArray("1"));
    QVERIFY(!response.has("X-Bad"));
    QVERIFY(!response.has("Set-Cookie"));
    QVERIFY(!response.has("Transfer-Encoding"));
    QCOMPARE(response.header("Content-Length"), QByteArray("3"));
    QCOMPARE(response.body, QByteArray("abc"));
}

void tst_HttpServer::keepAlive_data()
{
    QTest::addColumn<QByteArray>("first");
    QTest::addColumn<QByteArray>("second");

    QTest::newRow("http/1.1 default")
        << QByteArray("GET /one HTTP/1.1\r\n\r\n") << withLength("POST /two HTTP/1.1\r\n", "{}");
    QTest::newRow("http/1.0 keep-alive")
        << QByteArray("GET /one HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        << QByteArray("GET /two HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    QTest::newRow("explicit keep-alive")
        << QByteArray("GET /one HTTP/1.1\r\nConnection: keep-alive\r\n\r\n")
        << QByteArray("GET /two HTTP/1.1\r\n\r\n");
}

void tst_HttpServer::keepAlive()
{
    QFETCH(QByteArray, first);
    QFETCH(QByteArray, second);

    m_handler = [](const HttpRequest &request, HttpResponder *responder) {
        responder->respond(200, {}, request.path);
    };
    auto client = connectClient();
    Response response;
    client->send(first);
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.body, QByteArray("/one"));
    QCOMPARE(response.header("Connection"), QByteArray("keep-alive"));
    QTest::qWait(50);
    QVERIFY(client->isConnected());

    client->send(second);
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.body, QByteArray("/two"));
    QCOMPARE(m_received.size(), 2);
    QVERIFY(client->isConnected());
}

void tst_HttpServer::pipelined_data()
{
    QTest::addColumn<int>("count");
    QTest::addColumn<bool>("answerAtOnce"); // inside the signal, or later by the test

    QTest::newRow("two, answered later") << 2 << false;
    QTest::newRow("four, answered later") << 4 << false;
    QTest::newRow("four, answered at once") << 4 << true;
}

void tst_HttpServer::pipelined()
{
    QFETCH(int, count);
    QFETCH(bool, answerAtOnce);

    if (answerAtOnce) {
        m_handler = [](const HttpRequest &request, HttpResponder *responder) {
            responder->respond(200, {}, request.path + ':' + request.body);
        };
    }
    QByteArray all;
    for (int i = 0; i < count; ++i) {
        const QByteArray path = "/r" + QByteArray::number(i);
        all += i % 2 ? withLength("POST " + path + " HTTP/1.1\r\n", "body" + QByteArray::number(i))
                     : QByteArray("GET " + path + " HTTP/1.1\r\n\r\n");
    }
    auto client = connectClient();
    client->send(all); // one write: the requests arrive together

    if (!answerAtOnce) {
        for (int i = 0; i < count; ++i) {
            QTRY_COMPARE_WITH_TIMEOUT(m_received.size(), i + 1, kTimeoutMs);
            QTest::qWait(30);
            QCOMPARE(m_received.size(), i + 1); // the next waits for this answer
            const Received &r = m_received[i];
            QCOMPARE(r.request.path, "/r" + QByteArray::number(i));
            QVERIFY(r.responder);
            r.responder->respond(200, {}, r.request.path + ':' + r.request.body);
        }
    }
    for (int i = 0; i < count; ++i) {
        Response response;
        QVERIFY(client->waitForResponse(response));
        const QByteArray body = i % 2 ? "body" + QByteArray::number(i) : QByteArray();
        QCOMPARE(response.body, "/r" + QByteArray::number(i) + ':' + body);
    }
    QCOMPARE(m_received.size(), count);
    QVERIFY(client->isConnected());
}

void tst_HttpServer::streaming_data()
{
    QTest::addColumn<QList<QByteArray>>("chunks");
    QTest::addColumn<int>("delayMs");

    QTest::newRow("server-sent events")
        << QList<QByteArray>{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n",
                             "data: {\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n\n",
                             "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"}
        << 100;
    QTest::newRow("binary and crlf")
        << QList<QByteArray>{QByteArray("\0\r\n\r\n", 5), QByteArray(5000, 'x'), "0\r\n\r\n"} << 50;
}

void tst_HttpServer::streaming()
{
    QFETCH(QList<QByteArray>, chunks);
    QFETCH(int, delayMs);

    auto client = connectClient();
    client->send("POST /mcp HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
    QTRY_COMPARE_WITH_TIMEOUT(m_received.size(), 1, kTimeoutMs);
    QPointer<HttpResponder> responder = m_received[0].responder;
    QVERIFY(responder);
    QVERIFY(!responder->isStreaming());
    responder->beginStream(200, {{"Content-Type", "text/event-stream"}});
    QVERIFY(responder->isStreaming());
    QVERIFY(responder->isOpen());

    QTRY_VERIFY_WITH_TIMEOUT(client->received.contains("\r\n\r\n"), kTimeoutMs);
    const Response head =
        parseHead(client->received.left(client->received.indexOf("\r\n\r\n") + 4));
    QCOMPARE(head.status, 200);
    QCOMPARE(head.header("Transfer-Encoding"), QByteArray("chunked"));
    QCOMPARE(head.header("Content-Type"), QByteArray("text/event-stream"));
    QVERIFY(!head.has("Content-Length"));

    QByteArray expectedBody;
    for (qsizetype i = 0; i < chunks.size(); ++i) {
        const QByteArray encoded =
            QByteArray::number(chunks[i].size(), 16) + "\r\n" + chunks[i] + "\r\n";
        responder->writeChunk(chunks[i]);
        expectedBody += chunks[i];
        // Each chunk reaches the client while the stream is still open: the first long before
        // the last is even written.
        QTRY_VERIFY_WITH_TIMEOUT(client->received.endsWith(encoded), kTimeoutMs);
        QVERIFY(!client->received.contains("\r\n0\r\n\r\n") || i == chunks.size() - 1);
        QVERIFY(responder && responder->isStreaming());
        QTest::qWait(delayMs);
    }
    responder->writeChunk(QByteArray()); // would end the stream if it were sent
    responder->endStream();
    QVERIFY(!responder->isOpen());
    QVERIFY(!responder->isStreaming());

    Response response;
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.body, expectedBody);
    QCOMPARE(client->received, QByteArray());
    QTRY_VERIFY(responder.isNull());

    // The connection serves its next request.
    m_handler = [](const HttpRequest &, HttpResponder *r) { r->respond(200, {}, "after"); };
    client->send("GET /mcp HTTP/1.1\r\n\r\n");
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.body, QByteArray("after"));
    QCOMPARE(m_received.size(), 2);
}

void tst_HttpServer::streamToHttp10Client()
{
    auto client = connectClient();
    client->send("GET /mcp HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    QTRY_COMPARE_WITH_TIMEOUT(m_received.size(), 1, kTimeoutMs);
    QPointer<HttpResponder> responder = m_received[0].responder;
    responder->beginStream(200, {{"Content-Type", "text/event-stream"}});
    responder->writeChunk("data: 1\n\n");
    QTRY_VERIFY_WITH_TIMEOUT(client->received.endsWith("\r\n\r\ndata: 1\n\n"), kTimeoutMs);
    QVERIFY(client->isConnected());
    responder->writeChunk("data: 2\n\n");
    responder->endStream();
    // HTTP/1.0 knows no chunks: the body is delimited by the end of the connection.
    QTRY_VERIFY_WITH_TIMEOUT(!client->isConnected(), kTimeoutMs);
    const qsizetype headEnd = client->received.indexOf("\r\n\r\n") + 4;
    const Response head = parseHead(client->received.left(headEnd));
    QCOMPARE(head.header("Connection"), QByteArray("close"));
    QVERIFY(!head.has("Transfer-Encoding"));
    QVERIFY(!head.has("Content-Length"));
    QCOMPARE(client->received.mid(headEnd), QByteArray("data: 1\n\ndata: 2\n\n"));
}

void tst_HttpServer::tooLarge_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    QTest::addColumn<bool>("readLate"); // the client reads only after the server has closed

    // Limits: body 100 bytes, head 512 bytes.
    const QByteArray bigBody = withLength("POST /mcp HTTP/1.1\r\n", QByteArray(200 * 1024, 'b'));
    QTest::newRow("content-length over limit")
        << QByteArray("POST /mcp HTTP/1.1\r\nContent-Length: 101\r\n\r\n") << 413 << false;
    QTest::newRow("content-length over limit, body sent along") << bigBody << 413 << false;
    // Closing at once would reset the connection over the unread body, and the reset would
    // destroy the 413 before the client reads it.
    QTest::newRow("body sent along, client reads late")
        << withLength("POST /mcp HTTP/1.1\r\n", QByteArray(4 * 1024 * 1024, 'b')) << 413 << true;
    QTest::newRow("expect 100-continue over limit")
        << QByteArray("POST /mcp HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n")
        << 413 << false;
    QTest::newRow("chunked over limit")
        << QByteArray("POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "40\r\n" +
                      QByteArray(64, 'a') + "\r\n40\r\n" + QByteArray(64, 'b') + "\r\n")
        << 413 << false;
    QTest::newRow("header over limit")
        << QByteArray("GET /mcp HTTP/1.1\r\nX-Big: " + QByteArray(1000, 'h') + "\r\n\r\n") << 431
        << false;
}

void tst_HttpServer::tooLarge()
{
    QFETCH(QByteArray, request);
    QFETCH(int, status);
    QFETCH(bool, readLate);

    delete m_server;
    m_server = new HttpServer;
    connect(m_server, &HttpServer::requestReceived, this,
            [this](const HttpRequest &r, HttpResponder *responder) {
                m_received.append({r, responder});
                responder->respond(200, {}, {});
            });
    m_server->setMaxBodyBytes(100);
    m_server->setMaxHeaderBytes(512);
    QVERIFY(m_server->listen(QHostAddress::LocalHost, 0));

    auto client = connectClient();
    if (readLate)
        client->pauseReading(true);
    client->send(request);
    if (readLate) {
        QTest::qWait(500);
        client->pauseReading(false);
    }
    Response response;
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.status, status);
    QCOMPARE(response.header("Connection"), QByteArray("close"));
    QTRY_VERIFY_WITH_TIMEOUT(!client->isConnected(), kTimeoutMs);
    QCOMPARE(m_received.size(), 0); // the handler never saw it
    QVERIFY(!client->received.contains("100 Continue"));
}

void tst_HttpServer::expectContinue()
{
    m_handler = [](const HttpRequest &request, HttpResponder *responder) {
        responder->respond(200, {}, request.body);
    };
    auto client = connectClient();
    client->send("POST /mcp HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
    Response interim;
    QVERIFY(client->waitForResponse(interim));
    QCOMPARE(interim.statusLine, QByteArray("HTTP/1.1 100 Continue"));
    QCOMPARE(m_received.size(), 0);

    client->send("hello");
    Response response;
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.status, 200);
    QCOMPARE(response.body, QByteArray("hello"));

    // Whoever sends the body without waiting gets no interim response.
    client->send("POST /mcp HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi");
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.status, 200);
    QCOMPARE(response.body, QByteArray("hi"));
}

void tst_HttpServer::malformed_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("served"); // requests the handler gets before the garbage

    QTest::newRow("garbage") << QByteArray("garbage\r\n\r\n") << 0;
    QTest::newRow("tls client hello")
        << QByteArray("\x16\x03\x01\x02\0\x01\0\x01\xfc\x03\x03", 11) << 0;
    QTest::newRow("bad content-length")
        << QByteArray("POST / HTTP/1.1\r\nContent-Length: ten\r\n\r\n") << 0;
    QTest::newRow("content-length and chunked")
        << QByteArray("POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "3\r\nabc\r\n0\r\n\r\n")
        << 0;
    QTest::newRow("garbage after a good request")
        << QByteArray("GET /ok HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nBad Name: x\r\n\r\n") << 1;
}

void tst_HttpServer::malformed()
{
    QFETCH(QByteArray, request);
    QFETCH(int, served);

    m_handler = [](const HttpRequest &, HttpResponder *responder) {
        responder->respond(200, {}, "fine");
    };
    auto client = connectClient();
    client->send(request);
    Response response;
    for (int i = 0; i < served; ++i) {
        QVERIFY(client->waitForResponse(response));
        QCOMPARE(response.status, 200);
    }
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.status, 400);
    QCOMPARE(response.statusLine, QByteArray("HTTP/1.1 400 Bad Request"));
    QCOMPARE(response.header("Connection"), QByteArray("close"));
    QTRY_VERIFY_WITH_TIMEOUT(!client->isConnected(), kTimeoutMs);
    QCOMPARE(m_received.size(), served);
}

void tst_HttpServer::clientDisconnect_data()
{
    QTest::addColumn<bool>("streaming");
    QTest::addColumn<bool>("reset"); // abort (RST) instead of a normal close (FIN)

    QTest::newRow("mid-stream, close") << true << false;
    QTest::newRow("mid-stream, reset") << true << true;
    QTest::newRow("before the answer, close") << false << false;
    QTest::newRow("before the answer, reset") << false << true;
}

void tst_HttpServer::clientDisconnect()
{
    QFETCH(bool, streaming);
    QFETCH(bool, reset);

    auto client = connectClient();
    client->send("POST /mcp HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
    QTRY_COMPARE_WITH_TIMEOUT(m_received.size(), 1, kTimeoutMs);
    QPointer<HttpResponder> responder = m_received[0].responder;
    QVERIFY(responder);
    QSignalSpy closed(responder.data(), &HttpResponder::closed);
    int writesAfterClose = 0;
    // Writing from the closed() slot itself is the hardest case for the lifetimes.
    connect(responder.data(), &HttpResponder::closed, this, [&] {
        QVERIFY(!responder->isOpen());
        QVERIFY(!responder->isStreaming());
        responder->writeChunk("ignored");
        responder->endStream();
        responder->respond(200, {}, "ignored");
        ++writesAfterClose;
    });
    if (streaming) {
        responder->beginStream(200, {{"Content-Type", "text/event-stream"}});
        responder->writeChunk("first");
        QTRY_VERIFY_WITH_TIMEOUT(client->received.endsWith("5\r\nfirst\r\n"), kTimeoutMs);
    }
    QVERIFY(responder->isOpen());

    if (reset)
        client->socket().abort();
    else
        client->socket().disconnectFromHost();
    QTRY_COMPARE_WITH_TIMEOUT(closed.count(), 1, kTimeoutMs);
    QCOMPARE(writesAfterClose, 1);
    if (responder) { // later writes, from outside the slot
        responder->writeChunk("ignored");
        responder->endStream();
    }
    QTRY_VERIFY_WITH_TIMEOUT(responder.isNull(), kTimeoutMs); // deleted later
    QCOMPARE(closed.count(), 1);

    // The server is unharmed.
    auto other = connectClient();
    m_handler = [](const HttpRequest &, HttpResponder *r) { r->respond(200, {}, "alive"); };
    other->send("GET / HTTP/1.1\r\n\r\n");
    Response response;
    QVERIFY(other->waitForResponse(response));
    QCOMPARE(response.body, QByteArray("alive"));
}

void tst_HttpServer::connectionClose_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<QByteArray>("handlerConnection"); // what the handler puts in its response

    QTest::newRow("client says close")
        << QByteArray("GET / HTTP/1.1\r\nConnection: close\r\n\r\n") << QByteArray();
    QTest::newRow("client says close among others")
        << QByteArray("GET / HTTP/1.1\r\nConnection: TE, Close\r\n\r\n") << QByteArray();
    QTest::newRow("http/1.0 default") << QByteArray("GET / HTTP/1.0\r\n\r\n") << QByteArray();
    QTest::newRow("handler says close")
        << QByteArray("GET / HTTP/1.1\r\n\r\n") << QByteArray("close");
}

void tst_HttpServer::connectionClose()
{
    QFETCH(QByteArray, request);
    QFETCH(QByteArray, handlerConnection);

    m_handler = [&](const HttpRequest &, HttpResponder *responder) {
        Headers headers;
        if (!handlerConnection.isEmpty())
            headers.append({"Connection", handlerConnection});
        responder->respond(200, headers, "bye");
    };
    auto client = connectClient();
    // A pipelined request after the last one must not be served.
    client->send(request + "GET /too-late HTTP/1.1\r\n\r\n");
    Response response;
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.body, QByteArray("bye"));
    QCOMPARE(response.header("Connection"), QByteArray("close"));
    QTRY_VERIFY_WITH_TIMEOUT(!client->isConnected(), kTimeoutMs);
    QCOMPARE(m_received.size(), 1);
    QCOMPARE(client->received, QByteArray());
}

void tst_HttpServer::idleTimeout_data()
{
    QTest::addColumn<QByteArray>("request"); // sent first; the response is awaited if complete
    QTest::addColumn<bool>("complete");

    QTest::newRow("fresh connection") << QByteArray() << false;
    QTest::newRow("after a response") << QByteArray("GET / HTTP/1.1\r\n\r\n") << true;
    QTest::newRow("half a request") << QByteArray("POST / HTTP/1.1\r\nContent-Le") << false;
}

void tst_HttpServer::idleTimeout()
{
    QFETCH(QByteArray, request);
    QFETCH(bool, complete);

    delete m_server;
    m_server = new HttpServer;
    connect(m_server, &HttpServer::requestReceived, this,
            [](const HttpRequest &, HttpResponder *r) { r->respond(200, {}, "x"); });
    // Before a request, the head deadline applies; after a response, the idle time.
    m_server->setIdleTimeoutMs(300);
    m_server->setHeadTimeoutMs(complete ? 60000 : 300);
    QVERIFY(m_server->listen(QHostAddress::LocalHost, 0));

    auto client = connectClient();
    QElapsedTimer elapsed;
    elapsed.start();
    if (!request.isEmpty())
        client->send(request);
    if (complete) {
        Response response;
        QVERIFY(client->waitForResponse(response));
        elapsed.restart();
    }
    QTRY_VERIFY_WITH_TIMEOUT(!client->isConnected(), kTimeoutMs);
    QVERIFY2(elapsed.elapsed() >= 250, qPrintable(QString::number(elapsed.elapsed())));
}

void tst_HttpServer::streamOutlivesIdleTimeout()
{
    m_server->setIdleTimeoutMs(100); // applies to connections accepted from now on
    auto client = connectClient();
    client->send("GET /mcp HTTP/1.1\r\nAccept: text/event-stream\r\n\r\n");
    QTRY_COMPARE_WITH_TIMEOUT(m_received.size(), 1, kTimeoutMs);
    QPointer<HttpResponder> responder = m_received[0].responder;
    responder->beginStream(200, {{"Content-Type", "text/event-stream"}});
    QTest::qWait(500); // five idle timeouts without a byte
    QVERIFY(client->isConnected());
    responder->writeChunk(": ping\n\n");
    QTRY_VERIFY_WITH_TIMEOUT(client->received.endsWith("8\r\n: ping\n\n\r\n"), kTimeoutMs);
    responder->endStream();
    Response response;
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.body, QByteArray(": ping\n\n"));
    // Idle again once the stream has ended.
    QTRY_VERIFY_WITH_TIMEOUT(!client->isConnected(), kTimeoutMs);
}

void tst_HttpServer::abandonedResponder_data()
{
    QTest::addColumn<bool>("streaming");

    QTest::newRow("unanswered") << false;
    QTest::newRow("mid-stream") << true;
}

void tst_HttpServer::abandonedResponder()
{
    QFETCH(bool, streaming);

    QTest::ignoreMessage(QtWarningMsg, streaming ? "HTTP response stream dropped before its end"
                                                 : "HTTP request dropped without an answer");
    auto client = connectClient();
    client->send("GET / HTTP/1.1\r\n\r\n");
    QTRY_COMPARE_WITH_TIMEOUT(m_received.size(), 1, kTimeoutMs);
    HttpResponder *responder = m_received[0].responder;
    QSignalSpy closed(responder, &HttpResponder::closed);
    if (streaming) {
        responder->beginStream(200, {});
        responder->writeChunk("partial");
        QTRY_VERIFY_WITH_TIMEOUT(client->received.endsWith("7\r\npartial\r\n"), kTimeoutMs);
    }
    delete responder;
    QCOMPARE(closed.count(), 0);

    if (streaming) {
        // A cut-off chunked body: the client must see the connection end.
        QTRY_VERIFY_WITH_TIMEOUT(!client->isConnected(), kTimeoutMs);
        QVERIFY(!client->received.endsWith("0\r\n\r\n"));
        return;
    }
    Response response;
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.status, 500);
    m_handler = [](const HttpRequest &, HttpResponder *r) { r->respond(200, {}, "next"); };
    client->send("GET / HTTP/1.1\r\n\r\n");
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.body, QByteArray("next"));
}

void tst_HttpServer::noHandler()
{
    HttpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost, 0));
    Client client(server.port());
    client.send("GET / HTTP/1.1\r\n\r\n");
    Response response;
    QVERIFY(client.waitForResponse(response));
    QCOMPARE(response.status, 503);
    QVERIFY(client.isConnected());
}

void tst_HttpServer::listenFailure()
{
    HttpServer second;
    QVERIFY(!second.listen(QHostAddress::LocalHost, m_server->port()));
    QVERIFY(!second.errorString().isEmpty());
}

namespace {
// A server whose handler answers 200 "ok" to everything, with the given limits.
std::unique_ptr<HttpServer> makeServer(const std::function<void(HttpServer &)> &configure)
{
    auto server = std::make_unique<HttpServer>();
    QObject::connect(server.get(), &HttpServer::requestReceived,
                     [](const HttpRequest &, HttpResponder *r) { r->respond(200, {}, "ok"); });
    configure(*server);
    if (!server->listen(QHostAddress::LocalHost, 0))
        return nullptr;
    return server;
}

// Sends one byte every `intervalMs` until the connection is closed or `budgetMs` is over;
// returns the ms from the first byte sent to the close (-1: still open).
qint64 dripUntilClosed(Client &client, const QByteArray &start, int intervalMs, int budgetMs)
{
    QElapsedTimer elapsed;
    elapsed.start();
    client.send(start);
    while (client.isConnected() && elapsed.elapsed() < budgetMs) {
        QTest::qWait(intervalMs);
        if (client.isConnected())
            client.send("a");
    }
    return client.isConnected() ? -1 : elapsed.elapsed();
}
} // namespace

void tst_HttpServer::headDeadlineIgnoresDrippedBytes()
{
    // A byte every 100 ms would keep restarting an idle timer of 300 ms for ever; the head
    // deadline counts from the start.
    auto server = makeServer([](HttpServer &s) {
        s.setIdleTimeoutMs(300);
        s.setHeadTimeoutMs(600);
    });
    QVERIFY(server);
    Client client(server->port());
    const qint64 closedAfter =
        dripUntilClosed(client, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", 100, 5000);
    QVERIFY2(closedAfter >= 0, "a client dripping its head was never closed");
    QVERIFY2(closedAfter >= 500, qPrintable(QString::number(closedAfter)));
    Response response;
    QVERIFY(client.takeResponse(response));
    QCOMPARE(response.status, 408);
}

void tst_HttpServer::bodyDeadlineIgnoresDrippedBytes()
{
    auto server = makeServer([](HttpServer &s) {
        s.setIdleTimeoutMs(300);
        s.setBodyTimeoutMs(600);
    });
    QVERIFY(server);
    Client client(server->port());
    const qint64 closedAfter = dripUntilClosed(
        client, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n", 100, 5000);
    QVERIFY2(closedAfter >= 0, "a client dripping its body was never closed");
    QVERIFY2(closedAfter >= 500, qPrintable(QString::number(closedAfter)));
    Response response;
    QVERIFY(client.takeResponse(response));
    QCOMPARE(response.status, 408);
    QVERIFY(response.body.contains("body"));
}

void tst_HttpServer::headCheckBeforeBody_data()
{
    QTest::addColumn<bool>("authorized");
    QTest::addColumn<bool>("expectContinue");

    QTest::newRow("no token") << false << false;
    QTest::newRow("no token, expect 100-continue") << false << true;
    QTest::newRow("token, expect 100-continue") << true << true;
}

void tst_HttpServer::headCheckBeforeBody()
{
    QFETCH(bool, authorized);
    QFETCH(bool, expectContinue);

    int checked = 0;
    m_server->setHeadCheck([&](const HttpRequest &head) -> HttpConnection::Verdict {
        ++checked;
        if (!head.body.isEmpty())
            return {500, {}, "the check saw a body"};
        if (head.header("Authorization") != "Bearer good")
            return {401, {{"WWW-Authenticate", "Bearer"}}, "no"};
        return {};
    });
    m_handler = [](const HttpRequest &request, HttpResponder *responder) {
        responder->respond(200, {}, QByteArray::number(request.body.size()));
    };
    auto client = connectClient();
    // A body of 4 MiB is announced and not sent: a refusal cannot wait for it.
    const qint64 length = 4 * 1024 * 1024;
    client->send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
                 QByteArray(authorized ? "Authorization: Bearer good\r\n" : "") +
                 QByteArray(expectContinue ? "Expect: 100-continue\r\n" : "") +
                 "Content-Length: " + QByteArray::number(length) + "\r\n\r\n");
    Response response;
    QVERIFY(client->waitForResponse(response, true));
    QCOMPARE(checked, 1);
    if (!authorized) {
        QCOMPARE(response.status, 401);
        QCOMPARE(response.header("Connection"), QByteArray("close"));
        QTRY_VERIFY_WITH_TIMEOUT(!client->isConnected(), kTimeoutMs);
        QVERIFY(!client->received.contains("100 Continue"));
        QCOMPARE(m_received.size(), 0);
        return;
    }
    QCOMPARE(response.statusLine, QByteArray("HTTP/1.1 100 Continue"));
    client->send(QByteArray(length, 'x'));
    QVERIFY(client->waitForResponse(response));
    QCOMPARE(response.status, 200);
    QCOMPARE(response.body, QByteArray::number(length));
}

void tst_HttpServer::floodOfHalfHeadsDoesNotLockOut()
{
    // 200 connections from this address that drip half a request head: an authorised client
    // still gets in while they are open, and each one is closed by the head deadline.
    constexpr int kFlood = 200;
    constexpr int kHeadMs = 1500;
    auto server = makeServer([](HttpServer &s) {
        s.setHeadTimeoutMs(kHeadMs);
        s.setHeadCheck([](const HttpRequest &head) -> HttpConnection::Verdict {
            if (head.header("Authorization") != "Bearer good")
                return {401, {}, "no"};
            return {};
        });
    });
    QVERIFY(server);
    std::vector<std::unique_ptr<Client>> flood;
    QElapsedTimer sinceStart;
    sinceStart.start();
    for (int i = 0; i < kFlood; ++i) {
        flood.push_back(std::make_unique<Client>(server->port()));
        flood.back()->send("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty");
        if (i % 25 == 24)
            QTest::qWait(1); // let the server accept
    }
    QTRY_COMPARE_WITH_TIMEOUT(server->connectionCount(), kFlood, kTimeoutMs);
    QVERIFY2(sinceStart.elapsed() < kHeadMs,
             "the flood took longer to open than the head deadline; the check below would not "
             "show anything");
    for (const auto &c : flood)
        QVERIFY(c->isConnected());

    Client good(server->port());
    good.send("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer good\r\n\r\n");
    Response response;
    QVERIFY(good.waitForResponse(response));
    QCOMPARE(response.status, 200);
    int stillOpen = 0;
    for (const auto &c : flood)
        stillOpen += c->isConnected() ? 1 : 0;
    QCOMPARE(stillOpen, kFlood); // it got in beside them, not by pushing them out

    // Dripping a byte every 300 ms does not keep them.
    QElapsedTimer drip;
    drip.start();
    while (drip.elapsed() < 3 * kHeadMs) {
        int open = 0;
        for (const auto &c : flood) {
            if (c->isConnected()) {
                c->send("p");
                ++open;
            }
        }
        if (open == 0)
            break;
        QTest::qWait(300);
    }
    for (const auto &c : flood) {
        QTRY_VERIFY_WITH_TIMEOUT(!c->isConnected(), kTimeoutMs);
        Response timedOut;
        QVERIFY(c->takeResponse(timedOut));
        QCOMPARE(timedOut.status, 408);
    }
    QVERIFY(sinceStart.elapsed() >= kHeadMs);
    QTRY_COMPARE_WITH_TIMEOUT(server->connectionCount(), 1, kTimeoutMs); // the kept good one
}

void tst_HttpServer::unadmittedCapsCloseTheOldest()
{
    auto server = makeServer([](HttpServer &s) { s.setConnectionLimits({3, 5, 10}); });
    QVERIFY(server);
    std::vector<std::unique_ptr<Client>> clients;
    for (int i = 0; i < 3; ++i) {
        clients.push_back(std::make_unique<Client>(server->port()));
        QTRY_COMPARE_WITH_TIMEOUT(server->connectionCount(), i + 1, kTimeoutMs);
    }
    // A fourth at once: the oldest has not had a second to send its head yet (a burst accepted
    // in one pass must not push a client's connection out before a byte of it is read), so the
    // newcomer is refused.
    Client refused(server->port());
    QTRY_VERIFY_WITH_TIMEOUT(!refused.isConnected(), kTimeoutMs);
    QCOMPARE(server->connectionCount(), 3);
    for (const auto &c : clients)
        QVERIFY(c->isConnected());
    // Later, a fourth from the same address: the oldest silent one goes, the newcomer stays.
    QTest::qWait(1100);
    clients.push_back(std::make_unique<Client>(server->port()));
    QTRY_VERIFY_WITH_TIMEOUT(!clients[0]->isConnected(), kTimeoutMs);
    QCOMPARE(server->connectionCount(), 3);
    for (size_t i = 1; i < clients.size(); ++i)
        QVERIFY(clients[i]->isConnected());
    Response response;
    clients.back()->send("GET / HTTP/1.1\r\n\r\n");
    QVERIFY(clients.back()->waitForResponse(response));
    QCOMPARE(response.status, 200);
    // Admitted now: it no longer counts against the cap of silent ones, so one more fits.
    QCOMPARE(server->admittedCount(), 1);
    clients.push_back(std::make_unique<Client>(server->port()));
    QTRY_COMPARE_WITH_TIMEOUT(server->connectionCount(), 4, kTimeoutMs);
    for (size_t i = 1; i < clients.size(); ++i)
        QVERIFY(clients[i]->isConnected());
}

void tst_HttpServer::admittedCap()
{
    auto server = makeServer([](HttpServer &s) { s.setConnectionLimits({256, 512, 2}); });
    QVERIFY(server);
    std::vector<std::unique_ptr<Client>> clients;
    Response response;
    for (int i = 0; i < 3; ++i) {
        clients.push_back(std::make_unique<Client>(server->port()));
        clients.back()->send("GET / HTTP/1.1\r\n\r\n");
        QVERIFY(clients.back()->waitForResponse(response));
        QCOMPARE(response.status, i < 2 ? 200 : 503);
    }
    QVERIFY(response.body.contains("too many connections"));
    QTRY_VERIFY_WITH_TIMEOUT(!clients.back()->isConnected(), kTimeoutMs);
    // One goes: there is room again.
    clients[0]->socket().disconnectFromHost();
    QTRY_COMPARE_WITH_TIMEOUT(server->admittedCount(), 1, kTimeoutMs);
    Client next(server->port());
    next.send("GET / HTTP/1.1\r\n\r\n");
    QVERIFY(next.waitForResponse(response));
    QCOMPARE(response.status, 200);
}

void tst_HttpServer::peerKey_data()
{
    QTest::addColumn<QString>("address");
    QTest::addColumn<QByteArray>("key");

    QTest::newRow("ipv4") << "192.168.1.5" << QByteArray("192.168.1.5");
    QTest::newRow("ipv4-mapped") << "::ffff:127.0.0.1" << QByteArray("127.0.0.1");
    QTest::newRow("ipv6 host in its /64")
        << "2001:db8:1:2:aaaa:bbbb:cccc:dddd" << QByteArray("2001:db8:1:2::/64");
    QTest::newRow("ipv6 loopback") << "::1" << QByteArray("::/64");
}

void tst_HttpServer::peerKey()
{
    QFETCH(QString, address);
    QFETCH(QByteArray, key);
    QCOMPARE(HttpServer::peerKey(QHostAddress(address)), key);
}

QTEST_GUILESS_MAIN(tst_HttpServer)
#include "tst_httpserver.moc"
