#include "protocolera.h"

bool ProtocolEra::declaresUi(const QJsonObject &clientCapabilities)
{
    return clientCapabilities.value(u"extensions")
        .toObject()
        .value(kUiExtension)
        .toObject()
        .value(u"mimeTypes")
        .toArray()
        .contains(kUiMimeType);
}

QJsonObject ProtocolEra::unsupportedData(const QString &requested)
{
    return {{QStringLiteral("supported"), QJsonArray::fromStringList(supported())},
            {QStringLiteral("requested"), requested}};
}

ProtocolEra::Verdict ProtocolEra::classify(const JsonRpcMessage &m)
{
    Verdict v;
    if (m.type != JsonRpcMessage::Type::Request)
        return v; // notifications and responses mean the same in both eras
    const QJsonObject meta = m.params.toObject().value(u"_meta").toObject();
    const QJsonValue claimed = meta.value(kMetaVersion);
    if (claimed.isUndefined()) {
        if (m.method != u"server/discover")
            return v;
        // server/discover exists only in the modern era, so it is answered as such, and
        // without the envelope it is malformed there.
        v.kind = Kind::Modern;
        return withEnvelopeError(v, meta);
    }
    const QString version = claimed.toString();
    if (ProtocolVersion::isSupported(version) && m.method != u"server/discover")
        return v; // a legacy version in _meta: served by the legacy rules
    v.kind = Kind::Modern;
    v.version = version;
    v.envelope = meta;
    if (!isModern(version)) {
        v.errorCode = UnsupportedProtocolVersion;
        v.errorMessage = QStringLiteral("Unsupported protocol version %1 (supported: %2)")
                             .arg(claimed.isString() ? version : QStringLiteral("(not a string)"),
                                  supported().join(QStringLiteral(", ")));
        v.errorData = unsupportedData(version);
        return v;
    }
    return withEnvelopeError(v, meta);
}

ProtocolEra::Verdict ProtocolEra::classifyHttp(const QByteArray &versionHeader,
                                               const QByteArray &methodHeader,
                                               const QByteArray &nameHeader, bool hasNameHeader,
                                               const JsonRpcMessage &m)
{
    const QString header = QString::fromUtf8(versionHeader);
    Verdict v = classify(m);
    const bool modernClaim = isModern(header) || v.isModern();
    // Header and body name different versions, one of them 2026-07-28: the headers are
    // what is wrong (checked before whether the body's version is served).
    const QJsonValue claimed = m.params.toObject().value(u"_meta").toObject().value(kMetaVersion);
    if (modernClaim && m.type == JsonRpcMessage::Type::Request && !header.isEmpty() &&
        claimed.isString() && claimed.toString() != header) {
        v.kind = Kind::Modern;
        return mismatch(v, QStringLiteral("MCP-Protocol-Version header value '%1' does not "
                                          "match body value '%2'")
                               .arg(header, claimed.toString()));
    }
    if (!modernClaim || m.type != JsonRpcMessage::Type::Request)
        return v.isModern() && m.type == JsonRpcMessage::Type::Request ? v : Verdict{};
    if (v.isError())
        return v;
    v.kind = Kind::Modern;
    const QJsonObject params = m.params.toObject();
    const QJsonObject meta = params.value(u"_meta").toObject();
    if (!meta.contains(kMetaVersion)) {
        v.envelope = meta;
        return withEnvelopeError(v, meta);
    }
    if (header.isEmpty())
        return mismatch(v, QStringLiteral("the MCP-Protocol-Version header is required"));
    if (header != v.version)
        return mismatch(v, QStringLiteral("MCP-Protocol-Version header value '%1' does not "
                                          "match body value '%2'")
                               .arg(header, v.version));
    if (methodHeader.isEmpty())
        return mismatch(v, QStringLiteral("the Mcp-Method header is required"));
    if (QString::fromUtf8(methodHeader) != m.method)
        return mismatch(v, QStringLiteral("Mcp-Method header value '%1' does not match body "
                                          "value '%2'")
                               .arg(QString::fromUtf8(methodHeader), m.method));
    const QString nameKey =
        m.method == u"resources/read" ? QStringLiteral("uri") : QStringLiteral("name");
    const bool named =
        m.method == u"tools/call" || m.method == u"resources/read" || m.method == u"prompts/get";
    // The tasks extension names the task in Mcp-Name; when sent, it must agree.
    if (m.method.startsWith(u"tasks/") && hasNameHeader) {
        bool ok = true;
        const QString name = decodeHeaderValue(nameHeader, &ok);
        if (!ok || name != params.value(u"taskId").toString())
            return mismatch(v, QStringLiteral("Mcp-Name header value '%1' does not match "
                                              "body value '%2'")
                                   .arg(name, params.value(u"taskId").toString()));
    }
    if (named) {
        if (!hasNameHeader)
            return mismatch(v, QStringLiteral("the Mcp-Name header is required"));
        bool ok = true;
        const QString name = decodeHeaderValue(nameHeader, &ok);
        if (!ok)
            return mismatch(v, QStringLiteral("the Mcp-Name header is malformed"));
        if (name != params.value(nameKey).toString())
            return mismatch(v, QStringLiteral("Mcp-Name header value '%1' does not match "
                                              "body value '%2'")
                                   .arg(name, params.value(nameKey).toString()));
    }
    return v;
}

int ProtocolEra::httpStatusFor(int errorCode)
{
    switch (errorCode) {
    case HeaderMismatch:
    case MissingRequiredClientCapability:
    case UnsupportedProtocolVersion:
        return 400;
    case JsonRpcMessage::MethodNotFound:
        return 404;
    default:
        return 200;
    }
}

QString ProtocolEra::decodeHeaderValue(const QByteArray &value, bool *ok)
{
    *ok = true;
    if (value.startsWith("=?base64?") && value.endsWith("?=") && value.size() >= 11) {
        const auto decoded = QByteArray::fromBase64Encoding(
            value.mid(9, value.size() - 11), QByteArray::AbortOnBase64DecodingErrors);
        *ok = bool(decoded);
        return QString::fromUtf8(*decoded);
    }
    for (const char c : value)
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
            *ok = false;
    return QString::fromUtf8(value);
}

ProtocolEra::Verdict ProtocolEra::withEnvelopeError(Verdict v, const QJsonObject &meta)
{
    if (!meta.value(kMetaVersion).isString())
        v.errorMessage = QStringLiteral("Invalid params: _meta must carry %1").arg(kMetaVersion);
    else if (!meta.value(kMetaCapabilities).isObject())
        v.errorMessage =
            QStringLiteral("Invalid params: _meta must carry %1").arg(kMetaCapabilities);
    else
        return v;
    v.errorCode = JsonRpcMessage::InvalidParams;
    return v;
}

ProtocolEra::Verdict ProtocolEra::mismatch(Verdict v, const QString &why)
{
    v.errorCode = HeaderMismatch;
    v.errorMessage = QStringLiteral("Header mismatch: ") + why;
    return v;
}
