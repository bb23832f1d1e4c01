#include "mcpsession.h"

#include "mcplog.h"
#include "mcpserver.h"
#include "mcptransport.h"
#include "protocolversion.h"
#include "schemavalidator.h"
#include "toolcall.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace {
const QStringList kLevels = {QStringLiteral("debug"),  QStringLiteral("info"),
                             QStringLiteral("notice"), QStringLiteral("warning"),
                             QStringLiteral("error"),  QStringLiteral("critical"),
                             QStringLiteral("alert"),  QStringLiteral("emergency")};
}

McpSession::McpSession(McpServer *server, McpTransport *transport, QObject *parent)
    : QObject(parent), m_server(server), m_transport(transport)
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

QString McpSession::idKey(const QJsonValue &id)
{
    return id.isString() ? QStringLiteral("s:") + id.toString()
                         : QStringLiteral("n:") + QString::number(id.toDouble(), 'g', 17);
}

void McpSession::send(const QJsonObject &message)
{
    // Still sent after the client closed its input: its output side may be open and waiting.
    if (m_transport)
        m_transport->send(message);
}

void McpSession::replyError(const QJsonValue &id, int code, const QString &message)
{
    send(JsonRpcMessage::makeError(id, code, message));
}

void McpSession::log(const QString &level, const QString &logger, const QJsonValue &data)
{
    const int rank = levelRank(level);
    if (rank < 0 || rank < m_logThreshold)
        return;
    QJsonObject params{{QStringLiteral("level"), level}, {QStringLiteral("data"), data}};
    if (!logger.isEmpty())
        params.insert(QStringLiteral("logger"), logger);
    send(JsonRpcMessage::makeNotification(QStringLiteral("notifications/message"), params));
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
        return; // we send no requests yet, so there is nothing to match
    }
}

void McpSession::handleRequest(const JsonRpcMessage &m)
{
    const QJsonObject params = m.params.toObject();
    if (m.method == u"initialize") {
        const QString requested = params.value(u"protocolVersion").toString();
        m_protocolVersion = ProtocolVersion::negotiate(requested);
        m_clientInfo = params.value(u"clientInfo").toObject();
        m_initialized = true;
        qCInfo(lcMcp).noquote() << "client" << m_clientInfo.value(u"name").toString()
                                << m_clientInfo.value(u"version").toString() << "speaks"
                                << (requested.isEmpty() ? QStringLiteral("?") : requested)
                                << "→ using" << m_protocolVersion;
        const ServerInfo &info = m_server->info();
        QJsonObject serverInfo{{QStringLiteral("name"), info.name},
                               {QStringLiteral("version"), info.version}};
        if (!info.title.isEmpty())
            serverInfo.insert(QStringLiteral("title"), info.title);
        QJsonObject result{{QStringLiteral("protocolVersion"), m_protocolVersion},
                           {QStringLiteral("capabilities"), m_server->capabilities()},
                           {QStringLiteral("serverInfo"), serverInfo}};
        if (!info.instructions.isEmpty())
            result.insert(QStringLiteral("instructions"), info.instructions);
        send(JsonRpcMessage::makeResult(m.id, result));
        return;
    }
    if (m.method == u"ping") {
        send(JsonRpcMessage::makeResult(m.id, QJsonObject()));
        return;
    }
    if (!m_initialized) {
        replyError(m.id, JsonRpcMessage::InvalidRequest,
                   QStringLiteral("the session is not initialized: send initialize first"));
        return;
    }
    if (m.method == u"tools/list") {
        QJsonArray tools;
        for (const ToolDefinition &t : m_server->tools().all())
            tools.append(t.toJson());
        send(JsonRpcMessage::makeResult(m.id, QJsonObject{{QStringLiteral("tools"), tools}}));
    } else if (m.method == u"tools/call") {
        callTool(m);
    } else if (m.method == u"resources/list") {
        QJsonArray list;
        for (const ResourceDefinition &r : m_server->resources().all())
            list.append(r.toJson());
        send(JsonRpcMessage::makeResult(m.id, QJsonObject{{QStringLiteral("resources"), list}}));
    } else if (m.method == u"resources/templates/list") {
        send(JsonRpcMessage::makeResult(
            m.id, QJsonObject{{QStringLiteral("resourceTemplates"), QJsonArray()}}));
    } else if (m.method == u"resources/read") {
        const QString uri = params.value(u"uri").toString();
        if (!params.value(u"uri").isString()) {
            replyError(m.id, JsonRpcMessage::InvalidParams, QStringLiteral("uri must be a string"));
            return;
        }
        const ResourceDefinition *r = m_server->resources().find(uri);
        if (!r) {
            send(JsonRpcMessage::makeError(m.id, JsonRpcMessage::ResourceNotFound,
                                           QStringLiteral("Resource not found"),
                                           QJsonObject{{QStringLiteral("uri"), uri}}));
            return;
        }
        send(JsonRpcMessage::makeResult(
            m.id, QJsonObject{{QStringLiteral("contents"), QJsonArray{r->contents()}}}));
    } else if (m.method == u"logging/setLevel") {
        const int rank = levelRank(params.value(u"level").toString());
        if (rank < 0) {
            replyError(m.id, JsonRpcMessage::InvalidParams,
                       QStringLiteral("level must be one of: %1").arg(kLevels.join(u", ")));
            return;
        }
        m_logThreshold = rank;
        send(JsonRpcMessage::makeResult(m.id, QJsonObject()));
    } else {
        replyError(m.id, JsonRpcMessage::MethodNotFound,
                   QStringLiteral("Method not found: %1").arg(m.method));
    }
}

void McpSession::callTool(const JsonRpcMessage &m)
{
    const QJsonObject params = m.params.toObject();
    if (!params.value(u"name").isString()) {
        replyError(m.id, JsonRpcMessage::InvalidParams, QStringLiteral("name must be a string"));
        return;
    }
    const QString name = params.value(u"name").toString();
    const ToolDefinition *tool = m_server->tools().find(name);
    if (!tool) {
        replyError(m.id, JsonRpcMessage::InvalidParams,
                   QStringLiteral("Unknown tool: %1").arg(name));
        return;
    }
    const QString key = idKey(m.id);
    if (m_calls.contains(key)) {
        replyError(m.id, JsonRpcMessage::InvalidRequest,
                   QStringLiteral("a request with this id is still in flight"));
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
    connect(call, &ToolCall::progressReady, this, [this](const QJsonObject &p) {
        send(JsonRpcMessage::makeNotification(QStringLiteral("notifications/progress"), p));
    });
    connect(call, &ToolCall::logReady, this, &McpSession::log);
    connect(call, &ToolCall::finished, this, [this, id, key, call](const QJsonObject &result) {
        m_calls.remove(key);
        call->deleteLater();
        send(JsonRpcMessage::makeResult(id, result));
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
        ToolCall *call = m_calls.value(idKey(requestId));
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
    Q_EMIT closed();
}

void McpSession::cancelAll()
{
    const auto calls = m_calls;
    for (ToolCall *call : calls)
        call->cancel();
}
