#include "tokenstore.h"

#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <QSaveFile>
#include <QStandardPaths>

QString TokenStore::path()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation) +
           QStringLiteral("/http-token");
}

QString TokenStore::loadOrCreate(QString *error)
{
    QFile existing(path());
    if (existing.open(QIODevice::ReadOnly)) {
        const QString token = QString::fromLatin1(existing.readAll()).trimmed();
        if (token.size() >= 32)
            return token;
    }
    quint32 words[8];
    QRandomGenerator::system()->fillRange(words);
    const QByteArray token =
        QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex();
    QDir().mkpath(QFileInfo(path()).absolutePath());
    QSaveFile file(path());
    if (!file.open(QIODevice::WriteOnly) || file.write(token + '\n') < 0 ||
        !file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner) || !file.commit()) {
        if (error)
            *error = QStringLiteral("cannot store the HTTP token in %1: %2")
                         .arg(path(), file.errorString());
        return {};
    }
    return QString::fromLatin1(token);
}
