#include "taskmethods.h"

#include "mcpcatalog.h"
#include "mcplog.h"
#include "mcpmessage.h"
#include "mcpreplies.h"
#include "taskstore.h"
#include "toolcall.h"

#include <QJsonArray>

TaskMethods::TaskMethods(const McpCatalog *catalog, McpReplies *replies)
    : m_catalog(catalog), m_replies(replies)
{}

QJsonObject TaskMethods::tasksRequirement()
{
    return {{QStringLiteral("requiredCapabilities"),
             QJsonObject{{QStringLiteral("extensions"),
                          QJsonObject{{ProtocolEra::kTasksExtension, QJsonObject()}}}}}};
}

void TaskMethods::handle(const McpMessage &m, const QJsonObject &params, const Asker &asker)
{
    if (m.method == u"tasks/get")
        get(m, params, asker);
    else if (m.method == u"tasks/result")
        result(m, params, asker);
    else if (m.method == u"tasks/cancel")
        cancel(m, params, asker);
    else if (m.method == u"tasks/list")
        list(m, asker);
    else if (m.method == u"tasks/update")
        update(m, params, asker);
}

TaskStore *TaskMethods::storeFor(const McpMessage &m) const
{
    TaskStore *store = m_catalog->offersTasks() ? m_catalog->taskStore() : nullptr;
    if (!store)
        m_replies->replyError(m.id, JsonRpcMessage::MethodNotFound,
                              QStringLiteral("Method not found: %1").arg(m.method));
    return store;
}

bool TaskMethods::allowed(const McpMessage &m, const Asker &asker) const
{
    if (!asker.modern || asker.declaresTasks)
        return true;
    m_replies->replyError(m.id, ProtocolEra::MissingRequiredClientCapability,
                          QStringLiteral("%1 needs the client capability extensions.%2")
                              .arg(m.method, ProtocolEra::kTasksExtension),
                          tasksRequirement());
    return false;
}

const TaskStore::Task *TaskMethods::taskOf(TaskStore *store, const McpMessage &m,
                                           const QString &taskId, const QString &owner) const
{
    const TaskStore::Task *task = store->find(taskId, owner);
    if (!task)
        m_replies->replyError(m.id, JsonRpcMessage::InvalidParams,
                              store->notFoundMessage(taskId, owner));
    return task;
}

void TaskMethods::get(const McpMessage &m, const QJsonObject &params, const Asker &asker)
{
    TaskStore *store = storeFor(m);
    if (!store || !allowed(m, asker))
        return;
    const TaskStore::Task *task = taskOf(store, m, params.value(u"taskId").toString(), asker.owner);
    if (!task)
        return;
    if (!asker.modern) {
        m_replies->reply(m.id, TaskStore::legacyJson(*task));
        return;
    }
    // 2026-07-28: the final result (or error) is inlined once the task has ended.
    QJsonObject info = TaskStore::modernJson(*task);
    if (task->status == TaskStore::Status::Completed) {
        QJsonObject result = task->result();
        result.insert(QStringLiteral("resultType"), QStringLiteral("complete"));
        info.insert(QStringLiteral("result"), result);
    } else if (task->status == TaskStore::Status::Failed) {
        info.insert(QStringLiteral("error"), task->error());
    }
    m_replies->reply(m.id, info);
}

void TaskMethods::result(const McpMessage &m, const QJsonObject &params, const Asker &asker)
{
    TaskStore *store = storeFor(m);
    if (!store)
        return;
    const QString taskId = params.value(u"taskId").toString();
    const QString who = asker.owner;
    if (!taskOf(store, m, taskId, who))
        return;
    // 2025-11-25: tasks/result waits for the end and answers what tools/call would have.
    const std::weak_ptr<char> alive = m_alive;
    McpReplies *replies = m_replies;
    const QJsonValue id = m.id;
    store->whenEnded(taskId, who, [alive, replies, store, taskId, who, id] {
        if (alive.expired())
            return;
        const TaskStore::Task *task = store->find(taskId, who);
        if (!task) {
            replies->replyError(id, JsonRpcMessage::InvalidParams,
                                store->notFoundMessage(taskId, who));
            return;
        }
        if (task->status == TaskStore::Status::Completed) {
            QJsonObject result = task->result();
            // Added to what the result's own _meta says (a tool's figures), not in its place.
            QJsonObject meta = result.value(u"_meta").toObject();
            meta.insert(QStringLiteral("io.modelcontextprotocol/related-task"),
                        QJsonObject{{QStringLiteral("taskId"), taskId}});
            result.insert(QStringLiteral("_meta"), meta);
            replies->reply(id, result);
        } else if (task->status == TaskStore::Status::Failed) {
            const QJsonObject error = task->error();
            replies->replyError(id, error.value(u"code").toInt(JsonRpcMessage::InternalError),
                                error.value(u"message").toString(), error.value(u"data"));
        } else {
            replies->reply(id, ToolCall::errorResult(QStringLiteral("The task was cancelled.")));
        }
    });
}

void TaskMethods::cancel(const McpMessage &m, const QJsonObject &params, const Asker &asker)
{
    TaskStore *store = storeFor(m);
    if (!store || !allowed(m, asker))
        return;
    const QString &owner = asker.owner;
    const QString taskId = params.value(u"taskId").toString();
    const TaskStore::Task *task = taskOf(store, m, taskId, owner);
    if (!task)
        return;
    if (task->isTerminal() && !asker.modern) {
        m_replies->replyError(m.id, JsonRpcMessage::InvalidParams,
                              QStringLiteral("task '%1' has already ended (%2)")
                                  .arg(taskId, TaskStore::statusName(task->status)));
        return;
    }
    qCInfo(lcMcp) << "client cancelled task" << taskId;
    store->cancel(taskId, owner);
    task = store->find(taskId, owner);
    if (asker.modern)
        m_replies->reply(m.id, QJsonObject()); // an acknowledgement
    else if (task)
        m_replies->reply(m.id, TaskStore::legacyJson(*task));
    else // its end made room under the result budget by dropping it (a budget of nothing)
        m_replies->replyError(m.id, JsonRpcMessage::InvalidParams,
                              store->notFoundMessage(taskId, owner));
}

void TaskMethods::list(const McpMessage &m, const Asker &asker)
{
    TaskStore *store = storeFor(m);
    if (!store)
        return;
    QJsonArray list;
    for (const TaskStore::Task *t : store->all(asker.owner))
        list.append(TaskStore::legacyJson(*t));
    m_replies->reply(m.id, QJsonObject{{QStringLiteral("tasks"), list}});
}

void TaskMethods::update(const McpMessage &m, const QJsonObject &params, const Asker &asker)
{
    TaskStore *store = storeFor(m);
    if (!store || !allowed(m, asker))
        return;
    if (!taskOf(store, m, params.value(u"taskId").toString(), asker.owner))
        return;
    // Our tasks never wait for input; responses to requests never made are ignored.
    m_replies->reply(m.id, QJsonObject());
}
