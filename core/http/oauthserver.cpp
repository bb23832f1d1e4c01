#include "oauthserver.h"

#include "httplog.h"
#include "httprequest.h"
#include "httpresponder.h"
#include "secretcompare.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QUrl>
#include <QUrlQuery>

namespace {
const QByteArray kProtectedResource = "/.well-known/oauth-protected-resource";
const QByteArray kAuthorizationServer = "/.well-known/oauth-authorization-server";
const QByteArray kRegister = "/oauth/register";
const QByteArray kAuthorize = "/oauth/authorize";
const QByteArray kWait = "/oauth/authorize/wait";
const QByteArray kToken = "/oauth/token";
const QByteArray kDecide = "/oauth/decide";

QString randomHex(int words)
{
    QByteArray bytes(words * 4, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()), words);
    return QString::fromLatin1(bytes.toHex());
}

// PKCE S256 (RFC 7636 4.2).
QString s256(const QString &verifier)
{
    return QString::fromLatin1(
        QCryptographicHash::hash(verifier.toLatin1(), QCryptographicHash::Sha256)
            .toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

void sendJson(HttpResponder *r, int status, const QJsonObject &body,
              const HttpResponder::Headers &extra = {})
{
    r->respond(status,
               HttpResponder::Headers{{"Content-Type", "application/json"},
                                      {"Cache-Control", "no-store"}} +
                   extra,
               QJsonDocument(body).toJson(QJsonDocument::Compact));
}

void oauthError(HttpResponder *r, int status, const char *code, const QString &description)
{
    sendJson(r, status,
             {{QStringLiteral("error"), QString::fromLatin1(code)},
              {QStringLiteral("error_description"), description}});
}

// A page for the person at the browser. `refresh`: the URL it goes to again in two seconds.
void sendPage(HttpResponder *r, int status, const QString &title, const QString &html,
              const QString &refresh = {}, const HttpResponder::Headers &extra = {})
{
    const QString meta = refresh.isEmpty()
                             ? QString()
                             : QStringLiteral("<meta http-equiv=\"refresh\" content=\"2;url=%1\">")
                                   .arg(refresh.toHtmlEscaped());
    const QString page =
        QStringLiteral("<!doctype html><html><head><meta charset=\"utf-8\">%1<title>%2</title>"
                       "<style>body{font:16px system-ui,sans-serif;max-width:40em;margin:4em "
                       "auto;padding:0 1em;line-height:1.5}code{background:#eee;padding:.1em "
                       ".3em;border-radius:3px}</style></head><body><h1>%2</h1>%3</body></html>")
            .arg(meta, title.toHtmlEscaped(), html);
    r->respond(status,
               HttpResponder::Headers{{"Content-Type", "text/html; charset=utf-8"},
                                      {"Cache-Control", "no-store"},
                                      {"X-Frame-Options", "DENY"},
                                      {"Content-Security-Policy", "default-src 'none'; "
                                                                  "style-src 'unsafe-inline'"}} +
                   extra,
               page.toUtf8());
}

// The parameters of a query or a form body, decoded; `repeated` names one given twice (which
// OAuth refuses: RFC 6749 3.1).
QHash<QString, QString> parameters(QByteArray encoded, QString *repeated)
{
    encoded.replace('+', "%20"); // a form's spaces
    QHash<QString, QString> out;
    const QUrlQuery query(QString::fromLatin1(encoded));
    for (const auto &[key, value] : query.queryItems(QUrl::FullyDecoded)) {
        if (out.contains(key) && repeated)
            *repeated = key;
        out.insert(key, value);
    }
    return out;
}

// Where the browser goes back to with the answer (RFC 6749 4.1.2, RFC 9207's iss).
QString backTo(const QString &redirectUri, const QList<QPair<QString, QString>> &items)
{
    QUrl url(redirectUri);
    QUrlQuery query(url);
    for (const auto &[key, value] : items)
        if (!value.isEmpty())
            query.addQueryItem(key, QString::fromUtf8(QUrl::toPercentEncoding(value)));
    url.setQuery(query);
    return url.toString(QUrl::FullyEncoded);
}
} // namespace

OAuthServer::OAuthServer(CredentialStore *credentials, const Config &config, QObject *parent)
    : QObject(parent), m_credentials(credentials), m_config(config), m_clients(config.clientsPath),
      m_documents(config.documents), m_tokens(config.keyPath)
{}

bool OAuthServer::handles(const QByteArray &path)
{
    return path.startsWith(kProtectedResource) || path == kAuthorizationServer ||
           path.startsWith("/oauth/");
}

QString OAuthServer::baseUrl(const HttpRequest &request) const
{
    return QStringLiteral("http://") + QString::fromLatin1(request.header("Host")).toLower();
}

QString OAuthServer::resourceUrl(const HttpRequest &request) const
{
    return baseUrl(request) + QString::fromLatin1(m_config.resourcePath);
}

QByteArray OAuthServer::challenge(const HttpRequest &request, const QByteArray &error) const
{
    QByteArray value = "Bearer resource_metadata=\"" + baseUrl(request).toLatin1() +
                       kProtectedResource + m_config.resourcePath + '"';
    if (!error.isEmpty())
        value += ", error=\"" + error + '"';
    return value;
}

void OAuthServer::handle(const HttpRequest &request, HttpResponder *responder,
                         const QByteArray &sharedToken)
{
    expire();
    const bool get = request.method == "GET";
    const bool post = request.method == "POST";
    const auto wrongMethod = [&](const char *allowed) {
        sendJson(responder, 405,
                 {{QStringLiteral("error"), QStringLiteral("invalid_request")},
                  {QStringLiteral("error_description"),
                   QStringLiteral("use %1").arg(QString::fromLatin1(allowed))}},
                 {{"Allow", allowed}});
    };
    if (request.body.size() > kMaxBodyBytes)
        return oauthError(responder, 413, "invalid_request",
                          QStringLiteral("the body is larger than %1 bytes").arg(kMaxBodyBytes));
    const QByteArray &path = request.path;
    if (path == kProtectedResource || path == kProtectedResource + m_config.resourcePath)
        return get ? protectedResourceMetadata(request, responder) : wrongMethod("GET");
    if (path == kAuthorizationServer)
        return get ? authorizationServerMetadata(request, responder) : wrongMethod("GET");
    if (path == kRegister)
        return post ? registerClient(request, responder) : wrongMethod("POST");
    if (path == kAuthorize)
        return get ? authorize(request, responder) : wrongMethod("GET");
    if (path == kWait)
        return get ? waitPage(request, responder) : wrongMethod("GET");
    if (path == kToken)
        return post ? token(request, responder) : wrongMethod("POST");
    if (path == kDecide)
        return post ? decideRequest(request, responder, sharedToken) : wrongMethod("POST");
    oauthError(responder, 404, "invalid_request", QStringLiteral("no such endpoint"));
}

void OAuthServer::protectedResourceMetadata(const HttpRequest &request, HttpResponder *responder)
{
    sendJson(responder, 200,
             {{QStringLiteral("resource"), resourceUrl(request)},
              {QStringLiteral("authorization_servers"), QJsonArray{baseUrl(request)}},
              {QStringLiteral("bearer_methods_supported"), QJsonArray{QStringLiteral("header")}},
              {QStringLiteral("resource_name"), QStringLiteral("Code Sandbox")}});
}

void OAuthServer::authorizationServerMetadata(const HttpRequest &request, HttpResponder *responder)
{
    const QString base = baseUrl(request);
    sendJson(
        responder, 200,
        {{QStringLiteral("issuer"), base},
         {QStringLiteral("authorization_endpoint"), base + QString::fromLatin1(kAuthorize)},
         {QStringLiteral("token_endpoint"), base + QString::fromLatin1(kToken)},
         {QStringLiteral("registration_endpoint"), base + QString::fromLatin1(kRegister)},
         {QStringLiteral("response_types_supported"), QJsonArray{QStringLiteral("code")}},
         {QStringLiteral("grant_types_supported"),
          QJsonArray{QStringLiteral("authorization_code"), QStringLiteral("refresh_token")}},
         {QStringLiteral("code_challenge_methods_supported"), QJsonArray{QStringLiteral("S256")}},
         {QStringLiteral("token_endpoint_auth_methods_supported"),
          QJsonArray{QStringLiteral("none")}},
         {QStringLiteral("authorization_response_iss_parameter_supported"), true},
         {QStringLiteral("client_id_metadata_document_supported"), true}});
}

void OAuthServer::registerClient(const HttpRequest &request, HttpResponder *responder)
{
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(request.body, &parseError);
    if (!doc.isObject())
        return oauthError(
            responder, 400, "invalid_client_metadata",
            QStringLiteral("the body is not a JSON object (%1)").arg(parseError.errorString()));
    OAuthClients::Refusal refusal;
    const auto client = m_clients.registerClient(doc.object(), &refusal);
    if (!client) {
        qCInfo(lcHttp).noquote() << "OAuth: registration refused:" << refusal.description;
        return sendJson(responder, 400,
                        {{QStringLiteral("error"), refusal.code},
                         {QStringLiteral("error_description"), refusal.description}});
    }
    qCInfo(lcHttp).noquote() << "OAuth: registered client" << client->id << client->name;
    sendJson(responder, 201, OAuthClients::toJson(*client));
}

void OAuthServer::authorize(const HttpRequest &request, HttpResponder *responder)
{
    const QString clientId = parameters(request.query, nullptr).value(QStringLiteral("client_id"));
    if (!ClientIdDocuments::isDocumentUrl(clientId))
        return signIn(request, responder, m_clients.find(clientId), {});
    // The client's document first; the browser waits for it (at most the fetch's timeout). A
    // browser gone by then takes the responder, and the answer, with it.
    const QPointer<HttpResponder> r(responder);
    m_documents.fetch(
        clientId, responder,
        [this, request, r](const std::optional<OAuthClient> &client, const QString &why) {
            if (r && r->isOpen())
                signIn(request, r, client, why);
        });
}

void OAuthServer::signIn(const HttpRequest &request, HttpResponder *responder,
                         const std::optional<OAuthClient> &client, const QString &documentError)
{
    QString repeated;
    const QHash<QString, QString> p = parameters(request.query, &repeated);
    const QString redirect = p.value(QStringLiteral("redirect_uri"));
    // Until the client and its redirect URI are known, nothing may be sent anywhere.
    if (!client && !documentError.isEmpty())
        return sendPage(responder, 400, tr("This client cannot sign in"),
                        tr("<p>This sign-in names its client by a metadata document, "
                           "<code>%1</code>, which Code Sandbox cannot use: %2.</p>")
                            .arg(p.value(QStringLiteral("client_id")).left(200).toHtmlEscaped(),
                                 documentError.toHtmlEscaped()));
    if (!client)
        return sendPage(responder, 400, tr("Unknown client"),
                        tr("<p>This sign-in names a client that is not registered with this "
                           "Code Sandbox. Start the sign-in again from the assistant.</p>"));
    if (!OAuthClients::allowsRedirect(*client, redirect))
        return sendPage(responder, 400, tr("Unknown redirect"),
                        tr("<p>The sign-in asks to go back to an address the client did not "
                           "register. Nothing was sent there.</p>"));
    const QString state = p.value(QStringLiteral("state"));
    const auto refuse = [&](const char *code, const QString &why) {
        responder->respond(
            302,
            {{"Location", backTo(redirect, {{QStringLiteral("error"), QString::fromLatin1(code)},
                                            {QStringLiteral("error_description"), why},
                                            {QStringLiteral("state"), state},
                                            {QStringLiteral("iss"), baseUrl(request)}})
                              .toUtf8()},
             {"Cache-Control", "no-store"}},
            {});
    };
    if (!repeated.isEmpty())
        return refuse("invalid_request", QStringLiteral("%1 is given twice").arg(repeated));
    if (p.value(QStringLiteral("response_type")) != u"code")
        return refuse("unsupported_response_type", QStringLiteral("only response_type=code"));
    static const QRegularExpression challengeForm(QStringLiteral("^[A-Za-z0-9_-]{43}$"));
    if (p.value(QStringLiteral("code_challenge_method")) != u"S256" ||
        !challengeForm.match(p.value(QStringLiteral("code_challenge"))).hasMatch())
        return refuse("invalid_request",
                      QStringLiteral("PKCE is required: code_challenge with "
                                     "code_challenge_method=S256 (plain is not accepted)"));
    const QString resource = p.value(QStringLiteral("resource"), resourceUrl(request));
    if (resource != resourceUrl(request))
        return refuse(
            "invalid_target",
            QStringLiteral("this server grants access to %1 only").arg(resourceUrl(request)));
    if (m_waiting.size() >= kMaxWaiting)
        return refuse("temporarily_unavailable",
                      QStringLiteral("too many sign-ins are waiting for an answer"));

    // One question a client: a new sign-in of it replaces the one that waited (which cannot
    // then be answered), so that one client cannot fill the queue or the screen.
    for (auto old = m_waiting.begin(); old != m_waiting.end();) {
        if (old->request.clientId != client->id || old->answer != Waiting::Answer::None) {
            ++old;
            continue;
        }
        const QString replaced = old.key();
        old = m_waiting.erase(old);
        Q_EMIT consentSettled(replaced);
    }
    Waiting w;
    w.request = {randomHex(1),       client->id,
                 client->name,       nameSource(client->id, redirect),
                 redirect,           QDateTime::currentDateTimeUtc(),
                 openedFrom(request)};
    w.state = state;
    w.challenge = p.value(QStringLiteral("code_challenge"));
    w.resource = resource;
    w.issuer = baseUrl(request);
    w.expires = QDateTime::currentMSecsSinceEpoch() + qint64(m_config.consentWaitSec) * 1000;
    m_waiting.insert(w.request.id, w);
    qCInfo(lcHttp).noquote() << "OAuth: sign-in" << w.request.id << "of" << client->id
                             << client->name << "waits for approval";
    Q_EMIT consentNeeded(w.request);
    HttpRequest wait = request;
    wait.query = "request=" + w.request.id.toLatin1();
    waitPage(wait, responder);
}

QString OAuthServer::openedFrom(const HttpRequest &request)
{
    const QByteArray site = request.header("Sec-Fetch-Site").trimmed().toLower();
    // "none": the person or an app opened it (a native client launching the browser). Absent:
    // not a browser that says; nothing is claimed either way.
    if (site.isEmpty() || site == "none")
        return {};
    const QUrl referer(QString::fromLatin1(request.header("Referer")), QUrl::StrictMode);
    if (!referer.isValid() || referer.host().isEmpty() ||
        (referer.scheme() != u"http" && referer.scheme() != u"https"))
        return QStringLiteral("a web page");
    return QStringLiteral("a web page at %1")
        .arg(referer
                 .adjusted(QUrl::RemovePath | QUrl::RemoveQuery | QUrl::RemoveFragment |
                           QUrl::RemoveUserInfo)
                 .toString(QUrl::FullyEncoded)
                 .left(200));
}

QString OAuthServer::nameSource(const QString &clientId, const QString &redirectUri)
{
    if (!ClientIdDocuments::isDocumentUrl(clientId))
        return QStringLiteral("its registration");
    const QString where = QStringLiteral("its metadata document at %1").arg(QUrl(clientId).host());
    // The document is public: whoever listens on this machine's loopback can present it and be
    // sent back the code, so on loopback it names the client without proving which program asks.
    return OAuthClients::isLoopbackRedirect(redirectUri)
               ? where + QStringLiteral(", which any program on this computer can present")
               : where;
}

void OAuthServer::waitPage(const HttpRequest &request, HttpResponder *responder)
{
    const QString id = parameters(request.query, nullptr).value(QStringLiteral("request"));
    const auto it = m_waiting.find(id);
    if (it == m_waiting.end())
        return sendPage(responder, 400, tr("Sign-in ended"),
                        tr("<p>This sign-in was answered or waited too long. Start it again from "
                           "the assistant.</p>"));
    const Waiting w = *it;
    if (w.answer == Waiting::Answer::None) {
        const QString name = w.request.clientName.isEmpty() ? tr("An assistant")
                                                            : w.request.clientName.toHtmlEscaped();
        const QString how =
            m_windowAsks
                ? tr("<p>Code Sandbox asks you in its window: choose <b>Allow</b> there.</p>")
                : tr("<p>No Code Sandbox window is open to ask you. To let it in, run:</p>"
                     "<p><code>code-sandbox --approve-client %1 --port %2</code></p>"
                     "<p>(or <code>--deny-client %1</code>).</p>")
                      .arg(id, QString::fromLatin1(request.header("Host"))
                                   .section(u':', -1)
                                   .toHtmlEscaped());
        return sendPage(responder, 200, tr("Waiting for approval in Code Sandbox"),
                        tr("<p><b>%1</b> (as named by %2) wants to run code here. Sign-in "
                           "<code id=\"request\">%3</code>.</p>%4<p>This page goes on by itself "
                           "once you answer.</p>")
                            .arg(name, w.request.source, id, how),
                        QString::fromLatin1(kWait) + QStringLiteral("?request=") + id,
                        {{"X-Code-Sandbox-Sign-In", id.toLatin1()}});
    }
    m_waiting.erase(it);
    QList<QPair<QString, QString>> items;
    if (w.answer == Waiting::Answer::Denied) {
        items = {{QStringLiteral("error"), QStringLiteral("access_denied")},
                 {QStringLiteral("error_description"),
                  QStringLiteral("a person refused this client in Code Sandbox")}};
    } else {
        const QString code = randomHex(8);
        m_codes.insert(CredentialStore::digestOf(code.toUtf8()),
                       {w.request.clientId,
                        w.request.redirectUri,
                        w.challenge,
                        w.resource,
                        w.assistant,
                        QDateTime::currentMSecsSinceEpoch() + qint64(kCodeSec) * 1000,
                        false,
                        {}});
        items = {{QStringLiteral("code"), code}};
    }
    items.append({QStringLiteral("state"), w.state});
    items.append({QStringLiteral("iss"), w.issuer});
    responder->respond(302,
                       {{"Location", backTo(w.request.redirectUri, items).toUtf8()},
                        {"Cache-Control", "no-store"}},
                       {});
}

bool OAuthServer::decide(const QString &id, bool allow, const QString &assistant, QString *error,
                         QString *decided)
{
    expire();
    const auto it = m_waiting.find(id);
    if (it == m_waiting.end() || it->answer != Waiting::Answer::None) {
        *error = QStringLiteral("no sign-in %1 waits for an answer (answered, expired, or "
                                "unknown)")
                     .arg(id);
        return false;
    }
    // Never the name the client chose unless a person chose it too: "Claude Code" may be the
    // name of a policy (or a credential) that this client must not get by calling itself so.
    QString name = assistant.trimmed();
    if (name.isEmpty())
        name = QStringLiteral("OAuth client %1").arg(it->request.clientId.right(8));
    if (allow) {
        if (const QString bad = CredentialStore::checkName(name); !bad.isEmpty()) {
            *error = bad;
            return false;
        }
    }
    it->answer = allow ? Waiting::Answer::Allowed : Waiting::Answer::Denied;
    it->assistant = name;
    if (decided)
        *decided = name;
    qCInfo(lcHttp).noquote() << "OAuth: sign-in" << id << (allow ? "allowed as" : "denied")
                             << (allow ? name : QString());
    Q_EMIT consentSettled(id);
    return true;
}

QList<ConsentRequest> OAuthServer::waiting() const
{
    QList<ConsentRequest> out;
    for (const Waiting &w : m_waiting)
        if (w.answer == Waiting::Answer::None)
            out.append(w.request);
    return out;
}

void OAuthServer::decideRequest(const HttpRequest &request, HttpResponder *responder,
                                const QByteArray &sharedToken)
{
    // Only whoever holds the shared token (the user's own command line) answers for a person.
    const QByteArray auth = request.header("Authorization");
    if (sharedToken.isEmpty() || !auth.startsWith("Bearer ") ||
        !SecretCompare::equal(auth.mid(7).trimmed(), sharedToken))
        return oauthError(responder, 401, "invalid_token",
                          QStringLiteral("answering a sign-in needs the shared token"));
    const QJsonObject o = QJsonDocument::fromJson(request.body).object();
    if (!o.value(u"request").isString() || !o.value(u"allow").isBool())
        return oauthError(responder, 400, "invalid_request",
                          QStringLiteral("send {\"request\": ID, \"allow\": true|false}"));
    QString error;
    QString name;
    if (!decide(o.value(u"request").toString(), o.value(u"allow").toBool(),
                o.value(u"assistant").toString(), &error, &name))
        return oauthError(responder, 404, "invalid_request", error);
    sendJson(responder, 200,
             {{QStringLiteral("answered"), true}, {QStringLiteral("assistant"), name}});
}

void OAuthServer::token(const HttpRequest &request, HttpResponder *responder)
{
    if (!request.header("Content-Type").startsWith("application/x-www-form-urlencoded"))
        return oauthError(responder, 400, "invalid_request",
                          QStringLiteral("the body must be application/x-www-form-urlencoded"));
    QString repeated;
    const QHash<QString, QString> form = parameters(request.body, &repeated);
    if (!repeated.isEmpty())
        return oauthError(responder, 400, "invalid_request",
                          QStringLiteral("%1 is given twice").arg(repeated));
    if (form.contains(QStringLiteral("resource")) &&
        form.value(QStringLiteral("resource")) != resourceUrl(request))
        return oauthError(
            responder, 400, "invalid_target",
            QStringLiteral("this server grants access to %1 only").arg(resourceUrl(request)));
    const QString grant = form.value(QStringLiteral("grant_type"));
    if (grant == u"authorization_code")
        return exchangeCode(request, form, responder);
    if (grant == u"refresh_token")
        return refresh(request, form, responder);
    oauthError(responder, 400, "unsupported_grant_type",
               QStringLiteral("authorization_code or refresh_token"));
}

void OAuthServer::exchangeCode(const HttpRequest &request, const QHash<QString, QString> &form,
                               HttpResponder *responder)
{
    const auto it =
        m_codes.find(CredentialStore::digestOf(form.value(QStringLiteral("code")).toUtf8()));
    if (it == m_codes.end() || it->expires < QDateTime::currentMSecsSinceEpoch())
        return oauthError(responder, 400, "invalid_grant",
                          QStringLiteral("unknown or expired authorization code"));
    if (it->used) {
        // A code used twice was seen by someone else: what it gave is taken back (RFC 9700).
        QString error;
        if (!it->grant.isEmpty())
            m_credentials->revoke(it->grant, &error);
        qCWarning(lcHttp).noquote()
            << "OAuth: an authorization code was replayed; grant" << it->grant << "revoked";
        return oauthError(responder, 400, "invalid_grant",
                          QStringLiteral("this authorization code was used already; the access "
                                         "it gave is revoked"));
    }
    static const QRegularExpression verifierForm(QStringLiteral("^[A-Za-z0-9._~-]{43,128}$"));
    const QString verifier = form.value(QStringLiteral("code_verifier"));
    if (form.value(QStringLiteral("client_id")) != it->clientId ||
        form.value(QStringLiteral("redirect_uri")) != it->redirectUri)
        return oauthError(responder, 400, "invalid_grant",
                          QStringLiteral("client_id or redirect_uri differ from the sign-in's"));
    if (!verifierForm.match(verifier).hasMatch() || s256(verifier) != it->challenge)
        return oauthError(responder, 400, "invalid_grant",
                          QStringLiteral("code_verifier does not match the code_challenge"));
    if (it->resource != resourceUrl(request))
        return oauthError(responder, 400, "invalid_target",
                          QStringLiteral("the code was given for %1").arg(it->resource));
    it->used = true;
    QString error;
    const auto grant = m_credentials->createGrant(it->assistant, it->clientId, &error);
    if (!grant)
        return oauthError(responder, 500, "server_error", error);
    it->grant = grant->id;
    const QString refreshToken = m_credentials->newRefreshToken(grant->id);
    qCInfo(lcHttp).noquote() << "OAuth: client" << it->clientId << "signed in as" << grant->name
                             << "(" << grant->id << ")";
    issueTokens(request, *grant, refreshToken, responder);
}

void OAuthServer::refresh(const HttpRequest &request, const QHash<QString, QString> &form,
                          HttpResponder *responder)
{
    QString rotated;
    const auto grant =
        m_credentials->redeemRefreshToken(form.value(QStringLiteral("refresh_token")).toLatin1(),
                                          form.value(QStringLiteral("client_id")), &rotated);
    if (!grant)
        return oauthError(responder, 400, "invalid_grant",
                          QStringLiteral("unknown, used or revoked refresh token"));
    issueTokens(request, *grant, rotated, responder);
}

void OAuthServer::issueTokens(const HttpRequest &request, const Credential &grant,
                              const QString &refreshToken, HttpResponder *responder)
{
    QString error;
    const QString access =
        m_tokens.issue({grant.id, resourceUrl(request),
                        QDateTime::currentSecsSinceEpoch() + m_config.accessTokenSec},
                       &error);
    if (access.isEmpty() || refreshToken.isEmpty())
        return oauthError(responder, 500, "server_error",
                          error.isEmpty() ? QStringLiteral("the grant is gone") : error);
    sendJson(responder, 200,
             {{QStringLiteral("access_token"), access},
              {QStringLiteral("token_type"), QStringLiteral("Bearer")},
              {QStringLiteral("expires_in"), m_config.accessTokenSec},
              {QStringLiteral("refresh_token"), refreshToken}});
}

std::optional<Credential> OAuthServer::authenticate(const HttpRequest &request,
                                                    const QByteArray &token, QString *why)
{
    const auto claims = m_tokens.verify(token, why);
    if (!claims)
        return std::nullopt;
    if (claims->audience != resourceUrl(request)) {
        if (why)
            *why = QStringLiteral("issued for %1, not for %2")
                       .arg(claims->audience, resourceUrl(request));
        return std::nullopt;
    }
    auto grant = m_credentials->byId(claims->grant);
    if (!grant || !grant->isGrant()) {
        if (why)
            *why = QStringLiteral("its grant was revoked");
        return std::nullopt;
    }
    return grant;
}

void OAuthServer::expire()
{
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    for (auto it = m_waiting.begin(); it != m_waiting.end();) {
        if (it->expires >= now) {
            ++it;
            continue;
        }
        const QString id = it.key();
        it = m_waiting.erase(it);
        Q_EMIT consentSettled(id);
    }
    // A used code is kept until it expires, so that its replay is recognised.
    m_codes.removeIf([now](const auto &entry) { return entry.value().expires < now; });
}
