#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QJsonValue>
#include <QString>

// One JSON-RPC 2.0 message, parsed leniently enough to answer every malformed input with the
// right error code instead of dropping it.
struct JsonRpcMessage
{
    enum class Type
    {
        Request,
        Notification,
        Response,
        Invalid
    };
    enum ErrorCode
    {
        ParseError = -32700,
        InvalidRequest = -32600,
        MethodNotFound = -32601,
        InvalidParams = -32602,
        InternalError = -32603,
        ResourceNotFound = -32002,
    };

    Type type = Type::Invalid;
    QJsonValue id; // string or integer; null when unknown
    QString method;
    QJsonValue params;
    QJsonValue result;
    QJsonObject error;
    // For Type::Invalid: the error to answer with (id as far as it could be read).
    int errorCode = 0;
    QString errorMessage;

    static JsonRpcMessage parse(const QByteArray &bytes);
    // A hash key for a request id: 1 and "1" are different ids.
    static QString idKey(const QJsonValue &id);
    // An id as a client wrote it, for messages: 7, "abc".
    static QString idText(const QJsonValue &id);
    // The message of an Invalid Request whose id is that of a request still in flight.
    static QString idInUseMessage(const QJsonValue &id);
    static JsonRpcMessage fromJson(const QJsonValue &value);

    static QJsonObject makeResult(const QJsonValue &id, const QJsonValue &result);
    static QJsonObject makeError(const QJsonValue &id, int code, const QString &message,
                                 const QJsonValue &data = QJsonValue::Undefined);
    static QJsonObject makeNotification(const QString &method, const QJsonObject &params = {});
    static QJsonObject makeRequest(const QJsonValue &id, const QString &method,
                                   const QJsonObject &params = {});
};
