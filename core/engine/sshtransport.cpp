#include "sshtransport.h"

#include "enginelog.h"
#include "sshmaster.h"

#include <QLocalSocket>
#include <QProcessEnvironment>
#include <QTimer>

namespace {

// The longest a connection waits for the engine's ssh connection to be ready: the master's own
// deadline (which fails with what ssh said) and a margin, so that no connection waits for ever,
// whatever becomes of the master.
constexpr int kMasterWaitMs = SshMaster::kStartTimeoutMs + 5000;

} // namespace

QStringList SshTransport::arguments(const EngineAddress &a, const QString &configFile)
{
    QStringList args{QStringLiteral("-T"), QStringLiteral("-o"), QStringLiteral("BatchMode=yes"),
                     QStringLiteral("-o"),
                     QStringLiteral("ConnectTimeout=%1").arg(SshMaster::kSshConnectTimeoutSec)};
    if (!configFile.isEmpty())
        args << QStringLiteral("-F") << configFile;
    if (!a.user.isEmpty())
        args << QStringLiteral("-l") << a.user;
    if (a.port > 0)
        args << QStringLiteral("-p") << QString::number(a.port);
    args << QStringLiteral("--") << a.host << QStringLiteral("docker");
    if (!a.socketPath.isEmpty())
        args << QStringLiteral("--host") << QStringLiteral("unix://") + a.socketPath;
    args << QStringLiteral("system") << QStringLiteral("dial-stdio");
    return args;
}

QString SshTransport::summarize(const QByteArray &stderrBytes)
{
    QStringList lines;
    for (const QByteArray &raw : stderrBytes.split('\n')) {
        const QString line = QString::fromUtf8(raw).trimmed();
        // Noise that is no reason: ssh's note on a host key it just learned.
        if (line.isEmpty() || line.startsWith(u"Warning: Permanently added"))
            continue;
        lines.append(line);
    }
    return lines.join(QStringLiteral(" / "));
}

QString SshTransport::configFile()
{
    return QProcessEnvironment::systemEnvironment().value(
        QStringLiteral("CODE_SANDBOX_SSH_CONFIG"));
}

SshTransport::SshTransport(const EngineAddress &address, QObject *parent)
    : EngineTransport(address, parent)
{
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, &SshTransport::onDeadline);
}

SshTransport::~SshTransport()
{
    doAbort();
}

void SshTransport::doOpen()
{
    doAbort(); // what an earlier opening left, if any
    // The base's deadline counts one connect; here the wait is for a state: the engine's ssh
    // connection (one key exchange for all connections), or a dial-stdio process. m_deadline
    // bounds either wait instead.
    reportEstablished();
    m_stderr.clear();
    m_replay.clear();
    m_replayable = true;
    m_fellBack = false;
    m_refusal.clear();
    m_refusedBy = 0;
    m_gotBytes = false;
    m_brokenReason.clear();
    m_master = SshMaster::forAddress(address(), configFile());
    if (m_master->forwardRefused()) {
        m_mode = Mode::Process;
        startProcess();
        return;
    }
    m_mode = Mode::Forward;
    if (m_master->state() == SshMaster::State::Ready) {
        connectSocket();
        return;
    }
    waitForMaster();
}

void SshTransport::doAbort()
{
    if (m_master)
        m_master->disconnect(this);
    m_deadline.stop();
    stopSocket();
    stopProcess();
}

void SshTransport::waitForMaster()
{
    connect(m_master, &SshMaster::ready, this, &SshTransport::onMasterReady);
    connect(m_master, &SshMaster::startFailed, this, &SshTransport::onMasterFailed);
    connect(m_master, &SshMaster::ended, this, &SshTransport::onMasterEnded);
    m_deadline.setInterval(kMasterWaitMs);
    m_deadline.start();
    m_master->start();
}

void SshTransport::onMasterReady()
{
    m_master->disconnect(this);
    if (state() == State::Opening && m_mode == Mode::Forward && !m_socket)
        connectSocket();
}

void SshTransport::onMasterFailed(const QString &reason)
{
    m_master->disconnect(this);
    if (state() != State::Opening || m_mode != Mode::Forward || m_socket)
        return;
    // Another connection proved meanwhile that the server refuses the forward.
    if (m_master->forwardRefused()) {
        m_mode = Mode::Process;
        startProcess();
        return;
    }
    reportFailed(reason);
}

void SshTransport::onMasterEnded()
{
    onMasterFailed(
        QStringLiteral("the ssh connection to %1 ended before it was ready").arg(address().host));
}

void SshTransport::onDeadline()
{
    if (state() == State::Closed)
        return;
    const bool master = m_mode == Mode::Forward;
    QString reason =
        master ? QStringLiteral("no ssh connection within %1 s").arg(kMasterWaitMs / 1000)
               : QStringLiteral("not connected within %1 s").arg(kProcessConnectTimeoutMs / 1000);
    const QString said =
        master ? (m_master ? m_master->lastMessage() : QString()) : summarize(m_stderr);
    if (!said.isEmpty())
        reason += QStringLiteral(" (%1)").arg(said);
    reportFailed(reason);
}

void SshTransport::connectSocket()
{
    m_socket = new QLocalSocket(this);
    connect(m_socket, &QLocalSocket::connected, this, [this] {
        m_deadline.stop();
        reportOpened();
    });
    connect(m_socket, &QLocalSocket::readyRead, this, &SshTransport::onSocketBytes);
    connect(m_socket, &QLocalSocket::disconnected, this, &SshTransport::onSocketEnded);
    connect(m_socket, &QLocalSocket::errorOccurred, this, [this](QLocalSocket::LocalSocketError e) {
        if (e == QLocalSocket::PeerClosedError || !m_socket)
            return; // the end of a connection is reported by disconnected()
        if (state() == State::Open)
            m_brokenReason = m_socket->errorString();
        else if (state() == State::Opening)
            // The forward is gone (its ssh just ended); the next connection starts it anew.
            reportFailed(
                QStringLiteral("the ssh connection's socket: %1").arg(m_socket->errorString()));
    });
    m_socket->connectToServer(m_master->localSocket());
}

void SshTransport::onSocketBytes()
{
    if (!m_gotBytes && m_socket->bytesAvailable() > 0) {
        m_gotBytes = true;
        m_replay.clear();
        if (m_master)
            m_master->markForwardWorks();
    }
    if (state() == State::Open)
        Q_EMIT readyRead();
}

void SshTransport::onSocketEnded()
{
    if (state() != State::Open)
        return;
    if (m_gotBytes) {
        if (m_brokenReason.isEmpty())
            reportClosed();
        else
            reportFailed(m_brokenReason);
        return;
    }
    // Closed before any answer. If the ssh connection still runs, the server closed the channel:
    // it may refuse to forward sockets (AllowTcpForwarding/AllowStreamLocalForwarding off), which
    // OpenSSH reports as it does a socket nobody listens on ("open failed: connect failed");
    // until a channel has worked there, dial-stdio is tried with what was written. If the ssh
    // connection itself ended, that proves nothing about forwarding: the connection fails.
    const bool canFallBack = m_master && !m_master->forwardWorks() && m_replayable;
    if (canFallBack && m_master->forwardRefused()) {
        fallBack();
        return;
    }
    if (canFallBack && m_master->isUp()) {
        // Refused, or the ssh connection is ending and its end is not visible yet: a killed
        // process closes its sockets before it turns into a zombie, and on a busy machine that
        // can take a while. A replay through dial-stdio after a connection that died mid-request
        // could repeat what the engine already did (a create), so look again a moment later.
        QTimer::singleShot(kEndSettleMs, this, [this] {
            if (state() == State::Open)
                concludeEnded();
        });
        return;
    }
    concludeEnded();
}

void SshTransport::concludeEnded()
{
    if (m_master && !m_master->forwardWorks() && m_replayable &&
        (m_master->forwardRefused() || m_master->isUp())) {
        fallBack();
        return;
    }
    if (m_master && !m_master->isUp() && !m_master->forwardRefused()) {
        const QString said = m_master->lastMessage();
        reportFailed(QStringLiteral("the ssh connection to %1 ended before the engine answered%2")
                         .arg(address().host,
                              said.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(said)));
        return;
    }
    reportFailed(noAnswerReason());
}

void SshTransport::fallBack()
{
    m_refusal = m_master->lastMessage();
    m_refusedBy = m_master->processId();
    stopSocket();
    m_mode = Mode::Process;
    m_fellBack = true;
    startProcess();
}

QString SshTransport::noAnswerReason() const
{
    return QStringLiteral("no answer from the engine's socket %1 on %2 through ssh (is the engine "
                          "running there?)")
        .arg(m_master ? m_master->remoteSocket() : address().socketPath, address().host);
}

void SshTransport::startProcess()
{
    m_processStarted = false;
    m_stderr.clear();
    auto *p = new QProcess(this);
    m_process = p;
    p->setProcessChannelMode(QProcess::SeparateChannels);
    p->setReadChannel(QProcess::StandardOutput);
    connect(p, &QProcess::started, this, [this] {
        m_processStarted = true;
        if (state() == State::Opening) {
            reportOpened(false); // writable; established once the engine's first byte is back
        } else if (!m_replay.isEmpty() && m_process) {
            m_process->write(m_replay); // what the refused channel was given
        }
    });
    connect(p, &QProcess::readyReadStandardOutput, this, &SshTransport::onProcessBytes);
    connect(p, &QProcess::readyReadStandardError, this, [this] {
        if (!m_process)
            return;
        m_stderr += m_process->readAllStandardError();
        if (m_stderr.size() > kMaxStderrBytes)
            m_stderr = m_stderr.right(kMaxStderrBytes);
    });
    connect(p, &QProcess::finished, this, &SshTransport::onProcessFinished);
    connect(p, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart)
            reportFailed(QStringLiteral("cannot run ssh: %1")
                             .arg(m_process ? m_process->errorString() : QString()));
        // Anything else ends the process, and onProcessFinished reports it.
    });
    m_deadline.setInterval(kProcessConnectTimeoutMs);
    m_deadline.start();
    p->start(QStringLiteral("ssh"), arguments(address(), configFile()), QIODevice::ReadWrite);
}

void SshTransport::onProcessBytes()
{
    if (!m_gotBytes) {
        m_gotBytes = true;
        m_deadline.stop();
        m_replay.clear();
        // Refused only if the ssh connection that closed the channel still runs now (its end,
        // had it just ended then, has been seen by now: dial-stdio took a key exchange). What
        // ssh printed about the channel has been read by now too, if not when it closed.
        if (m_fellBack && m_master && m_master->isUp() && m_master->processId() == m_refusedBy)
            m_master->markForwardRefused(m_refusal.isEmpty() ? m_master->lastMessage() : m_refusal);
    }
    if (state() == State::Open)
        Q_EMIT readyRead();
}

void SshTransport::onProcessFinished(int exitCode, QProcess::ExitStatus status)
{
    if (m_process)
        m_stderr += m_process->readAllStandardError();
    if (status == QProcess::NormalExit && exitCode == 0 && m_gotBytes) {
        reportClosed();
        return;
    }
    QString reason = summarize(m_stderr);
    if (reason.isEmpty())
        reason = status == QProcess::NormalExit
                     ? QStringLiteral("ssh ended with exit code %1").arg(exitCode)
                     : QStringLiteral("ssh was killed");
    if (m_fellBack && !m_gotBytes)
        reason = QStringLiteral("%1; and `docker system dial-stdio` through ssh failed: %2")
                     .arg(noAnswerReason(), reason);
    reportFailed(reason);
}

void SshTransport::stopSocket()
{
    QLocalSocket *s = m_socket;
    m_socket = nullptr;
    if (!s)
        return;
    // Closing the socket emits signals; none may reach this transport any more.
    s->disconnect(this);
    s->abort();
    s->deleteLater();
}

void SshTransport::stopProcess()
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
    // Deleting a running QProcess waits for it (blocking); instead it is killed and goes once
    // it has been reaped, kept by the engine's ssh connection meanwhile (which reaps it if the
    // application ends first).
    if (m_master) {
        m_master->reap(p);
        return;
    }
    p->setParent(nullptr);
    connect(p, &QProcess::finished, p, &QObject::deleteLater);
    connect(p, &QProcess::errorOccurred, p, [p](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            p->deleteLater();
    });
    p->kill();
}

void SshTransport::write(const QByteArray &bytes)
{
    if (state() != State::Open)
        return;
    if (m_mode == Mode::Forward) {
        if (!m_socket)
            return;
        m_socket->write(bytes);
        if (!m_gotBytes && m_master && !m_master->forwardWorks() && m_replayable) {
            m_replay += bytes;
            if (m_replay.size() > kMaxReplayBytes) {
                m_replay.clear();
                m_replayable = false;
            }
        }
        return;
    }
    if (!m_process)
        return;
    if (m_processStarted)
        m_process->write(bytes);
    else
        m_replay += bytes; // written once it has started
}

QByteArray SshTransport::readAll()
{
    if (m_mode == Mode::Forward)
        return m_socket ? m_socket->readAll() : QByteArray();
    return m_process ? m_process->readAllStandardOutput() : QByteArray();
}

qint64 SshTransport::bytesAvailable() const
{
    if (m_mode == Mode::Forward)
        return m_socket ? m_socket->bytesAvailable() : 0;
    return m_process ? m_process->bytesAvailable() : 0;
}

bool SshTransport::isReusable() const
{
    if (state() != State::Open)
        return false;
    if (m_mode == Mode::Forward)
        return m_socket && m_socket->state() == QLocalSocket::ConnectedState &&
               m_socket->bytesAvailable() == 0 && descriptorIsQuiet(m_socket->socketDescriptor());
    return m_process && m_process->state() == QProcess::Running && m_process->bytesAvailable() == 0;
}
