#pragma once

#include "runrecord.h"

#include <QJsonObject>
#include <QMetaType>
#include <optional>

// What a run's sandbox used at one moment while the program ran (see Execution::usageSampled).
struct UsageSample
{
    qint64 elapsedMs = -1;   // since the program was handed over
    qint64 memoryBytes = -1; // in use now
    qint64 cpuTimeMs = -1;   // since the sandbox started, all CPUs together
};

// What happens to a run (or a sandbox session), as the window and the monitor socket see it. `run`
// always carries the id; Created and Finished carry the whole record (Finished with all output and
// files, so a window that connected mid-run still gets everything), Started the id, the status and
// the engine the run was placed on (known only then, and only with several engines). Sample
// carries the id and one UsageSample: live only, never stored.
struct JournalEvent
{
    enum class Type
    {
        Created,
        Started,
        Output,
        Finished,
        Session,   // a sandbox session's state changed: run.sessionId, sessionState
        Sample,    // what the run's sandbox uses now: run.id, sample
        Connection // a connection the run tried (allow-list mode): run.id, connection; live only,
                   // the finished record carries them all
    };

    Type type = Type::Created;
    RunRecord run;
    int stream = 1; // Output
    QByteArray data;
    QString sessionState;        // Session: "idle", "busy", "ended"
    UsageSample sample{};        // Sample
    NetworkAttempt connection{}; // Connection

    QJsonObject toJson() const;
    // Nothing for JSON that is not an event (a line from another process: never trusted).
    static std::optional<JournalEvent> fromJson(const QJsonObject &json);
};
Q_DECLARE_METATYPE(JournalEvent)
