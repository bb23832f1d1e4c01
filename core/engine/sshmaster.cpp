#include "sshmaster.h"

#include "enginelog.h"
#include "sshtransport.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHash>
#include <QTemporaryDir>
#include <csignal>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

constexpr auto kFolderPrefix = "code-sandbox-ssh-";
constexpr auto kSocketName = "engine.sock";
constexpr auto kControlName = "ctl";
constexpr auto kDefaultRemoteSocket = "/var/run/docker.sock";
// A unix socket's path holds at most 107 bytes; ssh's temporary control socket adds
// ".<16 characters>" to the folder's path.
constexpr int kMaxBaseLength = 60;

QHash<QString, QPointer<SshMaster>> &registry()
{
    static QHash<QString, QPointer<SshMaster>> masters;
    return masters;
}

// ssh expands %-tokens in forwarded socket paths and in ControlPath: a '%' is written "%%".
QString literal(QString path)
{
    return path.replace(u'%', QStringLiteral("%%"));
}

// An ssh -L field: brackets keep a ':' in the path from splitting it.
QString forwardField(const QString &path)
{
    return path.contains(u':') ? QStringLiteral("[%1]").arg(literal(path)) : literal(path);
}

// Whether the process runs: a zombie (killed, its parent has not reaped it yet) does not.
bool isRunning(const QString &pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray s = stat.readAll();
    return s.mid(s.lastIndexOf(')') + 2, 1) != "Z";
}

} // namespace

SshMaster *SshMaster::forAddress(const EngineAddress &address, const QString &configFile)
{
    const QString key = address.url() + QLatin1Char('\n') + configFile;
    QPointer<SshMaster> &slot = registry()[key];
    if (!slot)
        slot = new SshMaster(address, configFile, QCoreApplication::instance());
    return slot;
}

SshMaster::SshMaster(const EngineAddress &address, const QString &configFile, QObject *parent)
    : QObject(parent), m_address(address), m_configFile(configFile)
{
    m_startTimer.setSingleShot(true);
    m_startTimer.setInterval(kStartTimeoutMs);
    connect(&m_startTimer, &QTimer::timeout, this, [this] {
        QString reason =
            QStringLiteral("no ssh connection within %1 s").arg(kStartTimeoutMs / 1000);
        const QString said = SshTransport::summarize(m_stderr);
        if (!said.isEmpty())
            reason += QStringLiteral(" (%1)").arg(said);
        fail(reason);
    });
}

SshMaster::~SshMaster()
{
    // Deleted with the application, when no event loop will reap a killed ssh later: every
    // process still here (ours, and killed ones not yet reaped) is killed and reaped now
    // (SIGKILL: a few milliseconds each), so that nothing is left behind.
    stopProcess();
    const QList<QProcess *> processes = findChildren<QProcess *>(Qt::FindDirectChildrenOnly);
    for (QProcess *p : processes) {
        p->disconnect();
        if (p->state() != QProcess::NotRunning) {
            p->kill();
            p->waitForFinished(1000);
        }
        delete p;
    }
}

QStringList SshMaster::arguments(const EngineAddress &a, const QString &configFile,
                                 const QString &folder)
{
    // -M with a ControlPath of our own and ControlPersist off: an independent connection that
    // stays in the foreground as our child (a user's ControlPersist would fork it away, a
    // user's ControlPath would hand the forward to a master that outlives us). ssh links the
    // control socket in place only after the forward listens, which is the sign of readiness.
    // Keep-alives: a connection that lives as long as we do must notice a link that went dead
    // (ssh ends, and the next engine connection starts a new one) rather than hold every new
    // channel for ever.
    QStringList args{
        QStringLiteral("-M"),
        QStringLiteral("-N"),
        QStringLiteral("-T"),
        QStringLiteral("-o"),
        QStringLiteral("BatchMode=yes"),
        QStringLiteral("-o"),
        QStringLiteral("ConnectTimeout=%1").arg(kSshConnectTimeoutSec),
        QStringLiteral("-o"),
        QStringLiteral("ControlPath=%1/%2").arg(literal(folder), QLatin1String(kControlName)),
        QStringLiteral("-o"),
        QStringLiteral("ControlPersist=no"),
        QStringLiteral("-o"),
        QStringLiteral("ExitOnForwardFailure=yes"),
        QStringLiteral("-o"),
        QStringLiteral("StreamLocalBindUnlink=yes"),
        QStringLiteral("-o"),
        QStringLiteral("ServerAliveInterval=%1").arg(kServerAliveIntervalSec),
        QStringLiteral("-o"),
        QStringLiteral("ServerAliveCountMax=%1").arg(kServerAliveCountMax),
        QStringLiteral("-L"),
        forwardField(folder + QLatin1Char('/') + QLatin1String(kSocketName)) + QLatin1Char(':') +
            forwardField(a.socketPath.isEmpty() ? QLatin1String(kDefaultRemoteSocket)
                                                : a.socketPath)};
    if (!configFile.isEmpty())
        args << QStringLiteral("-F") << configFile;
    if (!a.user.isEmpty())
        args << QStringLiteral("-l") << a.user;
    if (a.port > 0)
        args << QStringLiteral("-p") << QString::number(a.port);
    args << QStringLiteral("--") << a.host;
    return args;
}

QString SshMaster::localSocket() const
{
    return m_folder ? m_folder->filePath(QLatin1String(kSocketName)) : QString();
}

QString SshMaster::remoteSocket() const
{
    return m_address.socketPath.isEmpty() ? QLatin1String(kDefaultRemoteSocket)
                                          : m_address.socketPath;
}

qint64 SshMaster::processId() const
{
    return m_process ? m_process->processId() : 0;
}

QString SshMaster::folder() const
{
    return m_folder ? m_folder->path() : QString();
}

void SshMaster::start()
{
    if (m_state != State::Idle)
        return;
    m_state = State::Starting;
    if (!m_folder && !makeFolder()) {
        // Told after the caller has returned, as every other outcome is.
        QMetaObject::invokeMethod(
            this,
            [this] { fail(QStringLiteral("cannot make a private folder for the ssh connection")); },
            Qt::QueuedConnection);
        return;
    }
    // What an earlier ssh left (it does not remove its forwarded socket).
    QFile::remove(localSocket());
    QFile::remove(m_folder->filePath(QLatin1String(kControlName)));
    m_stderr.clear();
    auto *p = new QProcess(this);
    m_process = p;
    p->setProcessChannelMode(QProcess::SeparateChannels);
    p->setStandardInputFile(QProcess::nullDevice());
    p->setStandardOutputFile(QProcess::nullDevice());
    const pid_t parent = ::getpid();
    p->setChildProcessModifier([parent] {
        // ssh dies with us, even when we are killed: no connection outlives the application.
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (::getppid() != parent)
            ::_exit(1);
    });
    connect(p, &QProcess::readyReadStandardError, this, [this] {
        if (!m_process)
            return;
        m_stderr += m_process->readAllStandardError();
        if (m_stderr.size() > SshTransport::kMaxStderrBytes)
            m_stderr = m_stderr.right(SshTransport::kMaxStderrBytes);
    });
    connect(p, &QProcess::finished, this, &SshMaster::onFinished);
    connect(p, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            fail(QStringLiteral("cannot run ssh: %1")
                     .arg(m_process ? m_process->errorString() : QString()));
    });
    m_startTimer.start();
    qCDebug(lcEngine) << "ssh connection to" << m_address.display() << "starting";
    p->start(QStringLiteral("ssh"), arguments(m_address, m_configFile, m_folder->path()));
}

bool SshMaster::makeFolder()
{
    const QString base = folderBase();
    sweepStaleFolders(base);
    // QTemporaryDir makes it 0700, and removes it with what is in it.
    auto dir = std::make_unique<QTemporaryDir>(
        QStringLiteral("%1/%2%3-XXXXXX").arg(base, QLatin1String(kFolderPrefix)).arg(::getpid()));
    if (!dir->isValid())
        return false;
    m_folder = std::move(dir);
    m_watcher = new QFileSystemWatcher(QStringList{m_folder->path()}, this);
    connect(m_watcher, &QFileSystemWatcher::directoryChanged, this, &SshMaster::checkReady);
    return true;
}

QString SshMaster::folderBase()
{
    QString base = qEnvironmentVariable("XDG_RUNTIME_DIR");
    const QFileInfo info(base);
    if (base.isEmpty() || !info.isDir() || info.ownerId() != ::getuid())
        base = QDir::tempPath();
    if (base.size() > kMaxBaseLength)
        base = QStringLiteral("/tmp");
    return base;
}

void SshMaster::sweepStaleFolders(const QString &base)
{
    // Folders of instances that died without removing theirs (killed: their ssh died with them).
    // The base may be the shared temporary folder: another user can plant an entry with our
    // prefix there, such as a link to one of our folders. Only what is certainly ours goes: a
    // real folder (lstat: a link is never followed) of this user, private as we make it (0700).
    const QDir dir(base);
    const QString prefix = QLatin1String(kFolderPrefix);
    for (const QString &name : dir.entryList(
             {prefix + QLatin1Char('*')}, QDir::Dirs | QDir::NoSymLinks | QDir::NoDotAndDotDot)) {
        const QString path = dir.filePath(name);
        struct stat st = {};
        if (::lstat(QFile::encodeName(path).constData(), &st) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != ::geteuid() || (st.st_mode & 0077) != 0)
            continue;
        const QString pid = name.mid(prefix.size()).section(u'-', 0, 0);
        bool ok = false;
        pid.toLongLong(&ok);
        if (!ok || isRunning(pid))
            continue;
        QDir(path).removeRecursively();
    }
}

void SshMaster::checkReady()
{
    if (m_state != State::Starting || !m_folder ||
        !QFileInfo::exists(m_folder->filePath(QLatin1String(kControlName))))
        return;
    m_state = State::Ready;
    m_startTimer.stop();
    qCDebug(lcEngine) << "ssh connection to" << m_address.display() << "ready";
    Q_EMIT ready();
}

void SshMaster::onFinished()
{
    if (m_process)
        m_stderr += m_process->readAllStandardError();
    const QString said = SshTransport::summarize(m_stderr);
    const int code = m_process ? m_process->exitCode() : -1;
    const bool wasReady = m_state == State::Ready;
    if (m_state == State::Starting) {
        fail(said.isEmpty() ? QStringLiteral("ssh ended with exit code %1").arg(code) : said);
        return;
    }
    stopProcess();
    m_state = State::Idle;
    if (wasReady) {
        qCWarning(lcEngine).noquote() << "the ssh connection to" << m_address.display() << "ended"
                                      << (said.isEmpty() ? QString() : QStringLiteral(": ") + said);
        Q_EMIT ended();
    }
}

void SshMaster::fail(const QString &reason)
{
    stopProcess();
    m_state = State::Idle;
    m_startTimer.stop();
    Q_EMIT startFailed(reason);
}

bool SshMaster::isUp() const
{
    return m_state == State::Ready && m_process &&
           isRunning(QString::number(m_process->processId()));
}

QString SshMaster::lastMessage() const
{
    const QString said = SshTransport::summarize(m_stderr);
    return said.section(QStringLiteral(" / "), -1);
}

void SshMaster::markForwardRefused(const QString &said)
{
    if (m_forwardRefused)
        return;
    m_forwardRefused = true;
    qCWarning(lcEngine).noquote()
        << m_address.display() << "refuses to forward the engine's socket" << remoteSocket()
        << (said.isEmpty() ? QStringLiteral("(ssh said nothing about it;")
                           : QStringLiteral("(ssh said: %1;").arg(said))
        << "AllowTcpForwarding or AllowStreamLocalForwarding off on the server?): each engine "
           "connection now runs its own ssh with `docker system dial-stdio` there";
    const State was = m_state;
    stopProcess();
    m_state = State::Idle;
    m_startTimer.stop();
    // Who waits for the start is told it ended, as who uses the ready connection is.
    if (was == State::Starting)
        Q_EMIT startFailed(QStringLiteral("the server refuses to forward the engine's socket"));
    else if (was == State::Ready)
        Q_EMIT ended();
}

void SshMaster::stopProcess()
{
    QProcess *p = m_process;
    m_process = nullptr;
    if (!p)
        return;
    p->disconnect(this);
    if (p->state() == QProcess::NotRunning) {
        p->deleteLater();
        return;
    }
    reap(p);
}

void SshMaster::reap(QProcess *p)
{
    // Deleting a running QProcess waits for it; instead it is killed and goes once reaped. It
    // stays our child meanwhile: if the application ends first, our destructor reaps it.
    p->setParent(this);
    connect(p, &QProcess::finished, p, &QObject::deleteLater);
    connect(p, &QProcess::errorOccurred, p, [p](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            p->deleteLater();
    });
    p->kill();
}
