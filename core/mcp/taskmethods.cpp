#include "taskmethods.h"

#include "mcpcatalog.h"
#include "mcplog.h"
#include "mcpmessage.h"
#include "mcpsession.h"
#include "taskstore.h"
#include "toolcall.h"

#include <QJsonArray>
#include <QPointer>

TaskMethods::TaskMethods(const McpCatalog *catalog, McpSession *session)
    : m_catalog(catalog), m_session(session)
{}

QJsonObject TaskMethods::tasksRequirement()
{
    return {{QStringLiteral("requiredCapabilities"),
             QJsonObject{{QStringLiteral("extensions"),
                          QJsonObject{{ProtocolEra::kTasksExtension, QJsonObject()}}}}}};
}

void TaskMethods::handle(const McpMessage &m, const QJsonObject &params)
{
    if (m.method == u"tasks/get")
        get(m, params);
    else if (m.method == u"tasks/result")
        result(m, params);
    else if (m.method == u"tasks/cancel")
        cancel(m, params);
    else if (m.method == u"tasks/list")
        list(m);
    else if (m.method == u"tasks/update")
        update(m, params);
}

TaskStore *TaskMethods::storeFor(const McpMessage &m) const
{
    TaskStore *store = m_catalog->offersTasks() ? m_catalog->taskStore() : nullptr;
    if (!store)
        m_session->replyError(m.id, JsonRpcMessage::MethodNotFound,
                              QStringLiteral("Method not found: %1").arg(m.method));
    return store;
}

bool TaskMethods::allowed(const McpMessage &m) const
{
    if (!m_session->isModernRequest(m.id) || m_session->declaresTasks(m.id))
        return true;
    m_session->replyError(m.id, ProtocolEra::MissingRequiredClientCapability,
                          QStringLiteral("%1 needs the client capability extensions.%2")
                              .arg(m.method, ProtocolEra::kTasksExtension),
                          tasksRequirement());
    return false;
}

const TaskStore::Task *TaskMethods::taskOf(TaskStore *store, const McpMessage &m,
                                           const QString &taskId) const
{
    const QString owner = m_session->owner();
    const TaskStore::Task *task = store->find(taskId, owner);
    if (!task)
        m_session->replyError(m.id, JsonRpcMessage::InvalidParams,
                              store->notFoundMessage(taskId, owner));
    return task;
}

void TaskMethods::get(const McpMessage &m, const QJsonObject &params)
{
    TaskStore *store = storeFor(m);
    if (!store || !allowed(m))
        return;
    const TaskStore::Task *task = taskOf(store, m, params.value(u"taskId").toString());
    if (!task)
        return;
    if (!m_session->isModernRequest(m.id)) {
        m_session->reply(m.id, TaskStore::legacyJson(*task));
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
    m_session->reply(m.id, info);
}

void TaskMethods::result(const McpMessage &m, const QJsonObject &params)
{
    TaskStore *store = storeFor(m);
    if (!store)
        return;
    const QString taskId = params.value(u"taskId").toString();
    const QString who = m_session->owner();
    if (!taskOf(store, m, taskId))
        return;
    // 2025-11-25: tasks/result waits for the end and answers what tools/call would have.
    QPointer<McpSession> self(m_session);
    const QJsonValue id = m.id;
    store->whenEnded(taskId, who, [self, store, taskId, who, id] {
        if (!self)
            return;
        const TaskStore::Task *task = store->find(taskId, who);
        if (!task) {
            self->replyError(id, JsonRpcMessage::InvalidParams,
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
            self->reply(id, result);
        } else if (task->status == TaskStore::Status::Failed) {
            const QJsonObject error = task->error();
            self->replyError(id, error.value(u"code").toInt(JsonRpcMessage::InternalError),
                             error.value(u"message").toString(), error.value(u"data"));
        } else {
            self->reply(id, ToolCall::errorResult(QStringLiteral("The task was cancelled.")));
        }
    });
}

void TaskMethods::cancel(const McpMessage &m, const QJsonObject &params)
{
    TaskStore *store = storeFor(m);
    if (!store || !allowed(m))
        return;
    const QString owner = m_session->owner();
    const bool modern = m_session->isModernRequest(m.id);
    const QString taskId = params.value(u"taskId").toString();
    const TaskStore::Task *task = taskOf(store, m, taskId);
    if (!task)
        return;
    if (task->isTerminal() && !modern) {
        m_session->replyError(m.id, JsonRpcMessage::InvalidParams,
                              QStringLiteral("task '%1' has already ended (%2)")
                                  .arg(taskId, TaskStore::statusName(task->status)));
        return;
    }
    qCInfo(lcMcp) << "client cancelled task" << taskId;
    store->cancel(taskId, owner);
    task = store->find(taskId, owner);
    if (modern)
        m_session->reply(m.id, QJsonObject()); // an acknowledgement
    else if (task)
        m_session->reply(m.id, TaskStore::legacyJson(*task));
    else // its end made room under the result budget by dropping it (a budget of nothing)
        m_session->replyError(m.id, JsonRpcMessage::InvalidParams,
                              store->notFoundMessage(taskId, owner));
}

void TaskMethods::list(const McpMessage &m)
{
    TaskStore *store = storeFor(m);
    if (!store)
        return;
    QJsonArray list;
    for (const TaskStore::Task *t : store->all(m_session->owner()))
        list.append(TaskStore::legacyJson(*t));
    m_session->reply(m.id, QJsonObject{{QStringLiteral("tasks"), list}});
}

void TaskMethods::update(const McpMessage &m, const QJsonObject &params)
{
    TaskStore *store = storeFor(m);
    if (!store || !allowed(m))
        return;
    if (!taskOf(store, m, params.value(u"taskId").toString()))
        return;
    // Our tasks never wait for input; responses to requests never made are ignored.
    m_session->reply(m.id, QJsonObject());
}
