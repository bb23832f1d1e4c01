#include "executionresult.h"

QJsonObject ExecutionResult::toJson() const
{
    return {{QStringLiteral("exit_code"), exitCode < 0 ? QJsonValue() : QJsonValue(exitCode)},
            {QStringLiteral("stdout"), QString::fromUtf8(stdoutData)},
            {QStringLiteral("stderr"), QString::fromUtf8(stderrData)},
            {QStringLiteral("duration_ms"), durationMs},
            {QStringLiteral("timed_out"), timedOut},
            {QStringLiteral("out_of_memory"), outOfMemory},
            {QStringLiteral("truncated"), truncated()},
            {QStringLiteral("language"), language},
            {QStringLiteral("image"), image}};
}
