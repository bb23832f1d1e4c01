#include "sshtransport.h"

#include <QProcessEnvironment>

QStringList SshTransport::arguments(const EngineAddress &a, const QString &configFile)
{
    QStringList args{QStringLiteral("-T"), QStringLiteral("-o"), QStringLiteral("BatchMode=yes"),
                     QStringLiteral("-o"),
                     QStringLiteral("ConnectTimeout=%1").arg(kSshConnectTimeoutSec)};
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

SshTransport::SshTransport(const EngineAddress &address, QObject *parent)
    : EngineTransport(address, parent)
{}

SshTransport::~SshTransport()
{
    doAbort();
}

void SshTransport::doOpen()
{
    doAbort(); // a process of an earlier opening, if any
    m_stderr.clear();
    m_gotBytes = false;
    auto *p = new QProcess(this);
    m_process = p;
    p->setProcessChannelMode(QProcess::SeparateChannels);
    p->setReadChannel(QProcess::StandardOutput);
    connect(p, &QProcess::started, this, [this] {
        // Writable now; established once the engine's first byte comes back through ssh.
        reportOpened(false);
    });
    connect(p, &QProcess::readyReadStandardOutput, this, [this] {
        if (!m_gotBytes) {
            m_gotBytes = true;
            reportEstablished();
        }
        if (state() == State::Open)
            Q_EMIT readyRead();
    });
    connect(p, &QProcess::readyReadStandardError, this, [this] {
        if (!m_process)
            return;
        m_stderr += m_process->readAllStandardError();
        if (m_stderr.size() > kMaxStderrBytes)
            m_stderr = m_stderr.right(kMaxStderrBytes);
    });
    connect(p, &QProcess::finished, this, &SshTransport::onFinished);
    connect(p, &QProcess::errorOccurred, this, &SshTransport::onError);
    const QString config =
        QProcessEnvironment::systemEnvironment().value(QStringLiteral("CODE_SANDBOX_SSH_CONFIG"));
    p->start(QStringLiteral("ssh"), arguments(address(), config), QIODevice::ReadWrite);
}

void SshTransport::doAbort()
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
    // it has been reaped, on its own.
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
    if (state() == State::Open && m_process)
        m_process->write(bytes);
}

QByteArray SshTransport::readAll()
{
    return m_process ? m_process->readAllStandardOutput() : QByteArray();
}

qint64 SshTransport::bytesAvailable() const
{
    return m_process ? m_process->bytesAvailable() : 0;
}

bool SshTransport::isReusable() const
{
    return state() == State::Open && m_process && m_process->state() == QProcess::Running &&
           m_process->bytesAvailable() == 0;
}

void SshTransport::onFinished(int exitCode, QProcess::ExitStatus status)
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
    reportFailed(reason);
}

void SshTransport::onError(QProcess::ProcessError error)
{
    if (error == QProcess::FailedToStart)
        reportFailed(QStringLiteral("cannot run ssh: %1")
                         .arg(m_process ? m_process->errorString() : QString()));
    // Anything else ends the process, and onFinished reports it.
}
