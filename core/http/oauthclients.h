#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <optional>

// Clients registered with the built-in authorization server (dynamic client registration,
// RFC 7591): public clients only (no secret; PKCE is their proof), each with the redirect URIs
// it may be sent back to. Kept in a file of the user's (0600) so that a registration outlives
// the server that took it; at most kMaxClients, the oldest dropped first.
struct OAuthClient
{
    QString id; // "cs-client-" and 32 hex digits
    QString name;
    QStringList redirectUris;
    QDateTime registered;
};

class OAuthClients
{
public:
    static constexpr int kMaxClients = 256;
    static constexpr int kMaxRedirectUris = 8;

    explicit OAuthClients(const QString &path);
    // ~/.config/code-sandbox/oauth-clients.json
    static QString defaultPath();

    // Registers a client from its registration request; nothing, and `error` (an RFC 7591
    // error code and its description), when the request is not one we take.
    struct Refusal
    {
        QString code; // "invalid_redirect_uri", "invalid_client_metadata"
        QString description;
    };
    std::optional<OAuthClient> registerClient(const QJsonObject &request, Refusal *refusal);
    // The client a registration request or a client ID metadata document describes (its
    // redirect URIs, public, its name), without an id; nothing and `refusal` when it is not one
    // this server takes.
    static std::optional<OAuthClient> fromMetadata(const QJsonObject &request, Refusal *refusal);
    std::optional<OAuthClient> find(const QString &id) const;

    // Whether a client may be sent to `uri`: http on a loopback address (any port, as native
    // apps listen, RFC 8252 7.3), https, or an app's own scheme with a dot in it (RFC 8252 7.1).
    // Never javascript:, data:, file: or plain http to another host.
    static bool acceptableRedirect(const QString &uri);
    // http to a loopback address: a native app's listener, which any program here could be.
    static bool isLoopbackRedirect(const QString &uri);
    // Whether a sign-in may send `client` back to `uri`: one of its redirect URIs exactly, or, for
    // a loopback one, the same but for the port, which a native app chooses when it listens
    // (RFC 8252 7.3; a published metadata document cannot know it).
    static bool allowsRedirect(const OAuthClient &client, const QString &uri);
    static QJsonObject toJson(const OAuthClient &client);

private:
    // `readable`: false when the file is there but is not a registry.
    QList<OAuthClient> load(bool *readable = nullptr) const;

    QString m_path;
};
