#include "runrecord.h"

#include <QJsonArray>
#include <QJsonValue>
#include <QtEndian>
#include <cmath>
#include <limits>

namespace {
// fromJson reads what another process wrote: every reader below takes a fallback and uses it for
// a missing key or a value of the wrong type, so garbage yields a default record, never a crash.

QString readString(const QJsonObject &json, QLatin1StringView key, const QString &fallback = {})
{
    const QJsonValue v = json.value(key);
    return v.isString() ? v.toString() : fallback;
}

bool readBool(const QJsonObject &json, QLatin1StringView key, bool fallback)
{
    const QJsonValue v = json.value(key);
    return v.isBool() ? v.toBool() : fallback;
}

qint64 readInt64(const QJsonObject &json, QLatin1StringView key, qint64 fallback)
{
    const QJsonValue v = json.value(key);
    if (!v.isDouble())
        return fallback;
    // toInteger refuses fractions and values beyond qint64 by returning the fallback.
    return v.toInteger(fallback);
}

int readInt(const QJsonObject &json, QLatin1StringView key, int fallback)
{
    const qint64 v = readInt64(json, key, fallback);
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
        return fallback;
    return int(v);
}

double readDouble(const QJsonObject &json, QLatin1StringView key, double fallback)
{
    const QJsonValue v = json.value(key);
    if (!v.isDouble() || !std::isfinite(v.toDouble()))
        return fallback;
    return v.toDouble();
}

QDateTime readDate(const QJsonObject &json, QLatin1StringView key)
{
    const QJsonValue v = json.value(key);
    if (!v.isString())
        return {};
    QDateTime date = QDateTime::fromString(v.toString(), Qt::ISODateWithMs);
    return date.isValid() ? date.toUTC() : QDateTime();
}

QByteArray readBase64(const QJsonValue &v)
{
    if (!v.isString())
        return {};
    auto decoded = QByteArray::fromBase64Encoding(v.toString().toLatin1(),
                                                  QByteArray::AbortOnBase64DecodingErrors);
    return decoded ? *decoded : QByteArray();
}

QStringList readStringList(const QJsonObject &json, QLatin1StringView key)
{
    QStringList list;
    const QJsonValue v = json.value(key);
    if (!v.isArray())
        return list;
    for (const QJsonValue item : v.toArray()) {
        if (item.isString())
            list.append(item.toString());
    }
    return list;
}

QJsonValue dateValue(const QDateTime &date)
{
    // Null rather than "" so a reader can tell "not yet" from a malformed date.
    return date.isValid() ? QJsonValue(date.toUTC().toString(Qt::ISODateWithMs)) : QJsonValue();
}

QString base64(const QByteArray &data)
{
    return QString::fromLatin1(data.toBase64());
}

bool isValidStream(int stream)
{
    return stream == 1 || stream == 2;
}

QByteArray streamText(const QList<OutputChunk> &chunks, int stream)
{
    QByteArray text;
    for (const OutputChunk &chunk : chunks) {
        if (chunk.stream == stream)
            text.append(chunk.data);
    }
    return text;
}

constexpr qsizetype kChunkHeaderSize = 5;

QJsonValue jsonValue(const QString &v)
{
    return v;
}
QJsonValue jsonValue(qint64 v)
{
    return v;
}
QJsonValue jsonValue(int v)
{
    return v;
}
QJsonValue jsonValue(double v)
{
    return v;
}
QJsonValue jsonValue(bool v)
{
    return v;
}
QJsonValue jsonValue(const QDateTime &v)
{
    return dateValue(v);
}
QJsonValue jsonValue(const QStringList &v)
{
    return QJsonArray::fromStringList(v);
}
QJsonValue jsonValue(RunRecord::Status v)
{
    return RunRecord::statusName(v);
}
QJsonValue jsonValue(const QList<NetworkAttempt> &v)
{
    return RunRecord::connectionsJson(v);
}
QJsonValue jsonValue(const QList<BoundSecret> &v)
{
    return RunRecord::secretsJson(v);
}

// Each reader falls back to the default record's value (see the readers above).
void readJson(const QJsonObject &json, QLatin1StringView key, QString *v)
{
    *v = readString(json, key, *v);
}
void readJson(const QJsonObject &json, QLatin1StringView key, qint64 *v)
{
    *v = readInt64(json, key, *v);
}
void readJson(const QJsonObject &json, QLatin1StringView key, int *v)
{
    *v = readInt(json, key, *v);
}
void readJson(const QJsonObject &json, QLatin1StringView key, double *v)
{
    *v = readDouble(json, key, *v);
}
void readJson(const QJsonObject &json, QLatin1StringView key, bool *v)
{
    *v = readBool(json, key, *v);
}
void readJson(const QJsonObject &json, QLatin1StringView key, QDateTime *v)
{
    *v = readDate(json, key);
}
void readJson(const QJsonObject &json, QLatin1StringView key, QStringList *v)
{
    *v = readStringList(json, key);
}
void readJson(const QJsonObject &json, QLatin1StringView key, RunRecord::Status *v)
{
    *v = RunRecord::statusFromName(readString(json, key));
}
void readJson(const QJsonObject &json, QLatin1StringView key, QList<NetworkAttempt> *v)
{
    *v = RunRecord::connectionsFromJson(json.value(key).toArray());
}
void readJson(const QJsonObject &json, QLatin1StringView key, QList<BoundSecret> *v)
{
    *v = RunRecord::secretsFromJson(json.value(key).toArray());
}
} // namespace

const std::vector<RunRecordField> &RunRecord::fields()
{
    // The order is the history's column order in its SELECT and INSERT statements.
    static const std::vector<RunRecordField> all = {
        {"id", "id", &RunRecord::id},
        {"instanceId", "instance_id", &RunRecord::instanceId},
        {"instancePid", "instance_pid", &RunRecord::instancePid},
        {"source", "source", &RunRecord::source},
        {"tool", "tool", &RunRecord::tool},
        {"language", "language", &RunRecord::language},
        {"code", "code", &RunRecord::code},
        {"status", "status", &RunRecord::status},
        {"createdAt", "created_at", &RunRecord::createdAt},
        {"finishedAt", "finished_at", &RunRecord::finishedAt},
        {"durationMs", "duration_ms", &RunRecord::durationMs},
        {"exitCode", "exit_code", &RunRecord::exitCode},
        {"timeoutSec", "timeout_sec", &RunRecord::timeoutSec},
        {"outOfMemory", "out_of_memory", &RunRecord::outOfMemory},
        {"compileError", "compile_error", &RunRecord::compileError},
        {"truncated", "truncated", &RunRecord::truncated},
        {"error", "error", &RunRecord::error},
        {"notes", "notes", &RunRecord::notes},
        {"image", "image", &RunRecord::image},
        {"containerId", "container_id", &RunRecord::containerId},
        {"memoryBytes", "memory_bytes", &RunRecord::memoryBytes},
        {"cpus", "cpus", &RunRecord::cpus},
        {"pidsLimit", "pids_limit", &RunRecord::pidsLimit},
        {"network", "network", &RunRecord::network},
        {"peakMemoryBytes", "peak_memory_bytes", &RunRecord::peakMemoryBytes},
        {"cpuTimeMs", "cpu_time_ms", &RunRecord::cpuTimeMs},
        {"envNames", "env_names", &RunRecord::envNames},
        {"sessionId", "session_id", &RunRecord::sessionId},
        {"engine", "engine", &RunRecord::engine},
        {"connections", "connections", &RunRecord::connections},
        {"runtime", "runtime", &RunRecord::runtime},
        {"secrets", "secrets", &RunRecord::secrets},
        {"preloaded", "preloaded", &RunRecord::preloaded},
        {"claimedName", "claimed_name", &RunRecord::claimedName},
        {"identity", "identity", &RunRecord::identity},
    };
    return all;
}

QByteArray RunRecord::stdoutText() const
{
    return streamText(output, 1);
}

QByteArray RunRecord::stderrText() const
{
    return streamText(output, 2);
}

void RunRecord::appendOutput(int stream, const QByteArray &data)
{
    if (data.isEmpty())
        return;
    if (!output.isEmpty() && output.last().stream == stream)
        output.last().data.append(data);
    else
        output.append(OutputChunk{stream, data});
}

QJsonArray RunRecord::connectionsJson(const QList<NetworkAttempt> &connections)
{
    QJsonArray out;
    for (const NetworkAttempt &a : connections)
        out.append(a.toJson());
    return out;
}

QList<NetworkAttempt> RunRecord::connectionsFromJson(const QJsonArray &json)
{
    QList<NetworkAttempt> out;
    for (const QJsonValue v : json) {
        if (out.size() >= ExecutionResult::kMaxNetwork)
            break;
        if (const std::optional<NetworkAttempt> a = NetworkAttempt::fromJson(v.toObject()))
            out.append(*a);
    }
    return out;
}

QJsonArray RunRecord::secretsJson(const QList<BoundSecret> &secrets)
{
    QJsonArray out;
    for (const BoundSecret &s : secrets)
        out.append(QJsonObject{{QStringLiteral("name"), s.name},
                               {QStringLiteral("hosts"), QJsonArray::fromStringList(s.hosts)}});
    return out;
}

QList<BoundSecret> RunRecord::secretsFromJson(const QJsonArray &json)
{
    QList<BoundSecret> out;
    for (const QJsonValue v : json) {
        const QJsonObject entry = v.toObject();
        BoundSecret s;
        s.name = readString(entry, QLatin1StringView("name"));
        // A row without a name would show nothing a person could match to a --secret.
        if (s.name.isEmpty())
            continue;
        s.hosts = readStringList(entry, QLatin1StringView("hosts"));
        out.append(s);
    }
    return out;
}

namespace {
// A workspace's record without the content of its changes: the change list and the diffs stay
// for the window to show, Apply says why it cannot (WorkspaceRun::fromRecordJson).
QJsonObject withoutContent(QJsonObject workspace)
{
    QJsonObject changes = workspace.value(u"changes").toObject();
    for (const char *kind : {"added", "modified", "deleted", "renamed"}) {
        QJsonArray list = changes.value(QLatin1StringView(kind)).toArray();
        for (qsizetype i = 0; i < list.size(); ++i) {
            QJsonObject change = list.at(i).toObject();
            change.remove(u"content");
            list[i] = change;
        }
        changes.insert(QLatin1StringView(kind), list);
    }
    workspace.insert(QStringLiteral("changes"), changes);
    workspace.insert(QStringLiteral("content_kept"), false);
    return workspace;
}

qint64 contentBytes(const QJsonObject &workspace)
{
    if (!workspace.value(u"content_kept").toBool())
        return 0;
    return qMax<qint64>(0, workspace.value(u"changes").toObject().value(u"bytes").toInteger());
}
} // namespace

QJsonArray RunRecord::workspacesJson(const QList<WorkspaceRun> &workspaces)
{
    QJsonArray out;
    qint64 kept = 0;
    for (const WorkspaceRun &w : workspaces) {
        QJsonObject json = w.recordJson();
        const qint64 bytes = contentBytes(json);
        if (bytes > 0 && kept + bytes > kMaxWorkspaceContent)
            json = withoutContent(json);
        else
            kept += bytes;
        out.append(json);
    }
    return out;
}

QJsonArray RunRecord::workspacesFromJson(const QJsonValue &json)
{
    QJsonArray out;
    for (const QJsonValue v : json.toArray()) {
        if (v.isObject() && Workspace::isValidName(v.toObject().value(u"name").toString()))
            out.append(v);
    }
    return out;
}

qint64 RunRecord::workspaceContentBytes(const QJsonArray &workspaces)
{
    qint64 bytes = 0;
    for (const QJsonValue v : workspaces)
        bytes += contentBytes(v.toObject());
    return bytes;
}

void RunRecord::applyResult(const ExecutionResult &result)
{
    if (!result.error.isEmpty())
        status = Status::Error;
    else if (result.timedOut)
        status = Status::TimedOut;
    else if (result.cancelled)
        status = Status::Cancelled;
    else if (result.exitCode == 0)
        status = Status::Ok;
    else
        status = Status::Error;
    exitCode = result.exitCode;
    durationMs = result.durationMs;
    outOfMemory = result.outOfMemory;
    compileError = result.compileError;
    truncated = result.truncated();
    error = result.error;
    notes = result.notes;
    connections = result.network;
    workspaces = workspacesJson(result.workspaces);
    // The window shows who stopped a run (it, or the client itself when this is empty).
    if (!result.cancelReason.isEmpty())
        notes.append(result.cancelReason);
    // A sandbox that failed early knows neither; keep what the record learned when it started.
    if (!result.image.isEmpty())
        image = result.image;
    if (!result.containerId.isEmpty())
        containerId = result.containerId;
    if (!result.engine.isEmpty())
        engine = result.engine;
    if (!result.runtime.isEmpty())
        runtime = result.runtime;
    preloaded = result.preloaded;
    files = result.files;
    if (result.peakMemoryBytes >= 0)
        peakMemoryBytes = result.peakMemoryBytes;
    if (result.cpuTimeMs >= 0)
        cpuTimeMs = result.cpuTimeMs;
    if (result.timeoutSec > 0)
        timeoutSec = result.timeoutSec;
    finishedAt = QDateTime::currentDateTimeUtc();
}

QString RunRecord::statusName(Status status)
{
    switch (status) {
    case Status::Queued:
        return QStringLiteral("queued");
    case Status::Running:
        return QStringLiteral("running");
    case Status::Ok:
        return QStringLiteral("ok");
    case Status::Error:
        return QStringLiteral("error");
    case Status::TimedOut:
        return QStringLiteral("timed out");
    case Status::Cancelled:
        return QStringLiteral("cancelled");
    }
    return QStringLiteral("queued");
}

RunRecord::Status RunRecord::statusFromName(const QString &name, bool *ok)
{
    static const Status all[] = {Status::Queued, Status::Running,  Status::Ok,
                                 Status::Error,  Status::TimedOut, Status::Cancelled};
    for (Status s : all) {
        if (statusName(s) == name) {
            if (ok)
                *ok = true;
            return s;
        }
    }
    if (ok)
        *ok = false;
    return Status::Queued;
}

QJsonObject RunRecord::toJson(bool withEnvValues) const
{
    QJsonArray outputList;
    for (const OutputChunk &chunk : output)
        outputList.append(QJsonObject{{QStringLiteral("stream"), chunk.stream},
                                      {QStringLiteral("data"), base64(chunk.data)}});
    QJsonArray fileList;
    for (const OutputFile &f : files)
        fileList.append(QJsonObject{{QStringLiteral("kind"), f.kind == OutputFile::Kind::Plot
                                                                 ? QStringLiteral("plot")
                                                                 : QStringLiteral("output")},
                                    {QStringLiteral("name"), f.name},
                                    {QStringLiteral("mime"), f.mimeType},
                                    {QStringLiteral("size"), f.size},
                                    {QStringLiteral("included"), f.included},
                                    {QStringLiteral("data"), base64(f.data)}});

    QJsonObject json{{QStringLiteral("output"), outputList},
                     {QStringLiteral("files"), fileList},
                     {QStringLiteral("complete"), complete}};
    // Most runs have none: no key for them, so their lines stay as they were.
    if (!workspaces.isEmpty())
        json.insert(QStringLiteral("workspaces"), workspaces);
    for (const RunRecordField &field : fields())
        std::visit(
            [&](auto member) {
                json.insert(QLatin1StringView(field.jsonKey), jsonValue(this->*member));
            },
            field.member);
    if (withEnvValues) {
        QJsonArray values;
        for (const auto &[name, value] : envValues)
            values.append(QJsonArray{name, value});
        json.insert(QStringLiteral("envValues"), values);
    }
    return json;
}

RunRecord RunRecord::fromJson(const QJsonObject &json)
{
    const RunRecord defaults;
    RunRecord r;
    for (const RunRecordField &field : fields())
        std::visit(
            [&](auto member) { readJson(json, QLatin1StringView(field.jsonKey), &(r.*member)); },
            field.member);
    r.complete = readBool(json, QLatin1StringView("complete"), defaults.complete);
    r.workspaces = workspacesFromJson(json.value(QLatin1StringView("workspaces")));

    for (const QJsonValue item : json.value(QLatin1StringView("envValues")).toArray()) {
        const QJsonArray pair = item.toArray();
        if (pair.size() != 2 || !pair.at(0).isString() || !pair.at(1).isString())
            continue;
        r.envValues.append({pair.at(0).toString(), pair.at(1).toString()});
    }

    for (const QJsonValue item : json.value(QLatin1StringView("output")).toArray()) {
        const QJsonObject chunk = item.toObject();
        const int stream = readInt(chunk, QLatin1StringView("stream"), 0);
        if (!isValidStream(stream))
            continue;
        r.output.append(OutputChunk{stream, readBase64(chunk.value(QLatin1StringView("data")))});
    }

    for (const QJsonValue item : json.value(QLatin1StringView("files")).toArray()) {
        if (!item.isObject())
            continue;
        const QJsonObject file = item.toObject();
        OutputFile f;
        f.kind = readString(file, QLatin1StringView("kind")) == QLatin1StringView("plot")
                     ? OutputFile::Kind::Plot
                     : OutputFile::Kind::Output;
        f.name = readString(file, QLatin1StringView("name"));
        f.mimeType = readString(file, QLatin1StringView("mime"));
        f.data = readBase64(file.value(QLatin1StringView("data")));
        f.size = readInt64(file, QLatin1StringView("size"), f.data.size());
        f.included = readBool(file, QLatin1StringView("included"), f.included);
        r.files.append(f);
    }
    return r;
}

QByteArray RunRecord::packOutput(const QList<OutputChunk> &chunks)
{
    QByteArray blob;
    qsizetype total = 0;
    for (const OutputChunk &chunk : chunks)
        total += kChunkHeaderSize + chunk.data.size();
    blob.reserve(total);
    for (const OutputChunk &chunk : chunks) {
        // unpackOutput takes any other stream byte for garbage and stops there, which would
        // lose every chunk after it; a chunk beyond 4 GiB cannot be described by the header.
        if (!isValidStream(chunk.stream) ||
            chunk.data.size() > qsizetype(std::numeric_limits<quint32>::max()))
            continue;
        char header[kChunkHeaderSize];
        header[0] = char(chunk.stream);
        qToBigEndian(quint32(chunk.data.size()), header + 1);
        blob.append(header, kChunkHeaderSize);
        blob.append(chunk.data);
    }
    return blob;
}

QList<OutputChunk> RunRecord::unpackOutput(const QByteArray &blob)
{
    QList<OutputChunk> chunks;
    qsizetype pos = 0;
    while (blob.size() - pos >= kChunkHeaderSize) {
        const int stream = quint8(blob.at(pos));
        const quint32 length = qFromBigEndian<quint32>(blob.constData() + pos + 1);
        if (!isValidStream(stream) || qsizetype(length) > blob.size() - pos - kChunkHeaderSize)
            break;
        chunks.append(OutputChunk{stream, blob.mid(pos + kChunkHeaderSize, length)});
        pos += kChunkHeaderSize + length;
    }
    return chunks;
}
