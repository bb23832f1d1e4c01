#include "credentialstore.h"

#include "httplog.h"
#include "secretcompare.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLockFile>
#include <QRandomGenerator>
#include <QSaveFile>
#include <QStandardPaths>
#include <sys/stat.h>

namespace {
constexpr QFileDevice::Permissions kOwnerOnly = QFileDevice::ReadOwner | QFileDevice::WriteOwner;
constexpr qint64 kMaxFileBytes = 1024 * 1024;
// A last use is written again only after this long: it is shown to a person, to the minute.
constexpr qint64 kTouchIntervalSec = 60;

QJsonObject toJson(const Credential &c)
{
    QJsonObject o{{"id", c.id},
                  {"name", c.name},
                  {"sha256", QString::fromLatin1(c.digest)},
                  {"created", c.created.toString(Qt::ISODate)}};
    if (c.lastUsed.isValid())
        o.insert(u"lastUsed", c.lastUsed.toString(Qt::ISODate));
    if (c.isGrant()) {
        o.insert(u"clientId", c.clientId);
        o.insert(u"refreshSha256", QString::fromLatin1(c.refreshDigest));
        QJsonArray used;
        for (const QByteArray &d : c.usedRefreshDigests)
            used.append(QString::fromLatin1(d));
        o.insert(u"usedRefreshSha256", used);
    }
    return o;
}

std::optional<Credential> fromJson(const QJsonObject &o)
{
    Credential c;
    c.id = o.value(u"id").toString();
    c.name = o.value(u"name").toString();
    c.digest = o.value(u"sha256").toString().toLatin1();
    c.created = QDateTime::fromString(o.value(u"created").toString(), Qt::ISODate);
    c.lastUsed = QDateTime::fromString(o.value(u"lastUsed").toString(), Qt::ISODate);
    c.clientId = o.value(u"clientId").toString();
    c.refreshDigest = o.value(u"refreshSha256").toString().toLatin1();
    for (const QJsonValue &v : o.value(u"usedRefreshSha256").toArray())
        if (c.usedRefreshDigests.size() < Credential::kKeptUsedRefresh)
            c.usedRefreshDigests.append(v.toString().toLatin1());
    // A grant has no bearer secret of its own; every other credential has one.
    const bool digestOk = c.isGrant() ? c.digest.isEmpty() : c.digest.size() == 64;
    if (c.id.isEmpty() || !digestOk || !CredentialStore::checkName(c.name).isEmpty())
        return std::nullopt;
    return c;
}

QByteArray randomBytes(int words)
{
    QByteArray bytes(words * int(sizeof(quint32)), Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()), words);
    return bytes;
}

// 256 random bits after `prefix`, in base64url: nothing in it needs escaping in a shell's
// double quotes, a JSON string or a form.
QString secretWith(const char *prefix)
{
    return QString::fromLatin1(prefix + randomBytes(8).toBase64(QByteArray::Base64UrlEncoding |
                                                                QByteArray::OmitTrailingEquals));
}

} // namespace

CredentialStore::CredentialStore(const QString &path) : m_path(path) {}

QString CredentialStore::defaultPath()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) +
           QStringLiteral("/credentials.json");
}

QString CredentialStore::checkName(const QString &name)
{
    const QString trimmed = name.trimmed();
    if (trimmed.isEmpty())
        return QStringLiteral("a credential needs the name of the assistant it is for");
    if (trimmed.size() > kMaxNameLength)
        return QStringLiteral("an assistant's name has at most %1 characters").arg(kMaxNameLength);
    for (const QChar ch : trimmed)
        if (!ch.isPrint())
            return QStringLiteral("an assistant's name cannot hold control characters");
    if (trimmed != name)
        return QStringLiteral("an assistant's name cannot begin or end with spaces");
    return {};
}

QByteArray CredentialStore::digestOf(const QByteArray &secret)
{
    return QCryptographicHash::hash(secret, QCryptographicHash::Sha256).toHex();
}

bool CredentialStore::load(QList<Credential> *into, QString *error) const
{
    into->clear();
    QFile file(m_path);
    if (!file.exists())
        return true;
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("cannot read %1: %2").arg(m_path, file.errorString());
        return false;
    }
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(file.read(kMaxFileBytes), &parseError);
    if (!doc.isObject()) {
        *error = QStringLiteral("%1 is not a credentials file (%2)")
                     .arg(m_path, parseError.errorString());
        return false;
    }
    const QJsonArray entries = doc.object().value(u"credentials").toArray();
    for (const QJsonValue &v : entries)
        if (const auto c = fromJson(v.toObject()); c && into->size() < kMaxCredentials)
            into->append(*c);
    return true;
}

bool CredentialStore::save(const QList<Credential> &credentials, QString *error)
{
    // A folder made here is the user's alone, like the file.
    const QString folder = QFileInfo(m_path).absolutePath();
    if (!QFileInfo::exists(folder) && QDir().mkpath(folder))
        QFile::setPermissions(folder, kOwnerOnly | QFileDevice::ExeOwner);
    QJsonArray entries;
    for (const Credential &c : credentials)
        entries.append(toJson(c));
    QSaveFile file(m_path);
    if (!file.open(QIODevice::WriteOnly) || !file.setPermissions(kOwnerOnly) ||
        file.write(QJsonDocument(QJsonObject{{"credentials", entries}}).toJson()) < 0 ||
        !file.commit()) {
        *error =
            QStringLiteral("cannot store credentials in %1: %2").arg(m_path, file.errorString());
        return false;
    }
    return true;
}

bool CredentialStore::update(const std::function<bool(QList<Credential> &)> &change, QString *error)
{
    QDir().mkpath(QFileInfo(m_path).absolutePath());
    QLockFile lock(m_path + QStringLiteral(".lock"));
    if (!lock.tryLock(5000)) {
        *error = QStringLiteral("%1 is locked by another process").arg(m_path);
        return false;
    }
    QList<Credential> current;
    if (!load(&current, error))
        return false;
    if (!change(current))
        return true;
    if (!save(current, error))
        return false;
    m_credentials = current;
    // Read again on the next look: what was written is what is there, but its mark is not known.
    m_read = FileMark{-2, -2, -2};
    return true;
}

void CredentialStore::refresh()
{
    // Every change is a new file (QSaveFile renames one into place): its inode tells a change
    // that left the size alone within the file system's time resolution.
    struct stat st;
    const bool exists = ::stat(QFile::encodeName(m_path).constData(), &st) == 0;
    const FileMark mark =
        exists ? FileMark{qint64(st.st_ino), qint64(st.st_size),
                          qint64(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec}
               : FileMark{};
    if (mark == m_read)
        return;
    QString error;
    QList<Credential> loaded;
    // A file that cannot be read holds no credential: refusing them all is the safe way wrong.
    if (!load(&loaded, &error))
        qCWarning(lcHttp).noquote() << "credentials:" << error;
    m_credentials = loaded;
    m_read = mark;
}

std::optional<Credential> CredentialStore::add(Credential credential, QString *error)
{
    if (const QString bad = checkName(credential.name); !bad.isEmpty()) {
        *error = bad;
        return std::nullopt;
    }
    credential.id = QStringLiteral("c-") + QString::fromLatin1(randomBytes(1).toHex());
    credential.created = QDateTime::currentDateTimeUtc();
    bool full = false;
    const bool ok = update(
        [&](QList<Credential> &all) {
            full = all.size() >= kMaxCredentials;
            if (!full)
                all.append(credential);
            return !full;
        },
        error);
    if (full)
        *error = QStringLiteral("there are %1 credentials already: revoke some first")
                     .arg(kMaxCredentials);
    if (!ok || full)
        return std::nullopt;
    qCDebug(lcHttp).noquote() << "credential" << credential.id << "made for" << credential.name;
    return credential;
}

std::optional<CredentialStore::Created> CredentialStore::create(const QString &name, QString *error)
{
    Credential credential;
    credential.name = name;
    const QString secret = secretWith(kPrefix);
    credential.digest = digestOf(secret.toLatin1());
    const auto added = add(credential, error);
    if (!added)
        return std::nullopt;
    return Created{*added, secret};
}

int CredentialStore::revoke(const QString &idOrName, QString *error)
{
    int revoked = 0;
    const bool ok = update(
        [&](QList<Credential> &all) {
            revoked = int(all.removeIf([&](const Credential &c) {
                return c.id == idOrName || c.name.compare(idOrName, Qt::CaseInsensitive) == 0;
            }));
            return revoked > 0;
        },
        error);
    if (ok && revoked == 0)
        *error = QStringLiteral("no credential is named or numbered '%1'").arg(idOrName);
    if (revoked > 0)
        qCDebug(lcHttp).noquote() << "revoked" << revoked << "credential(s) of" << idOrName;
    return ok ? revoked : 0;
}

QList<Credential> CredentialStore::list()
{
    refresh();
    return m_credentials;
}

std::optional<Credential> CredentialStore::match(const QByteArray &secret)
{
    if (!secret.startsWith(kPrefix))
        return std::nullopt;
    refresh();
    const QByteArray digest = digestOf(secret);
    std::optional<Credential> found;
    for (const Credential &c : std::as_const(m_credentials))
        if (!c.isGrant() && SecretCompare::equal(c.digest, digest))
            found = c;
    if (!found)
        return std::nullopt;
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QDateTime written = m_lastWritten.value(found->id, found->lastUsed);
    if (!written.isValid() || written.secsTo(now) >= kTouchIntervalSec) {
        m_lastWritten.insert(found->id, now);
        QString error;
        const auto touch = [&](QList<Credential> &all) {
            for (Credential &each : all)
                if (each.id == found->id)
                    each.lastUsed = now;
            return true;
        };
        if (!update(touch, &error))
            qCWarning(lcHttp).noquote() << "credentials: last use not recorded:" << error;
    }
    found->lastUsed = now;
    return found;
}

bool CredentialStore::holdsName(const QString &name)
{
    if (name.trimmed().isEmpty())
        return false;
    refresh();
    for (const Credential &c : std::as_const(m_credentials))
        if (c.name.compare(name.trimmed(), Qt::CaseInsensitive) == 0)
            return true;
    return false;
}

std::optional<Credential> CredentialStore::byId(const QString &id)
{
    refresh();
    for (const Credential &c : std::as_const(m_credentials))
        if (c.id == id)
            return c;
    return std::nullopt;
}

std::optional<Credential> CredentialStore::createGrant(const QString &name, const QString &clientId,
                                                       QString *error)
{
    Credential grant;
    grant.name = name;
    grant.clientId = clientId;
    return add(grant, error);
}

QString CredentialStore::newRefreshToken(const QString &id)
{
    const QString token = secretWith("csr_");
    bool found = false;
    QString error;
    const auto rotate = [&](QList<Credential> &all) {
        for (Credential &c : all)
            if (c.id == id && c.isGrant()) {
                c.refreshDigest = digestOf(token.toLatin1());
                c.lastUsed = QDateTime::currentDateTimeUtc();
                found = true;
            }
        return found;
    };
    if (!update(rotate, &error) || !found) {
        if (!error.isEmpty())
            qCWarning(lcHttp).noquote() << "credentials:" << error;
        return {};
    }
    return token;
}

std::optional<Credential> CredentialStore::redeemRefreshToken(const QByteArray &token,
                                                              const QString &clientId,
                                                              QString *rotated)
{
    if (!token.startsWith("csr_"))
        return std::nullopt;
    const QByteArray digest = digestOf(token);
    const QString next = secretWith("csr_");
    std::optional<Credential> found;
    QString reusedBy;
    // Found and replaced under one lock: two redemptions of one token, from two processes at
    // once, cannot both succeed.
    const auto redeem = [&](QList<Credential> &all) {
        for (Credential &c : all) {
            if (!c.isGrant() || c.clientId != clientId)
                continue;
            if (SecretCompare::equal(c.refreshDigest, digest)) {
                c.usedRefreshDigests.prepend(c.refreshDigest);
                while (c.usedRefreshDigests.size() > Credential::kKeptUsedRefresh)
                    c.usedRefreshDigests.removeLast();
                c.refreshDigest = digestOf(next.toLatin1());
                c.lastUsed = QDateTime::currentDateTimeUtc();
                found = c;
            } else {
                for (const QByteArray &used : std::as_const(c.usedRefreshDigests))
                    if (SecretCompare::equal(used, digest))
                        reusedBy = c.id;
            }
        }
        if (!reusedBy.isEmpty())
            all.removeIf([&](const Credential &c) { return c.id == reusedBy; });
        return found.has_value() || !reusedBy.isEmpty();
    };
    QString error;
    if (!update(redeem, &error)) {
        qCWarning(lcHttp).noquote() << "credentials:" << error;
        return std::nullopt;
    }
    if (!reusedBy.isEmpty()) {
        qCWarning(lcHttp).noquote() << "credentials: a refresh token of grant" << reusedBy
                                    << "was used again; the grant is revoked";
        return std::nullopt;
    }
    if (found)
        *rotated = next;
    return found;
}
