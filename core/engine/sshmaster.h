#pragma once

#include "engineaddress.h"

#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QStringList>
#include <QTimer>
#include <memory>

class QFileSystemWatcher;
class QTemporaryDir;

// The one ssh connection to an engine's host: an OpenSSH process of its own (-M -N) that forwards
// a private local socket to the engine's socket there (-L, a direct-streamlocal channel per
// connection), so that each engine connection is a plain local socket: no process and no key
// exchange per connection, and no `docker` command needed on the remote host (Podman's socket
// works as Docker's does). The user's ssh (config, agent, known_hosts, ProxyJump, Match) does
// the work; it never asks (BatchMode).
//
// Started lazily by the first connection, restarted by the next one after it died, ended with
// the application: deleted with it (parented to the QCoreApplication), and killed by the kernel
// if the application dies without that (PR_SET_PDEATHSIG). Its folder (0700, under
// $XDG_RUNTIME_DIR or the temporary folder) holds the forwarded socket and ssh's control socket.
class SshMaster : public QObject
{
    Q_OBJECT
public:
    // The one key exchange may be slow on a loaded machine; the state ends the wait, not this.
    static constexpr int kStartTimeoutMs = 60000;
    // ssh's own ConnectTimeout (the TCP connect and its banner), in seconds.
    static constexpr int kSshConnectTimeoutSec = 20;
    // A dead link is noticed after kServerAliveIntervalSec * kServerAliveCountMax seconds.
    static constexpr int kServerAliveIntervalSec = 15;
    static constexpr int kServerAliveCountMax = 4;

    enum class State
    {
        Idle,     // no ssh running (not yet needed, or it ended)
        Starting, // ssh is connecting and authenticating
        Ready     // the forwarded socket listens
    };

    // The master for this address and ssh config file (one per engine in the process).
    static SshMaster *forAddress(const EngineAddress &address, const QString &configFile);
    ~SshMaster() override;

    State state() const { return m_state; }
    // Starts ssh unless it runs; ready() or startFailed() follows.
    void start();
    // Where an engine connection connects once ready.
    QString localSocket() const;
    // The socket on the remote host: the address's path, or Docker's default.
    QString remoteSocket() const;
    qint64 processId() const;
    QString folder() const;

    // Whether ssh is ready and still runs (not just ended, its end not yet seen): a channel
    // that closed while this holds was closed by the server, not by the connection's end.
    bool isUp() const;
    // The last line ssh printed (noise left out), to quote.
    QString lastMessage() const;

    // Whether a channel to the remote socket has carried an engine's answer (forwarding works
    // there), and whether the server refused the forward so that connections use
    // `docker system dial-stdio` instead (sticky for the application's life). `said` is what
    // ssh printed about the refused channel, quoted in the warning.
    bool forwardWorks() const { return m_forwardWorks; }
    bool forwardRefused() const { return m_forwardRefused; }
    void markForwardWorks() { m_forwardWorks = true; }
    void markForwardRefused(const QString &said = QString());

    // Kills a process (ours, or a connection's dial-stdio) without waiting for it: it is
    // deleted once reaped, or with the master (which reaps it), so none is left behind.
    void reap(QProcess *process);

    // ssh's arguments: -M -N -T -o BatchMode=yes … -L [local]:[remote] [-F config] [-l user]
    // [-p port] -- host
    static QStringList arguments(const EngineAddress &address, const QString &configFile,
                                 const QString &folder);

Q_SIGNALS:
    void ready();
    // A start ended without ready(): ssh failed, timed out, or the forward was refused meanwhile.
    void startFailed(const QString &reason);
    // The ready ssh ended (its connections are gone with it).
    void ended();

private:
    SshMaster(const EngineAddress &address, const QString &configFile, QObject *parent);
    bool makeFolder();
    void checkReady();
    void onFinished();
    void fail(const QString &reason);
    void stopProcess();
    static QString folderBase();
    static void sweepStaleFolders(const QString &base);

    EngineAddress m_address;
    QString m_configFile;
    State m_state = State::Idle;
    std::unique_ptr<QTemporaryDir> m_folder;
    QPointer<QProcess> m_process;
    QFileSystemWatcher *m_watcher = nullptr;
    QTimer m_startTimer;
    QByteArray m_stderr;
    bool m_forwardWorks = false;
    bool m_forwardRefused = false;
};
