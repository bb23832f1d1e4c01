#include "calleridentity.h"

#include <QFile>
#include <QFileInfo>
#include <unistd.h>

QString CallerIdentity::describe() const
{
    if (hasCredential())
        return QStringLiteral("credential %1 (%2)").arg(credentialId, credentialName);
    if (!launcher.isEmpty())
        return QStringLiteral("launched by %1 (pid %2, uid %3)")
            .arg(launcher)
            .arg(launcherPid)
            .arg(launcherUid);
    if (transport == QLatin1String("http"))
        return QStringLiteral("the shared token");
    return {};
}

CallerIdentity CallerIdentity::ofParentProcess()
{
    CallerIdentity id;
    id.transport = QStringLiteral("stdio");
    id.launcherPid = ::getppid();
    const QString proc = QStringLiteral("/proc/%1").arg(id.launcherPid);
    // The executable the kernel ran, not argv[0], which the launcher sets as it likes. A
    // launcher that exited already (pid 1 adopted us) has nothing to show.
    id.launcher = QFileInfo(proc + QStringLiteral("/exe")).symLinkTarget();
    QFile cmdline(proc + QStringLiteral("/cmdline"));
    if (cmdline.open(QIODevice::ReadOnly)) {
        QByteArray args = cmdline.read(4096);
        if (args.endsWith('\0'))
            args.chop(1);
        id.launcherCommand = QString::fromLocal8Bit(args.replace('\0', ' '));
    }
    QFile status(proc + QStringLiteral("/status"));
    if (status.open(QIODevice::ReadOnly)) {
        for (const QByteArray &line : status.readAll().split('\n'))
            if (line.startsWith("Uid:"))
                id.launcherUid = line.mid(4).simplified().split(' ').value(0).toLongLong();
    }
    return id;
}
