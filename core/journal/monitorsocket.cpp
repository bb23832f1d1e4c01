#include "monitorsocket.h"

#include "journallog.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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
    // Events carry code, output and pass-through values: the folder must be this user's alone,
    // or another user could listen in place of the window (a shared /tmp without
    // XDG_RUNTIME_DIR). An explicit path is the caller's responsibility.
    if (!explicitPath.isEmpty())
        return file;
    const QByteArray dir = QFile::encodeName(QFileInfo(file).absolutePath());
    if (create && ::mkdir(dir.constData(), 0700) != 0 && errno != EEXIST)
        return QString();
    struct stat st;
    if (::lstat(dir.constData(), &st) != 0)
        return create ? QString() : file; // not there yet: nobody listens, connecting fails
    if (!S_ISDIR(st.st_mode) || st.st_uid != ::getuid() || (st.st_mode & 077) != 0) {
        qCWarning(lcJournal).noquote()
            << "monitor: not using" << QString::fromLocal8Bit(dir)
            << "(not a folder of this user's alone); runs will not be shown in the window";
        return QString();
    }
    return file;
}

bool MonitorSocket::isServed(const QString &path)
{
    const QByteArray name = QFile::encodeName(path);
    sockaddr_un addr{};
    if (name.isEmpty() || size_t(name.size()) >= sizeof(addr.sun_path))
        return false;
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, name.constData(), size_t(name.size()));
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    // Refused or absent: nobody listens. Accepted, or a full backlog (EAGAIN): somebody does.
    const bool served =
        ::connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof(addr)) == 0 ||
        errno == EAGAIN || errno == EINPROGRESS;
    ::close(fd);
    return served;
}
