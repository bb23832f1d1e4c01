// tasks/* on its own: TaskMethods with a recording McpReplies in place of a session. The two
// eras' task conversations over a real session are tst_protocolera's.
#include "jsonrpcmessage.h"
#include "mcpcatalog.h"
#include "mcpmessage.h"
#include "recordingreplies.h"
#include "taskmethods.h"
#include "taskstore.h"
#include "toolcall.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QPointer>
#include <QTest>
#include <memory>

namespace {
const QString kOwner = QStringLiteral("owner-1");

McpMessage message(const QJsonValue &id, const QString &method, const QJsonObject &params)
{
    return McpMessage::parse(QJsonDocument(JsonRpcMessage::makeRequest(id, method, params))
                                 .toJson(QJsonDocument::Compact));
}

TaskMethods::Asker legacy(const QString &owner = kOwner)
{
    return {owner, false, false};
}
} // namespace

class tst_TaskMethods : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void withoutAStoreNoMethod();
    void modernNeedsTheExtension();
    void anotherOwnersTaskIsUnknown();
    void resultWaitsForTheEnd();
    void resultAfterTheSessionWentIsNotSent();

private:
    // A working task of `owner` (a call the test ends), as tools/call would start it.
    QString startTask(const QString &owner = kOwner);
    QList<QJsonObject> handle(const QJsonValue &id, const QString &method,
                              const QJsonObject &params, const TaskMethods::Asker &asker);

    McpCatalog *m_catalog = nullptr;
    TaskStore *m_store = nullptr;
    RecordingReplies *m_replies = nullptr;
    std::unique_ptr<TaskMethods> m_tasks;
    QList<QPointer<ToolCall>> m_calls;
};

void tst_TaskMethods::init()
{
    m_catalog = new McpCatalog(ServerInfo{"unit", QString(), "1", QString()});
    ToolDefinition hold;
    hold.name = "hold";
    hold.inputSchema = QJsonObject{{"type", "object"}};
    hold.taskSupport = "optional";
    hold.handler = [](ToolCall *) {};
    QVERIFY(m_catalog->tools().add(hold));
    m_store = new TaskStore;
    m_catalog->setTaskStore(m_store);
    m_replies = new RecordingReplies;
    m_tasks = std::make_unique<TaskMethods>(m_catalog, m_replies);
}

void tst_TaskMethods::cleanup()
{
    m_tasks.reset();
    delete m_replies;
    delete m_store;
    delete m_catalog;
    m_calls.clear();
}

QString tst_TaskMethods::startTask(const QString &owner)
{
    ToolCall::Context context;
    context.owner = owner;
    auto *call = new ToolCall("hold", QJsonObject(), context);
    QString error;
    const QString id = m_store->start(call, &error);
    m_calls.append(call);
    return id;
}

QList<QJsonObject> tst_TaskMethods::handle(const QJsonValue &id, const QString &method,
                                           const QJsonObject &params,
                                           const TaskMethods::Asker &asker)
{
    m_tasks->handle(message(id, method, params), params, asker);
    return m_replies->takeSent();
}

void tst_TaskMethods::withoutAStoreNoMethod()
{
    m_catalog->setTaskStore(nullptr);
    const QList<QJsonObject> sent = handle(1, "tasks/list", {}, legacy());
    QCOMPARE(sent, (QList<QJsonObject>{{{"kind", "error"},
                                        {"id", 1},
                                        {"code", JsonRpcMessage::MethodNotFound},
                                        {"message", "Method not found: tasks/list"}}}));
}

void tst_TaskMethods::modernNeedsTheExtension()
{
    const QString id = startTask();
    QList<QJsonObject> sent = handle(2, "tasks/get", {{"taskId", id}}, {kOwner, true, false});
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent[0].value("code"), -32021);
    QCOMPARE(sent[0].value("data"), TaskMethods::tasksRequirement());
    sent = handle(3, "tasks/get", {{"taskId", id}}, {kOwner, true, true});
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent[0].value("kind"), "reply");
    QCOMPARE(sent[0].value("result").toObject().value("status"), "working");
}

void tst_TaskMethods::anotherOwnersTaskIsUnknown()
{
    const QString id = startTask("someone else");
    const QList<QJsonObject> sent = handle(4, "tasks/get", {{"taskId", id}}, legacy());
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent[0].value("code"), JsonRpcMessage::InvalidParams);
    QCOMPARE(sent[0].value("message"), m_store->notFoundMessage(id, kOwner));
    QCOMPARE(handle(5, "tasks/list", {}, legacy())[0].value("result"),
             (QJsonObject{{"tasks", QJsonArray()}}));
}

void tst_TaskMethods::resultWaitsForTheEnd()
{
    const QString id = startTask();
    QVERIFY(handle(6, "tasks/result", {{"taskId", id}}, legacy()).isEmpty());
    m_calls[0]->finish(QJsonObject{{"content", QJsonArray()}});
    const QList<QJsonObject> sent = m_replies->takeSent();
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent[0].value("id"), 6);
    QCOMPARE(sent[0].value("result").toObject().value("_meta"),
             (QJsonObject{{"io.modelcontextprotocol/related-task", QJsonObject{{"taskId", id}}}}));
}

// TaskMethods goes with its session; a task that ends later answers nobody.
void tst_TaskMethods::resultAfterTheSessionWentIsNotSent()
{
    const QString id = startTask();
    QVERIFY(handle(7, "tasks/result", {{"taskId", id}}, legacy()).isEmpty());
    m_tasks.reset();
    m_calls[0]->finish(QJsonObject{{"content", QJsonArray()}});
    QVERIFY(m_replies->takeSent().isEmpty());
}

QTEST_GUILESS_MAIN(tst_TaskMethods)
#include "tst_taskmethods.moc"
