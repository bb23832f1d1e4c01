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
#include <memory>

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
    void tasksBelongToTheirSession();
    void statelessTasksBelongToTheirCredential();
    void keptResultsAreBoundedByBytes();
    void resultBudgetCountsEveryOutcome();

private:
    void setUpServer();
    QJsonObject exchange(const QJsonObject &request);
    // Calls the "later" tool as a task on the main session; its task id.
    QString startLaterTask(int id);
    // The answer to `request` on a transport; whatever else the session sent meanwhile goes to
    // `others`.
    static QJsonObject exchangeOn(RecordingTransport *transport, const QJsonObject &request,
                                  QList<QJsonObject> *others = nullptr);
    // The error a tasks/* request for `taskId` gets, with the id replaced in its message, so
    // that the answers for two ids compare.
    static QJsonObject taskError(RecordingTransport *transport, const QString &method,
                                 const QString &taskId, const QJsonObject &meta = {},
                                 QList<QJsonObject> *others = nullptr);

    // Owned, so the last test's server goes with the test object too: a server left behind is
    // a tree of objects that point at each other (QObject parents and children: the server,
    // its TaskStore, its sessions), which LeakSanitizer reports as indirect leaks only.
    std::unique_ptr<McpServer> m_server;
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
    m_server.reset();
    m_pending.clear();
    m_server = std::make_unique<McpServer>(ServerInfo{"srv", QString(), "1.0", QString()});
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
    return exchangeOn(m_transport, request);
}

QJsonObject tst_ProtocolEra::exchangeOn(RecordingTransport *transport, const QJsonObject &request,
                                        QList<QJsonObject> *others)
{
    transport->takeSent();
    transport->receive(QJsonDocument(request).toJson(QJsonDocument::Compact));
    QJsonObject answer;
    for (const QJsonObject &m : transport->takeSent()) {
        if (m.value(u"id") == request.value(u"id") && answer.isEmpty())
            answer = m;
        else if (others)
            others->append(m);
    }
    return answer;
}

QJsonObject tst_ProtocolEra::taskError(RecordingTransport *transport, const QString &method,
                                       const QString &taskId, const QJsonObject &meta,
                                       QList<QJsonObject> *others)
{
    static int nextId = 1000;
    QJsonObject params{{"taskId", taskId}};
    if (!meta.isEmpty())
        params.insert("_meta", meta);
    const QJsonObject answer = exchangeOn(transport, req(nextId++, method, params), others);
    if (!answer.contains(u"error"))
        return QJsonObject{{"answered", answer}}; // compares unequal to any error
    QJsonObject error = answer.value(u"error").toObject();
    error.insert("message", error.value(u"message").toString().replace(taskId, "<id>"));
    return error;
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

    // No prompts here, yet 2026-07-28 answers prompts/list (an empty list is a cacheable
    // answer): discover declares prompts (the conformance suite's server-stateless checks
    // that), and every prompt name is unknown.
    QVERIFY(d.value(u"capabilities").toObject().contains(u"prompts"));
    QCOMPARE(exchange(req(6, "prompts/list", {{"_meta", envelope()}}))
                 .value(u"result")
                 .toObject()
                 .value(u"prompts")
                 .toArray(),
             QJsonArray());
    QCOMPARE(exchange(req(7, "prompts/get", {{"name", "x"}, {"_meta", envelope()}}))
                 .value(u"error")
                 .toObject()
                 .value(u"code")
                 .toInt(),
             int(JsonRpcMessage::InvalidParams));

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

namespace {
const QString kNeverIssued = QStringLiteral("task-00000000000000000000000000000000");

QJsonObject legacyInit(int id, const QString &name)
{
    return req(id, "initialize",
               {{"protocolVersion", "2025-11-25"},
                {"capabilities", QJsonObject()},
                {"clientInfo", QJsonObject{{"name", name}}}});
}

QString statusOf(const QJsonObject &answer)
{
    return answer.value(u"result").toObject().value(u"status").toString();
}
} // namespace

void tst_ProtocolEra::tasksBelongToTheirSession()
{
    setUpServer();
    auto *otherTransport = new RecordingTransport;
    m_server->openSession(otherTransport);
    exchange(legacyInit(1, "a"));
    QList<QJsonObject> heardByOther;
    exchangeOn(otherTransport, legacyInit(1, "b"), &heardByOther);

    // Session a starts one task in each era.
    const QString legacyTask =
        exchange(req(2, "tools/call", {{"name", "later"}, {"task", QJsonObject()}}))
            .value(u"result")
            .toObject()
            .value(u"task")
            .toObject()
            .value(u"taskId")
            .toString();
    const QString modernTask =
        exchange(req(3, "tools/call", {{"name", "later"}, {"_meta", envelope(kModern, kTasks)}}))
            .value(u"result")
            .toObject()
            .value(u"taskId")
            .toString();
    QVERIFY(!legacyTask.isEmpty() && !modernTask.isEmpty());
    QCOMPARE(m_pending.size(), 2);
    bool cancelled = false;
    QObject watching; // the connections end with the test
    for (const QPointer<ToolCall> &call : std::as_const(m_pending))
        connect(call, &ToolCall::cancelRequested, &watching, [&] { cancelled = true; });

    // To session b, a's tasks are what an id never issued is: the same error, word for word.
    const QJsonObject modernMeta = envelope(kModern, kTasks);
    for (const QString &foreign : {legacyTask, modernTask}) {
        for (const char *method : {"tasks/get", "tasks/result", "tasks/cancel"}) {
            const QJsonObject unknown = taskError(otherTransport, method, kNeverIssued);
            QCOMPARE(unknown.value(u"code").toInt(), int(JsonRpcMessage::InvalidParams));
            QCOMPARE(taskError(otherTransport, method, foreign, {}, &heardByOther), unknown);
        }
        for (const char *method : {"tasks/get", "tasks/cancel", "tasks/update"}) {
            const QJsonObject unknown = taskError(otherTransport, method, kNeverIssued, modernMeta);
            QCOMPARE(unknown.value(u"code").toInt(), int(JsonRpcMessage::InvalidParams));
            QCOMPARE(taskError(otherTransport, method, foreign, modernMeta, &heardByOther),
                     unknown);
        }
    }
    QVERIFY2(!cancelled, "b's tasks/cancel did not reach a's calls");
    QCOMPARE(exchangeOn(otherTransport, req(20, "tasks/list"), &heardByOther)
                 .value(u"result")
                 .toObject()
                 .value(u"tasks")
                 .toArray()
                 .size(),
             0);

    // a still sees and controls both.
    QCOMPARE(exchange(req(21, "tasks/list"))
                 .value(u"result")
                 .toObject()
                 .value(u"tasks")
                 .toArray()
                 .size(),
             2);
    QCOMPARE(statusOf(exchange(req(22, "tasks/get", {{"taskId", legacyTask}}))),
             QStringLiteral("working"));
    QCOMPARE(statusOf(exchange(req(23, "tasks/get", {{"taskId", modernTask}}))),
             QStringLiteral("working"));

    // Nothing about a's tasks reaches b while they end: no status notification, no result.
    m_pending.at(0)->finish({{"content", QJsonArray{ToolCall::textContent("secret")}}});
    QCOMPARE(statusOf(exchange(req(24, "tasks/cancel", {{"taskId", modernTask}}))),
             QStringLiteral("cancelled"));
    heardByOther += otherTransport->takeSent();
    QJsonArray heard;
    for (const QJsonObject &m : std::as_const(heardByOther))
        heard.append(m);
    QVERIFY2(heard.isEmpty(), QJsonDocument(heard).toJson().constData());
    QCOMPARE(taskError(otherTransport, "tasks/result", legacyTask),
             taskError(otherTransport, "tasks/result", kNeverIssued));
}

void tst_ProtocolEra::statelessTasksBelongToTheirCredential()
{
    setUpServer();
    // 2026-07-28 over HTTP: each request has a session of its own, owned by its credential's
    // digest (StreamableHttpServer::modernOwner).
    const auto request = [this](const QString &owner) {
        auto *transport = new RecordingTransport;
        m_server->openRequest(transport, owner);
        return transport;
    };
    const QJsonObject meta = envelope(kModern, kTasks);
    const QString taskId =
        exchangeOn(request("http-aaaa"), req(1, "tools/call", {{"name", "later"}, {"_meta", meta}}))
            .value(u"result")
            .toObject()
            .value(u"taskId")
            .toString();
    QVERIFY(!taskId.isEmpty());

    // Another credential: unknown, and it cannot cancel it.
    for (const char *method : {"tasks/get", "tasks/cancel", "tasks/update"})
        QCOMPARE(taskError(request("http-bbbb"), method, taskId, meta),
                 taskError(request("http-bbbb"), method, kNeverIssued, meta));
    QVERIFY(!m_pending.first()->isCancelled());
    // The session of a 2025 client (here the stdio-like test session) does not see it either.
    exchange(legacyInit(2, "legacy"));
    QCOMPARE(exchange(req(3, "tasks/list")).value(u"result").toObject().value(u"tasks").toArray(),
             QJsonArray());
    // The same credential in a later request does.
    QCOMPARE(statusOf(exchangeOn(request("http-aaaa"),
                                 req(4, "tasks/get", {{"taskId", taskId}, {"_meta", meta}}))),
             QStringLiteral("working"));
}

QString tst_ProtocolEra::startLaterTask(int id)
{
    return exchange(req(id, "tools/call", {{"name", "later"}, {"task", QJsonObject()}}))
        .value(u"result")
        .toObject()
        .value(u"task")
        .toObject()
        .value(u"taskId")
        .toString();
}

void tst_ProtocolEra::keptResultsAreBoundedByBytes()
{
    setUpServer();
    exchange(legacyInit(1, "a"));
    // The budget scaled down (8.5 MiB instead of 256; the same code keeps it), so that the test
    // stays quick under the sanitizers: eight results of 1 MiB each (files come back as big
    // blocks) fit, nine are past it.
    m_server->tasks()->setResultBudget(qint64(8) * 1024 * 1024 + 512 * 1024);
    const QString stillWorking = startLaterTask(2);
    QStringList ids;
    for (int i = 0; i < 9; ++i)
        ids.append(startLaterTask(10 + i));
    QCOMPARE(m_pending.size(), 10);
    const qsizetype size = 1024 * 1024;
    // They end in the reverse order of their start: the one that ended first goes first.
    for (int i = 9; i >= 1; --i)
        m_pending.at(i)->finish(
            {{"content", QJsonArray{ToolCall::textContent(QString(size, QChar(u'a' + i)))}}});

    const QJsonObject dropped = exchange(req(30, "tasks/get", {{"taskId", ids.last()}}));
    QCOMPARE(dropped.value(u"error").toObject().value(u"code").toInt(),
             int(JsonRpcMessage::InvalidParams));
    const QString why = dropped.value(u"error").toObject().value(u"message").toString();
    QVERIFY2(why.contains(u"expired") && why.contains(u"dropped") && why.contains(u"8 MiB"),
             qPrintable(why));
    QCOMPARE(exchange(req(31, "tasks/result", {{"taskId", ids.last()}}))
                 .value(u"error")
                 .toObject()
                 .value(u"message")
                 .toString(),
             why);
    for (int i = 0; i < 8; ++i)
        QCOMPARE(statusOf(exchange(req(40 + i, "tasks/get", {{"taskId", ids.at(i)}}))),
                 QStringLiteral("completed"));
    QCOMPARE(statusOf(exchange(req(50, "tasks/get", {{"taskId", stillWorking}}))),
             QStringLiteral("working"));
    const QJsonObject kept = exchange(req(51, "tasks/result", {{"taskId", ids.first()}}));
    const QString text = kept.value(u"result")
                             .toObject()
                             .value(u"content")
                             .toArray()
                             .first()
                             .toObject()
                             .value(u"text")
                             .toString();
    QCOMPARE(text.size(), size);
    QCOMPARE(text.front(), QChar(u'b'));
    // Another session asking for the dropped id hears only "unknown".
    auto *otherTransport = new RecordingTransport;
    m_server->openSession(otherTransport);
    exchangeOn(otherTransport, legacyInit(1, "b"));
    QCOMPARE(taskError(otherTransport, "tasks/get", ids.last()),
             taskError(otherTransport, "tasks/get", kNeverIssued));
}

void tst_ProtocolEra::resultBudgetCountsEveryOutcome()
{
    setUpServer();
    TaskStore *store = m_server->tasks();
    QCOMPARE(store->resultBudget(), qint64(256) * 1024 * 1024);
    store->setResultBudget(1000);
    exchange(legacyInit(1, "a"));
    const QJsonObject result{{"content", QJsonArray{ToolCall::textContent(QString(400, 'r'))}}};
    const QString first = startLaterTask(2);
    const QString failed = startLaterTask(3);
    m_pending.at(0)->finish(result);
    m_pending.at(1)->fail(-32603, QString(400, 'e'));
    const qint64 both = store->keptBytes();
    QVERIFY2(both > 2 * 400 && both <= 1000, qPrintable(QString::number(both)));
    // A third result does not fit: the first to end goes, and its bytes with it.
    const QString third = startLaterTask(4);
    m_pending.at(2)->finish(result);
    QVERIFY(!store->find(first, m_session->owner()));
    QVERIFY(store->find(failed, m_session->owner()));
    QCOMPARE(store->keptBytes(), both); // one result out, one of the same size in
    // A result larger than the whole budget still reaches a tasks/result already waiting,
    // then goes at once.
    const QString huge = startLaterTask(5);
    QVERIFY(exchange(req(6, "tasks/result", {{"taskId", huge}})).isEmpty());
    m_pending.at(3)->finish({{"content", QJsonArray{ToolCall::textContent(QString(2000, 'h'))}}});
    bool answered = false;
    for (const QJsonObject &m : m_transport->takeSent())
        answered = answered || (m.value(u"id") == 6 && m.contains(u"result"));
    QVERIFY(answered);
    QVERIFY(!store->find(huge, m_session->owner()));
    QCOMPARE(store->keptBytes(), both);
    QVERIFY(store->find(third, m_session->owner()) && store->find(failed, m_session->owner()));
    const QString why = exchange(req(7, "tasks/get", {{"taskId", huge}}))
                            .value(u"error")
                            .toObject()
                            .value(u"message")
                            .toString();
    QVERIFY2(why.contains(u"larger than"), qPrintable(why));
}

QTEST_GUILESS_MAIN(tst_ProtocolEra)
#include "tst_protocolera.moc"
