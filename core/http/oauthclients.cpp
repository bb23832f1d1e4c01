#include "oauthclients.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLockFile>
#include <QRandomGenerator>
#include <QSaveFile>
#include <QStandardPaths>
#include <QUrl>

namespace {
// 256 registrations of 8 URIs of 2,000 characters each fit, with room to spare.
constexpr qint64 kMaxClientsFileBytes = 16 * 1024 * 1024;
constexpr int kMaxNameLength = 200;
constexpr int kMaxUriLength = 2000;

std::optional<OAuthClient> clientFromJson(const QJsonObject &o)
{
    OAuthClient c;
    c.id = o.value(u"client_id").toString();
    c.name = o.value(u"client_name").toString();
    for (const QJsonValue &v : o.value(u"redirect_uris").toArray())
        c.redirectUris.append(v.toString());
    c.registered =
        QDateTime::fromSecsSinceEpoch(qint64(o.value(u"client_id_issued_at").toDouble()), Qt::UTC);
    if (c.id.isEmpty() || c.redirectUris.isEmpty())
        return std::nullopt;
    return c;
}
} // namespace

OAuthClients::OAuthClients(const QString &path) : m_path(path) {}

QString OAuthClients::defaultPath()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) +
           QStringLiteral("/oauth-clients.json");
}

QJsonObject OAuthClients::toJson(const OAuthClient &c)
{
    return {{QStringLiteral("client_id"), c.id},
            {QStringLiteral("client_name"), c.name},
            {QStringLiteral("redirect_uris"), QJsonArray::fromStringList(c.redirectUris)},
            {QStringLiteral("client_id_issued_at"), c.registered.toSecsSinceEpoch()},
            {QStringLiteral("token_endpoint_auth_method"), QStringLiteral("none")},
            {QStringLiteral("grant_types"),
             QJsonArray{QStringLiteral("authorization_code"), QStringLiteral("refresh_token")}},
            {QStringLiteral("response_types"), QJsonArray{QStringLiteral("code")}}};
}

bool OAuthClients::acceptableRedirect(const QString &uri)
{
    if (uri.size() > kMaxUriLength)
        return false;
    const QUrl url(uri, QUrl::StrictMode);
    if (!url.isValid() || url.scheme().isEmpty() || !url.fragment().isNull())
        return false;
    const QString scheme = url.scheme().toLower();
    if (scheme == u"https")
        return !url.host().isEmpty();
    if (scheme == u"http")
        return isLoopbackRedirect(uri);
    // A private-use scheme is a reversed domain name (com.example.app:/callback).
    static const QStringList refused = {QStringLiteral("javascript"), QStringLiteral("data"),
                                        QStringLiteral("file"),       QStringLiteral("about"),
                                        QStringLiteral("blob"),       QStringLiteral("vbscript")};
    return scheme.contains(u'.') && !refused.contains(scheme);
}

bool OAuthClients::isLoopbackRedirect(const QString &uri)
{
    const QUrl url(uri, QUrl::StrictMode);
    if (url.scheme().compare(u"http", Qt::CaseInsensitive) != 0)
        return false;
    const QString host = url.host();
    return host == u"localhost" || QHostAddress(host).isLoopback();
}

bool OAuthClients::allowsRedirect(const OAuthClient &client, const QString &uri)
{
    if (client.redirectUris.contains(uri))
        return true;
    if (!isLoopbackRedirect(uri))
        return false;
    QUrl asked(uri, QUrl::StrictMode);
    asked.setPort(-1);
    for (const QString &each : client.redirectUris) {
        if (!isLoopbackRedirect(each))
            continue;
        QUrl registered(each, QUrl::StrictMode);
        registered.setPort(-1);
        if (registered == asked)
            return true;
    }
    return false;
}

std::optional<OAuthClient> OAuthClients::fromMetadata(const QJsonObject &request, Refusal *refusal)
{
    const auto refuse = [refusal](const char *code, const QString &why) {
        *refusal = {QString::fromLatin1(code), why};
        return std::nullopt;
    };
    const QJsonValue uris = request.value(u"redirect_uris");
    if (!uris.isArray() || uris.toArray().isEmpty())
        return refuse("invalid_redirect_uri", QStringLiteral("redirect_uris must list at least "
                                                             "one URI"));
    if (uris.toArray().size() > kMaxRedirectUris)
        return refuse("invalid_redirect_uri",
                      QStringLiteral("at most %1 redirect_uris").arg(kMaxRedirectUris));
    OAuthClient c;
    for (const QJsonValue &v : uris.toArray()) {
        if (!v.isString() || !acceptableRedirect(v.toString()))
            return refuse("invalid_redirect_uri",
                          QStringLiteral("not a redirect URI this server sends clients to (http "
                                         "on a loopback address, https, or an app's own scheme): "
                                         "%1")
                              .arg(v.toString().left(200)));
        c.redirectUris.append(v.toString());
    }
    const QString method = request.value(u"token_endpoint_auth_method").toString();
    if (!method.isEmpty() && method != u"none")
        return refuse("invalid_client_metadata",
                      QStringLiteral("only public clients (token_endpoint_auth_method none, with "
                                     "PKCE) are taken here"));
    const QJsonValue name = request.value(u"client_name");
    if (!name.isUndefined() && (!name.isString() || name.toString().size() > kMaxNameLength))
        return refuse("invalid_client_metadata",
                      QStringLiteral("client_name must be a string of at most %1 characters")
                          .arg(kMaxNameLength));
    c.name = name.toString().simplified();
    for (const QChar ch : std::as_const(c.name))
        if (!ch.isPrint())
            return refuse("invalid_client_metadata",
                          QStringLiteral("client_name holds characters that do not show as "
                                         "themselves (control, format or direction marks)"));
    return c;
}

std::optional<OAuthClient> OAuthClients::registerClient(const QJsonObject &request,
                                                        Refusal *refusal)
{
    const auto refuse = [refusal](const char *code, const QString &why) {
        *refusal = {QString::fromLatin1(code), why};
        return std::nullopt;
    };
    auto described = fromMetadata(request, refusal);
    if (!described)
        return std::nullopt;
    OAuthClient c = *described;
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    c.id = QStringLiteral("cs-client-") +
           QString::fromLatin1(
               QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex());
    c.registered = QDateTime::currentDateTimeUtc();

    QDir().mkpath(QFileInfo(m_path).absolutePath());
    QLockFile lock(m_path + QStringLiteral(".lock"));
    if (!lock.tryLock(5000))
        return refuse("invalid_client_metadata", QStringLiteral("the registry is busy; retry"));
    bool readable = false;
    QList<OAuthClient> all = load(&readable);
    // A file that cannot be read is not written over: the registrations in it would be lost.
    if (!readable)
        return refuse("invalid_client_metadata",
                      QStringLiteral("the registry %1 cannot be read; registration is off until "
                                     "it is repaired or removed")
                          .arg(m_path));
    all.append(c);
    while (all.size() > kMaxClients)
        all.removeFirst();
    QJsonArray entries;
    for (const OAuthClient &each : std::as_const(all))
        entries.append(toJson(each));
    QSaveFile file(m_path);
    if (!file.open(QIODevice::WriteOnly) ||
        !file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner) ||
        file.write(QJsonDocument(QJsonObject{{QStringLiteral("clients"), entries}}).toJson()) < 0 ||
        !file.commit())
        return refuse("invalid_client_metadata",
                      QStringLiteral("cannot store the registration: %1").arg(file.errorString()));
    return c;
}

QList<OAuthClient> OAuthClients::load(bool *readable) const
{
    QList<OAuthClient> all;
    QFile file(m_path);
    if (readable)
        *readable = !file.exists();
    if (!file.open(QIODevice::ReadOnly))
        return all;
    const QJsonDocument doc = QJsonDocument::fromJson(file.read(kMaxClientsFileBytes));
    if (readable)
        *readable = doc.isObject();
    for (const QJsonValue &v : doc.object().value(u"clients").toArray())
        if (const auto c = clientFromJson(v.toObject()))
            all.append(*c);
    return all;
}

std::optional<OAuthClient> OAuthClients::find(const QString &id) const
{
    if (id.isEmpty())
        return std::nullopt;
    for (const OAuthClient &c : load())
        if (c.id == id)
            return c;
    return std::nullopt;
}
