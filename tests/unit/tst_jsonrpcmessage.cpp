#include "jsonrpcmessage.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using Type = JsonRpcMessage::Type;
Q_DECLARE_METATYPE(JsonRpcMessage::Type)

namespace {
QJsonObject object(const QByteArray &json)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError || !doc.isObject())
        qFatal("bad JSON in the test itself: %s", json.constData());
    return doc.object();
}
} // namespace

class tst_JsonRpcMessage : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parseValid_data();
    void parseValid();
    void parseInvalid_data();
    void parseInvalid();
    void builders_data();
    void builders();
    void roundTrip_data();
    void roundTrip();
};

void tst_JsonRpcMessage::parseValid_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<Type>("type");
    QTest::addColumn<QJsonValue>("id");
    QTest::addColumn<QString>("method");
    QTest::addColumn<QJsonValue>("params");
    QTest::addColumn<QJsonValue>("result");

    const QJsonValue none(QJsonValue::Undefined);
    const QJsonValue null(QJsonValue::Null);
    QTest::newRow("request")
        << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}})")
        << Type::Request << QJsonValue(1) << QStringLiteral("tools/list")
        << QJsonValue(QJsonObject{{"cursor", "c"}}) << none;
    QTest::newRow("request with string id")
        << QByteArray(R"({"jsonrpc":"2.0","id":"req-7","method":"ping"})") << Type::Request
        << QJsonValue("req-7") << QStringLiteral("ping") << none << none;
    QTest::newRow("request with id 0")
        << QByteArray(R"({"jsonrpc":"2.0","id":0,"method":"ping"})") << Type::Request
        << QJsonValue(0) << QStringLiteral("ping") << none << none;
    QTest::newRow("request with negative id")
        << QByteArray(R"({"jsonrpc":"2.0","id":-5,"method":"ping"})") << Type::Request
        << QJsonValue(-5) << QStringLiteral("ping") << none << none;
    QTest::newRow("request with empty params")
        << QByteArray(R"({"method":"ping","params":{},"id":2,"jsonrpc":"2.0"})") << Type::Request
        << QJsonValue(2) << QStringLiteral("ping") << QJsonValue(QJsonObject()) << none;
    QTest::newRow("whitespace around")
        << QByteArray(" \r\n\t{\"jsonrpc\" : \"2.0\", \"id\" : 3, \"method\" : \"ping\"}\n ")
        << Type::Request << QJsonValue(3) << QStringLiteral("ping") << none << none;
    QTest::newRow("notification")
        << QByteArray(R"({"jsonrpc":"2.0","method":"notifications/initialized"})")
        << Type::Notification << null << QStringLiteral("notifications/initialized") << none
        << none;
    QTest::newRow("notification with params")
        << QByteArray(
               R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}})")
        << Type::Notification << null << QStringLiteral("notifications/cancelled")
        << QJsonValue(QJsonObject{{"requestId", 4}}) << none;
    QTest::newRow("response with result")
        << QByteArray(R"({"jsonrpc":"2.0","id":5,"result":{"roots":[]}})") << Type::Response
        << QJsonValue(5) << QString() << none << QJsonValue(QJsonObject{{"roots", QJsonArray()}});
    QTest::newRow("response with error")
        << QByteArray(R"({"jsonrpc":"2.0","id":"s","error":{"code":-1,"message":"no"}})")
        << Type::Response << QJsonValue("s") << QString() << none << none;
}

void tst_JsonRpcMessage::parseValid()
{
    QFETCH(QByteArray, input);
    QFETCH(Type, type);
    QFETCH(QJsonValue, id);
    QFETCH(QString, method);
    QFETCH(QJsonValue, params);
    QFETCH(QJsonValue, result);

    const JsonRpcMessage m = JsonRpcMessage::parse(input);
    QCOMPARE(int(m.type), int(type));
    QCOMPARE(m.id, id);
    QCOMPARE(m.method, method);
    // params belong to requests and notifications, result to responses.
    if (type == Type::Response)
        QCOMPARE(m.result, result);
    else
        QCOMPARE(m.params, params);
    QCOMPARE(m.errorCode, 0);
    QCOMPARE(m.errorMessage, QString());
}

void tst_JsonRpcMessage::parseInvalid_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<int>("errorCode");
    QTest::addColumn<QJsonValue>("id"); // the id to answer with

    const int parse = JsonRpcMessage::ParseError;
    const int invalid = JsonRpcMessage::InvalidRequest;
    const QJsonValue null(QJsonValue::Null);

    QTest::newRow("empty input") << QByteArray() << parse << null;
    QTest::newRow("open brace") << QByteArray("{") << parse << null;
    QTest::newRow("nul") << QByteArray("nul") << parse << null;
    QTest::newRow("truncated request")
        << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":"pi)") << parse << null;
    QTest::newRow("trailing garbage")
        << QByteArray(R"({"jsonrpc":"2.0","id":1,"method":"ping"} x)") << parse << null;
    QTest::newRow("single quotes") << QByteArray("{'jsonrpc':'2.0'}") << parse << null;
    QTest::newRow("invalid utf-8")
        << QByteArray("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\xfe\"}") << parse << null;
    QTest::newRow("binary") << QByteArray("\0\x01\x02", 3) << parse << null;

    QTest::newRow("empty batch") << QByteArray("[]") << invalid << null;
    QTest::newRow("batch") << QByteArray(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])") << invalid
                           << null;
    // Valid JSON that is not an object is an invalid request (JSON-RPC 2.0 §6 examples).
    QTest::newRow("string") << QByteArray(R"("str")") << invalid << null;
    QTest::newRow("number") << QByteArray("42") << invalid << null;
    QTest::newRow("null") << QByteArray("null") << invalid << null;
    QTest::newRow("empty object") << QByteArray("{}") << invalid << null;

    QTest::newRow("missing jsonrpc")
        << QByteArray(R"({"id":1,"method":"ping"})") << invalid << QJsonValue(1);
    QTest::newRow("jsonrpc 1.0") << QByteArray(R"({"jsonrpc":"1.0","id":1,"method":"ping"})")
                                 << invalid << QJsonValue(1);
    QTest::newRow("jsonrpc as number")
        << QByteArray(R"({"jsonrpc":2.0,"id":"a","method":"ping"})") << invalid << QJsonValue("a");
    QTest::newRow("method not a string")
        << QByteArray(R"({"jsonrpc":"2.0","id":2,"method":42})") << invalid << QJsonValue(2);
    QTest::newRow("method null") << QByteArray(R"({"jsonrpc":"2.0","id":2,"method":null})")
                                 << invalid << QJsonValue(2);
    QTest::newRow("notification with bad method")
        << QByteArray(R"({"jsonrpc":"2.0","method":["ping"]})") << invalid << null;
    QTest::newRow("id null") << QByteArray(R"({"jsonrpc":"2.0","id":null,"method":"ping"})")
                             << invalid << null;
    QTest::newRow("id object") << QByteArray(R"({"jsonrpc":"2.0","id":{"a":1},"method":"ping"})")
                               << invalid << null;
    QTest::newRow("id array") << QByteArray(R"({"jsonrpc":"2.0","id":[1],"method":"ping"})")
                              << invalid << null;
    QTest::newRow("id float") << QByteArray(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})")
                              << invalid << null;
    QTest::newRow("id boolean") << QByteArray(R"({"jsonrpc":"2.0","id":true,"method":"ping"})")
                                << invalid << null;
    QTest::newRow("id float and wrong jsonrpc")
        << QByteArray(R"({"jsonrpc":"1.0","id":1.5,"method":"ping"})") << invalid << null;
    QTest::newRow("params array")
        << QByteArray(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":[1,2]})") << invalid
        << QJsonValue(4);
    QTest::newRow("params string")
        << QByteArray(R"({"jsonrpc":"2.0","id":"p","method":"tools/call","params":"x"})") << invalid
        << QJsonValue("p");
    QTest::newRow("params null") << QByteArray(
                                        R"({"jsonrpc":"2.0","id":4,"method":"x","params":null})")
                                 << invalid << QJsonValue(4);
    QTest::newRow("neither request nor response")
        << QByteArray(R"({"jsonrpc":"2.0","id":5})") << invalid << QJsonValue(5);
    QTest::newRow("result without id")
        << QByteArray(R"({"jsonrpc":"2.0","result":{}})") << invalid << null;
}

void tst_JsonRpcMessage::parseInvalid()
{
    QFETCH(QByteArray, input);
    QFETCH(int, errorCode);
    QFETCH(QJsonValue, id);

    const JsonRpcMessage m = JsonRpcMessage::parse(input);
    QCOMPARE(int(m.type), int(Type::Invalid));
    QCOMPARE(m.errorCode, errorCode);
    QCOMPARE(m.id, id);
    const QString prefix = errorCode == JsonRpcMessage::ParseError
                               ? QStringLiteral("Parse error: ")
                               : QStringLiteral("Invalid Request: ");
    QVERIFY2(m.errorMessage.startsWith(prefix), qPrintable(m.errorMessage));
}

void tst_JsonRpcMessage::builders_data()
{
    QTest::addColumn<QJsonObject>("built");
    QTest::addColumn<QByteArray>("expected");

    QTest::newRow("result") << JsonRpcMessage::makeResult(7, QJsonObject{{"tools", QJsonArray()}})
                            << QByteArray(R"({"jsonrpc":"2.0","id":7,"result":{"tools":[]}})");
    QTest::newRow("empty result with string id")
        << JsonRpcMessage::makeResult("x", QJsonObject())
        << QByteArray(R"({"jsonrpc":"2.0","id":"x","result":{}})");
    QTest::newRow("error without data")
        << JsonRpcMessage::makeError(QJsonValue::Null, JsonRpcMessage::ParseError, "Parse error")
        << QByteArray(
               R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
    QTest::newRow("error with data")
        << JsonRpcMessage::makeError(3, JsonRpcMessage::ResourceNotFound, "Resource not found",
                                     QJsonObject{{"uri", "sandbox://x"}})
        << QByteArray(
               R"({"jsonrpc":"2.0","id":3,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"sandbox://x"}}})");
    QTest::newRow("error with null data")
        << JsonRpcMessage::makeError(3, JsonRpcMessage::InternalError, "boom", QJsonValue::Null)
        << QByteArray(
               R"({"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"boom","data":null}})");
    QTest::newRow("notification without params")
        << JsonRpcMessage::makeNotification("notifications/tools/list_changed")
        << QByteArray(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
    QTest::newRow("notification with params")
        << JsonRpcMessage::makeNotification("notifications/progress",
                                            QJsonObject{{"progressToken", "t"}, {"progress", 1}})
        << QByteArray(
               R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}})");
    QTest::newRow("request") << JsonRpcMessage::makeRequest(9, "ping")
                             << QByteArray(R"({"jsonrpc":"2.0","id":9,"method":"ping"})");
}

void tst_JsonRpcMessage::builders()
{
    QFETCH(QJsonObject, built);
    QFETCH(QByteArray, expected);

    QCOMPARE(built, object(expected));
}

void tst_JsonRpcMessage::roundTrip_data()
{
    QTest::addColumn<QJsonObject>("message");
    QTest::addColumn<Type>("type");

    QTest::newRow("request") << JsonRpcMessage::makeRequest("r1", "tools/call",
                                                            QJsonObject{{"name", "t"}})
                             << Type::Request;
    QTest::newRow("notification") << JsonRpcMessage::makeNotification("notifications/initialized")
                                  << Type::Notification;
    QTest::newRow("result") << JsonRpcMessage::makeResult(1, QJsonObject()) << Type::Response;
    QTest::newRow("error") << JsonRpcMessage::makeError(1, -32601, "Method not found")
                           << Type::Response;
}

void tst_JsonRpcMessage::roundTrip()
{
    QFETCH(QJsonObject, message);
    QFETCH(Type, type);

    const JsonRpcMessage m =
        JsonRpcMessage::parse(QJsonDocument(message).toJson(QJsonDocument::Compact));
    QCOMPARE(int(m.type), int(type));
    QCOMPARE(m.id, message.contains("id") ? message.value("id") : QJsonValue(QJsonValue::Null));
    QCOMPARE(m.method, message.value("method").toString());
    QCOMPARE(m.error, message.value("error").toObject());
}

QTEST_GUILESS_MAIN(tst_JsonRpcMessage)
#include "tst_jsonrpcmessage.moc"
