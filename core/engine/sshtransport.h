#pragma once

#include "enginetransport.h"

#include <QPointer>
#include <QProcess>
#include <QStringList>
#include <QTimer>

class QLocalSocket;
class SshMaster;

// An engine on another host, through ssh. Each connection is a channel of the engine's one ssh
// connection (SshMaster): a local socket that ssh forwards to the engine's socket there, so N
// connections cost one ssh process and one key exchange, and the remote host needs no `docker`
// command. When the server refuses to forward sockets, connections fall back to what the Docker
// CLI does: one ssh process each running `docker system dial-stdio` there (the first such
// connection replays what it had written into the refused channel). ssh uses the user's own
// config and agent (or the file CODE_SANDBOX_SSH_CONFIG names) and never asks for a password
// (BatchMode); what it prints on stderr becomes the error.
class SshTransport : public EngineTransport
{
    Q_OBJECT
public:
    // A dial-stdio process's start up to the engine's first byte (a key exchange each, so
    // generous for a loaded machine).
    static constexpr int kProcessConnectTimeoutMs = 30000;
    // What is kept of ssh's stderr for the error message (its end).
    static constexpr int kMaxStderrBytes = 4096;
    // What a connection keeps of its writes until forwarding is known to work there, to replay
    // through dial-stdio if the server refused the channel (requests before the first answer
    // are small: the version negotiation comes first).
    static constexpr int kMaxReplayBytes = 1 << 20;
    // How long a channel that ended without an answer waits before it decides between a refused
    // forward and an ssh connection that is ending (see onSocketEnded).
    static constexpr int kEndSettleMs = 250;

    SshTransport(const EngineAddress &address, QObject *parent = nullptr);
    ~SshTransport() override;

    void write(const QByteArray &bytes) override;
    QByteArray readAll() override;
    qint64 bytesAvailable() const override;
    bool isReusable() const override;

    // The fallback's ssh arguments: -T -o BatchMode=yes -o ConnectTimeout=N [-F config]
    // [-l user] [-p port] -- host docker [--host unix://path] system dial-stdio
    static QStringList arguments(const EngineAddress &address, const QString &configFile);
    // What ssh printed, as one line for a message.
    static QString summarize(const QByteArray &stderrBytes);
    // The config file ssh is given: CODE_SANDBOX_SSH_CONFIG, or none (ssh's own).
    static QString configFile();

protected:
    void doOpen() override;
    void doAbort() override;

private:
    enum class Mode
    {
        Forward, // a channel of the engine's ssh connection
        Process  // an ssh process of its own (dial-stdio)
    };

    void waitForMaster();
    void onMasterReady();
    void onMasterFailed(const QString &reason);
    void onMasterEnded();
    void onDeadline();
    void fallBack();
    void connectSocket();
    void onSocketBytes();
    void onSocketEnded();
    // Falls back to dial-stdio when the channel was refused, else fails with why.
    void concludeEnded();
    QString noAnswerReason() const;
    void startProcess();
    void onProcessBytes();
    void onProcessFinished(int exitCode, QProcess::ExitStatus status);
    void stopProcess();
    void stopSocket();

    Mode m_mode = Mode::Forward;
    QPointer<SshMaster> m_master;
    QLocalSocket *m_socket = nullptr;
    QPointer<QProcess> m_process;
    // The wait for the engine's ssh connection, then for a dial-stdio process's first byte.
    QTimer m_deadline;
    QByteArray m_stderr;
    QByteArray m_replay; // written before the first answer, while forwarding is unproven
    bool m_replayable = true;
    bool m_fellBack = false; // a refused channel's connection, now through dial-stdio
    QString m_refusal;       // what ssh printed when that channel closed
    qint64 m_refusedBy = 0;  // the ssh connection (its process) that closed it
    bool m_processStarted = false;
    bool m_gotBytes = false;
    QString m_brokenReason;
};
