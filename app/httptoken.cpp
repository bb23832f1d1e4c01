#include "httptoken.h"

#include "commandline.h"
#include "tokenstore.h"

#include <QFile>
#include <QFileInfo>

HttpToken::Resolved HttpToken::resolve(const CommandLine &cl, const QString &storePath)
{
    Resolved r;
    if (cl.noAuth) {
        r.source = QStringLiteral("no token (--no-auth)");
        return r;
    }
    if (!cl.tokenFile.isEmpty()) {
        QFile file(cl.tokenFile);
        if (!file.open(QIODevice::ReadOnly)) {
            r.error = QStringLiteral("--token-file: cannot read %1: %2")
                          .arg(cl.tokenFile, file.errorString());
            return r;
        }
        // The first line, so that a file ending in a newline (echo > file) works.
        r.token = QString::fromUtf8(file.read(64 * 1024)).section(u'\n', 0, 0).trimmed();
        if (r.token.isEmpty()) {
            r.error = QStringLiteral("--token-file: %1 holds no token").arg(cl.tokenFile);
            return r;
        }
        r.source =
            QStringLiteral("the token file %1").arg(QFileInfo(cl.tokenFile).absoluteFilePath());
        return r;
    }
    if (!cl.token.isEmpty()) {
        r.token = cl.token;
        r.source = cl.tokenFromEnvironment ? QStringLiteral("CODE_SANDBOX_TOKEN")
                                           : QStringLiteral("--token");
        return r;
    }
    r.token = TokenStore::loadOrCreate(storePath, &r.error);
    r.stored = true;
    r.source = QStringLiteral("the token store %1").arg(storePath);
    return r;
}
