#include "toolcalldispatcher.h"

#include "jsonrpcmessage.h"
#include "mcpcaller.h"
#include "mcpcallreplies.h"
#include "mcpcatalog.h"
#include "mcplog.h"
#include "mcpmessage.h"
#include "protocolera.h"
#include "schemavalidator.h"
#include "taskmethods.h"
#include "taskstore.h"

ToolCallDispatcher::ToolCallDispatcher(const McpCatalog *catalog, McpCallReplies *replies,
                                       QObject *parent)
    : QObject(parent), m_catalog(catalog), m_replies(replies)
{}

bool ToolCallDispatcher::isInFlight(const QJsonValue &id) const
{
    return m_calls.contains(JsonRpcMessage::idKey(id));
}

void ToolCallDispatcher::handle(const McpMessage &m, const QJsonObject &params,
                                const McpCaller &caller, const QString &owner)
{
    // Checked first: whatever else is wrong with it, a second request under the id of one in
    // flight must not be answered as if it were that one.
    if (isInFlight(m.id)) {
        m_replies->replyError(m.id, JsonRpcMessage::InvalidRequest,
                              JsonRpcMessage::idInUseMessage(m.id));
        return;
    }
    if (!params.value(u"name").isString()) {
        m_replies->replyError(m.id, JsonRpcMessage::InvalidParams,
                              QStringLiteral("name must be a string"));
        return;
    }
    const QString name = params.value(u"name").toString();
    const ToolDefinition *tool = m_catalog->tools().find(name);
    // A view's tool does not exist for a client without views (as its tools/list says).
    if (!tool || (tool->appOnly && !caller.declaresUi())) {
        m_replies->replyError(m.id, JsonRpcMessage::InvalidParams,
                              QStringLiteral("Unknown tool: %1").arg(name));
        return;
    }
    bool asTask = false;
    if (!decideTask(m, *tool, caller, &asTask))
        return;
    const QJsonValue args =
        params.contains(u"arguments") ? params.value(u"arguments") : QJsonValue(QJsonObject());
    const QString invalid = SchemaValidator::validate(tool->inputSchema, args);
    if (!invalid.isEmpty()) {
        m_replies->reply(m.id,
                         ToolCall::errorResult(
                             QStringLiteral("Invalid arguments for %1: %2").arg(name, invalid)));
        return;
    }
    ToolCall::Context context;
    context.progressToken = params.value(u"_meta").toObject().value(u"progressToken");
    context.clientCapabilities = caller.capabilities;
    context.clientName = caller.clientInfo.value(u"name").toString();
    context.identity = caller.identity;
    context.owner = owner;
    context.requestParams = params;
    context.modern = caller.modern;
    if (asTask)
        startTask(m, *tool, context, args.toObject());
    else
        startCall(m, *tool, context, args.toObject());
}

bool ToolCallDispatcher::decideTask(const McpMessage &m, const ToolDefinition &tool,
                                    const McpCaller &caller, bool *asTask)
{
    // 2025-11-25 clients ask with params.task; under 2026-07-28 the server decides, for clients
    // that declare the tasks extension.
    const bool offered =
        m_catalog->offersTasks() && m_catalog->taskStore() && !tool.taskSupport.isEmpty();
    const bool required = tool.taskSupport == u"required";
    const bool asked = m.params.toObject().value(u"task").isObject();
    if (caller.modern) {
        *asTask = offered && caller.declaresTasks();
        if (required && !*asTask) {
            m_replies->replyError(m.id, ProtocolEra::MissingRequiredClientCapability,
                                  QStringLiteral("%1 runs only as a task: declare the client "
                                                 "capability extensions.%2")
                                      .arg(tool.name, ProtocolEra::kTasksExtension),
                                  TaskMethods::tasksRequirement());
            return false;
        }
        return true;
    }
    if (required && !asked) {
        m_replies->replyError(
            m.id, JsonRpcMessage::MethodNotFound,
            QStringLiteral("%1 runs only as a task (params.task)").arg(tool.name));
        return false;
    }
    if (asked && !offered) {
        m_replies->replyError(m.id, JsonRpcMessage::MethodNotFound,
                              QStringLiteral("%1 does not run as a task").arg(tool.name));
        return false;
    }
    *asTask = asked;
    return true;
}

void ToolCallDispatcher::startTask(const McpMessage &m, const ToolDefinition &tool,
                                   ToolCall::Context context, const QJsonObject &arguments)
{
    TaskStore *store = m_catalog->taskStore();
    // The task's status message follows the call's progress, whoever asked for it.
    context.progressToken = QStringLiteral("task");
    auto *call = new ToolCall(tool.name, arguments, context);
    QString error;
    const QString taskId = store->start(call, &error);
    if (taskId.isEmpty()) {
        delete call;
        m_replies->reply(m.id, ToolCall::errorResult(error));
        return;
    }
    qCInfo(lcMcp) << "tool call" << tool.name << "runs as task" << taskId;
    const TaskStore::Task *task = store->find(taskId, context.owner);
    QJsonObject created;
    if (context.modern) {
        created = TaskStore::modernJson(*task);
        created.insert(QStringLiteral("resultType"), QStringLiteral("task"));
    } else {
        created = QJsonObject{{QStringLiteral("task"), TaskStore::legacyJson(*task)}};
    }
    m_replies->reply(m.id, created);
    tool.handler(call);
}

void ToolCallDispatcher::startCall(const McpMessage &m, const ToolDefinition &tool,
                                   const ToolCall::Context &context, const QJsonObject &arguments)
{
    const QString key = JsonRpcMessage::idKey(m.id);
    auto *call = new ToolCall(tool.name, arguments, context, this);
    m_calls.insert(key, call);
    const QJsonValue id = m.id;
    McpCallReplies *replies = m_replies;
    connect(call, &ToolCall::progressReady, this, [replies, id](const QJsonObject &p) {
        replies->notify(
            JsonRpcMessage::makeNotification(QStringLiteral("notifications/progress"), p), id);
    });
    connect(call, &ToolCall::logReady, this,
            [replies, id](const QString &level, const QString &logger, const QJsonValue &data) {
                replies->logRelated(level, logger, data, id);
            });
    if (!context.modern) // 2026-07-28 has no server-to-client requests (input_required instead)
        call->setRequester([replies, id](const QString &method, const QJsonObject &p,
                                         const ToolCall::ResponseHandler &done) {
            replies->request(method, p, id, done);
        });
    const auto ended = [this, key, call] {
        m_calls.remove(key);
        call->deleteLater();
    };
    connect(call, &ToolCall::finished, this, [this, id, ended](const QJsonObject &result) {
        ended();
        m_replies->reply(id, result);
        Q_EMIT callFinished();
    });
    connect(call, &ToolCall::failed, this, [this, id, ended](const QJsonObject &error) {
        ended();
        m_replies->replyError(id, error.value(u"code").toInt(), error.value(u"message").toString(),
                              error.value(u"data"));
        Q_EMIT callFinished();
    });
    connect(call, &ToolCall::cancelRequested, this, [this, id, ended] {
        ended();
        m_replies->forget(id);
        Q_EMIT callFinished();
    });
    tool.handler(call);
}

void ToolCallDispatcher::cancel(const QJsonValue &id)
{
    ToolCall *call = m_calls.value(JsonRpcMessage::idKey(id));
    if (call) {
        qCInfo(lcMcp) << "client cancelled" << call->tool();
        call->cancel();
    }
}

void ToolCallDispatcher::cancelAll()
{
    const auto calls = m_calls;
    for (ToolCall *call : calls)
        call->cancel();
}
