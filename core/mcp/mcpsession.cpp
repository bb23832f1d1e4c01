#include "mcpsession.h"

#include "mcpcatalog.h"
#include "mcplog.h"
#include "mcptransport.h"
#include "protocolversion.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QUuid>

namespace {
const QStringList kLevels = {QStringLiteral("debug"),  QStringLiteral("info"),
                             QStringLiteral("notice"), QStringLiteral("warning"),
                             QStringLiteral("error"),  QStringLiteral("critical"),
                             QStringLiteral("alert"),  QStringLiteral("emergency")};
} // namespace

McpSession::McpSession(const McpCatalog *catalog, McpTransport *transport, QObject *parent)
    : QObject(parent), m_catalog(catalog), m_transport(transport), m_tasks(catalog, this),
      m_id(QUuid::createUuid().toString(QUuid::WithoutBraces)), m_toolCalls(catalog, this)
{
    connect(&m_toolCalls, &ToolCallDispatcher::callFinished, this, &McpSession::callFinished);
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

void McpSession::respond(const QJsonValue &id, const QJsonObject &message)
{
    // Still sent after the client closed its input: its output side may be open and waiting.
    if (!m_transport)
        return;
    QJsonObject out = message;
    const auto it = m_modern.constFind(JsonRpcMessage::idKey(id));
    if (it != m_modern.cend()) {
        out = decorateModern(message, *it);
        m_modern.erase(it);
    }
    m_transport->respond(id, out);
}

void McpSession::notify(const QJsonObject &message, const QJsonValue &relatedId)
{
    if (m_transport)
        m_transport->notify(message, relatedId);
}

void McpSession::reply(const QJsonValue &id, const QJsonValue &result)
{
    respond(id, JsonRpcMessage::makeResult(id, result));
}

void McpSession::replyError(const QJsonValue &id, int code, const QString &message,
                            const QJsonValue &data)
{
    respond(id, JsonRpcMessage::makeError(id, code, message, data));
}

bool McpSession::isModernRequest(const QJsonValue &id) const
{
    return m_modern.contains(JsonRpcMessage::idKey(id));
}

bool McpSession::declaresTasks(const QJsonValue &id) const
{
    const auto it = m_modern.constFind(JsonRpcMessage::idKey(id));
    return it != m_modern.cend() && it->declaresTasks;
}

void McpSession::forget(const QJsonValue &id)
{
    m_modern.remove(JsonRpcMessage::idKey(id));
}

McpCaller McpSession::callerOf(const McpMessage &m) const
{
    if (m.era.isModern())
        return {true, m.era.clientCapabilities(), m.era.clientInfo(), m_identity};
    return {false, m_clientCapabilities, m_clientInfo, m_identity};
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
    // for every client, except the tools and resources a host with views is shown (no shared
    // cache may hand those to another client); resource contents (engine state) may change at
    // any time.
    static const QSet<QString> lists{QStringLiteral("tools/list"), QStringLiteral("resources/list"),
                                     QStringLiteral("resources/templates/list"),
                                     QStringLiteral("prompts/list"),
                                     QStringLiteral("server/discover")};
    if (result.value(u"resultType").toString() == u"complete" && !result.contains(u"ttlMs")) {
        if (lists.contains(request.method)) {
            const bool tailored = request.declaresUi && (request.method == u"tools/list" ||
                                                         request.method == u"resources/list");
            result.insert(QStringLiteral("ttlMs"), 60 * 60 * 1000);
            result.insert(QStringLiteral("cacheScope"),
                          tailored ? QStringLiteral("private") : QStringLiteral("public"));
        } else if (request.method == u"resources/read") {
            result.insert(QStringLiteral("ttlMs"), 0);
            result.insert(QStringLiteral("cacheScope"), QStringLiteral("private"));
        }
    }
    out.insert(QStringLiteral("result"), result);
    return out;
}

void McpSession::request(const QString &method, const QJsonObject &params,
                         const QJsonValue &relatedId, const ResponseHandler &done)
{
    const QString id = QStringLiteral("srv-%1").arg(m_nextRequestId++);
    m_outgoing.insert(JsonRpcMessage::idKey(id), done);
    notify(JsonRpcMessage::makeRequest(id, method, params), relatedId);
}

void McpSession::handleResponse(const McpMessage &m)
{
    const auto done = m_outgoing.take(JsonRpcMessage::idKey(m.id));
    if (done)
        done(m.result.toObject(), m.error);
}

void McpSession::resourceUpdated(const QString &uri)
{
    if (m_subscriptions.contains(uri))
        notify(JsonRpcMessage::makeNotification(QStringLiteral("notifications/resources/updated"),
                                                QJsonObject{{QStringLiteral("uri"), uri}}),
               QJsonValue::Undefined);
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
    notify(JsonRpcMessage::makeNotification(QStringLiteral("notifications/message"), params),
           relatedId);
}

void McpSession::handle(const McpMessage &m)
{
    switch (m.type) {
    case JsonRpcMessage::Type::Invalid:
        qCDebug(lcMcp).noquote() << "rejected message:" << m.errorMessage;
        replyError(m.id, m.errorCode, m.errorMessage);
        return;
    case JsonRpcMessage::Type::Request:
        if (m.era.isError())
            replyError(m.id, m.era.errorCode, m.era.errorMessage, m.era.errorData);
        else
            dispatch(m);
        return;
    case JsonRpcMessage::Type::Notification:
        handleNotification(m);
        return;
    case JsonRpcMessage::Type::Response:
        handleResponse(m);
        return;
    }
}

void McpSession::dispatch(const McpMessage &m)
{
    enum Eras
    {
        Legacy = 1,
        BeforeInitialize = 2,
        Modern = 4
    };
    struct Method
    {
        Handler handler;
        int eras;
    };
    // Revision 2026-07-28 has no initialize, ping, logging/setLevel, resources/subscribe (nor
    // the GET stream); its tasks extension has no tasks/result and tasks/list, but tasks/update.
    static const QHash<QString, Method> methods{
        {QStringLiteral("initialize"), {&McpSession::onInitialize, Legacy | BeforeInitialize}},
        {QStringLiteral("ping"), {&McpSession::onPing, Legacy | BeforeInitialize}},
        {QStringLiteral("server/discover"), {&McpSession::onDiscover, Modern}},
        {QStringLiteral("tools/list"), {&McpSession::onToolsList, Legacy | Modern}},
        {QStringLiteral("tools/call"), {&McpSession::onToolsCall, Legacy | Modern}},
        {QStringLiteral("resources/list"), {&McpSession::onResourcesList, Legacy | Modern}},
        {QStringLiteral("resources/templates/list"),
         {&McpSession::onResourceTemplatesList, Legacy | Modern}},
        {QStringLiteral("resources/read"), {&McpSession::onResourcesRead, Legacy | Modern}},
        {QStringLiteral("resources/subscribe"), {&McpSession::onResourcesSubscribe, Legacy}},
        {QStringLiteral("resources/unsubscribe"), {&McpSession::onResourcesSubscribe, Legacy}},
        {QStringLiteral("prompts/list"), {&McpSession::onPromptsList, Legacy | Modern}},
        {QStringLiteral("prompts/get"), {&McpSession::onPromptsGet, Legacy | Modern}},
        {QStringLiteral("completion/complete"), {&McpSession::onComplete, Legacy | Modern}},
        {QStringLiteral("logging/setLevel"), {&McpSession::onSetLevel, Legacy}},
        {QStringLiteral("tasks/get"), {&McpSession::onTasks, Legacy | Modern}},
        {QStringLiteral("tasks/result"), {&McpSession::onTasks, Legacy}},
        {QStringLiteral("tasks/cancel"), {&McpSession::onTasks, Legacy | Modern}},
        {QStringLiteral("tasks/list"), {&McpSession::onTasks, Legacy}},
        {QStringLiteral("tasks/update"), {&McpSession::onTasks, Modern}},
    };
    const auto it = methods.constFind(m.method);
    const int eras = it == methods.cend() ? 0 : it->eras;
    if (m.era.isModern()) {
        if (!(eras & Modern)) {
            replyError(m.id, JsonRpcMessage::MethodNotFound,
                       QStringLiteral("Method not found: %1 (not part of revision %2)")
                           .arg(m.method, m.era.version));
            return;
        }
        if (!admitModern(m))
            return;
    } else if (!(eras & BeforeInitialize) && !m_initialized) {
        replyError(m.id, JsonRpcMessage::InvalidRequest,
                   QStringLiteral("the session is not initialized: send initialize first"));
        return;
    } else if (!(eras & Legacy)) {
        methodNotFound(m);
        return;
    }
    (this->*it->handler)(m, m.params.toObject());
}

bool McpSession::admitModern(const McpMessage &m)
{
    const QString key = JsonRpcMessage::idKey(m.id);
    if (m_modern.contains(key) || m_toolCalls.isInFlight(m.id)) {
        replyError(m.id, JsonRpcMessage::InvalidRequest, JsonRpcMessage::idInUseMessage(m.id));
        return false;
    }
    ModernRequest request;
    request.method = m.method;
    const QJsonValue level = m.era.envelope.value(ProtocolEra::kMetaLogLevel);
    if (level.isString() && levelRank(level.toString()) >= 0)
        request.logThreshold = levelRank(level.toString());
    request.declaresTasks = callerOf(m).declaresTasks();
    request.declaresUi = callerOf(m).declaresUi();
    m_modern.insert(key, request);
    return true;
}

void McpSession::onDiscover(const McpMessage &m, const QJsonObject &)
{
    QJsonObject result{
        {QStringLiteral("supportedVersions"), QJsonArray::fromStringList(ProtocolEra::supported())},
        {QStringLiteral("capabilities"), m_catalog->modernCapabilities()}};
    if (!m_catalog->info().instructions.isEmpty())
        result.insert(QStringLiteral("instructions"), m_catalog->info().instructions);
    reply(m.id, result);
}

void McpSession::onTasks(const McpMessage &m, const QJsonObject &params)
{
    m_tasks.handle(m, params, {owner(), isModernRequest(m.id), declaresTasks(m.id)});
}

void McpSession::onToolsCall(const McpMessage &m, const QJsonObject &params)
{
    m_toolCalls.handle(m, params, callerOf(m), owner());
}

void McpSession::methodNotFound(const McpMessage &m)
{
    replyError(m.id, JsonRpcMessage::MethodNotFound,
               QStringLiteral("Method not found: %1").arg(m.method));
}

void McpSession::onInitialize(const McpMessage &m, const QJsonObject &params)
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
    reply(m.id, result);
}

void McpSession::onPing(const McpMessage &m, const QJsonObject &)
{
    reply(m.id, QJsonObject());
}

void McpSession::onToolsList(const McpMessage &m, const QJsonObject &)
{
    QJsonArray tools;
    const bool modern = isModernRequest(m.id);
    const bool ui = callerOf(m).declaresUi();
    for (const ToolDefinition &t : m_catalog->tools().all()) {
        if (t.appOnly && !ui)
            continue;
        QJsonObject tool = ui ? t.toJsonForUi() : t.toJson();
        if (modern) // 2025-11-25 vocabulary; under the tasks extension the server decides
            tool.remove(QStringLiteral("execution"));
        tools.append(tool);
    }
    reply(m.id, QJsonObject{{QStringLiteral("tools"), tools}});
}

void McpSession::onResourcesList(const McpMessage &m, const QJsonObject &)
{
    QJsonArray list;
    const bool ui = callerOf(m).declaresUi();
    for (const ResourceDefinition &r : m_catalog->resources().all())
        if (ui || !r.forUi)
            list.append(r.toJson());
    reply(m.id, QJsonObject{{QStringLiteral("resources"), list}});
}

void McpSession::onResourceTemplatesList(const McpMessage &m, const QJsonObject &)
{
    QJsonArray list;
    for (const ResourceTemplateDefinition &t : m_catalog->resources().templates())
        list.append(t.toJson());
    reply(m.id, QJsonObject{{QStringLiteral("resourceTemplates"), list}});
}

void McpSession::onResourcesRead(const McpMessage &m, const QJsonObject &params)
{
    if (!params.value(u"uri").isString()) {
        replyError(m.id, JsonRpcMessage::InvalidParams, QStringLiteral("uri must be a string"));
        return;
    }
    const QString uri = params.value(u"uri").toString();
    const QJsonObject contents = m_catalog->resources().read(uri, callerOf(m).declaresUi());
    if (contents.isEmpty()) {
        replyError(m.id, JsonRpcMessage::ResourceNotFound, QStringLiteral("Resource not found"),
                   QJsonObject{{QStringLiteral("uri"), uri}});
        return;
    }
    reply(m.id, QJsonObject{{QStringLiteral("contents"), QJsonArray{contents}}});
}

void McpSession::onResourcesSubscribe(const McpMessage &m, const QJsonObject &params)
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
    reply(m.id, QJsonObject());
}

void McpSession::onPromptsList(const McpMessage &m, const QJsonObject &)
{
    // 2026-07-28 lists are cacheable answers in their own right: no prompts is an empty list.
    if (m_catalog->prompts().all().isEmpty() && !isModernRequest(m.id)) {
        methodNotFound(m);
        return;
    }
    QJsonArray list;
    for (const PromptDefinition &p : m_catalog->prompts().all())
        list.append(p.toJson());
    reply(m.id, QJsonObject{{QStringLiteral("prompts"), list}});
}

void McpSession::onPromptsGet(const McpMessage &m, const QJsonObject &params)
{
    // Under 2026-07-28 prompts are declared even when there are none: every name is unknown.
    if (m_catalog->prompts().all().isEmpty() && !isModernRequest(m.id)) {
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
    reply(m.id, prompt->getWithParams ? prompt->getWithParams(params) : prompt->get(args));
}

void McpSession::onComplete(const McpMessage &m, const QJsonObject &params)
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
    reply(m.id,
          QJsonObject{{QStringLiteral("completion"),
                       QJsonObject{{QStringLiteral("values"), QJsonArray::fromStringList(values)},
                                   {QStringLiteral("total"), total},
                                   {QStringLiteral("hasMore"), total > values.size()}}}});
}

void McpSession::onSetLevel(const McpMessage &m, const QJsonObject &params)
{
    const int rank = levelRank(params.value(u"level").toString());
    if (rank < 0) {
        replyError(m.id, JsonRpcMessage::InvalidParams,
                   QStringLiteral("level must be one of: %1").arg(kLevels.join(u", ")));
        return;
    }
    m_logThreshold = rank;
    reply(m.id, QJsonObject());
}

void McpSession::handleNotification(const McpMessage &m)
{
    if (m.method == u"notifications/cancelled")
        m_toolCalls.cancel(m.params.toObject().value(u"requestId"));
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
    m_toolCalls.cancelAll();
}
