#pragma once

#include "executionrequest.h"
#include "executionresult.h"
#include "exitmarkerscanner.h"
#include "gatewayprotocol.h"
#include "outputmanifest.h"

#include <QBasicTimer>
#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QTimer>
#include <functional>

class SandboxContainer;
class WorkspaceTransfer;

// One program run in one container. Hands the program to the container's supervisor, streams
// its output, and finishes as soon as the supervisor reports the exit status on both streams —
// not when the engine has torn the container down. Then the container is removed, on every path.
class Execution : public QObject
{
    Q_OBJECT
public:
    Execution(const ExecutionRequest &request, const QString &language, int timeoutSec,
              qint64 outputCap, QObject *parent = nullptr);
    ~Execution() override;

    // Takes the container (prepared or not) and runs the program in it once it is ready.
    void run(SandboxContainer *container);
    // Ends the run now: the container is killed and the result says cancelled, and why when
    // `reason` says ("stopped from the Code Sandbox window"); a client's own cancel gives none.
    void cancel(const QString &reason = QString());
    // Ends with an error before any container was involved.
    void failEarly(const QString &message, const QString &image);

    quint64 id() const { return m_id; }
    // The run's id everywhere outside this process (journal, history, window, monitor): a UUID
    // fixed at creation, so whoever holds the execution knows it without waiting for an event.
    const QString &runId() const { return m_runId; }
    const ExecutionRequest &request() const { return m_request; }
    bool isFinished() const { return m_phase == Phase::Finished; }
    const ExecutionResult &result() const { return m_result; }

    // Used by the service while the execution waits for a free slot (1 = next).
    void setQueuePosition(int position);
    // Output files and figures: each file up to `perFile` bytes, all together up to `total`, at
    // most `maxFiles` of them; others are listed without content.
    void setFileLimits(const OutputManifest::Limits &limits);
    // The run's workspaces: copied in before the program, the copy-on-write ones' changes
    // fetched after it, before the result. The execution takes `transfer`, unless it is a
    // session's (which outlives its calls: Kind::Session).
    void setWorkspaces(WorkspaceTransfer *transfer);
    WorkspaceTransfer *workspaces() const;
    // Ends with an error, as if the sandbox had failed (used while libraries are installed).
    void fail(const QString &message);
    // A note the result will carry, said before the run (a session's last snapshot).
    void addNote(const QString &note) { m_result.notes.append(note); }
    // Who removes the container after the run (default: removed at once). `ended`: the program
    // reported its end and left no files to fetch, so the container stops by itself (nothing
    // runs in it any more).
    using Remover = std::function<void(SandboxContainer *container, bool ended)>;
    void setRemover(Remover remover) { m_remover = std::move(remover); }
    // The engine the run was placed on (with several), for its result and the journal.
    void setEngine(const QString &engine) { m_result.engine = engine; }
    const QString &engine() const { return m_result.engine; }
    const QString &runtime() const { return m_result.runtime; }
    // Work done for this run before it starts (installing libraries), for the caller to show.
    void reportProgress(const QString &message);
    // A run in a session's container: the container stays after the run, unless the run ended
    // it (timed out where the language cannot be interrupted, killed, lost). `interruptible`:
    // on timeout the program is sent SIGINT and the session goes on if it reports within a few
    // seconds.
    void setSession(bool interruptible);
    // The verdict on a held connection (connectionHeld); with `widenTo`, the run may reach that
    // host pattern from now on without asking. Ignored for a connection not held.
    void answerConnection(quint64 connection, bool allow, const QString &widenTo = QString());
    // After finished(): the session's container did not survive this run (see notes).
    bool endedSession() const { return m_endSession; }
    bool isSession() const { return m_session; }

Q_SIGNALS:
    void queued(int position);
    void started();
    void progress(const QString &message);
    void output(int stream, const QByteArray &bytes);
    // While the program runs (from kFirstSampleMs on): what its sandbox uses, `elapsedMs` after
    // the program was handed over; memory in bytes, CPU time in ms since the sandbox started
    // (rates come from the differences).
    void usageSampled(qint64 elapsedMs, qint64 memoryBytes, qint64 cpuTimeMs);
    // Allow-list mode: a connection the program tried, when the gateway decided it, and again
    // with its bytes and duration once it ended (the same id).
    void networkAttempt(const NetworkAttempt &attempt);
    // Allow-list mode with asking (RunNetwork::askOtherHosts): the gateway holds a
    // connection to a host beyond the list until answerConnection() says; its decision then
    // comes as a networkAttempt with the same id.
    void connectionHeld(quint64 connection, const QString &host, int port);
    void finished(const ExecutionResult &result);

protected:
    void timerEvent(QTimerEvent *event) override;

private:
    void onReady();
    void sendFiles();
    void sendProgram();
    // One of the collections after the end line (files, workspaces) is done: the result waits
    // for the last.
    void collected();
    void collectFiles();
    void onOutput(int stream, const QByteArray &bytes);
    void onStreamEnded();
    void onNetworkEvent(const GatewayProtocol::NetworkEvent &event);
    void onTimeout();
    void append(int stream, const QByteArray &bytes);
    void finish();
    // finish() once the gateway's events have come (see onOutput).
    void finishWhenSettled();
    // The loader's report of preloaded and imported modules, from the result line.
    void readPreload();
    void sampleUsage();

    static constexpr int kStartupTimeoutMs = 60000;
    // Usage is read only for programs that run longer than this, so a short run costs no
    // request at all; then one reading every kSampleIntervalMs at most, one at a time.
    static constexpr int kFirstSampleMs = 250;
    static constexpr int kSampleIntervalMs = 500;
    static constexpr int kCollectTimeoutMs = 30000;

    quint64 m_id;
    QString m_runId;
    ExecutionRequest m_request;
    qint64 m_cap;
    QByteArray m_nonce;
    ExitMarkerScanner m_outScanner;
    ExitMarkerScanner m_errScanner;
    QPointer<SandboxContainer> m_container;
    QTimer m_timer;
    QElapsedTimer m_clock;
    ExecutionResult m_result;
    // Where the run is; one at a time, in this order (a run may skip some).
    enum class Phase
    {
        Waiting,      // for a free slot: no container yet
        Preparing,    // the container is made ready, input files go in
        Running,      // the program was handed over
        AskingEngine, // the result line never came: the engine says how the container ended
        Collecting,   // the program ended; its files are fetched
        Finished
    };
    bool programSent() const
    {
        return m_phase == Phase::Running || m_phase == Phase::AskingEngine ||
               m_phase == Phase::Collecting;
    }
    Phase m_phase = Phase::Waiting;
    // How a session's run went (the container serves the next call only if it came through).
    bool m_session = false;
    bool m_interruptible = false;
    bool m_interrupted = false; // SIGINT was sent on timeout
    bool m_endSession = false;
    bool m_sessionEndTold = false; // a note already says why the session ended
    static constexpr int kInterruptGraceMs = 3000;
    OutputManifest::Limits m_fileLimits;
    QPointer<WorkspaceTransfer> m_workspaces;
    // A session's workspaces could not be brought up to date before the program: nothing reached
    // the sandbox's supervisor, so the session goes on (the call fails).
    bool m_workspacesRefused = false;
    int m_collecting = 0; // collections after the end line not done yet
    Remover m_remover;
    QSet<quint64> m_held;             // connections the gateway holds for an answer
    bool m_endSeen = false;           // both end lines came: the program's figures are known
    bool m_networkPending = false;    // waiting for the gateway's events up to the end
    bool m_finishWhenSettled = false; // the rest is done: finish when they have come
    // A QBasicTimer, not a QTimer: every run has one, and most never fire.
    QBasicTimer m_sampleTimer;
    bool m_sampling = false; // a reading was asked for and has not come
};
