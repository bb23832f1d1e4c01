#pragma once

#include "oauthclients.h"

#include <QHash>
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QSslCertificate>
#include <QUrl>
#include <functional>
#include <memory>
#include <optional>

// Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document, as the MCP
// authorization specification of 2025-11-25 has clients use them): a client whose client_id is
// an https URL describes itself in the JSON document at that URL, instead of registering. The
// authorization server fetches it when a sign-in names it, and takes it only when it is one:
// its client_id is the URL, character for character; its redirect URIs are ones this server
// sends clients to; it is a public client (no secret); at most kMaxBytes; answered 200 by the
// URL itself (a redirect is not followed), over TLS verified against the system's certificate
// authorities and Config::extraCas, within Config::timeoutMs.
//
// The fetch is the server's, on the word of whoever opens the sign-in URL (a web page can make
// the browser open it), so it must not reach what only this machine can: a name that leads to a
// loopback, private, link-local or otherwise non-public address is refused unless
// Config::allowPrivate, and the address checked is the one connected to (no second lookup that
// a rebinding name could answer differently). Documents are kept as their Cache-Control says,
// at most kMaxCacheSec.
class ClientIdDocuments : public QObject
{
    Q_OBJECT
public:
    struct Config
    {
        QList<QSslCertificate> extraCas; // trusted besides the system's (a company's own CA)
        bool allowPrivate = false;       // documents on loopback and private addresses too
        int timeoutMs = 5000;            // the whole fetch: lookup, TLS, the document
    };
    static constexpr qint64 kMaxBytes = 5 * 1024; // the size the MCP specification suggests
    static constexpr int kMaxFetches = 8;         // at once
    static constexpr int kMaxCached = 64;
    static constexpr int kMaxCacheSec = 3600;
    static constexpr int kDefaultCacheSec = 300; // a document that says nothing of caching

    explicit ClientIdDocuments(const Config &config, QObject *parent = nullptr);
    ~ClientIdDocuments() override;

    // Whether a client_id means a document (it is a URL) rather than a registration.
    static bool isDocumentUrl(const QString &clientId);
    // Why `clientId` cannot be a document's URL (empty: it can): https, a host, a path other
    // than "/", no user or password, no fragment, no "." or ".." segments.
    static QString checkUrl(const QString &clientId);
    // The client the document fetched from `clientId` describes; nothing and `why` otherwise.
    static std::optional<OAuthClient> parse(const QString &clientId, const QByteArray &body,
                                            QString *why);
    // Whether a document may be fetched from this address without Config::allowPrivate.
    static bool isPublic(const QHostAddress &address);
    // The seconds a response may be kept for, from its Cache-Control.
    static int cacheSeconds(const QByteArray &cacheControl);

    using Done = std::function<void(const std::optional<OAuthClient> &client, const QString &why)>;
    // Fetches (or takes from the cache) and checks the document; `done` is called once, later,
    // unless `context` is gone by then.
    void fetch(const QString &clientId, QObject *context, Done done);

private:
    struct Fetch;
    struct Cached
    {
        OAuthClient client;
        qint64 until = 0; // ms since the epoch
    };

    void lookedUp(const std::shared_ptr<Fetch> &fetch, const QList<QHostAddress> &addresses);
    // Connects to the next of the fetch's addresses.
    void connectTo(const std::shared_ptr<Fetch> &fetch);
    // Lets go of the fetch's socket (a refused address, or the end).
    void dropSocket(const std::shared_ptr<Fetch> &fetch);
    // The connection ended: a close-delimited body is whole, anything else is cut short.
    void closed(const std::shared_ptr<Fetch> &fetch);
    void received(const std::shared_ptr<Fetch> &fetch);
    void finish(const std::shared_ptr<Fetch> &fetch, const std::optional<OAuthClient> &client,
                const QString &why);

    Config m_config;
    QHash<QString, Cached> m_cache; // by client_id
    int m_fetching = 0;
};
