#include "jsonrpcmessage.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <cmath>

namespace {
JsonRpcMessage invalid(int code, const QString &message, const QJsonValue &id = QJsonValue::Null)
{
    JsonRpcMessage m;
    m.type = JsonRpcMessage::Type::Invalid;
    m.errorCode = code;
    m.errorMessage = message;
    m.id = id;
    return m;
}

bool isValidId(const QJsonValue &id)
{
    if (id.isString())
        return true;
    if (id.isDouble()) {
        const double d = id.toDouble();
        return std::isfinite(d) && d == std::floor(d);
    }
    return false;
}
} // namespace

JsonRpcMessage JsonRpcMessage::parse(const QByteArray &bytes)
{
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(bytes, &err);
    if (err.error != QJsonParseError::NoError) {
        // QJsonDocument only takes objects and arrays; a lone string or number is valid JSON
        // but not a request, which JSON-RPC answers with -32600 rather than a parse error.
        const QJsonDocument wrapped = QJsonDocument::fromJson('[' + bytes + ']');
        if (wrapped.isArray() && wrapped.array().size() == 1)
            return invalid(InvalidRequest, QStringLiteral("Invalid Request: not a JSON object"));
        return invalid(
            ParseError,
            QStringLiteral("Parse error: %1 at offset %2").arg(err.errorString()).arg(err.offset));
    }
    if (doc.isArray())
        return invalid(InvalidRequest,
                       QStringLiteral("Invalid Request: JSON-RPC batches are not supported"));
    return fromJson(doc.object());
}

JsonRpcMessage JsonRpcMessage::fromJson(const QJsonValue &value)
{
    if (!value.isObject())
        return invalid(InvalidRequest, QStringLiteral("Invalid Request: not a JSON object"));
    const QJsonObject o = value.toObject();
    const QJsonValue id = o.value(u"id");
    const bool hasId = o.contains(u"id");
    const QJsonValue answerId = hasId && isValidId(id) ? id : QJsonValue(QJsonValue::Null);
    if (o.value(u"jsonrpc").toString() != u"2.0")
        return invalid(InvalidRequest, QStringLiteral("Invalid Request: jsonrpc must be \"2.0\""),
                       answerId);
    if (hasId && !isValidId(id))
        return invalid(InvalidRequest,
                       QStringLiteral("Invalid Request: id must be a string or an integer"));

    JsonRpcMessage m;
    m.id = answerId;
    if (o.contains(u"method")) {
        if (!o.value(u"method").isString())
            return invalid(InvalidRequest,
                           QStringLiteral("Invalid Request: method must be a string"), answerId);
        m.method = o.value(u"method").toString();
        m.params = o.value(u"params");
        if (!m.params.isUndefined() && !m.params.isObject())
            return invalid(InvalidRequest,
                           QStringLiteral("Invalid Request: params must be an object"), answerId);
        m.type = hasId ? Type::Request : Type::Notification;
        return m;
    }
    if (hasId && (o.contains(u"result") || o.contains(u"error"))) {
        m.type = Type::Response;
        m.result = o.value(u"result");
        m.error = o.value(u"error").toObject();
        return m;
    }
    return invalid(InvalidRequest,
                   QStringLiteral("Invalid Request: neither a request nor a response"), answerId);
}

QString JsonRpcMessage::idKey(const QJsonValue &id)
{
    return id.isString() ? QStringLiteral("s:") + id.toString()
                         : QStringLiteral("n:") + QString::number(id.toDouble(), 'g', 17);
}

QString JsonRpcMessage::idText(const QJsonValue &id)
{
    return id.isString() ? u'"' + id.toString() + u'"' : QString::number(id.toDouble(), 'g', 17);
}

QString JsonRpcMessage::idInUseMessage(const QJsonValue &id)
{
    return QStringLiteral("request id %1 is already in use by a request in flight").arg(idText(id));
}

QJsonObject JsonRpcMessage::makeResult(const QJsonValue &id, const QJsonValue &result)
{
    return {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
            {QStringLiteral("id"), id},
            {QStringLiteral("result"), result}};
}

QJsonObject JsonRpcMessage::makeError(const QJsonValue &id, int code, const QString &message,
                                      const QJsonValue &data)
{
    QJsonObject error{{QStringLiteral("code"), code}, {QStringLiteral("message"), message}};
    if (!data.isUndefined())
        error.insert(QStringLiteral("data"), data);
    return {{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
            {QStringLiteral("id"), id},
            {QStringLiteral("error"), error}};
}

QJsonObject JsonRpcMessage::makeNotification(const QString &method, const QJsonObject &params)
{
    QJsonObject o{{QStringLiteral("jsonrpc"), QStringLiteral("2.0")},
                  {QStringLiteral("method"), method}};
    if (!params.isEmpty())
        o.insert(QStringLiteral("params"), params);
    return o;
}

QJsonObject JsonRpcMessage::makeRequest(const QJsonValue &id, const QString &method,
                                        const QJsonObject &params)
{
    QJsonObject o = makeNotification(method, params);
    o.insert(QStringLiteral("id"), id);
    return o;
}
