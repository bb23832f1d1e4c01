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
} // namespace

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
    // A sandbox that failed early knows neither; keep what the record learned when it started.
    if (!result.image.isEmpty())
        image = result.image;
    if (!result.containerId.isEmpty())
        containerId = result.containerId;
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

    QJsonObject json{{QStringLiteral("id"), id},
                     {QStringLiteral("instanceId"), instanceId},
                     {QStringLiteral("instancePid"), instancePid},
                     {QStringLiteral("source"), source},
                     {QStringLiteral("tool"), tool},
                     {QStringLiteral("sessionId"), sessionId},
                     {QStringLiteral("language"), language},
                     {QStringLiteral("code"), code},
                     {QStringLiteral("status"), statusName(status)},
                     {QStringLiteral("createdAt"), dateValue(createdAt)},
                     {QStringLiteral("finishedAt"), dateValue(finishedAt)},
                     {QStringLiteral("durationMs"), durationMs},
                     {QStringLiteral("exitCode"), exitCode},
                     {QStringLiteral("timeoutSec"), timeoutSec},
                     {QStringLiteral("outOfMemory"), outOfMemory},
                     {QStringLiteral("compileError"), compileError},
                     {QStringLiteral("truncated"), truncated},
                     {QStringLiteral("error"), error},
                     {QStringLiteral("notes"), QJsonArray::fromStringList(notes)},
                     {QStringLiteral("image"), image},
                     {QStringLiteral("containerId"), containerId},
                     {QStringLiteral("memoryBytes"), memoryBytes},
                     {QStringLiteral("cpus"), cpus},
                     {QStringLiteral("pidsLimit"), pidsLimit},
                     {QStringLiteral("network"), network},
                     {QStringLiteral("peakMemoryBytes"), peakMemoryBytes},
                     {QStringLiteral("cpuTimeMs"), cpuTimeMs},
                     {QStringLiteral("envNames"), QJsonArray::fromStringList(envNames)},
                     {QStringLiteral("output"), outputList},
                     {QStringLiteral("files"), fileList},
                     {QStringLiteral("complete"), complete}};
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
    r.id = readString(json, QLatin1StringView("id"));
    r.instanceId = readString(json, QLatin1StringView("instanceId"));
    r.instancePid = readInt64(json, QLatin1StringView("instancePid"), defaults.instancePid);
    r.source = readString(json, QLatin1StringView("source"));
    r.tool = readString(json, QLatin1StringView("tool"));
    r.sessionId = readString(json, QLatin1StringView("sessionId"));
    r.language = readString(json, QLatin1StringView("language"));
    r.code = readString(json, QLatin1StringView("code"));
    r.status = statusFromName(readString(json, QLatin1StringView("status")));
    r.createdAt = readDate(json, QLatin1StringView("createdAt"));
    r.finishedAt = readDate(json, QLatin1StringView("finishedAt"));
    r.durationMs = readInt64(json, QLatin1StringView("durationMs"), defaults.durationMs);
    r.exitCode = readInt(json, QLatin1StringView("exitCode"), defaults.exitCode);
    r.timeoutSec = readInt(json, QLatin1StringView("timeoutSec"), defaults.timeoutSec);
    r.outOfMemory = readBool(json, QLatin1StringView("outOfMemory"), defaults.outOfMemory);
    r.compileError = readBool(json, QLatin1StringView("compileError"), defaults.compileError);
    r.truncated = readBool(json, QLatin1StringView("truncated"), defaults.truncated);
    r.error = readString(json, QLatin1StringView("error"));
    r.notes = readStringList(json, QLatin1StringView("notes"));
    r.image = readString(json, QLatin1StringView("image"));
    r.containerId = readString(json, QLatin1StringView("containerId"));
    r.memoryBytes = readInt64(json, QLatin1StringView("memoryBytes"), defaults.memoryBytes);
    r.cpus = readDouble(json, QLatin1StringView("cpus"), defaults.cpus);
    r.pidsLimit = readInt(json, QLatin1StringView("pidsLimit"), defaults.pidsLimit);
    r.network = readBool(json, QLatin1StringView("network"), defaults.network);
    r.peakMemoryBytes =
        readInt64(json, QLatin1StringView("peakMemoryBytes"), defaults.peakMemoryBytes);
    r.cpuTimeMs = readInt64(json, QLatin1StringView("cpuTimeMs"), defaults.cpuTimeMs);
    r.envNames = readStringList(json, QLatin1StringView("envNames"));
    r.complete = readBool(json, QLatin1StringView("complete"), defaults.complete);

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
