#pragma once

#include "accesstokens.h"
#include "clientiddocuments.h"
#include "credentialstore.h"
#include "oauthclients.h"

#include <QDateTime>
#include <QHash>
#include <QObject>
#include <optional>

class HttpResponder;
struct HttpRequest;

// A client waiting for a person to let it in: what the window (or the command line) is shown.
struct ConsentRequest
{
    QString id;         // 8 hex digits: on the sign-in page, in the window, for --approve-client
    QString clientId;   // as registered, or the URL of its metadata document
    QString clientName; // as the client registered it ("" when it gave none)
    QString source; // what vouches for the name: "its registration", "its metadata document at …"
    QString redirectUri; // where the browser goes back to once answered
    QDateTime asked;     // UTC
    // What opened the sign-in page, as the browser tells (Sec-Fetch-Site, Referer): "a web page
    // at http://…", "a web page", or "" (opened directly: an app launched the browser, or a
    // browser that does not say). Any web page can send a browser to a sign-in, naming any
    // client whose metadata document is public; the window says so.
    QString openedFrom;
};

// The MCP authorization flow (OAuth 2.1) for this installation, on the MCP endpoint's own HTTP
// server: the endpoint's protected-resource metadata (RFC 9728), an authorization server's
// metadata (RFC 8414), dynamic client registration (RFC 7591, public clients), the
// authorization code flow with PKCE S256 only, short-lived signed access tokens for one
// resource (RFC 8707), rotating refresh tokens. Nothing is approved by itself: the sign-in page
// the client opens says "waiting for approval in Code Sandbox" and a person answers in the
// window (consentNeeded → decide) or with `code-sandbox --approve-client ID` (POST
// /oauth/decide with the shared token). An approved client becomes a credential of the
// CredentialStore (an OAuth grant), named after the assistant it runs as; revoking it there ends
// its tokens.
//
// URLs are the request's own origin (http:// and its Host header, which the endpoint has
// checked against the names it answers to): the issuer, the resource and the redirect rules hold
// for the address the client used. Plain http is what OAuth allows on loopback only; a server
// reached beyond loopback needs a TLS front (docs/security.md).
class OAuthServer : public QObject
{
    Q_OBJECT
public:
    struct Config
    {
        QByteArray resourcePath = "/mcp";    // the MCP endpoint this protects
        int accessTokenSec = 900;            // an access token's life
        int consentWaitSec = 600;            // a sign-in waits this long for an answer
        QString clientsPath;                 // OAuthClients' file
        QString keyPath;                     // AccessTokens' key
        ClientIdDocuments::Config documents; // fetching client ID metadata documents
    };
    static constexpr int kCodeSec = 60; // an authorization code is exchanged within this
    static constexpr qint64 kMaxBodyBytes = 64 * 1024;
    static constexpr int kMaxWaiting = 64; // sign-ins waiting for an answer at once

    OAuthServer(CredentialStore *credentials, const Config &config, QObject *parent = nullptr);

    // Whether the request's path is this server's (metadata, registration, sign-in, token).
    static bool handles(const QByteArray &path);
    // Answers it. `sharedToken`: what /oauth/decide must be sent with (empty: no one may).
    void handle(const HttpRequest &request, HttpResponder *responder,
                const QByteArray &sharedToken);

    // The grant (a credential) a bearer access token stands for, when it is valid for the
    // endpoint the request came to; `why` says what is wrong otherwise.
    std::optional<Credential> authenticate(const HttpRequest &request, const QByteArray &token,
                                           QString *why = nullptr);
    // WWW-Authenticate for a 401 at the endpoint: where its resource metadata is.
    QByteArray challenge(const HttpRequest &request, const QByteArray &error = {}) const;

    // A person's answer: let the client in, running as `assistant` (empty: "OAuth client …",
    // never the name the client gave itself, which may be a policy's), or not. False when no such
    // sign-in waits (answered, expired, unknown). `decided`: the name it runs as.
    bool decide(const QString &id, bool allow, const QString &assistant, QString *error,
                QString *decided = nullptr);
    QList<ConsentRequest> waiting() const;
    // The window is there to ask (else the sign-in page explains the command line).
    void setWindowAsks(bool asks) { m_windowAsks = asks; }

Q_SIGNALS:
    void consentNeeded(const ConsentRequest &request);
    // Answered (by the window, the command line) or expired: the window closes its question.
    void consentSettled(const QString &id);

private:
    struct Waiting
    {
        ConsentRequest request;
        QString state;
        QString challenge; // PKCE S256
        QString resource;
        QString issuer;
        qint64 expires = 0; // ms since the epoch
        enum class Answer
        {
            None,
            Allowed,
            Denied
        } answer = Answer::None;
        QString assistant;
    };
    struct Code
    {
        QString clientId;
        QString redirectUri;
        QString challenge;
        QString resource;
        QString assistant;
        qint64 expires = 0; // ms since the epoch
        bool used = false;
        QString grant; // the credential made when it was exchanged
    };

    QString baseUrl(const HttpRequest &request) const;
    QString resourceUrl(const HttpRequest &request) const;
    void protectedResourceMetadata(const HttpRequest &request, HttpResponder *responder);
    void authorizationServerMetadata(const HttpRequest &request, HttpResponder *responder);
    void registerClient(const HttpRequest &request, HttpResponder *responder);
    void authorize(const HttpRequest &request, HttpResponder *responder);
    // The sign-in of a known client (registered, or described by its document), or the page
    // that says why not: `documentError` is why its document could not be used.
    void signIn(const HttpRequest &request, HttpResponder *responder,
                const std::optional<OAuthClient> &client, const QString &documentError);
    // What vouches for the name a client gave: "its registration", or its document's host.
    static QString nameSource(const QString &clientId, const QString &redirectUri);
    // ConsentRequest::openedFrom of the request that opened the sign-in page.
    static QString openedFrom(const HttpRequest &request);
    // The sign-in page of a waiting request, or (answered) the way back to the client.
    void waitPage(const HttpRequest &request, HttpResponder *responder);
    void token(const HttpRequest &request, HttpResponder *responder);
    void exchangeCode(const HttpRequest &request, const QHash<QString, QString> &form,
                      HttpResponder *responder);
    void refresh(const HttpRequest &request, const QHash<QString, QString> &form,
                 HttpResponder *responder);
    void decideRequest(const HttpRequest &request, HttpResponder *responder,
                       const QByteArray &sharedToken);
    // Issues an access token (and the given refresh token) for `grant` at this endpoint.
    void issueTokens(const HttpRequest &request, const Credential &grant,
                     const QString &refreshToken, HttpResponder *responder);
    void expire();

    CredentialStore *m_credentials;
    Config m_config;
    OAuthClients m_clients;
    ClientIdDocuments m_documents;
    AccessTokens m_tokens;
    QHash<QString, Waiting> m_waiting; // by ConsentRequest::id
    QHash<QByteArray, Code> m_codes;   // by the code's SHA-256
    bool m_windowAsks = false;
};
