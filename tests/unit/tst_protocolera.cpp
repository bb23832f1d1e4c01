// The era of each message (ProtocolEra) and what a session answers in each: revision 2026-07-28
// requests served without a handshake beside a 2025-11-25 conversation on the same stream, and
// tool calls that run as tasks in both eras.
#include "jsonrpcmessage.h"
#include "mcpserver.h"
#include "mcpsession.h"
#include "protocolera.h"
#include "recordingtransport.h"
#include "taskstore.h"
#include "toolcall.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QTest>

namespace {
const QString kModern = QStringLiteral("2026-07-28");

QJsonObject envelope(const QString &version = QStringLiteral("2026-07-28"),
                     const QJsonObject &caps = {})
{
    return {{QStringLiteral("io.modelcontextprotocol/protocolVersion"), version},
            {QStringLiteral("io.modelcontextprotocol/clientCapabilities"), caps}};
}

JsonRpcMessage message(const QJsonObject &o)
{
    return JsonRpcMessage::parse(QJsonDocument(o).toJson(QJsonDocument::Compact));
}

QJsonObject req(const QJsonValue &id, const QString &method, const QJsonObject &params = {})
{
    return JsonRpcMessage::makeRequest(id, method, params);
}

const QJsonObject kTasks{
    {QStringLiteral("extensions"),
     QJsonObject{{QStringLiteral("io.modelcontextprotocol/tasks"), QJsonObject()}}}};
} // namespace

class tst_ProtocolEra : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void classify_data();
    void classify();
    void classifyHttp_data();
    void classifyHttp();
    void modernRequestsWithoutHandshake();
    void legacyUnchangedBesideModern();
    void resourceNotFoundIsInvalidParams();
    void logsOnlyWithLogLevel();
    void modernTaskRunsAndIsPolled();
    void legacyTaskAndTasksResult();
    void cancellingATaskCancelsTheCall();

private:
    void setUpServer();
    QJsonObject exchange(const QJsonObject &request);

    McpServer *m_server = nullptr;
    RecordingTransport *m_transport = nullptr;
    McpSession *m_session = nullptr;
    QList<QPointer<ToolCall>> m_pending; // calls of the "later" tool
};

void tst_ProtocolEra::classify_data()
{
    QTest::addColumn<QJsonObject>("msg");
    QTest::addColumn<bool>("modern");
    QTest::addColumn<int>("error");
    QTest::newRow("initialize is legacy")
        << req(1, "initialize", {{"protocolVersion", "2025-11-25"}}) << false << 0;
    QTest::newRow("tools/list without _meta is legacy") << req(1, "tools/list") << false << 0;
    QTest::newRow("tools/list with a modern _meta")
        << req(1, "tools/list", {{"_meta", envelope()}}) << true << 0;
    QTest::newRow("server/discover is modern")
        << req(1, "server/discover", {{"_meta", envelope()}}) << true << 0;
    QTest::newRow("server/discover without _meta: invalid params")
        << req(1, "server/discover") << true << int(JsonRpcMessage::InvalidParams);
    QTest::newRow("unknown version: -32022")
        << req(1, "tools/list", {{"_meta", envelope("1999-01-01")}}) << true
        << int(ProtocolEra::UnsupportedProtocolVersion);
    QTest::newRow("modern without capabilities: invalid params")
        << req(1, "tools/list",
               {{"_meta", QJsonObject{{"io.modelcontextprotocol/protocolVersion", kModern}}}})
        << true << int(JsonRpcMessage::InvalidParams);
    QTest::newRow("a notification has no era")
        << JsonRpcMessage::makeNotification("notifications/cancelled", {{"requestId", 1}}) << false
        << 0;
}

void tst_ProtocolEra::classify()
{
    QFETCH(QJsonObject, msg);
    QFETCH(bool, modern);
    QFETCH(int, error);
    const ProtocolEra::Verdict v = ProtocolEra::classify(message(msg));
    QCOMPARE(v.isModern(), modern);
    QCOMPARE(v.errorCode, error);
    if (error == ProtocolEra::UnsupportedProtocolVersion) {
        const QJsonArray supported = v.errorData.toObject().value(u"supported").toArray();
        QCOMPARE(supported.first().toString(), kModern);
        QVERIFY(supported.contains(QStringLiteral("2025-11-25")));
        QCOMPARE(v.errorData.toObject().value(u"requested").toString(),
                 QStringLiteral("1999-01-01"));
    }
}

void tst_ProtocolEra::classifyHttp_data()
{
    QTest::addColumn<QByteArray>("version");
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QByteArray>("name");
    QTest::addColumn<QJsonObject>("msg");
    QTest::addColumn<bool>("modern");
    QTest::addColumn<int>("error");
    const QJsonObject call = req(1, "tools/call", {{"name", "t"}, {"_meta", envelope()}});
    QTest::newRow("legacy request") << QByteArray("2025-11-25") << QByteArray() << QByteArray()
                                    << req(1, "tools/list") << false << 0;
    QTest::newRow("modern, headers agree") << QByteArray("2026-07-28") << QByteArray("tools/call")
                                           << QByteArray("t") << call << true << 0;
    QTest::newRow("Mcp-Name in base64") << QByteArray("2026-07-28") << QByteArray("tools/call")
                                        << QByteArray("=?base64?dA==?=") << call << true << 0;
    QTest::newRow("Mcp-Name differs")
        << QByteArray("2026-07-28") << QByteArray("tools/call") << QByteArray("u") << call << true
        << int(ProtocolEra::HeaderMismatch);
    QTest::newRow("Mcp-Method differs")
        << QByteArray("2026-07-28") << QByteArray("tools/list") << QByteArray("t") << call << true
        << int(ProtocolEra::HeaderMismatch);
    QTest::newRow("header missing, _meta modern")
        << QByteArray() << QByteArray("tools/call") << QByteArray("t") << call << true
        << int(ProtocolEra::HeaderMismatch);
    QTest::newRow("modern header, another version in _meta: mismatch")
        << QByteArray("2026-07-28") << QByteArray("server/discover") << QByteArray()
        << req(1, "server/discover", {{"_meta", envelope("v999.0.0")}}) << true
        << int(ProtocolEra::HeaderMismatch);
    QTest::newRow("the same unknown version in both: unsupported")
        << QByteArray("1999-01-01") << QByteArray("tools/list") << QByteArray()
        << req(1, "tools/list", {{"_meta", envelope("1999-01-01")}}) << true
        << int(ProtocolEra::UnsupportedProtocolVersion);
    QTest::newRow("modern header, no _meta")
        << QByteArray("2026-07-28") << QByteArray("tools/list") << QByteArray()
        << req(1, "tools/list") << true << int(JsonRpcMessage::InvalidParams);
}

void tst_ProtocolEra::classifyHttp()
{
    QFETCH(QByteArray, version);
    QFETCH(QByteArray, method);
    QFETCH(QByteArray, name);
    QFETCH(QJsonObject, msg);
    QFETCH(bool, modern);
    QFETCH(int, error);
    const ProtocolEra::Verdict v =
        ProtocolEra::classifyHttp(version, method, name, !name.isEmpty(), message(msg));
    QCOMPARE(v.isModern(), modern);
    QCOMPARE(v.errorCode, error);
}

void tst_ProtocolEra::setUpServer()
{
    delete m_server;
    m_pending.clear();
    m_server = new McpServer(ServerInfo{"srv", QString(), "1.0", QString()});
    ToolDefinition echo;
    echo.name = "echo";
    echo.description = "echo";
    echo.inputSchema = QJsonObject{{"type", "object"}};
    echo.handler = [](ToolCall *call) {
        call->log("info", "stdout", "hello");
        call->finish({{"content", QJsonArray{ToolCall::textContent("echoed")}}});
    };
    m_server->tools().add(echo);
    ToolDefinition later = echo;
    later.name = "later";
    later.taskSupport = "optional";
    later.handler = [this](ToolCall *call) { m_pending.append(call); };
    m_server->tools().add(later);
    ResourceDefinition r;
    r.uri = "x://a";
    r.name = "a";
    r.read = [] { return QStringLiteral("A"); };
    m_server->resources().add(r);
    m_transport = new RecordingTransport;
    m_session = m_server->openSession(m_transport);
}

QJsonObject tst_ProtocolEra::exchange(const QJsonObject &request)
{
    m_transport->takeSent();
    m_transport->receive(QJsonDocument(request).toJson(QJsonDocument::Compact));
    const QList<QJsonObject> sent = m_transport->takeSent();
    for (const QJsonObject &m : sent)
        if (m.value(u"id") == request.value(u"id"))
            return m;
    return {};
}

void tst_ProtocolEra::modernRequestsWithoutHandshake()
{
    setUpServer();
    const QJsonObject discover = exchange(req(1, "server/discover", {{"_meta", envelope()}}));
    const QJsonObject d = discover.value(u"result").toObject();
    QCOMPARE(d.value(u"resultType").toString(), QStringLiteral("complete"));
    QCOMPARE(d.value(u"supportedVersions").toArray().first().toString(), kModern);
    QVERIFY(d.value(u"capabilities").toObject().contains(u"tools"));
    QVERIFY(d.value(u"capabilities")
                .toObject()
                .value(u"extensions")
                .toObject()
                .contains(u"io.modelcontextprotocol/tasks"));
    QCOMPARE(d.value(u"_meta")
                 .toObject()
                 .value(u"io.modelcontextprotocol/serverInfo")
                 .toObject()
                 .value(u"name")
                 .toString(),
             QStringLiteral("srv"));

    const QJsonObject list =
        exchange(req(2, "tools/list", {{"_meta", envelope()}})).value(u"result").toObject();
    QCOMPARE(list.value(u"resultType").toString(), QStringLiteral("complete"));
    QVERIFY(list.value(u"ttlMs").toInt() > 0);
    QCOMPARE(list.value(u"cacheScope").toString(), QStringLiteral("public"));
    for (const QJsonValue &t : list.value(u"tools").toArray())
        QVERIFY2(!t.toObject().contains(u"execution"), "2025 task vocabulary stays out");

    const QJsonObject call =
        exchange(req(3, "tools/call", {{"name", "echo"}, {"_meta", envelope()}}));
    QCOMPARE(call.value(u"result").toObject().value(u"resultType").toString(),
             QStringLiteral("complete"));

    for (const char *removed : {"ping", "logging/setLevel", "resources/subscribe", "tasks/list"})
        QCOMPARE(exchange(req(4, removed, {{"_meta", envelope()}}))
                     .value(u"error")
                     .toObject()
                     .value(u"code")
                     .toInt(),
                 int(JsonRpcMessage::MethodNotFound));

    const QJsonObject bad = exchange(req(5, "tools/list", {{"_meta", envelope("2030-01-01")}}));
    QCOMPARE(bad.value(u"error").toObject().value(u"code").toInt(),
             int(ProtocolEra::UnsupportedProtocolVersion));
}

void tst_ProtocolEra::legacyUnchangedBesideModern()
{
    setUpServer();
    // Before initialize, a legacy request is refused as it always was...
    QCOMPARE(exchange(req(1, "tools/list")).value(u"error").toObject().value(u"code").toInt(),
             int(JsonRpcMessage::InvalidRequest));
    // ...while a modern one on the same stream is served.
    QVERIFY(exchange(req(2, "tools/list", {{"_meta", envelope()}})).contains(u"result"));
    const QJsonObject init = exchange(req(3, "initialize",
                                          {{"protocolVersion", "2025-11-25"},
                                           {"capabilities", QJsonObject()},
                                           {"clientInfo", QJsonObject{{"name", "c"}}}}));
    QCOMPARE(init.value(u"result").toObject().value(u"protocolVersion").toString(),
             QStringLiteral("2025-11-25"));
    const QJsonObject legacyList = exchange(req(4, "tools/list")).value(u"result").toObject();
    QVERIFY2(!legacyList.contains(u"resultType") && !legacyList.contains(u"ttlMs"),
             "legacy results carry no 2026 fields");
    QJsonObject later;
    for (const QJsonValue &t : legacyList.value(u"tools").toArray())
        if (t.toObject().value(u"name").toString() == u"later")
            later = t.toObject();
    QCOMPARE(later.value(u"execution").toObject().value(u"taskSupport").toString(),
             QStringLiteral("optional"));
    QVERIFY(m_session->isInitialized());
}

void tst_ProtocolEra::resourceNotFoundIsInvalidParams()
{
    setUpServer();
    const QJsonObject modern =
        exchange(req(1, "resources/read", {{"uri", "x://none"}, {"_meta", envelope()}}));
    QCOMPARE(modern.value(u"error").toObject().value(u"code").toInt(), -32602);
    QCOMPARE(modern.value(u"error").toObject().value(u"data").toObject().value(u"uri").toString(),
             QStringLiteral("x://none"));
    const QJsonObject found =
        exchange(req(2, "resources/read", {{"uri", "x://a"}, {"_meta", envelope()}}));
    QCOMPARE(found.value(u"result").toObject().value(u"cacheScope").toString(),
             QStringLiteral("private"));
    exchange(
        req(3, "initialize", {{"protocolVersion", "2025-11-25"}, {"capabilities", QJsonObject()}}));
    QCOMPARE(exchange(req(4, "resources/read", {{"uri", "x://none"}}))
                 .value(u"error")
                 .toObject()
                 .value(u"code")
                 .toInt(),
             -32002);
}

void tst_ProtocolEra::logsOnlyWithLogLevel()
{
    setUpServer();
    const auto logsOf = [this](const QJsonObject &meta) {
        m_transport->takeSent();
        m_transport->receive(
            QJsonDocument(req(7, "tools/call", {{"name", "echo"}, {"_meta", meta}}))
                .toJson(QJsonDocument::Compact));
        int logs = 0;
        for (const QJsonObject &m : m_transport->takeSent())
            logs += m.value(u"method").toString() == u"notifications/message" ? 1 : 0;
        return logs;
    };
    QCOMPARE(logsOf(envelope()), 0);
    QJsonObject withLevel = envelope();
    withLevel.insert("io.modelcontextprotocol/logLevel", "debug");
    QCOMPARE(logsOf(withLevel), 1);
}

void tst_ProtocolEra::modernTaskRunsAndIsPolled()
{
    setUpServer();
    const QJsonObject created =
        exchange(req(1, "tools/call", {{"name", "later"}, {"_meta", envelope(kModern, kTasks)}}))
            .value(u"result")
            .toObject();
    QCOMPARE(created.value(u"resultType").toString(), QStringLiteral("task"));
    QCOMPARE(created.value(u"status").toString(), QStringLiteral("working"));
    QCOMPARE(created.value(u"ttlMs").toInteger(), TaskStore::kKeepMs);
    QVERIFY(!created.contains(u"ttl"));
    const QString taskId = created.value(u"taskId").toString();
    QVERIFY(taskId.startsWith(u"task-"));
    QCOMPARE(m_pending.size(), 1);

    const auto get = [&](int id) {
        return exchange(
                   req(id, "tasks/get", {{"taskId", taskId}, {"_meta", envelope(kModern, kTasks)}}))
            .value(u"result")
            .toObject();
    };
    QCOMPARE(get(2).value(u"status").toString(), QStringLiteral("working"));
    // The client that made the request goes: the task goes on.
    m_transport->close();
    m_pending.first()->finish({{"content", QJsonArray{ToolCall::textContent("done")}}});
    const QJsonObject done = get(3);
    QCOMPARE(done.value(u"status").toString(), QStringLiteral("completed"));
    QCOMPARE(done.value(u"result")
                 .toObject()
                 .value(u"content")
                 .toArray()
                 .first()
                 .toObject()
                 .value(u"text")
                 .toString(),
             QStringLiteral("done"));

    // Without the extension the same tool answers in the call itself.
    exchange(req(4, "tools/call", {{"name", "later"}, {"_meta", envelope()}}));
    QCOMPARE(m_pending.size(), 2);
    QVERIFY(m_session->callsInFlight() == 1);
}

void tst_ProtocolEra::legacyTaskAndTasksResult()
{
    setUpServer();
    exchange(
        req(1, "initialize", {{"protocolVersion", "2025-11-25"}, {"capabilities", QJsonObject()}}));
    QVERIFY(exchange(req(9, "initialize", {}))
                .value(u"result")
                .toObject()
                .value(u"capabilities")
                .toObject()
                .contains(u"tasks"));
    const QJsonObject created =
        exchange(req(2, "tools/call", {{"name", "later"}, {"task", QJsonObject{{"ttl", 60000}}}}))
            .value(u"result")
            .toObject();
    const QJsonObject task = created.value(u"task").toObject();
    QCOMPARE(task.value(u"status").toString(), QStringLiteral("working"));
    QCOMPARE(task.value(u"ttl").toInteger(), TaskStore::kKeepMs);
    const QString taskId = task.value(u"taskId").toString();
    // tasks/result waits for the end.
    QVERIFY(exchange(req(3, "tasks/result", {{"taskId", taskId}})).isEmpty());
    m_pending.first()->finish({{"content", QJsonArray{ToolCall::textContent("late")}}});
    bool answered = false;
    for (const QJsonObject &m : m_transport->takeSent())
        if (m.value(u"id") == 3) {
            answered = true;
            QCOMPARE(m.value(u"result")
                         .toObject()
                         .value(u"content")
                         .toArray()
                         .first()
                         .toObject()
                         .value(u"text")
                         .toString(),
                     QStringLiteral("late"));
        }
    QVERIFY(answered);
    QCOMPARE(
        exchange(req(4, "tasks/list")).value(u"result").toObject().value(u"tasks").toArray().size(),
        1);
    // A tool without task support refuses a task request.
    QCOMPARE(exchange(req(5, "tools/call", {{"name", "echo"}, {"task", QJsonObject()}}))
                 .value(u"error")
                 .toObject()
                 .value(u"code")
                 .toInt(),
             int(JsonRpcMessage::MethodNotFound));
}

void tst_ProtocolEra::cancellingATaskCancelsTheCall()
{
    setUpServer();
    const QJsonObject created =
        exchange(req(1, "tools/call", {{"name", "later"}, {"_meta", envelope(kModern, kTasks)}}))
            .value(u"result")
            .toObject();
    QPointer<ToolCall> call = m_pending.first();
    bool cancelled = false;
    connect(call, &ToolCall::cancelRequested, this, [&] { cancelled = true; });
    // tasks/* need the client to declare the extension (-32021 otherwise).
    QCOMPARE(exchange(req(2, "tasks/cancel",
                          {{"taskId", created.value(u"taskId")}, {"_meta", envelope()}}))
                 .value(u"error")
                 .toObject()
                 .value(u"code")
                 .toInt(),
             int(ProtocolEra::MissingRequiredClientCapability));
    QVERIFY(!cancelled);
    const QJsonObject ack =
        exchange(req(3, "tasks/cancel",
                     {{"taskId", created.value(u"taskId")}, {"_meta", envelope(kModern, kTasks)}}));
    QCOMPARE(ack.value(u"result").toObject().value(u"resultType").toString(),
             QStringLiteral("complete"));
    QVERIFY2(cancelled, "the tool's handler is told to stop (the container is removed)");
    QCOMPARE(
        exchange(req(4, "tasks/get",
                     {{"taskId", created.value(u"taskId")}, {"_meta", envelope(kModern, kTasks)}}))
            .value(u"result")
            .toObject()
            .value(u"status")
            .toString(),
        QStringLiteral("cancelled"));
}

QTEST_GUILESS_MAIN(tst_ProtocolEra)
#include "tst_protocolera.moc"
