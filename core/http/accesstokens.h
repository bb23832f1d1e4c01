#pragma once

#include <QByteArray>
#include <QString>
#include <optional>

// The OAuth access tokens this installation issues: signed, short-lived, for one resource.
// A token is "csa_" + base64url(claims) + "." + base64url(HMAC-SHA256(key, claims)); the key is
// 256 random bits in a file only the user can read, made on first use and shared by every
// server of the user (a token one server issued is checked by another as well, and refused when
// its audience is not that server's endpoint). Nothing about a token is stored: revoking its
// grant (the credential it names) is what ends it early.
class AccessTokens
{
public:
    static constexpr const char *kPrefix = "csa_";

    // `keyPath`: ~/.config/code-sandbox/oauth-key outside tests (defaultKeyPath()).
    explicit AccessTokens(const QString &keyPath);
    static QString defaultKeyPath();

    struct Claims
    {
        QString grant;      // the credential (an OAuth grant) it was issued under
        QString audience;   // the resource (RFC 8707) it is for: an MCP endpoint's URL
        qint64 expires = 0; // seconds since the epoch
    };

    // Empty when the key cannot be read or made (`error` says why).
    QString issue(const Claims &claims, QString *error = nullptr);
    // The token's claims when its signature is this key's and it has not expired; else
    // nothing, and `why` says which ("expired", "not signed by this installation", …).
    std::optional<Claims> verify(const QByteArray &token, QString *why = nullptr);

private:
    QByteArray key(QString *error);

    QString m_keyPath;
    QByteArray m_key;
};
