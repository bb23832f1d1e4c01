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
    // XDG_RUNTIME_DIR). An explicit path is the caller's to create; a publisher still checks
    // its folder before each connection.
    if (!explicitPath.isEmpty())
        return file;
    const QByteArray dir = QFile::encodeName(QFileInfo(file).absolutePath());
    if (create && ::mkdir(dir.constData(), 0700) != 0 && errno != EEXIST)
        return QString();
    QString why;
    switch (checkFolder(file, &why)) {
    case Folder::Private:
        return file;
    case Folder::Missing:
        return create ? QString() : file; // not there yet: nobody listens, connecting fails
    case Folder::Unsafe:
        break;
    }
    qCWarning(lcJournal).noquote() << "monitor: not using" << QString::fromLocal8Bit(dir) << "("
                                   << why << "); runs will not be shown in the window";
    return QString();
}

MonitorSocket::Folder MonitorSocket::checkFolder(const QString &socketPath, QString *why)
{
    const QByteArray dir = QFile::encodeName(QFileInfo(socketPath).absolutePath());
    struct stat st;
    if (::lstat(dir.constData(), &st) != 0) {
        if (why)
            *why = QString::fromLocal8Bit(std::strerror(errno));
        return errno == ENOENT ? Folder::Missing : Folder::Unsafe;
    }
    QString problem;
    if (!S_ISDIR(st.st_mode))
        problem = QStringLiteral("not a folder");
    else if (st.st_uid != ::geteuid())
        problem = QStringLiteral("owned by user %1, not this user").arg(st.st_uid);
    else if ((st.st_mode & 077) != 0)
        problem =
            QStringLiteral("mode %1, open to others").arg(st.st_mode & 0777, 4, 8, QChar(u'0'));
    if (why)
        *why = problem;
    return problem.isEmpty() ? Folder::Private : Folder::Unsafe;
}

qint64 MonitorSocket::peerUid(qintptr descriptor)
{
    if (descriptor < 0)
        return -1;
#ifdef SO_PEERCRED
    struct ucred cred
    {
    };
    socklen_t size = sizeof(cred);
    if (::getsockopt(int(descriptor), SOL_SOCKET, SO_PEERCRED, &cred, &size) != 0 ||
        size != sizeof(cred))
        return -1;
    return qint64(cred.uid);
#else
    uid_t uid = 0;
    gid_t gid = 0;
    if (::getpeereid(int(descriptor), &uid, &gid) != 0)
        return -1;
    return qint64(uid);
#endif
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
