#include "accesstokens.h"

#include "secretcompare.h"
#include "tokenstore.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageAuthenticationCode>
#include <QStandardPaths>

namespace {
constexpr auto kBase64Url = QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals;
// A token is small; anything much longer is not one of ours.
constexpr qsizetype kMaxTokenBytes = 2048;

} // namespace

AccessTokens::AccessTokens(const QString &keyPath) : m_keyPath(keyPath) {}

QString AccessTokens::defaultKeyPath()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) +
           QStringLiteral("/oauth-key");
}

QByteArray AccessTokens::key(QString *error)
{
    if (m_key.isEmpty()) {
        QString why;
        // The token store's way: 256 random bits, 0600, made once.
        m_key = QByteArray::fromHex(TokenStore::loadOrCreate(m_keyPath, &why).toLatin1());
        if (m_key.size() < 32) {
            m_key.clear();
            if (error)
                *error = why.isEmpty() ? QStringLiteral("%1 holds no key").arg(m_keyPath) : why;
        }
    }
    return m_key;
}

QString AccessTokens::issue(const Claims &claims, QString *error)
{
    const QByteArray secret = key(error);
    if (secret.isEmpty())
        return {};
    const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("g"), claims.grant},
                                                      {QStringLiteral("aud"), claims.audience},
                                                      {QStringLiteral("exp"), claims.expires}})
                                .toJson(QJsonDocument::Compact)
                                .toBase64(kBase64Url);
    const QByteArray mac =
        QMessageAuthenticationCode::hash(body, secret, QCryptographicHash::Sha256);
    return QString::fromLatin1(kPrefix + body + '.' + mac.toBase64(kBase64Url));
}

std::optional<AccessTokens::Claims> AccessTokens::verify(const QByteArray &token, QString *why)
{
    const auto fail = [why](const char *reason) -> std::optional<Claims> {
        if (why)
            *why = QString::fromLatin1(reason);
        return std::nullopt;
    };
    if (!token.startsWith(kPrefix) || token.size() > kMaxTokenBytes)
        return fail("not an access token of this installation");
    const QByteArray rest = token.mid(int(qstrlen(kPrefix)));
    const qsizetype dot = rest.indexOf('.');
    const QByteArray secret = key(nullptr);
    if (dot < 0 || secret.isEmpty())
        return fail("not an access token of this installation");
    const QByteArray body = rest.left(dot);
    const QByteArray mac =
        QMessageAuthenticationCode::hash(body, secret, QCryptographicHash::Sha256);
    if (!SecretCompare::equal(mac.toBase64(kBase64Url), rest.mid(dot + 1)))
        return fail("not signed by this installation");
    const QJsonObject o =
        QJsonDocument::fromJson(QByteArray::fromBase64(body, QByteArray::Base64UrlEncoding))
            .object();
    Claims claims{o.value(u"g").toString(), o.value(u"aud").toString(),
                  qint64(o.value(u"exp").toDouble())};
    if (claims.grant.isEmpty() || claims.audience.isEmpty())
        return fail("not an access token of this installation");
    if (claims.expires <= QDateTime::currentSecsSinceEpoch())
        return fail("expired");
    return claims;
}
