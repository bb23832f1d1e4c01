// JsonRpcMessage::parse on arbitrary bytes: every input is classified, an invalid one with the
// JSON-RPC error code to answer with, and whatever is read back can be answered.

#include "fuzzinput.h"
#include "jsonrpcmessage.h"

#include <QJsonDocument>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    const JsonRpcMessage m = JsonRpcMessage::parse(bytes);

    switch (m.type) {
    case JsonRpcMessage::Type::Invalid:
        FUZZ_CHECK(m.errorCode == JsonRpcMessage::ParseError ||
                   m.errorCode == JsonRpcMessage::InvalidRequest);
        FUZZ_CHECK(!m.errorMessage.isEmpty());
        FUZZ_CHECK(m.id.isNull() || m.id.isString() || m.id.isDouble());
        break;
    case JsonRpcMessage::Type::Request:
        FUZZ_CHECK(m.id.isString() || m.id.isDouble());
        FUZZ_CHECK(m.params.isUndefined() || m.params.isObject());
        break;
    case JsonRpcMessage::Type::Notification:
        FUZZ_CHECK(m.id.isNull());
        FUZZ_CHECK(m.params.isUndefined() || m.params.isObject());
        break;
    case JsonRpcMessage::Type::Response:
        FUZZ_CHECK(m.id.isString() || m.id.isDouble());
        break;
    }

    // What the server does next with it: key the id, build the answer and serialise it.
    const QString key = JsonRpcMessage::idKey(m.id);
    FUZZ_CHECK(key.startsWith(QLatin1String("s:")) || key.startsWith(QLatin1String("n:")));
    QJsonValue result = m.params.isObject() ? m.params : m.result;
    if (result.isUndefined())
        result = QJsonValue(QJsonValue::Null);
    const QJsonObject answer = m.type == JsonRpcMessage::Type::Invalid
                                   ? JsonRpcMessage::makeError(m.id, m.errorCode, m.errorMessage)
                                   : JsonRpcMessage::makeResult(m.id, result);
    const QByteArray out = QJsonDocument(answer).toJson(QJsonDocument::Compact);

    // The answer is itself a well-formed message, and it reads back as a response.
    const JsonRpcMessage back = JsonRpcMessage::parse(out);
    if (!m.id.isNull())
        FUZZ_CHECK(back.type == JsonRpcMessage::Type::Response);
    return 0;
}
