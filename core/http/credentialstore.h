#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QList>
#include <QString>
#include <functional>
#include <optional>

// One assistant's own key to the HTTP endpoint. Only the secret's SHA-256 is kept: the secret
// itself is shown once, when it is made, and then lives in the client's configuration alone.
struct Credential
{
    QString id;         // "c-" and 8 hex digits: shown, and what revokes this one credential
    QString name;       // the assistant it was made for: the name its requests run as
    QByteArray digest;  // SHA-256 of the secret, hex; empty for an OAuth grant (no secret)
    QDateTime created;  // UTC
    QDateTime lastUsed; // UTC; invalid: never used
    // An OAuth grant (a client that signed in and was approved): the client it was given to and
    // its current refresh token's digest. Its access tokens are signed (AccessTokens) and name
    // this credential; revoking it ends them all on their next request.
    QString clientId;
    QByteArray refreshDigest;
    // Its earlier refresh tokens' digests (the last few): one presented again means a copy is in
    // other hands, and the grant is revoked (RFC 9700 4.14.2).
    QList<QByteArray> usedRefreshDigests;
    static constexpr int kKeptUsedRefresh = 8;
    bool isGrant() const { return !clientId.isEmpty(); }
};

// Per-assistant credentials for the HTTP endpoint, in a file readable only by the user (0600)
// beside the shared token (TokenStore). Several processes share it: the window makes and
// revokes credentials while a headless server checks them, so every change is made under a
// lock file on what is on disk at that moment, and a reader picks up another process's change
// on its next look (the file's time and size are compared on every lookup; a revoked
// credential fails on its very next request).
//
// A request's assistant is its credential's name whatever its clientInfo says; a name that a
// credential holds is that credential's (see holdsName): a client that merely claims it does
// not get its policy.
class CredentialStore
{
public:
    static constexpr int kMaxCredentials = 256;
    static constexpr int kMaxNameLength = 64;
    // The secret's prefix: a credential is told apart from the shared token at a glance.
    static constexpr const char *kPrefix = "csk_";

    explicit CredentialStore(const QString &path);

    // ~/.config/code-sandbox/credentials.json
    static QString defaultPath();
    const QString &path() const { return m_path; }

    // A new credential for the assistant `name`. The secret is returned here and nowhere else.
    struct Created
    {
        Credential credential;
        QString secret;
    };
    std::optional<Created> create(const QString &name, QString *error);
    // Revokes the credential of this id, or every credential of the assistant of this name.
    // The number revoked (0: none matched, `error` says so).
    int revoke(const QString &idOrName, QString *error);
    QList<Credential> list();

    // The credential whose secret this is, if any. Its last use is recorded (written at most
    // once a minute per credential, so a busy client does not rewrite the file on each request).
    std::optional<Credential> match(const QByteArray &secret);
    // Whether a credential is made for this assistant name (compared without case).
    bool holdsName(const QString &name);
    std::optional<Credential> byId(const QString &id);

    // An OAuth grant for `clientId`, running as the assistant `name` (made when a person
    // approves the client); it has no refresh token until newRefreshToken() gives it one.
    std::optional<Credential> createGrant(const QString &name, const QString &clientId,
                                          QString *error);
    // Gives grant `id` a new refresh token (returned) in place of its current one, which then
    // fails. Empty when the grant is gone.
    QString newRefreshToken(const QString &id);
    // The grant whose current refresh token this is, for `clientId`; its refresh token is
    // replaced by `*rotated` (the old one fails from now on). Nothing when none matches.
    std::optional<Credential> redeemRefreshToken(const QByteArray &token, const QString &clientId,
                                                 QString *rotated);

    // Why `name` cannot name a credential; empty when it can.
    static QString checkName(const QString &name);
    static QByteArray digestOf(const QByteArray &secret);

private:
    // Reads the file again when its time or size changed since the last read.
    void refresh();
    bool load(QList<Credential> *into, QString *error) const;
    bool save(const QList<Credential> &credentials, QString *error);
    // Runs `change` on the file's current content under the lock file, and writes the result
    // when `change` returns true.
    bool update(const std::function<bool(QList<Credential> &)> &change, QString *error);
    // Gives `credential` an id and the time, and adds it (within kMaxCredentials) once its name
    // is one: what create() and createGrant() share.
    std::optional<Credential> add(Credential credential, QString *error);

    QString m_path;
    QList<Credential> m_credentials;
    // What the file was when last read: its inode, size and time (ns); all -1: no file.
    struct FileMark
    {
        qint64 inode = -1;
        qint64 size = -1;
        qint64 mtimeNs = -1;
        bool operator==(const FileMark &o) const
        {
            return inode == o.inode && size == o.size && mtimeNs == o.mtimeNs;
        }
    };
    FileMark m_read{-2, -2, -2};             // never read
    QHash<QString, QDateTime> m_lastWritten; // id → last use written to the file
};
