// tools/call on its own: ToolCallDispatcher with a recording McpCallReplies in place of a
// session. What a session makes of these (its transport, a 2026-07-28 answer's decoration) is
// tst_mcpsession's and tst_protocolera's.
#include "jsonrpcmessage.h"
#include "mcpcaller.h"
#include "mcpcatalog.h"
#include "mcpmessage.h"
#include "recordingreplies.h"
#include "taskstore.h"
#include "toolcall.h"
#include "toolcalldispatcher.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QSignalSpy>
#include <QTest>

namespace {
const QString kOwner = QStringLiteral("owner-1");

McpMessage callMessage(const QJsonValue &id, const QJsonObject &params)
{
    return McpMessage::parse(QJsonDocument(JsonRpcMessage::makeRequest(id, "tools/call", params))
                                 .toJson(QJsonDocument::Compact));
}

QJsonObject textResult(const QString &text)
{
    return {{"content", QJsonArray{ToolCall::textContent(text)}}};
}

McpCaller legacyCaller()
{
    return {false, QJsonObject(), QJsonObject{{"name", "unit"}}, CallerIdentity()};
}

McpCaller modernCaller(const QJsonObject &capabilities = {})
{
    return {true, capabilities, QJsonObject{{"name", "unit"}}, CallerIdentity()};
}
} // namespace

class tst_ToolCallDispatcher : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void answeredThroughTheReplies();
    void refusals_data();
    void refusals();
    void progressAndLogsNameTheirRequest();
    void legacyCallsMayAskTheClient();
    void modernCallsMayNotAsk();
    void duplicateIdInFlight();
    void cancelledCallIsForgotten();
    void cancelAll();
    void taskAnsweredWithItsHandle();

private:
    void call(const QJsonValue &id, const QJsonObject &params,
              const McpCaller &caller = legacyCaller());

    McpCatalog *m_catalog = nullptr;
    TaskStore *m_store = nullptr;
    RecordingReplies *m_replies = nullptr;
    ToolCallDispatcher *m_dispatcher = nullptr;
    QList<QPointer<ToolCall>> m_held; // calls of "hold", finished by the test
};

void tst_ToolCallDispatcher::init()
{
    m_catalog = new McpCatalog(ServerInfo{"unit", QString(), "1", QString()});
    ToolDefinition echo;
    echo.name = "echo";
    echo.inputSchema = QJsonDocument::fromJson(R"({"type":"object",
        "properties":{"text":{"type":"string"}},"required":["text"]})")
                           .object();
    echo.handler = [](ToolCall *c) {
        c->finish(textResult(c->arguments().value("text").toString()));
    };
    QVERIFY(m_catalog->tools().add(echo));
    ToolDefinition hold;
    hold.name = "hold";
    hold.inputSchema = QJsonObject{{"type", "object"}};
    hold.taskSupport = "optional";
    hold.handler = [this](ToolCall *c) { m_held.append(c); };
    QVERIFY(m_catalog->tools().add(hold));
    ToolDefinition view;
    view.name = "view_only";
    view.inputSchema = QJsonObject{{"type", "object"}};
    view.appOnly = true;
    view.handler = [](ToolCall *c) { c->finish(textResult("seen")); };
    QVERIFY(m_catalog->tools().add(view));
    ToolDefinition tasked;
    tasked.name = "tasked";
    tasked.inputSchema = QJsonObject{{"type", "object"}};
    tasked.taskSupport = "required";
    tasked.handler = [this](ToolCall *c) { m_held.append(c); };
    QVERIFY(m_catalog->tools().add(tasked));
    m_store = new TaskStore;
    m_catalog->setTaskStore(m_store);
    m_replies = new RecordingReplies;
    m_dispatcher = new ToolCallDispatcher(m_catalog, m_replies);
}

void tst_ToolCallDispatcher::cleanup()
{
    delete m_dispatcher;
    delete m_replies;
    delete m_store;
    delete m_catalog;
    m_held.clear();
}

void tst_ToolCallDispatcher::call(const QJsonValue &id, const QJsonObject &params,
                                  const McpCaller &caller)
{
    m_dispatcher->handle(callMessage(id, params), params, caller, kOwner);
}

void tst_ToolCallDispatcher::answeredThroughTheReplies()
{
    QSignalSpy finished(m_dispatcher, &ToolCallDispatcher::callFinished);
    call(1, {{"name", "echo"}, {"arguments", QJsonObject{{"text", "hi"}}}});
    const QList<QJsonObject> sent = m_replies->takeSent();
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent[0], (QJsonObject{{"kind", "reply"}, {"id", 1}, {"result", textResult("hi")}}));
    QCOMPARE(finished.size(), 1);
    QCOMPARE(m_dispatcher->size(), 0);
}

void tst_ToolCallDispatcher::refusals_data()
{
    QTest::addColumn<QJsonObject>("params");
    QTest::addColumn<bool>("modern");
    QTest::addColumn<QJsonObject>("answer"); // without kind and id

    QTest::newRow("no name") << QJsonObject{{"name", 3}} << false
                             << QJsonObject{{"code", JsonRpcMessage::InvalidParams},
                                            {"message", "name must be a string"}};
    QTest::newRow("unknown tool") << QJsonObject{{"name", "nope"}} << false
                                  << QJsonObject{{"code", JsonRpcMessage::InvalidParams},
                                                 {"message", "Unknown tool: nope"}};
    QTest::newRow("a view's tool without views")
        << QJsonObject{{"name", "view_only"}} << false
        << QJsonObject{{"code", JsonRpcMessage::InvalidParams},
                       {"message", "Unknown tool: view_only"}};
    QTest::newRow("2025: required task not asked")
        << QJsonObject{{"name", "tasked"}} << false
        << QJsonObject{{"code", JsonRpcMessage::MethodNotFound},
                       {"message", "tasked runs only as a task (params.task)"}};
    QTest::newRow("2025: task asked of a tool without")
        << QJsonObject{{"name", "echo"}, {"task", QJsonObject()}} << false
        << QJsonObject{{"code", JsonRpcMessage::MethodNotFound},
                       {"message", "echo does not run as a task"}};
    QTest::newRow("2026: required task, no extension")
        << QJsonObject{{"name", "tasked"}} << true
        << QJsonObject{
               {"code", -32021},
               {"message", "tasked runs only as a task: declare the client capability "
                           "extensions.io.modelcontextprotocol/tasks"},
               {"data",
                QJsonObject{{"requiredCapabilities",
                             QJsonObject{{"extensions", QJsonObject{{"io.modelcontextprotocol/"
                                                                     "tasks",
                                                                     QJsonObject()}}}}}}}};
    // Not a protocol error: a result the model can act on.
    QTest::newRow("invalid arguments")
        << QJsonObject{{"name", "echo"}, {"arguments", QJsonObject{{"text", 5}}}} << false
        << QJsonObject{
               {"result",
                ToolCall::errorResult(
                    "Invalid arguments for echo: argument 'text' must be string, got integer")}};
}

void tst_ToolCallDispatcher::refusals()
{
    QFETCH(QJsonObject, params);
    QFETCH(bool, modern);
    QFETCH(QJsonObject, answer);

    call(7, params, modern ? modernCaller() : legacyCaller());
    const QList<QJsonObject> sent = m_replies->takeSent();
    QCOMPARE(sent.size(), 1);
    QJsonObject expected = answer;
    expected.insert("kind", answer.contains("result") ? "reply" : "error");
    expected.insert("id", 7);
    QCOMPARE(sent[0], expected);
    QCOMPARE(m_dispatcher->size(), 0);
    QVERIFY(m_held.isEmpty());
}

void tst_ToolCallDispatcher::progressAndLogsNameTheirRequest()
{
    call("p", {{"name", "hold"}, {"_meta", QJsonObject{{"progressToken", "tok"}}}});
    QCOMPARE(m_held.size(), 1);
    m_held[0]->progress("half", 2);
    m_held[0]->log("info", "stdout", "line");
    m_held[0]->finish(textResult("done"));
    const QList<QJsonObject> sent = m_replies->takeSent();
    QCOMPARE(sent.size(), 3);
    QCOMPARE(sent[0].value("kind"), "notify");
    QCOMPARE(sent[0].value("id"), "p");
    QCOMPARE(sent[0].value("message").toObject().value("method"), "notifications/progress");
    QCOMPARE(sent[0].value("message").toObject().value("params"),
             (QJsonObject{
                 {"progressToken", "tok"}, {"progress", 1}, {"total", 2}, {"message", "half"}}));
    QCOMPARE(sent[1], (QJsonObject{{"kind", "log"},
                                   {"id", "p"},
                                   {"level", "info"},
                                   {"logger", "stdout"},
                                   {"data", "line"}}));
    QCOMPARE(sent[2],
             (QJsonObject{{"kind", "reply"}, {"id", "p"}, {"result", textResult("done")}}));
}

void tst_ToolCallDispatcher::legacyCallsMayAskTheClient()
{
    call(3, {{"name", "hold"}});
    QJsonObject answer;
    m_held[0]->request(
        "elicitation/create", {{"message", "?"}},
        [&answer](const QJsonObject &result, const QJsonObject &) { answer = result; });
    const QList<QJsonObject> sent = m_replies->takeSent();
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent[0], (QJsonObject{{"kind", "request"},
                                   {"id", 3},
                                   {"method", "elicitation/create"},
                                   {"params", QJsonObject{{"message", "?"}}}}));
    const auto pending = m_replies->takePending();
    QCOMPARE(pending.size(), 1);
    pending[0](QJsonObject{{"action", "accept"}}, {});
    QCOMPARE(answer, (QJsonObject{{"action", "accept"}}));
}

// 2026-07-28 has no requests of the server's: the tool learns at once that there is nobody to ask.
void tst_ToolCallDispatcher::modernCallsMayNotAsk()
{
    call(4, {{"name", "hold"}}, modernCaller());
    QJsonObject error;
    m_held[0]->request("elicitation/create", {},
                       [&error](const QJsonObject &, const QJsonObject &e) { error = e; });
    QCOMPARE(error.value("message"), "no client to ask");
    QVERIFY(m_replies->takeSent().isEmpty());
}

void tst_ToolCallDispatcher::duplicateIdInFlight()
{
    call(5, {{"name", "hold"}});
    QVERIFY(m_dispatcher->isInFlight(5));
    QVERIFY(!m_dispatcher->isInFlight("5")); // 5 and "5" are different ids
    call(5, {{"name", "echo"}, {"arguments", QJsonObject{{"text", "x"}}}});
    const QList<QJsonObject> sent = m_replies->takeSent();
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent[0], (QJsonObject{{"kind", "error"},
                                   {"id", 5},
                                   {"code", JsonRpcMessage::InvalidRequest},
                                   {"message", JsonRpcMessage::idInUseMessage(5)}}));
    QCOMPARE(m_dispatcher->size(), 1);
}

void tst_ToolCallDispatcher::cancelledCallIsForgotten()
{
    QSignalSpy finished(m_dispatcher, &ToolCallDispatcher::callFinished);
    call(6, {{"name", "hold"}});
    m_dispatcher->cancel("6"); // not this call's id
    QVERIFY(!m_held[0]->isCancelled());
    m_dispatcher->cancel(6);
    QVERIFY(m_held[0]->isCancelled());
    m_held[0]->finish(textResult("too late"));
    QCOMPARE(m_replies->takeSent(), (QList<QJsonObject>{{{"kind", "forget"}, {"id", 6}}}));
    QCOMPARE(finished.size(), 1);
    QCOMPARE(m_dispatcher->size(), 0);
    QVERIFY(!m_dispatcher->isInFlight(6));
}

void tst_ToolCallDispatcher::cancelAll()
{
    call(1, {{"name", "hold"}});
    call(2, {{"name", "hold"}});
    QCOMPARE(m_dispatcher->size(), 2);
    m_dispatcher->cancelAll();
    QCOMPARE(m_dispatcher->size(), 0);
    QCOMPARE(m_replies->takeSent().size(), 2); // each one forgotten, none answered
}

void tst_ToolCallDispatcher::taskAnsweredWithItsHandle()
{
    call(8, {{"name", "hold"}, {"task", QJsonObject()}});
    const QList<QJsonObject> sent = m_replies->takeSent();
    QCOMPARE(sent.size(), 1);
    const QJsonObject task = sent[0].value("result").toObject().value("task").toObject();
    QCOMPARE(task.value("status"), "working");
    QVERIFY(m_store->find(task.value("taskId").toString(), kOwner));
    QVERIFY(!m_store->find(task.value("taskId").toString(), "someone else"));
    // A task is the store's, not a call in flight of the dispatcher's.
    QCOMPARE(m_dispatcher->size(), 0);
    QCOMPARE(m_held.size(), 1);
    QCOMPARE(m_held[0]->owner(), kOwner);
}

QTEST_GUILESS_MAIN(tst_ToolCallDispatcher)
#include "tst_toolcalldispatcher.moc"
