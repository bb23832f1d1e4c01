#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QMetaType>
#include <QString>

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
    int timeoutSec = 0;
    qint64 durationMs = 0; // program handed over → program ended
    QString language;
    QString image;
    QString containerId;
    // Set when the sandbox itself failed (engine down, image missing): no program ran.
    QString error;

    bool succeeded() const { return error.isEmpty() && !timedOut && !cancelled && exitCode == 0; }
    bool truncated() const { return stdoutTruncated || stderrTruncated; }
    QJsonObject toJson() const;
};

Q_DECLARE_METATYPE(ExecutionResult)
