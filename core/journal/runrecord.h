#pragma once

#include "executionresult.h"

#include <QByteArray>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <variant>
#include <vector>

// A piece of a run's output, in the order the program wrote it.
struct OutputChunk
{
    int stream = 1; // 1 stdout, 2 stderr
    QByteArray data;
};

// A secret bound to hosts (SandboxConfig::secrets) as a run's record keeps it: the variable's
// name and the hosts the gateway adds its value for. Never the value itself: the record goes to
// the history, the window and the monitor socket, none of which may hold it.
struct BoundSecret
{
    QString name;
    QStringList hosts;

    bool operator==(const BoundSecret &other) const
    {
        return name == other.name && hosts == other.hosts;
    }
};

struct RunRecordField;

// One execution as the journal, the history and the window see it: who asked, what ran, what
// came out. Plain data, the same in every process (it crosses the monitor socket as JSON).
struct RunRecord
{
    enum class Status
    {
        Queued,
        Running,
        Ok,
        Error,
        TimedOut,
        Cancelled
    };

    QString id;         // unique across instances (a UUID)
    QString instanceId; // the server process that ran it
    qint64 instancePid = 0;
    QString source; // the assistant: its credential's name, else its clientInfo's; "manual"
    // The name its clientInfo claimed, when that is not `source` (a credential's assistant that
    // calls itself something else); "" otherwise.
    QString claimedName;
    // What identified the caller: "credential c-… (name)", "launched by /usr/bin/x (pid, uid)",
    // "the shared token"; "" for manual runs and runs recorded before identities were kept.
    QString identity;
    QString tool;      // the tool that was called, or "manual"
    QString sessionId; // the sandbox session the run belongs to; empty: a single run
    QString language;
    QString code;
    Status status = Status::Queued;
    QDateTime createdAt; // UTC
    QDateTime finishedAt;
    qint64 durationMs = -1; // program handed over → program ended; -1 while unknown
    int exitCode = -1;
    int timeoutSec = 0;
    bool outOfMemory = false;
    bool compileError = false;
    bool truncated = false;
    QString error; // the sandbox failed (engine down, image missing)
    QStringList notes;
    QString image;
    QString containerId;
    // The engine the run was placed on, when the server has several ("" with one, and in runs
    // recorded before engines were named).
    QString engine;
    // The container runtime its sandbox had (runc, runsc, a RuntimeClass; "" where the engine
    // did not say, and in runs recorded before runtimes were named).
    QString runtime;
    // The modules (Python) or packages (Node) its sandbox had imported before the program came
    // (preloading, see PreloadPlanner).
    QStringList preloaded;
    // Limits the container had.
    qint64 memoryBytes = 0;
    double cpus = 0;
    int pidsLimit = 0;
    bool network = false;
    // Peak memory and CPU time of the run, when the sandbox reported them (-1: unknown).
    qint64 peakMemoryBytes = -1;
    qint64 cpuTimeMs = -1;
    // Pass-through variables the sandbox received: names always; values only live (in memory
    // and over the per-user monitor socket), never in the history.
    QStringList envNames;
    QList<QPair<QString, QString>> envValues;
    // Secrets bound to hosts that the sandbox held placeholders for: names and hosts, stored
    // like envNames (there is no value to keep: the gateway alone has it).
    QList<BoundSecret> secrets;
    QList<OutputChunk> output;
    QList<OutputFile> files;
    // Allow-list mode: the connections the program tried (ExecutionResult::network), in order.
    QList<NetworkAttempt> connections;
    // The workspaces it had (ExecutionResult::workspaces): each WorkspaceRun::recordJson(), with
    // what the window decided since ("decision": "applied" or "discarded", "decided_at"). They
    // hold host paths and the change sets' content, so they go to the history, the monitor
    // socket and the window, never to a model (no tool reads a RunRecord). Like output and
    // files they are not a scalar field: HistoryStore::recent() leaves them out, load() has them.
    QJsonArray workspaces;
    // False for a record loaded from history without its output and files (see
    // HistoryStore::load for the whole of it).
    bool complete = true;

    bool isFinished() const { return status != Status::Queued && status != Status::Running; }
    QByteArray stdoutText() const;
    QByteArray stderrText() const;
    // Appends output, merging with the last chunk when it is of the same stream.
    void appendOutput(int stream, const QByteArray &data);
    // Takes status, exit code, timings, flags and files from a finished execution.
    // The connections as a JSON array (the history keeps it as text), and back: entries that
    // are not attempts are left out, and at most ExecutionResult::kMaxNetwork are kept.
    static QJsonArray connectionsJson(const QList<NetworkAttempt> &connections);
    static QList<NetworkAttempt> connectionsFromJson(const QJsonArray &json);
    // The bound secrets as a JSON array of {"name", "hosts"} (the history keeps it as text), and
    // back: entries without a name are left out.
    static QJsonArray secretsJson(const QList<BoundSecret> &secrets);
    static QList<BoundSecret> secretsFromJson(const QJsonArray &json);
    // The run's workspaces as its record keeps them. The content kept for a later Apply is at
    // most kMaxWorkspaceContent for the whole run (each workspace's at most
    // WorkspaceRun::kMaxRecordedContent): past it, a workspace is kept without its content, as
    // one too large to keep ("content_kept": false), so that a record stays well within what the
    // monitor socket carries (MonitorProtocol::kMaxLineToWindow) and the history queues.
    static QJsonArray workspacesJson(const QList<WorkspaceRun> &workspaces);
    // (16 MiB: base64 makes it some 22 MiB of a record's line, which must stay under what the
    // monitor socket lets wait for a slow reader, 32 MiB.)
    static constexpr qint64 kMaxWorkspaceContent = 16LL * 1024 * 1024;
    // And back from another process or the disk: the objects with a valid workspace name; the
    // rest is checked when it is used (WorkspaceRun::fromRecordJson).
    static QJsonArray workspacesFromJson(const QJsonValue &json);
    // The content bytes the workspaces hold (what the history's size cap counts of them).
    static qint64 workspaceContentBytes(const QJsonArray &workspaces);
    void applyResult(const ExecutionResult &result);

    static QString statusName(Status status); // "queued", "running", "ok", "error", ...
    static Status statusFromName(const QString &name, bool *ok = nullptr);

    // The scalar fields, each listed once (RunRecordField); output, files, workspaces,
    // environment values and `complete` are not scalars and are written out by hand.
    static const std::vector<RunRecordField> &fields();

    // JSON for the monitor socket. `withEnvValues` is false for anything that is stored.
    QJsonObject toJson(bool withEnvValues = true) const;
    static RunRecord fromJson(const QJsonObject &json);

    // Output chunks as one blob and back (1 byte stream, 4 bytes big-endian length, data).
    static QByteArray packOutput(const QList<OutputChunk> &chunks);
    static QList<OutputChunk> unpackOutput(const QByteArray &blob);
};
Q_DECLARE_METATYPE(RunRecord)

// One scalar field of a run: its key in JSON (the monitor socket), its column in the history
// (HistoryStore) and where it lives in the record. Both encodings go through RunRecord::fields(),
// so a new field is one line there (and a column in the history's schema).
struct RunRecordField
{
    using Member =
        std::variant<QString RunRecord::*, qint64 RunRecord::*, int RunRecord::*,
                     double RunRecord::*, bool RunRecord::*, QDateTime RunRecord::*,
                     QStringList RunRecord::*, RunRecord::Status RunRecord::*,
                     QList<NetworkAttempt> RunRecord::*, QList<BoundSecret> RunRecord::*>;
    const char *jsonKey;
    const char *column;
    Member member;
};
