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
    case NetworkAttempt::Verdict::Held:
        return QStringLiteral("asking");
    }
    return QStringLiteral("refused");
}

QStringList ExecutionResult::connectionsWith(NetworkAttempt::Verdict verdict) const
{
    QStringList out;
    for (const NetworkAttempt &a : network) {
        const QString line = QStringLiteral("%1:%2 (%3)").arg(a.host).arg(a.port).arg(a.rule);
        if (a.verdict == verdict && !out.contains(line))
            out.append(line);
    }
    return out;
}

QJsonObject NetworkAttempt::toJson() const
{
    QJsonObject one{{QStringLiteral("host"), host},
                    {QStringLiteral("port"), port},
                    {QStringLiteral("verdict"), ExecutionResult::verdictName(verdict)},
                    {QStringLiteral("rule"), rule}};
    if (bytesUp >= 0) {
        one.insert(QStringLiteral("bytes_sent"), bytesUp);
        one.insert(QStringLiteral("bytes_received"), bytesDown);
        one.insert(QStringLiteral("duration_ms"), ms);
    }
    if (!secrets.isEmpty())
        one.insert(QStringLiteral("secrets_added"), QJsonArray::fromStringList(secrets));
    return one;
}

std::optional<NetworkAttempt> NetworkAttempt::fromJson(const QJsonObject &json)
{
    NetworkAttempt a;
    const QString verdict = json.value(u"verdict").toString();
    const int port = json.value(u"port").toInt(-1);
    a.host = json.value(u"host").toString();
    a.rule = json.value(u"rule").toString();
    // A host name is at most 253 characters ([v6] a little less); a rule is a sentence.
    if (a.host.isEmpty() || a.host.size() > 255 || a.rule.size() > 1024 || port < 1 || port > 65535)
        return std::nullopt;
    a.port = port;
    if (verdict == u"allowed")
        a.verdict = Verdict::Allowed;
    else if (verdict == u"refused")
        a.verdict = Verdict::Refused;
    else if (verdict == u"failed")
        a.verdict = Verdict::Failed;
    else if (verdict == u"asking")
        a.verdict = Verdict::Held;
    else
        return std::nullopt;
    const auto count = [&json](QStringView key) {
        const double v = json.value(key).toDouble(-1);
        return v >= 0 && v < 9e15 ? qint64(v) : qint64(-1);
    };
    a.bytesUp = count(u"bytes_sent");
    a.bytesDown = count(u"bytes_received");
    a.ms = count(u"duration_ms");
    // The three come together or not at all.
    if (a.bytesUp < 0 || a.bytesDown < 0 || a.ms < 0)
        a.bytesUp = a.bytesDown = a.ms = -1;
    for (const QJsonValue &name : json.value(u"secrets_added").toArray())
        if (name.isString() && name.toString().size() <= 128 && a.secrets.size() < 32)
            a.secrets.append(name.toString());
    return a;
}

bool NetworkAttempt::operator==(const NetworkAttempt &o) const
{
    return id == o.id && host == o.host && port == o.port && verdict == o.verdict &&
           rule == o.rule && bytesUp == o.bytesUp && bytesDown == o.bytesDown && ms == o.ms &&
           secrets == o.secrets;
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
    if (!preloaded.isEmpty())
        o.insert(QStringLiteral("preloaded"), QJsonArray::fromStringList(preloaded));
    if (!network.isEmpty()) {
        QJsonArray attempts;
        for (const NetworkAttempt &a : network) {
            attempts.append(a.toJson());
        }
        o.insert(QStringLiteral("network"), attempts);
    }
    if (!workspaces.isEmpty()) {
        QJsonArray list;
        for (const WorkspaceRun &w : workspaces)
            list.append(w.toJson());
        o.insert(QStringLiteral("workspaces"), list);
    }
    return o;
}
