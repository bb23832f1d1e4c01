#pragma once

#include "jsonrpcmessage.h"
#include "protocolversion.h"

#include <QByteArray>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

// Which MCP era a message belongs to, decided in this one place for every transport.
//
// Legacy (2025-11-25 and earlier): a client opens with `initialize` and the server keeps what it
// negotiated (per stdio process, per HTTP session). Modern (2026-07-28): no handshake; every
// request carries its protocol version and client capabilities in `_meta`, and is served on its
// own. A dual-era server tells them apart per message: a request whose `_meta` names a modern
// version, or `server/discover`, is modern; everything else (`initialize` first of all) is
// legacy and goes through the legacy state machine exactly as before.
//
// Header-only because the room's source list lives in core/CMakeLists.txt.
class ProtocolEra
{
public:
    enum class Kind
    {
        Legacy,
        Modern
    };
    // Error codes the 2026-07-28 revision reserves (-32020…-32099).
    enum ErrorCode
    {
        HeaderMismatch = -32020,
        MissingRequiredClientCapability = -32021,
        UnsupportedProtocolVersion = -32022,
    };

    static inline const QString kModern = QStringLiteral("2026-07-28");
    static inline const QString kMetaVersion =
        QStringLiteral("io.modelcontextprotocol/protocolVersion");
    static inline const QString kMetaCapabilities =
        QStringLiteral("io.modelcontextprotocol/clientCapabilities");
    static inline const QString kMetaClientInfo =
        QStringLiteral("io.modelcontextprotocol/clientInfo");
    static inline const QString kMetaLogLevel = QStringLiteral("io.modelcontextprotocol/logLevel");
    static inline const QString kMetaServerInfo =
        QStringLiteral("io.modelcontextprotocol/serverInfo");
    static inline const QString kTasksExtension = QStringLiteral("io.modelcontextprotocol/tasks");
    // MCP Apps (SEP-1865): a host that renders a tool's ui:// view declares it with the views'
    // MIME type among its mimeTypes.
    static inline const QString kUiExtension = QStringLiteral("io.modelcontextprotocol/ui");
    static inline const QString kUiMimeType = QStringLiteral("text/html;profile=mcp-app");
    static bool declaresUi(const QJsonObject &clientCapabilities)
    {
        return clientCapabilities.value(u"extensions")
            .toObject()
            .value(kUiExtension)
            .toObject()
            .value(u"mimeTypes")
            .toArray()
            .contains(kUiMimeType);
    }

    struct Verdict
    {
        Kind kind = Kind::Legacy;
        QString version;      // modern: the revision the request speaks
        QJsonObject envelope; // modern: the request's _meta
        int errorCode = 0;    // non-zero: answer the request with this error instead
        QString errorMessage;
        QJsonValue errorData = QJsonValue::Undefined;

        bool isModern() const { return kind == Kind::Modern; }
        bool isError() const { return errorCode != 0; }
        QJsonObject clientCapabilities() const
        {
            return envelope.value(kMetaCapabilities).toObject();
        }
        QJsonObject clientInfo() const { return envelope.value(kMetaClientInfo).toObject(); }
    };

    static QStringList modernVersions() { return {kModern}; }
    static bool isModern(const QString &version) { return modernVersions().contains(version); }
    // Every revision served, newest first: what -32022 and server/discover list.
    static QStringList supported() { return modernVersions() + ProtocolVersion::supported(); }

    static QJsonObject unsupportedData(const QString &requested)
    {
        return {{QStringLiteral("supported"), QJsonArray::fromStringList(supported())},
                {QStringLiteral("requested"), requested}};
    }

    // One message, on any transport (stdio per line; HTTP per body, after classifyHttp).
    static Verdict classify(const JsonRpcMessage &m)
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
            v.errorMessage =
                QStringLiteral("Unsupported protocol version %1 (supported: %2)")
                    .arg(claimed.isString() ? version : QStringLiteral("(not a string)"),
                         supported().join(QStringLiteral(", ")));
            v.errorData = unsupportedData(version);
            return v;
        }
        return withEnvelopeError(v, meta);
    }

    // Streamable HTTP: the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers decide with
    // the body. A request is modern when its header or its _meta names a modern version (or it
    // is server/discover); then the headers must agree with the body.
    static Verdict classifyHttp(const QByteArray &versionHeader, const QByteArray &methodHeader,
                                const QByteArray &nameHeader, bool hasNameHeader,
                                const JsonRpcMessage &m)
    {
        const QString header = QString::fromUtf8(versionHeader);
        Verdict v = classify(m);
        const bool modernClaim = isModern(header) || v.isModern();
        // Header and body name different versions, one of them 2026-07-28: the headers are
        // what is wrong (checked before whether the body's version is served).
        const QJsonValue claimed =
            m.params.toObject().value(u"_meta").toObject().value(kMetaVersion);
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
        const bool named = m.method == u"tools/call" || m.method == u"resources/read" ||
                           m.method == u"prompts/get";
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

    // The HTTP status a modern error is answered with; 200 carries it in-band.
    static int httpStatusFor(int errorCode)
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

    // "=?base64?…?=" carries values that are not plain header text (SEP-2243).
    static QString decodeHeaderValue(const QByteArray &value, bool *ok)
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

private:
    static Verdict withEnvelopeError(Verdict v, const QJsonObject &meta)
    {
        if (!meta.value(kMetaVersion).isString())
            v.errorMessage =
                QStringLiteral("Invalid params: _meta must carry %1").arg(kMetaVersion);
        else if (!meta.value(kMetaCapabilities).isObject())
            v.errorMessage =
                QStringLiteral("Invalid params: _meta must carry %1").arg(kMetaCapabilities);
        else
            return v;
        v.errorCode = JsonRpcMessage::InvalidParams;
        return v;
    }

    static Verdict mismatch(Verdict v, const QString &why)
    {
        v.errorCode = HeaderMismatch;
        v.errorMessage = QStringLiteral("Header mismatch: ") + why;
        return v;
    }
};
