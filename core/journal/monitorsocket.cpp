#include "monitorsocket.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <unistd.h>

QString MonitorSocket::path(bool create)
{
    const QByteArray explicitPath = qgetenv("CODE_SANDBOX_MONITOR_SOCKET");
    QString file;
    if (!explicitPath.isEmpty()) {
        file = QString::fromLocal8Bit(explicitPath);
    } else {
        const QByteArray runtime = qgetenv("XDG_RUNTIME_DIR");
        const QString dir =
            !runtime.isEmpty()
                ? QString::fromLocal8Bit(runtime) + QStringLiteral("/code-sandbox")
                : QDir::tempPath() + QStringLiteral("/code-sandbox-%1").arg(getuid());
        file = dir + QStringLiteral("/monitor.sock");
    }
    if (create) {
        // Events carry code, output and pass-through values: other users must not connect.
        const QString dir = QFileInfo(file).absolutePath();
        QDir().mkpath(dir);
        QFile::setPermissions(dir, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    }
    return file;
}
