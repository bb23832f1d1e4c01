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
    static bool declaresUi(const QJsonObject &clientCapabilities);

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

    static QJsonObject unsupportedData(const QString &requested);

    // One message, on any transport (stdio per line; HTTP per body, after classifyHttp).
    static Verdict classify(const JsonRpcMessage &m);

    // Streamable HTTP: the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers decide with
    // the body. A request is modern when its header or its _meta names a modern version (or it
    // is server/discover); then the headers must agree with the body.
    static Verdict classifyHttp(const QByteArray &versionHeader, const QByteArray &methodHeader,
                                const QByteArray &nameHeader, bool hasNameHeader,
                                const JsonRpcMessage &m);

    // The HTTP status a modern error is answered with; 200 carries it in-band.
    static int httpStatusFor(int errorCode);

    // "=?base64?…?=" carries values that are not plain header text (SEP-2243).
    static QString decodeHeaderValue(const QByteArray &value, bool *ok);

private:
    static Verdict withEnvelopeError(Verdict v, const QJsonObject &meta);

    static Verdict mismatch(Verdict v, const QString &why);
};
