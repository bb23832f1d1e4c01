#include "mcpsession.h"

#include "mcpcatalog.h"
#include "mcplog.h"
#include "mcptransport.h"
#include "protocolversion.h"
#include "schemavalidator.h"
#include "taskstore.h"
#include "toolcall.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QUuid>

namespace {
const QStringList kLevels = {QStringLiteral("debug"),  QStringLiteral("info"),
                             QStringLiteral("notice"), QStringLiteral("warning"),
                             QStringLiteral("error"),  QStringLiteral("critical"),
                             QStringLiteral("alert"),  QStringLiteral("emergency")};
}

McpSession::McpSession(const McpCatalog *catalog, McpTransport *transport, QObject *parent)
    : QObject(parent), m_catalog(catalog), m_transport(transport),
      m_id(QUuid::createUuid().toString(QUuid::WithoutBraces))
{
    transport->setParent(this);
    connect(transport, &McpTransport::messageReceived, this, &McpSession::handle);
    connect(transport, &McpTransport::closed, this, &McpSession::onTransportClosed);
}

McpSession::~McpSession()
{
    cancelAll();
}

int McpSession::levelRank(const QString &level)
{
    return int(kLevels.indexOf(level));
}

void McpSession::send(const QJsonObject &message, const QJsonValue &relatedId)
{
    // Still sent after the client closed its input: its output side may be open and waiting.
    if (!m_transport)
        return;
    // A response belongs to the request it answers.
    const bool isResponse = message.contains(u"result") || message.contains(u"error");
    const QJsonValue related =
        relatedId.isUndefined() && isResponse ? message.value(u"id") : relatedId;
    QJsonObject out = message;
    if (isResponse && !m_modern.isEmpty()) {
        const auto it = m_modern.constFind(JsonRpcMessage::idKey(message.value(u"id")));
        if (it != m_modern.cend()) {
            out = decorateModern(message, *it);
            m_modern.erase(it);
        }
    }
    if (related.isUndefined() || related.isNull())
        m_transport->send(out);
    else
        m_transport->sendRelated(out, related);
}

bool McpSession::isModernId(const QJsonValue &id) const
{
    return m_modern.contains(JsonRpcMessage::idKey(id));
}

namespace {
QJsonObject tasksRequirement()
{
    return {{QStringLiteral("requiredCapabilities"),
             QJsonObject{{QStringLiteral("extensions"),
                          QJsonObject{{ProtocolEra::kTasksExtension, QJsonObject()}}}}}};
}
} // namespace

bool McpSession::modernTasksAllowed(const JsonRpcMessage &m)
{
    const auto it = m_modern.constFind(JsonRpcMessage::idKey(m.id));
    if (it == m_modern.cend() || it->declaresTasks)
        return true;
    send(JsonRpcMessage::makeError(m.id, ProtocolEra::MissingRequiredClientCapability,
                                   QStringLiteral("%1 needs the client capability extensions.%2")
                                       .arg(m.method, ProtocolEra::kTasksExtension),
                                   tasksRequirement()));
    return false;
}

QJsonObject McpSession::decorateModern(const QJsonObject &message,
                                       const ModernRequest &request) const
{
    QJsonObject out = message;
    if (message.contains(u"error")) {
        QJsonObject error = message.value(u"error").toObject();
        // 2026-07-28 answers an unknown resource with Invalid Params (data.uri stays).
        if (error.value(u"code").toInt() == JsonRpcMessage::ResourceNotFound)
            error.insert(QStringLiteral("code"), JsonRpcMessage::InvalidParams);
        out.insert(QStringLiteral("error"), error);
        return out;
    }
    QJsonObject result = message.value(u"result").toObject();
    if (!result.contains(u"resultType"))
        result.insert(QStringLiteral("resultType"), QStringLiteral("complete"));
    QJsonObject meta = result.value(u"_meta").toObject();
    const ServerInfo &info = m_catalog->info();
    meta.insert(ProtocolEra::kMetaServerInfo,
                QJsonObject{{QStringLiteral("name"), info.name},
                            {QStringLiteral("version"), info.version}});
    result.insert(QStringLiteral("_meta"), meta);
    // Caching hints (SEP-2549). The lists never change while the server runs and are the same
    // for every client; resource contents (engine state) may change at any time.
    static const QSet<QString> lists{QStringLiteral("tools/list"), QStringLiteral("resources/list"),
                                     QStringLiteral("resources/templates/list"),
                                     QStringLiteral("prompts/list"),
                                     QStringLiteral("server/discover")};
    if (result.value(u"resultType").toString() == u"complete" && !result.contains(u"ttlMs")) {
        if (lists.contains(request.method)) {
            result.insert(QStringLiteral("ttlMs"), 60 * 60 * 1000);
            result.insert(QStringLiteral("cacheScope"), QStringLiteral("public"));
        } else if (request.method == u"resources/read") {
            result.insert(QStringLiteral("ttlMs"), 0);
            result.insert(QStringLiteral("cacheScope"), QStringLiteral("private"));
        }
    }
    out.insert(QStringLiteral("result"), result);
    return out;
}

void McpSession::request(const QString &method, const QJsonObject &params,
                         const QJsonValue &relatedId,
                         const std::function<void(const QJsonObject &, const QJsonObject &)> &done)
{
    const QString id = QStringLiteral("srv-%1").arg(m_nextRequestId++);
    m_outgoing.insert(JsonRpcMessage::idKey(id), done);
    send(JsonRpcMessage::makeRequest(id, method, params), relatedId);
}

void McpSession::handleResponse(const JsonRpcMessage &m)
{
    const auto done = m_outgoing.take(JsonRpcMessage::idKey(m.id));
    if (done)
        done(m.result.toObject(), m.error);
}

void McpSession::resourceUpdated(const QString &uri)
{
    if (m_subscriptions.contains(uri))
        send(JsonRpcMessage::makeNotification(QStringLiteral("notifications/resources/updated"),
                                              QJsonObject{{QStringLiteral("uri"), uri}}));
}

void McpSession::replyError(const QJsonValue &id, int code, const QString &message)
{
    send(JsonRpcMessage::makeError(id, code, message));
}

void McpSession::replyErrorData(const QJsonValue &id, int code, const QString &message,
                                const QJsonValue &data)
{
    send(JsonRpcMessage::makeError(id, code, message, data));
}

void McpSession::log(const QString &level, const QString &logger, const QJsonValue &data)
{
    logRelated(level, logger, data, QJsonValue::Undefined);
}

void McpSession::logRelated(const QString &level, const QString &logger, const QJsonValue &data,
                            const QJsonValue &relatedId)
{
    const int rank = levelRank(level);
    // A 2026-07-28 request sets its own level in _meta; without one it gets no log messages.
    const auto modern = relatedId.isUndefined()
                            ? m_modern.cend()
                            : m_modern.constFind(JsonRpcMessage::idKey(relatedId));
    const int threshold = modern != m_modern.cend() ? modern->logThreshold : m_logThreshold;
    if (rank < 0 || rank < threshold)
        return;
    QJsonObject params{{QStringLiteral("level"), level}, {QStringLiteral("data"), data}};
    if (!logger.isEmpty())
        params.insert(QStringLiteral("logger"), logger);
    send(JsonRpcMessage::makeNotification(QStringLiteral("notifications/message"), params),
         relatedId);
}

void McpSession::handle(const QByteArray &bytes)
{
    const JsonRpcMessage m = JsonRpcMessage::parse(bytes);
    switch (m.type) {
    case JsonRpcMessage::Type::Invalid:
        qCDebug(lcMcp).noquote() << "rejected message:" << m.errorMessage;
        replyError(m.id, m.errorCode, m.errorMessage);
        return;
    case JsonRpcMessage::Type::Request: {
        const ProtocolEra::Verdict era = ProtocolEra::classify(m);
        if (era.isError()) {
            send(JsonRpcMessage::makeError(m.id, era.errorCode, era.errorMessage, era.errorData));
            return;
        }
        if (era.isModern())
            handleModernRequest(m, era);
        else
            handleRequest(m);
        return;
    }
    case JsonRpcMessage::Type::Notification:
        handleNotification(m);
        return;
    case JsonRpcMessage::Type::Response:
        handleResponse(m);
        return;
    }
}

void McpSession::handleRequest(const JsonRpcMessage &m)
{
    using Handler = void (McpSession::*)(const JsonRpcMessage &, const QJsonObject &);
    // Methods a client may call before it is initialized, then the others.
    static const QHash<QString, Handler> early{
        {QStringLiteral("initialize"), &McpSession::onInitialize},
        {QStringLiteral("ping"), &McpSession::onPing},
    };
    static const QHash<QString, Handler> methods{
        {QStringLiteral("tools/list"), &McpSession::onToolsList},
        {QStringLiteral("tools/call"), &McpSession::onToolsCall},
        {QStringLiteral("resources/list"), &McpSession::onResourcesList},
        {QStringLiteral("resources/templates/list"), &McpSession::onResourceTemplatesList},
        {QStringLiteral("resources/read"), &McpSession::onResourcesRead},
        {QStringLiteral("resources/subscribe"), &McpSession::onResourcesSubscribe},
        {QStringLiteral("resources/unsubscribe"), &McpSession::onResourcesSubscribe},
        {QStringLiteral("prompts/list"), &McpSession::onPromptsList},
        {QStringLiteral("prompts/get"), &McpSession::onPromptsGet},
        {QStringLiteral("completion/complete"), &McpSession::onComplete},
        {QStringLiteral("logging/setLevel"), &McpSession::onSetLevel},
        {QStringLiteral("tasks/get"), &McpSession::onTasksGet},
        {QStringLiteral("tasks/result"), &McpSession::onTasksResult},
        {QStringLiteral("tasks/cancel"), &McpSession::onTasksCancel},
        {QStringLiteral("tasks/list"), &McpSession::onTasksList},
    };
    const QJsonObject params = m.params.toObject();
    if (const Handler h = early.value(m.method)) {
        (this->*h)(m, params);
        return;
    }
    if (!m_initialized) {
        replyError(m.id, JsonRpcMessage::InvalidRequest,
                   QStringLiteral("the session is not initialized: send initialize first"));
        return;
    }
    if (const Handler h = methods.value(m.method))
        (this->*h)(m, params);
    else
        methodNotFound(m);
}

void McpSession::handleModernRequest(const JsonRpcMessage &m, const ProtocolEra::Verdict &era)
{
    using Handler = void (McpSession::*)(const JsonRpcMessage &, const QJsonObject &);
    // Revision 2026-07-28's methods. initialize, ping, logging/setLevel, resources/subscribe
    // and the GET stream are gone from it; tasks/result and tasks/list are gone from its tasks.
    static const QHash<QString, Handler> methods{
        {QStringLiteral("server/discover"), &McpSession::onDiscover},
        {QStringLiteral("tools/list"), &McpSession::onToolsList},
        {QStringLiteral("tools/call"), &McpSession::onToolsCall},
        {QStringLiteral("resources/list"), &McpSession::onResourcesList},
        {QStringLiteral("resources/templates/list"), &McpSession::onResourceTemplatesList},
        {QStringLiteral("resources/read"), &McpSession::onResourcesRead},
        {QStringLiteral("prompts/list"), &McpSession::onPromptsList},
        {QStringLiteral("prompts/get"), &McpSession::onPromptsGet},
        {QStringLiteral("completion/complete"), &McpSession::onComplete},
        {QStringLiteral("tasks/get"), &McpSession::onTasksGet},
        {QStringLiteral("tasks/cancel"), &McpSession::onTasksCancel},
        {QStringLiteral("tasks/update"), &McpSession::onTasksUpdate},
    };
    const Handler h = methods.value(m.method);
    if (!h) {
        replyError(m.id, JsonRpcMessage::MethodNotFound,
                   QStringLiteral("Method not found: %1 (not part of revision %2)")
                       .arg(m.method, era.version));
        return;
    }
    const QString key = JsonRpcMessage::idKey(m.id);
    if (m_modern.contains(key) || m_calls.contains(key)) {
        replyError(m.id, JsonRpcMessage::InvalidRequest,
                   QStringLiteral("request id %1 is already in use by a request in flight")
                       .arg(JsonRpcMessage::idText(m.id)));
        return;
    }
    ModernRequest request;
    request.method = m.method;
    const QJsonValue level = era.envelope.value(ProtocolEra::kMetaLogLevel);
    if (level.isString() && levelRank(level.toString()) >= 0)
        request.logThreshold = levelRank(level.toString());
    request.declaresTasks = era.clientCapabilities()
                                .value(u"extensions")
                                .toObject()
                                .contains(ProtocolEra::kTasksExtension);
    m_modern.insert(key, request);
    if (m.method == u"tools/call")
        callTool(m, &era);
    else
        (this->*h)(m, m.params.toObject());
}

void McpSession::onDiscover(const JsonRpcMessage &m, const QJsonObject &)
{
    QJsonObject result{
        {QStringLiteral("supportedVersions"), QJsonArray::fromStringList(ProtocolEra::supported())},
        {QStringLiteral("capabilities"), m_catalog->modernCapabilities()}};
    if (!m_catalog->info().instructions.isEmpty())
        result.insert(QStringLiteral("instructions"), m_catalog->info().instructions);
    send(JsonRpcMessage::makeResult(m.id, result));
}

void McpSession::onTasksGet(const JsonRpcMessage &m, const QJsonObject &params)
{
    TaskStore *store = m_catalog->offersTasks() ? m_catalog->taskStore() : nullptr;
    if (!store) {
        methodNotFound(m);
        return;
    }
    if (!modernTasksAllowed(m))
        return;
    const QString taskId = params.value(u"taskId").toString();
    const TaskStore::Task *task = store->find(taskId, owner());
    if (!task) {
        replyError(m.id, JsonRpcMessage::InvalidParams, store->notFoundMessage(taskId, owner()));
        return;
    }
    if (!isModernId(m.id)) {
        send(JsonRpcMessage::makeResult(m.id, TaskStore::legacyJson(*task)));
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
    send(JsonRpcMessage::makeResult(m.id, info));
}

void McpSession::onTasksResult(const JsonRpcMessage &m, const QJsonObject &params)
{
    TaskStore *store = m_catalog->offersTasks() ? m_catalog->taskStore() : nullptr;
    if (!store) {
        methodNotFound(m);
        return;
    }
    const QString taskId = params.value(u"taskId").toString();
    const QString who = owner();
    if (!store->find(taskId, who)) {
        replyError(m.id, JsonRpcMessage::InvalidParams, store->notFoundMessage(taskId, who));
        return;
    }
    // 2025-11-25: tasks/result waits for the end and answers what tools/call would have.
    QPointer<McpSession> self(this);
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
        const QJsonObject related{{QStringLiteral("io.modelcontextprotocol/related-task"),
                                   QJsonObject{{QStringLiteral("taskId"), taskId}}}};
        if (task->status == TaskStore::Status::Completed) {
            QJsonObject result = task->result();
            result.insert(QStringLiteral("_meta"), related);
            self->send(JsonRpcMessage::makeResult(id, result));
        } else if (task->status == TaskStore::Status::Failed) {
            const QJsonObject error = task->error();
            self->send(JsonRpcMessage::makeError(
                id, error.value(u"code").toInt(JsonRpcMessage::InternalError),
                error.value(u"message").toString(), error.value(u"data")));
        } else {
            self->send(JsonRpcMessage::makeResult(
                id, ToolCall::errorResult(QStringLiteral("The task was cancelled."))));
        }
    });
}

void McpSession::onTasksCancel(const JsonRpcMessage &m, const QJsonObject &params)
{
    TaskStore *store = m_catalog->offersTasks() ? m_catalog->taskStore() : nullptr;
    if (!store) {
        methodNotFound(m);
        return;
    }
    if (!modernTasksAllowed(m))
        return;
    const QString taskId = params.value(u"taskId").toString();
    const TaskStore::Task *task = store->find(taskId, owner());
    if (!task) {
        replyError(m.id, JsonRpcMessage::InvalidParams, store->notFoundMessage(taskId, owner()));
        return;
    }
    if (task->isTerminal() && !isModernId(m.id)) {
        replyError(m.id, JsonRpcMessage::InvalidParams,
                   QStringLiteral("task '%1' has already ended (%2)")
                       .arg(taskId, TaskStore::statusName(task->status)));
        return;
    }
    qCInfo(lcMcp) << "client cancelled task" << taskId;
    store->cancel(taskId, owner());
    task = store->find(taskId, owner());
    if (isModernId(m.id))
        send(JsonRpcMessage::makeResult(m.id, QJsonObject())); // an acknowledgement
    else if (task)
        send(JsonRpcMessage::makeResult(m.id, TaskStore::legacyJson(*task)));
    else // its end made room under the result budget by dropping it (a budget of nothing)
        replyError(m.id, JsonRpcMessage::InvalidParams, store->notFoundMessage(taskId, owner()));
}

void McpSession::onTasksList(const JsonRpcMessage &m, const QJsonObject &)
{
    TaskStore *store = m_catalog->offersTasks() ? m_catalog->taskStore() : nullptr;
    if (!store) {
        methodNotFound(m);
        return;
    }
    QJsonArray list;
    for (const TaskStore::Task *t : store->all(owner()))
        list.append(TaskStore::legacyJson(*t));
    send(JsonRpcMessage::makeResult(m.id, QJsonObject{{QStringLiteral("tasks"), list}}));
}

void McpSession::onTasksUpdate(const JsonRpcMessage &m, const QJsonObject &params)
{
    TaskStore *store = m_catalog->offersTasks() ? m_catalog->taskStore() : nullptr;
    if (!store) {
        methodNotFound(m);
        return;
    }
    if (!modernTasksAllowed(m))
        return;
    const QString taskId = params.value(u"taskId").toString();
    if (!store->find(taskId, owner())) {
        replyError(m.id, JsonRpcMessage::InvalidParams, store->notFoundMessage(taskId, owner()));
        return;
    }
    // Our tasks never wait for input; responses to requests never made are ignored.
    send(JsonRpcMessage::makeResult(m.id, QJsonObject()));
}

void McpSession::methodNotFound(const JsonRpcMessage &m)
{
    replyError(m.id, JsonRpcMessage::MethodNotFound,
               QStringLiteral("Method not found: %1").arg(m.method));
}

void McpSession::onInitialize(const JsonRpcMessage &m, const QJsonObject &params)
{
    const QString requested = params.value(u"protocolVersion").toString();
    m_protocolVersion = ProtocolVersion::negotiate(requested);
    m_clientInfo = params.value(u"clientInfo").toObject();
    m_clientCapabilities = params.value(u"capabilities").toObject();
    m_initialized = true;
    qCInfo(lcMcp).noquote() << "client" << m_clientInfo.value(u"name").toString()
                            << m_clientInfo.value(u"version").toString() << "speaks"
                            << (requested.isEmpty() ? QStringLiteral("?") : requested) << "→ using"
                            << m_protocolVersion;
    const ServerInfo &info = m_catalog->info();
    QJsonObject serverInfo{{QStringLiteral("name"), info.name},
                           {QStringLiteral("version"), info.version}};
    if (!info.title.isEmpty())
        serverInfo.insert(QStringLiteral("title"), info.title);
    QJsonObject result{{QStringLiteral("protocolVersion"), m_protocolVersion},
                       {QStringLiteral("capabilities"), m_catalog->capabilities()},
                       {QStringLiteral("serverInfo"), serverInfo}};
    if (!info.instructions.isEmpty())
        result.insert(QStringLiteral("instructions"), info.instructions);
    send(JsonRpcMessage::makeResult(m.id, result));
}

void McpSession::onPing(const JsonRpcMessage &m, const QJsonObject &)
{
    send(JsonRpcMessage::makeResult(m.id, QJsonObject()));
}

void McpSession::onToolsList(const JsonRpcMessage &m, const QJsonObject &)
{
    QJsonArray tools;
    const bool modern = isModernId(m.id);
    for (const ToolDefinition &t : m_catalog->tools().all()) {
        QJsonObject tool = t.toJson();
        if (modern) // 2025-11-25 vocabulary; under the tasks extension the server decides
            tool.remove(QStringLiteral("execution"));
        tools.append(tool);
    }
    send(JsonRpcMessage::makeResult(m.id, QJsonObject{{QStringLiteral("tools"), tools}}));
}

void McpSession::onToolsCall(const JsonRpcMessage &m, const QJsonObject &)
{
    callTool(m);
}

void McpSession::onResourcesList(const JsonRpcMessage &m, const QJsonObject &)
{
    QJsonArray list;
    for (const ResourceDefinition &r : m_catalog->resources().all())
        list.append(r.toJson());
    send(JsonRpcMessage::makeResult(m.id, QJsonObject{{QStringLiteral("resources"), list}}));
}

void McpSession::onResourceTemplatesList(const JsonRpcMessage &m, const QJsonObject &)
{
    QJsonArray list;
    for (const ResourceTemplateDefinition &t : m_catalog->resources().templates())
        list.append(t.toJson());
    send(
        JsonRpcMessage::makeResult(m.id, QJsonObject{{QStringLiteral("resourceTemplates"), list}}));
}

void McpSession::onResourcesRead(const JsonRpcMessage &m, const QJsonObject &params)
{
    if (!params.value(u"uri").isString()) {
        replyError(m.id, JsonRpcMessage::InvalidParams, QStringLiteral("uri must be a string"));
        return;
    }
    const QString uri = params.value(u"uri").toString();
    const QJsonObject contents = m_catalog->resources().read(uri);
    if (contents.isEmpty()) {
        send(JsonRpcMessage::makeError(m.id, JsonRpcMessage::ResourceNotFound,
                                       QStringLiteral("Resource not found"),
                                       QJsonObject{{QStringLiteral("uri"), uri}}));
        return;
    }
    send(JsonRpcMessage::makeResult(
        m.id, QJsonObject{{QStringLiteral("contents"), QJsonArray{contents}}}));
}

void McpSession::onResourcesSubscribe(const JsonRpcMessage &m, const QJsonObject &params)
{
    if (!m_catalog->resourceSubscriptions()) {
        methodNotFound(m);
        return;
    }
    if (!params.value(u"uri").isString()) {
        replyError(m.id, JsonRpcMessage::InvalidParams, QStringLiteral("uri must be a string"));
        return;
    }
    if (m.method == u"resources/subscribe")
        m_subscriptions.insert(params.value(u"uri").toString());
    else
        m_subscriptions.remove(params.value(u"uri").toString());
    send(JsonRpcMessage::makeResult(m.id, QJsonObject()));
}

void McpSession::onPromptsList(const JsonRpcMessage &m, const QJsonObject &)
{
    // 2026-07-28 lists are cacheable answers in their own right: no prompts is an empty list.
    if (m_catalog->prompts().all().isEmpty() && !isModernId(m.id)) {
        methodNotFound(m);
        return;
    }
    QJsonArray list;
    for (const PromptDefinition &p : m_catalog->prompts().all())
        list.append(p.toJson());
    send(JsonRpcMessage::makeResult(m.id, QJsonObject{{QStringLiteral("prompts"), list}}));
}

void McpSession::onPromptsGet(const JsonRpcMessage &m, const QJsonObject &params)
{
    // Under 2026-07-28 prompts are declared even when there are none: every name is unknown.
    if (m_catalog->prompts().all().isEmpty() && !isModernId(m.id)) {
        methodNotFound(m);
        return;
    }
    const QString name = params.value(u"name").toString();
    const PromptDefinition *prompt = m_catalog->prompts().find(name);
    if (!prompt) {
        replyError(m.id, JsonRpcMessage::InvalidParams,
                   QStringLiteral("Unknown prompt: %1").arg(name));
        return;
    }
    const QJsonObject args = params.value(u"arguments").toObject();
    const QString missing = prompt->missingArgument(args);
    if (!missing.isEmpty()) {
        replyError(m.id, JsonRpcMessage::InvalidParams, missing);
        return;
    }
    send(JsonRpcMessage::makeResult(m.id, prompt->getWithParams ? prompt->getWithParams(params)
                                                                : prompt->get(args)));
}

void McpSession::onComplete(const JsonRpcMessage &m, const QJsonObject &params)
{
    if (!m_catalog->completionHandler()) {
        methodNotFound(m);
        return;
    }
    const QJsonObject ref = params.value(u"ref").toObject();
    const QJsonObject argument = params.value(u"argument").toObject();
    if (!ref.value(u"type").isString() || !argument.value(u"name").isString()) {
        replyError(m.id, JsonRpcMessage::InvalidParams,
                   QStringLiteral("ref.type and argument.name are required"));
        return;
    }
    QStringList values =
        m_catalog->completionHandler()(ref, argument, params.value(u"context").toObject());
    const qsizetype total = values.size();
    values = values.mid(0, 100); // the spec caps one answer at 100 values
    send(JsonRpcMessage::makeResult(
        m.id,
        QJsonObject{{QStringLiteral("completion"),
                     QJsonObject{{QStringLiteral("values"), QJsonArray::fromStringList(values)},
                                 {QStringLiteral("total"), total},
                                 {QStringLiteral("hasMore"), total > values.size()}}}}));
}

void McpSession::onSetLevel(const JsonRpcMessage &m, const QJsonObject &params)
{
    const int rank = levelRank(params.value(u"level").toString());
    if (rank < 0) {
        replyError(m.id, JsonRpcMessage::InvalidParams,
                   QStringLiteral("level must be one of: %1").arg(kLevels.join(u", ")));
        return;
    }
    m_logThreshold = rank;
    send(JsonRpcMessage::makeResult(m.id, QJsonObject()));
}

void McpSession::callTool(const JsonRpcMessage &m, const ProtocolEra::Verdict *modern)
{
    // Checked first: whatever else is wrong with it, a second request under the id of one in
    // flight must not be answered as if it were that one.
    const QString key = JsonRpcMessage::idKey(m.id);
    if (m_calls.contains(key)) {
        replyError(m.id, JsonRpcMessage::InvalidRequest,
                   QStringLiteral("request id %1 is already in use by a request in flight")
                       .arg(JsonRpcMessage::idText(m.id)));
        return;
    }
    const QJsonObject params = m.params.toObject();
    if (!params.value(u"name").isString()) {
        replyError(m.id, JsonRpcMessage::InvalidParams, QStringLiteral("name must be a string"));
        return;
    }
    const QString name = params.value(u"name").toString();
    const ToolDefinition *tool = m_catalog->tools().find(name);
    if (!tool) {
        replyError(m.id, JsonRpcMessage::InvalidParams,
                   QStringLiteral("Unknown tool: %1").arg(name));
        return;
    }
    // A task: 2025-11-25 clients ask with params.task; under 2026-07-28 the server decides,
    // for clients that declare the tasks extension.
    const QJsonObject caps = modern ? modern->clientCapabilities() : m_clientCapabilities;
    TaskStore *store = m_catalog->offersTasks() ? m_catalog->taskStore() : nullptr;
    bool asTask = false;
    const bool required = tool->taskSupport == u"required";
    if (modern) {
        asTask = store && !tool->taskSupport.isEmpty() &&
                 caps.value(u"extensions").toObject().contains(ProtocolEra::kTasksExtension);
        if (required && !asTask) {
            replyErrorData(m.id, ProtocolEra::MissingRequiredClientCapability,
                           QStringLiteral("%1 runs only as a task: declare the client "
                                          "capability extensions.%2")
                               .arg(name, ProtocolEra::kTasksExtension),
                           tasksRequirement());
            return;
        }
    } else if (required && !params.value(u"task").isObject()) {
        replyError(m.id, JsonRpcMessage::MethodNotFound,
                   QStringLiteral("%1 runs only as a task (params.task)").arg(name));
        return;
    } else if (params.value(u"task").isObject()) {
        if (!store || tool->taskSupport.isEmpty()) {
            replyError(m.id, JsonRpcMessage::MethodNotFound,
                       QStringLiteral("%1 does not run as a task").arg(name));
            return;
        }
        asTask = true;
    }
    const QJsonValue args =
        params.contains(u"arguments") ? params.value(u"arguments") : QJsonValue(QJsonObject());
    const QString invalid = SchemaValidator::validate(tool->inputSchema, args);
    if (!invalid.isEmpty()) {
        send(JsonRpcMessage::makeResult(
            m.id, ToolCall::errorResult(
                      QStringLiteral("Invalid arguments for %1: %2").arg(name, invalid))));
        return;
    }
    const QString clientName =
        (modern ? modern->clientInfo() : m_clientInfo).value(u"name").toString();
    if (asTask) {
        // The task's status message follows the call's progress, whoever asked for it.
        auto *call = new ToolCall(name, args.toObject(), QStringLiteral("task"));
        call->setClientCapabilities(caps);
        call->setClientName(clientName);
        call->setOwner(owner());
        call->setRequestParams(params);
        call->setModern(modern != nullptr);
        QString error;
        const QString taskId = store->start(call, &error);
        if (taskId.isEmpty()) {
            delete call;
            send(JsonRpcMessage::makeResult(m.id, ToolCall::errorResult(error)));
            return;
        }
        qCInfo(lcMcp) << "tool call" << name << "runs as task" << taskId;
        const TaskStore::Task *task = store->find(taskId, owner());
        QJsonObject created;
        if (modern) {
            created = TaskStore::modernJson(*task);
            created.insert(QStringLiteral("resultType"), QStringLiteral("task"));
        } else {
            created = QJsonObject{{QStringLiteral("task"), TaskStore::legacyJson(*task)}};
        }
        send(JsonRpcMessage::makeResult(m.id, created));
        tool->handler(call);
        return;
    }
    const QJsonValue token = params.value(u"_meta").toObject().value(u"progressToken");
    auto *call = new ToolCall(name, args.toObject(), token, this);
    m_calls.insert(key, call);
    const QJsonValue id = m.id;
    connect(call, &ToolCall::progressReady, this, [this, id](const QJsonObject &p) {
        send(JsonRpcMessage::makeNotification(QStringLiteral("notifications/progress"), p), id);
    });
    connect(call, &ToolCall::logReady, this,
            [this, id](const QString &level, const QString &logger, const QJsonValue &data) {
                logRelated(level, logger, data, id);
            });
    call->setClientCapabilities(caps);
    call->setClientName(clientName);
    call->setOwner(owner());
    call->setRequestParams(params);
    call->setModern(modern != nullptr);
    if (!modern) // 2026-07-28 has no server-to-client requests (input_required instead)
        call->setRequester(
            [this, id](const QString &method, const QJsonObject &p,
                       const ToolCall::ResponseHandler &done) { request(method, p, id, done); });
    connect(call, &ToolCall::finished, this, [this, id, key, call](const QJsonObject &result) {
        m_calls.remove(key);
        call->deleteLater();
        send(JsonRpcMessage::makeResult(id, result), id);
        Q_EMIT callFinished();
    });
    connect(call, &ToolCall::failed, this, [this, id, key, call](const QJsonObject &error) {
        m_calls.remove(key);
        call->deleteLater();
        send(JsonRpcMessage::makeError(id, error.value(u"code").toInt(),
                                       error.value(u"message").toString(), error.value(u"data")),
             id);
        Q_EMIT callFinished();
    });
    connect(call, &ToolCall::cancelRequested, this, [this, key, call] {
        m_calls.remove(key);
        m_modern.remove(key);
        call->deleteLater();
        Q_EMIT callFinished();
    });
    tool->handler(call);
}

void McpSession::handleNotification(const JsonRpcMessage &m)
{
    if (m.method == u"notifications/cancelled") {
        const QJsonValue requestId = m.params.toObject().value(u"requestId");
        ToolCall *call = m_calls.value(JsonRpcMessage::idKey(requestId));
        if (call) {
            qCInfo(lcMcp) << "client cancelled" << call->tool();
            call->cancel();
        }
    }
    // notifications/initialized and anything unknown need no action; never answered.
}

void McpSession::onTransportClosed()
{
    if (m_closed)
        return;
    m_closed = true;
    failOutgoing();
    Q_EMIT closed();
}

void McpSession::failOutgoing()
{
    const auto pending = std::exchange(m_outgoing, {});
    for (const auto &done : pending)
        done({}, QJsonObject{{QStringLiteral("code"), -32603},
                             {QStringLiteral("message"), QStringLiteral("the client went away")}});
}

void McpSession::cancelAll()
{
    const auto calls = m_calls;
    for (ToolCall *call : calls)
        call->cancel();
}
