#pragma once

#include "workspacerun.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <optional>

// A file the run produced: a matplotlib figure, or a file left in the output folder.
struct OutputFile
{
    enum class Kind
    {
        Plot,
        Output
    };
    Kind kind = Kind::Output;
    QString name; // plots: "figure-0001.png"; outputs: path relative to the output folder
    QByteArray data;
    qint64 size = 0;
    QString mimeType;
    bool included = true; // false: over the size caps, `data` is empty
};

// One connection the program tried through the allow-list mode's egress gateway.
struct NetworkAttempt
{
    quint64 id = 0; // the gateway's, to match its end
    QString host;
    int port = 0;
    enum class Verdict
    {
        Allowed, // through to the host
        Refused, // by the gateway: not on the list, a name that leads inward, a wrong TLS name
        Failed,  // allowed, but the host could not be reached
        // Held by the gateway while a person is asked (AssistantPolicy::otherHosts): live only,
        // as a journal event; its decision comes as another attempt with the same id, and a
        // result never holds one.
        Held
    };
    Verdict verdict = Verdict::Refused;
    QString rule;        // the pattern that allowed it, or why it was refused or failed
    qint64 bytesUp = -1; // program → host, once the connection ended (-1 before)
    qint64 bytesDown = -1;
    qint64 ms = -1;
    // The secrets the gateway added to its request (names only; --secret).
    QStringList secrets;

    // As structuredContent has it (without the id); the bytes and duration once it ended.
    QJsonObject toJson() const;
    // From another process (the monitor socket, the history): trusts nothing, and gives nothing
    // for an object that is not an attempt. The id is the caller's to carry.
    static std::optional<NetworkAttempt> fromJson(const QJsonObject &json);
    bool operator==(const NetworkAttempt &other) const;
};

struct ExecutionResult
{
    int exitCode = -1; // -1 when the program never reported one
    QByteArray stdoutData;
    QByteArray stderrData;
    bool stdoutTruncated = false;
    bool stderrTruncated = false;
    bool timedOut = false;
    bool outOfMemory = false; // the kernel killed the program for exceeding the memory limit
    bool cancelled = false;
    QString cancelReason;      // who stopped it, when not the caller itself
    bool compileError = false; // the build step of a compiled language failed
    QList<OutputFile> files;   // plots in creation order, then output files by name
    int timeoutSec = 0;
    qint64 durationMs = 0; // program handed over → program ended
    // The container's peak memory and CPU time as its supervisor read them from the cgroup when
    // the program ended (-1: not reported).
    qint64 peakMemoryBytes = -1;
    qint64 cpuTimeMs = -1;
    // Python: the modules its sandbox imported ahead while it waited for the program
    // (PreloadPlanner), with the memory each took in bytes (same order); the ones asked for
    // that failed or were slow to import; and the modules the program's code imported, as its
    // loader reported them (what the server learns from).
    QStringList preloaded;
    QList<qint64> preloadCosts;
    QStringList preloadDropped;
    QStringList imports;
    QString language;
    QString image;
    QString containerId;
    // The engine that ran it, when the server has several ("" with one).
    QString engine;
    // The container runtime its sandbox had (see SandboxContainer::runtime).
    QString runtime;
    // Things the caller should know that are not output (files left out, libraries used).
    QStringList notes;
    // Allow-list mode: every connection the program tried, in order (at most kMaxNetwork).
    QList<NetworkAttempt> network;
    static constexpr int kMaxNetwork = 200;
    // The workspaces it had, what went in, and the copy-on-write ones' change sets.
    QList<WorkspaceRun> workspaces;
    // "allowed", "refused", "failed": as structuredContent and the history say it.
    static QString verdictName(NetworkAttempt::Verdict verdict);
    // The connections with this verdict as "host:port (rule)", each once, in order: what a
    // sentence to the caller names.
    QStringList connectionsWith(NetworkAttempt::Verdict verdict) const;
    // Set when the sandbox itself failed (engine down, image missing): no program ran.
    QString error;

    bool succeeded() const { return error.isEmpty() && !timedOut && !cancelled && exitCode == 0; }
    bool truncated() const { return stdoutTruncated || stderrTruncated; }
    QJsonObject toJson() const;
};

Q_DECLARE_METATYPE(ExecutionResult)
