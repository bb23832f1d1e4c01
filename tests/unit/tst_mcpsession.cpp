#include "jsonrpcmessage.h"
#include "mcpserver.h"
#include "mcpsession.h"
#include "recordingtransport.h"
#include "toolcall.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

namespace {
const QString kNotInitialized =
    QStringLiteral("the session is not initialized: send initialize first");

QJsonObject textResult(const QString &text)
{
    return {{"content", QJsonArray{ToolCall::textContent(text)}}};
}
} // namespace

class tst_McpSession : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void initialize_data();
    void initialize();
    void pingBeforeInitialize_data();
    void pingBeforeInitialize();
    void requestsBeforeInitialize_data();
    void requestsBeforeInitialize();
    void errorsKeepTheSessionServing_data();
    void errorsKeepTheSessionServing();
    void toolCall();
    void toolCallWithInvalidArguments_data();
    void toolCallWithInvalidArguments();
    void toolCallFinishedLater();
    void notificationsNeverAnswered_data();
    void notificationsNeverAnswered();
    void cancelledCallGetsNoResponse();
    void cancellationMatchesTheIdType();
    void duplicateIdInFlight();
    void cancelAll();
    void endingTheSessionCancelsEveryCall();
    void logLevel_data();
    void logLevel();
    void closedOnce();

private:
    void receive(const QJsonObject &message);
    void request(const QJsonValue &id, const QString &method, const QJsonObject &params = {});
    // Sends a request and returns the one message it was answered with.
    QJsonObject exchange(const QJsonValue &id, const QString &method,
                         const QJsonObject &params = {});
    void initializeSession();
    void holdCall(const QJsonValue &id);

    McpServer *m_server = nullptr;
    McpSession *m_session = nullptr;           // owned by m_server
    RecordingTransport *m_transport = nullptr; // owned by m_session
    QList<QPointer<ToolCall>> m_held;          // calls of the "hold" tool, never finished by it
};

void tst_McpSession::init()
{
    ServerInfo info;
    info.name = QStringLiteral("code-sandbox");
    info.title = QStringLiteral("Code Sandbox");
    info.version = QStringLiteral("9.9.9");
    info.instructions = QStringLiteral("Run code with the tools.");
    m_server = new McpServer(info);

    ToolDefinition echo;
    echo.name = QStringLiteral("echo");
    echo.description = QStringLiteral("Returns its text.");
    echo.inputSchema = QJsonDocument::fromJson(R"({"type":"object",
        "properties":{"text":{"type":"string"}},
        "required":["text"],"additionalProperties":false})")
                           .object();
    echo.handler = [](ToolCall *call) {
        call->finish(textResult(call->arguments().value("text").toString()));
    };
    QVERIFY(m_server->tools().add(echo));

    ToolDefinition hold;
    hold.name = QStringLiteral("hold");
    hold.description = QStringLiteral("Stays in flight until the test finishes it.");
    hold.inputSchema = QJsonObject{{"type", "object"}};
    hold.handler = [this](ToolCall *call) { m_held.append(call); };
    QVERIFY(m_server->tools().add(hold));

    m_transport = new RecordingTransport;
    m_session = m_server->openSession(m_transport);
}

void tst_McpSession::cleanup()
{
    delete m_server;
    m_server = nullptr;
    m_session = nullptr;
    m_transport = nullptr;
    m_held.clear();
}

void tst_McpSession::receive(const QJsonObject &message)
{
    m_transport->receive(QJsonDocument(message).toJson(QJsonDocument::Compact));
}

void tst_McpSession::request(const QJsonValue &id, const QString &method, const QJsonObject &params)
{
    receive(JsonRpcMessage::makeRequest(id, method, params));
}

QJsonObject tst_McpSession::exchange(const QJsonValue &id, const QString &method,
                                     const QJsonObject &params)
{
    request(id, method, params);
    const QList<QJsonObject> sent = m_transport->takeSent();
    if (sent.size() != 1) {
        qWarning() << method << "was answered with" << sent.size() << "messages";
        return {};
    }
    return sent.first();
}

void tst_McpSession::initializeSession()
{
    exchange(0, "initialize",
             {{"protocolVersion", "2025-11-25"},
              {"capabilities", QJsonObject()},
              {"clientInfo", QJsonObject{{"name", "unit"}, {"version", "1"}}}});
    receive(JsonRpcMessage::makeNotification("notifications/initialized"));
    QVERIFY(m_session->isInitialized());
    QVERIFY(m_transport->takeSent().isEmpty());
}

void tst_McpSession::holdCall(const QJsonValue &id)
{
    request(id, "tools/call", {{"name", "hold"}, {"arguments", QJsonObject()}});
}

void tst_McpSession::initialize_data()
{
    QTest::addColumn<QJsonValue>("requested"); // Undefined: not sent
    QTest::addColumn<QString>("negotiated");

    QTest::newRow("2025-11-25") << QJsonValue("2025-11-25") << "2025-11-25";
    QTest::newRow("2025-06-18") << QJsonValue("2025-06-18") << "2025-06-18";
    QTest::newRow("2025-03-26") << QJsonValue("2025-03-26") << "2025-03-26";
    QTest::newRow("2024-11-05") << QJsonValue("2024-11-05") << "2024-11-05";
    QTest::newRow("unknown") << QJsonValue("1999-01-01") << "2025-11-25";
    QTest::newRow("future") << QJsonValue("2099-12-31") << "2025-11-25";
    QTest::newRow("not a string") << QJsonValue(20251125) << "2025-11-25";
    QTest::newRow("missing") << QJsonValue(QJsonValue::Undefined) << "2025-11-25";
}

void tst_McpSession::initialize()
{
    QFETCH(QJsonValue, requested);
    QFETCH(QString, negotiated);

    const QJsonObject clientInfo{{"name", "unit-client"}, {"version", "0.1"}};
    QJsonObject params{{"capabilities", QJsonObject()}, {"clientInfo", clientInfo}};
    if (!requested.isUndefined())
        params.insert("protocolVersion", requested);

    const QJsonObject expected{
        {"protocolVersion", negotiated},
        {"capabilities",
         QJsonObject{{"logging", QJsonObject()}, {"tools", QJsonObject{{"listChanged", false}}}}},
        {"serverInfo",
         QJsonObject{{"name", "code-sandbox"}, {"title", "Code Sandbox"}, {"version", "9.9.9"}}},
        {"instructions", "Run code with the tools."}};
    QCOMPARE(exchange(1, "initialize", params), JsonRpcMessage::makeResult(1, expected));
    QVERIFY(m_session->isInitialized());
    QCOMPARE(m_session->protocolVersion(), negotiated);
    QCOMPARE(m_session->clientInfo(), clientInfo);
}

void tst_McpSession::pingBeforeInitialize_data()
{
    QTest::addColumn<QJsonValue>("id");
    QTest::newRow("integer id") << QJsonValue(5);
    QTest::newRow("string id") << QJsonValue("ping-1");
    QTest::newRow("id 0") << QJsonValue(0);
}

void tst_McpSession::pingBeforeInitialize()
{
    QFETCH(QJsonValue, id);
    QCOMPARE(exchange(id, "ping"), JsonRpcMessage::makeResult(id, QJsonObject()));
    QVERIFY(!m_session->isInitialized());
}

void tst_McpSession::requestsBeforeInitialize_data()
{
    QTest::addColumn<QString>("method");
    QTest::addColumn<QJsonObject>("params");

    QTest::newRow("tools/list") << "tools/list" << QJsonObject();
    QTest::newRow("tools/call") << "tools/call"
                                << QJsonObject{{"name", "echo"},
                                               {"arguments", QJsonObject{{"text", "x"}}}};
    QTest::newRow("resources/list") << "resources/list" << QJsonObject();
    QTest::newRow("logging/setLevel") << "logging/setLevel" << QJsonObject{{"level", "debug"}};
    QTest::newRow("unknown method") << "no/such" << QJsonObject();
}

void tst_McpSession::requestsBeforeInitialize()
{
    QFETCH(QString, method);
    QFETCH(QJsonObject, params);

    QCOMPARE(exchange(7, method, params),
             JsonRpcMessage::makeError(7, JsonRpcMessage::InvalidRequest, kNotInitialized));
    QCOMPARE(m_session->callsInFlight(), 0);
}

void tst_McpSession::errorsKeepTheSessionServing_data()
{
    QTest::addColumn<QByteArray>("message");
    QTest::addColumn<QJsonValue>("id");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("textIsPrefix"); // parse errors end with the parser's own words

    const QJsonValue null(QJsonValue::Null);
    QTest::newRow("unknown method")
        << QByteArray(R"({"jsonrpc":"2.0","id":2,"method":"tools/run"})") << QJsonValue(2) << -32601
        << QStringLiteral("Method not found: tools/run") << false;
    QTest::newRow("unknown tool")
        << QByteArray(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope"}})")
        << QJsonValue(3) << -32602 << QStringLiteral("Unknown tool: nope") << false;
    QTest::newRow("tool name not a string")
        << QByteArray(R"({"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":1}})")
        << QJsonValue("t") << -32602 << QStringLiteral("name must be a string") << false;
    QTest::newRow("tools/call without params")
        << QByteArray(R"({"jsonrpc":"2.0","id":4,"method":"tools/call"})") << QJsonValue(4)
        << -32602 << QStringLiteral("name must be a string") << false;
    const QString levels = QStringLiteral(
        "level must be one of: debug, info, notice, warning, error, critical, alert, emergency");
    QTest::newRow("bad log level")
        << QByteArray(
               R"({"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"verbose"}})")
        << QJsonValue(5) << -32602 << levels << false;
    QTest::newRow("log level in capitals")
        << QByteArray(
               R"({"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"DEBUG"}})")
        << QJsonValue(5) << -32602 << levels << false;
    QTest::newRow("log level missing")
        << QByteArray(R"({"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{}})")
        << QJsonValue(6) << -32602 << levels << false;
    QTest::newRow("resource uri not a string")
        << QByteArray(R"({"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":3}})")
        << QJsonValue(8) << -32602 << QStringLiteral("uri must be a string") << false;
    QTest::newRow("unknown resource")
        << QByteArray(
               R"({"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"sandbox://x"}})")
        << QJsonValue(9) << -32002 << QStringLiteral("Resource not found") << false;

    QTest::newRow("garbage") << QByteArray("{") << null << -32700 << QStringLiteral("Parse error: ")
                             << true;
    QTest::newRow("not json at all")
        << QByteArray("hello") << null << -32700 << QStringLiteral("Parse error: ") << true;
    QTest::newRow("empty message")
        << QByteArray() << null << -32700 << QStringLiteral("Parse error: ") << true;
    QTest::newRow("batch") << QByteArray(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])") << null
                           << -32600
                           << QStringLiteral("Invalid Request: JSON-RPC batches are not supported")
                           << false;
    QTest::newRow("wrong jsonrpc")
        << QByteArray(R"({"jsonrpc":"1.0","id":10,"method":"ping"})") << QJsonValue(10) << -32600
        << QStringLiteral("Invalid Request: jsonrpc must be \"2.0\"") << false;
    QTest::newRow("params an array")
        << QByteArray(R"({"jsonrpc":"2.0","id":11,"method":"ping","params":[]})") << QJsonValue(11)
        << -32600 << QStringLiteral("Invalid Request: params must be an object") << false;
    QTest::newRow("id an object") << QByteArray(R"({"jsonrpc":"2.0","id":{},"method":"ping"})")
                                  << null << -32600
                                  << QStringLiteral(
                                         "Invalid Request: id must be a string or an integer")
                                  << false;
}

void tst_McpSession::errorsKeepTheSessionServing()
{
    QFETCH(QByteArray, message);
    QFETCH(QJsonValue, id);
    QFETCH(int, code);
    QFETCH(QString, text);
    QFETCH(bool, textIsPrefix);

    initializeSession();
    m_transport->receive(message);
    const QList<QJsonObject> sent = m_transport->takeSent();
    QCOMPARE(sent.size(), 1);
    const QJsonObject reply = sent.first();
    QCOMPARE(reply.value("jsonrpc"), QJsonValue("2.0"));
    QVERIFY(reply.contains("id"));
    QCOMPARE(reply.value("id"), id);
    QVERIFY(!reply.contains("result"));
    const QJsonObject error = reply.value("error").toObject();
    QCOMPARE(error.value("code"), QJsonValue(code));
    const QString actual = error.value("message").toString();
    if (textIsPrefix)
        QVERIFY2(actual.startsWith(text), qPrintable(actual));
    else
        QCOMPARE(actual, text);

    QCOMPARE(exchange(100, "ping"), JsonRpcMessage::makeResult(100, QJsonObject()));
}

void tst_McpSession::toolCall()
{
    initializeSession();
    QSignalSpy finished(m_session, &McpSession::callFinished);
    QCOMPARE(
        exchange(12, "tools/call", {{"name", "echo"}, {"arguments", QJsonObject{{"text", "hi"}}}}),
        JsonRpcMessage::makeResult(12, textResult("hi")));
    QCOMPARE(finished.count(), 1);
    QCOMPARE(m_session->callsInFlight(), 0);
}

void tst_McpSession::toolCallWithInvalidArguments_data()
{
    QTest::addColumn<QJsonValue>("arguments"); // Undefined: not sent
    QTest::addColumn<QString>("problem");

    QTest::newRow("missing field")
        << QJsonValue(QJsonObject()) << QStringLiteral("argument 'text' is required");
    QTest::newRow("arguments left out")
        << QJsonValue(QJsonValue::Undefined) << QStringLiteral("argument 'text' is required");
    QTest::newRow("wrong type") << QJsonValue(QJsonObject{{"text", 42}})
                                << QStringLiteral("argument 'text' must be string, got integer");
    QTest::newRow("unknown field") << QJsonValue(QJsonObject{{"text", "x"}, {"extra", true}})
                                   << QStringLiteral("unknown argument 'extra'; expected: text");
    QTest::newRow("arguments an array")
        << QJsonValue(QJsonArray{"hi"}) << QStringLiteral("arguments must be object, got array");
    QTest::newRow("arguments null")
        << QJsonValue(QJsonValue::Null) << QStringLiteral("arguments must be object, got null");
}

void tst_McpSession::toolCallWithInvalidArguments()
{
    QFETCH(QJsonValue, arguments);
    QFETCH(QString, problem);

    initializeSession();
    QJsonObject params{{"name", "echo"}};
    if (!arguments.isUndefined())
        params.insert("arguments", arguments);
    // A tool-level error the model can read and correct, not a protocol error.
    const QJsonObject result{
        {"content", QJsonArray{ToolCall::textContent("Invalid arguments for echo: " + problem)}},
        {"isError", true}};
    QCOMPARE(exchange("bad", "tools/call", params), JsonRpcMessage::makeResult("bad", result));
    QCOMPARE(m_session->callsInFlight(), 0);
}

void tst_McpSession::toolCallFinishedLater()
{
    initializeSession();
    QSignalSpy finished(m_session, &McpSession::callFinished);
    holdCall("later");
    QVERIFY(m_transport->sent().isEmpty());
    QCOMPARE(m_session->callsInFlight(), 1);
    QCOMPARE(m_held.size(), 1);

    QPointer<ToolCall> call = m_held.first();
    QTimer::singleShot(10, call.data(), [call] { call->finish(textResult("done")); });
    QTRY_COMPARE(m_transport->sent().size(), 1);
    QCOMPARE(m_transport->takeSent().first(),
             JsonRpcMessage::makeResult("later", textResult("done")));
    QCOMPARE(finished.count(), 1);
    QCOMPARE(m_session->callsInFlight(), 0);
    QTRY_VERIFY(call.isNull()); // the session cleans up finished calls
}

void tst_McpSession::notificationsNeverAnswered_data()
{
    QTest::addColumn<QByteArray>("message");

    QTest::newRow("initialized") << QByteArray(
        R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    QTest::newRow("cancelled, unknown request") << QByteArray(
        R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":404}})");
    QTest::newRow("cancelled without params")
        << QByteArray(R"({"jsonrpc":"2.0","method":"notifications/cancelled"})");
    QTest::newRow("roots changed")
        << QByteArray(R"({"jsonrpc":"2.0","method":"notifications/roots/list_changed"})");
    QTest::newRow("unknown notification")
        << QByteArray(R"({"jsonrpc":"2.0","method":"no/such","params":{"a":1}})");
    QTest::newRow("a response") << QByteArray(R"({"jsonrpc":"2.0","id":5,"result":{}})");
    QTest::newRow("an error response")
        << QByteArray(R"({"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"x"}})");
}

void tst_McpSession::notificationsNeverAnswered()
{
    QFETCH(QByteArray, message);

    m_transport->receive(message); // before initialize
    QCoreApplication::processEvents();
    QCOMPARE(m_transport->takeSent(), QList<QJsonObject>());

    initializeSession();
    m_transport->receive(message);
    QCoreApplication::processEvents();
    QCOMPARE(m_transport->takeSent(), QList<QJsonObject>());
}

void tst_McpSession::cancelledCallGetsNoResponse()
{
    initializeSession();
    QSignalSpy finished(m_session, &McpSession::callFinished);
    holdCall(7);
    QCOMPARE(m_session->callsInFlight(), 1);
    QPointer<ToolCall> call = m_held.first();

    receive(JsonRpcMessage::makeNotification("notifications/cancelled",
                                             {{"requestId", 7}, {"reason", "user stopped it"}}));
    QVERIFY(call);
    QVERIFY(call->isCancelled());
    QCOMPARE(m_session->callsInFlight(), 0);
    QCOMPARE(finished.count(), 1);

    // The tool finishing anyway must not produce a response to the cancelled request.
    call->finish(textResult("too late"));
    QTRY_VERIFY(call.isNull());
    QCOMPARE(m_transport->takeSent(), QList<QJsonObject>());

    // The id is free again.
    holdCall(7);
    QCOMPARE(m_transport->takeSent(), QList<QJsonObject>());
    QCOMPARE(m_session->callsInFlight(), 1);
}

void tst_McpSession::cancellationMatchesTheIdType()
{
    initializeSession();
    holdCall(7);
    receive(JsonRpcMessage::makeNotification("notifications/cancelled", {{"requestId", "7"}}));
    QCOMPARE(m_session->callsInFlight(), 1);
    QVERIFY(!m_held.first()->isCancelled());

    m_held.first()->finish(textResult("answered"));
    QCOMPARE(m_transport->takeSent(),
             QList<QJsonObject>{JsonRpcMessage::makeResult(7, textResult("answered"))});
}

void tst_McpSession::duplicateIdInFlight()
{
    initializeSession();
    holdCall(7);
    const QJsonObject inUse = JsonRpcMessage::makeError(
        7, JsonRpcMessage::InvalidRequest, "request id 7 is already in use by a request in flight");
    QCOMPARE(exchange(7, "tools/call", {{"name", "hold"}}), inUse);
    // Refused as a duplicate whatever else is wrong with it (not as an unknown tool).
    QCOMPARE(exchange(7, "tools/call", {{"name", "no-such-tool"}}), inUse);
    QCOMPARE(m_session->callsInFlight(), 1);
    QCOMPARE(m_held.size(), 1);
    // The first still gets its own answer.
    m_held.first()->finish(textResult("first"));
    QCOMPARE(m_transport->takeSent(),
             QList<QJsonObject>{JsonRpcMessage::makeResult(7, textResult("first"))});
}

void tst_McpSession::cancelAll()
{
    const int calls = 100;
    initializeSession();
    QSignalSpy finished(m_session, &McpSession::callFinished);
    for (int i = 0; i < calls; ++i)
        holdCall(i);
    QCOMPARE(m_session->callsInFlight(), calls);

    m_session->cancelAll();
    QCOMPARE(m_session->callsInFlight(), 0);
    QCOMPARE(finished.count(), calls);
    for (const QPointer<ToolCall> &call : std::as_const(m_held))
        QVERIFY(call && call->isCancelled());
    QCOMPARE(m_transport->takeSent(), QList<QJsonObject>());
}

void tst_McpSession::endingTheSessionCancelsEveryCall()
{
    // Each cancellation stops an execution; one missed leaves a container running.
    const int calls = 100;
    initializeSession();
    for (int i = 0; i < calls; ++i)
        holdCall(i);
    QCOMPARE(m_held.size(), calls);
    int cancelled = 0;
    for (const QPointer<ToolCall> &call : std::as_const(m_held))
        connect(call.data(), &ToolCall::cancelRequested, this, [&cancelled] { ++cancelled; });

    delete m_server; // and with it the session
    m_server = nullptr;
    QCOMPARE(cancelled, calls);
}

void tst_McpSession::logLevel_data()
{
    QTest::addColumn<QString>("threshold"); // empty: logging/setLevel never sent
    QTest::addColumn<QString>("level");
    QTest::addColumn<bool>("delivered");

    QTest::newRow("silent until setLevel") << QString() << "emergency" << false;
    QTest::newRow("below threshold") << "warning"
                                     << "info" << false;
    QTest::newRow("at threshold") << "warning"
                                  << "warning" << true;
    QTest::newRow("above threshold") << "warning"
                                     << "error" << true;
    QTest::newRow("debug lets all through") << "debug"
                                            << "debug" << true;
    QTest::newRow("emergency only") << "emergency"
                                    << "alert" << false;
    QTest::newRow("unknown message level") << "debug"
                                           << "verbose" << false;
}

void tst_McpSession::logLevel()
{
    QFETCH(QString, threshold);
    QFETCH(QString, level);
    QFETCH(bool, delivered);

    initializeSession();
    if (!threshold.isEmpty())
        QCOMPARE(exchange(1, "logging/setLevel", {{"level", threshold}}),
                 JsonRpcMessage::makeResult(1, QJsonObject()));
    m_session->log(level, "stderr", "boom");
    const QList<QJsonObject> expected = {JsonRpcMessage::makeNotification(
        "notifications/message", {{"level", level}, {"logger", "stderr"}, {"data", "boom"}})};
    QCOMPARE(m_transport->takeSent(), delivered ? expected : QList<QJsonObject>());
}

void tst_McpSession::closedOnce()
{
    QSignalSpy closed(m_session, &McpSession::closed);
    QVERIFY(!m_session->isClosed());
    m_transport->close();
    m_transport->close();
    QCOMPARE(closed.count(), 1);
    QVERIFY(m_session->isClosed());
}

QTEST_GUILESS_MAIN(tst_McpSession)
#include "tst_mcpsession.moc"
