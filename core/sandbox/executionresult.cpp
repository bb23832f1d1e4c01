#include "executionresult.h"

#include <QJsonArray>

QString ExecutionResult::verdictName(NetworkAttempt::Verdict verdict)
{
    switch (verdict) {
    case NetworkAttempt::Verdict::Allowed:
        return QStringLiteral("allowed");
    case NetworkAttempt::Verdict::Refused:
        return QStringLiteral("refused");
    case NetworkAttempt::Verdict::Failed:
        return QStringLiteral("failed");
    }
    return QStringLiteral("refused");
}

QJsonObject ExecutionResult::toJson() const
{
    QJsonArray fileList;
    for (const OutputFile &f : files)
        fileList.append(QJsonObject{{QStringLiteral("name"), f.name},
                                    {QStringLiteral("kind"), f.kind == OutputFile::Kind::Plot
                                                                 ? QStringLiteral("plot")
                                                                 : QStringLiteral("output")},
                                    {QStringLiteral("size"), f.size},
                                    {QStringLiteral("mime_type"), f.mimeType},
                                    {QStringLiteral("included"), f.included}});
    QJsonObject o{{QStringLiteral("exit_code"), exitCode < 0 ? QJsonValue() : QJsonValue(exitCode)},
                  {QStringLiteral("stdout"), QString::fromUtf8(stdoutData)},
                  {QStringLiteral("stderr"), QString::fromUtf8(stderrData)},
                  {QStringLiteral("duration_ms"), durationMs},
                  {QStringLiteral("timed_out"), timedOut},
                  {QStringLiteral("out_of_memory"), outOfMemory},
                  {QStringLiteral("truncated"), truncated()},
                  {QStringLiteral("compile_error"), compileError},
                  {QStringLiteral("files"), fileList},
                  {QStringLiteral("language"), language},
                  {QStringLiteral("image"), image}};
    if (!engine.isEmpty())
        o.insert(QStringLiteral("engine"), engine);
    if (cancelled)
        o.insert(QStringLiteral("cancelled"), true);
    if (!cancelReason.isEmpty())
        o.insert(QStringLiteral("cancel_reason"), cancelReason);
    if (!notes.isEmpty())
        o.insert(QStringLiteral("notes"), QJsonArray::fromStringList(notes));
    if (!network.isEmpty()) {
        QJsonArray attempts;
        for (const NetworkAttempt &a : network) {
            QJsonObject one{{QStringLiteral("host"), a.host},
                            {QStringLiteral("port"), a.port},
                            {QStringLiteral("verdict"), verdictName(a.verdict)},
                            {QStringLiteral("rule"), a.rule}};
            if (a.bytesUp >= 0) {
                one.insert(QStringLiteral("bytes_sent"), a.bytesUp);
                one.insert(QStringLiteral("bytes_received"), a.bytesDown);
                one.insert(QStringLiteral("duration_ms"), a.ms);
            }
            attempts.append(one);
        }
        o.insert(QStringLiteral("network"), attempts);
    }
    return o;
}
