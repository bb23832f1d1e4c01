#pragma once

#include "enginetransport.h"

#include <QPointer>
#include <QProcess>
#include <QStringList>

// An engine on another host, reached the way the Docker CLI does: one ssh process per
// connection runs `docker system dial-stdio` there, and its stdin/stdout are the byte stream.
// ssh uses the user's own config and agent (or the file CODE_SANDBOX_SSH_CONFIG names) and never
// asks for a password (BatchMode); what it prints on stderr becomes the error.
class SshTransport : public EngineTransport
{
    Q_OBJECT
public:
    static constexpr int kSshConnectTimeoutSec = EngineTransport::kConnectTimeoutMs / 1000;
    // What is kept of ssh's stderr for the error message (its end).
    static constexpr int kMaxStderrBytes = 4096;

    SshTransport(const EngineAddress &address, QObject *parent = nullptr);
    ~SshTransport() override;

    void write(const QByteArray &bytes) override;
    QByteArray readAll() override;
    qint64 bytesAvailable() const override;
    bool isReusable() const override;

    // ssh's arguments for the address: -T -o BatchMode=yes -o ConnectTimeout=10 [-F config]
    // [-l user] [-p port] -- host docker [--host unix://path] system dial-stdio
    static QStringList arguments(const EngineAddress &address, const QString &configFile);
    // What ssh printed, as one line for a message.
    static QString summarize(const QByteArray &stderrBytes);

protected:
    void doOpen() override;
    void doAbort() override;
    QString timeoutDetail() const override { return summarize(m_stderr); }

private:
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onError(QProcess::ProcessError error);

    QPointer<QProcess> m_process;
    QByteArray m_stderr;
    bool m_gotBytes = false;
};
