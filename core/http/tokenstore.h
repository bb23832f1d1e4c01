#pragma once

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QSaveFile>
#include <QStandardPaths>
#include <QString>

// The one place the HTTP bearer token is kept: a file readable only by the user (0600) in the
// user's config folder, generated once (256 random bits). The server, --print-token and the
// window's Settings all read and write it here, never in the settings file.
//
// Header-only so that the window's settings (ui) and the command line (app) share it without
// either depending on the other.
class TokenStore
{
public:
    static constexpr QFileDevice::Permissions kOwnerOnly =
        QFileDevice::ReadOwner | QFileDevice::WriteOwner;

    // ~/.config/code-sandbox/http-token
    static QString defaultPath()
    {
        return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) +
               QStringLiteral("/http-token");
    }

    // The stored token, trimmed; empty when there is none. A file others could read is made
    // the user's own again first.
    static QString read(const QString &path)
    {
        QFile file(path);
        if (!file.exists())
            return {};
        if ((file.permissions() & ~(kOwnerOnly | QFileDevice::ReadUser | QFileDevice::WriteUser)) !=
            0)
            file.setPermissions(kOwnerOnly);
        if (!file.open(QIODevice::ReadOnly))
            return {};
        return QString::fromUtf8(file.read(64 * 1024)).trimmed();
    }

    // Replaces the stored token. The file is 0600 before the token is written into it.
    static bool write(const QString &path, const QString &token, QString *error)
    {
        // A folder made here is the user's alone, like the file.
        const QString folder = QFileInfo(path).absolutePath();
        if (!QFileInfo::exists(folder) && QDir().mkpath(folder))
            QFile::setPermissions(folder, kOwnerOnly | QFileDevice::ExeOwner);
        QSaveFile file(path);
        if (!file.open(QIODevice::WriteOnly) || !file.setPermissions(kOwnerOnly) ||
            file.write(token.trimmed().toUtf8() + '\n') < 0 || !file.commit()) {
            if (error)
                *error = QStringLiteral("cannot store the HTTP token in %1: %2")
                             .arg(path, file.errorString());
            return false;
        }
        return true;
    }

    // Forgets the stored token; the next loadOrCreate() generates a new one.
    static bool remove(const QString &path) { return !QFile::exists(path) || QFile::remove(path); }

    // The stored token, generated and stored first if there is none. One the user chose (in
    // Settings, or an older settings file) is kept whatever its length, as --token and
    // CODE_SANDBOX_TOKEN are: replacing it would lock the user's clients out without a word.
    static QString loadOrCreate(const QString &path, QString *error)
    {
        const QString existing = read(path);
        if (!existing.isEmpty())
            return existing;
        quint32 words[8];
        QRandomGenerator::system()->fillRange(words);
        const QString token = QString::fromLatin1(
            QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex());
        if (!write(path, token, error))
            return {};
        return token;
    }
};
