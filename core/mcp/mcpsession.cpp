#include "mcpsession.h"

#include "mcpcatalog.h"
#include "mcplog.h"
#include "mcptransport.h"
#include "protocolversion.h"
#include "schemavalidator.h"
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
    if (related.isUndefined() || related.isNull())
        m_transport->send(message);
    else
        m_transport->sendRelated(message, related);
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

void McpSession::log(const QString &level, const QString &logger, const QJsonValue &data)
{
    logRelated(level, logger, data, QJsonValue::Undefined);
}

void McpSession::logRelated(const QString &level, const QString &logger, const QJsonValue &data,
                            const QJsonValue &relatedId)
{
    const int rank = levelRank(level);
    if (rank < 0 || rank < m_logThreshold)
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
    case JsonRpcMessage::Type::Request:
        handleRequest(m);
        return;
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
    for (const ToolDefinition &t : m_catalog->tools().all())
        tools.append(t.toJson());
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
    if (m_catalog->prompts().all().isEmpty()) {
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
    if (m_catalog->prompts().all().isEmpty()) {
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
    send(JsonRpcMessage::makeResult(m.id, prompt->get(args)));
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

void McpSession::callTool(const JsonRpcMessage &m)
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
    const QJsonValue args =
        params.contains(u"arguments") ? params.value(u"arguments") : QJsonValue(QJsonObject());
    const QString invalid = SchemaValidator::validate(tool->inputSchema, args);
    if (!invalid.isEmpty()) {
        send(JsonRpcMessage::makeResult(
            m.id, ToolCall::errorResult(
                      QStringLiteral("Invalid arguments for %1: %2").arg(name, invalid))));
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
    call->setClientCapabilities(m_clientCapabilities);
    call->setClientName(m_clientInfo.value(u"name").toString());
    call->setOwner(m_id);
    call->setRequester(
        [this, id](const QString &method, const QJsonObject &p,
                   const ToolCall::ResponseHandler &done) { request(method, p, id, done); });
    connect(call, &ToolCall::finished, this, [this, id, key, call](const QJsonObject &result) {
        m_calls.remove(key);
        call->deleteLater();
        send(JsonRpcMessage::makeResult(id, result), id);
        Q_EMIT callFinished();
    });
    connect(call, &ToolCall::cancelRequested, this, [this, key, call] {
        m_calls.remove(key);
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
