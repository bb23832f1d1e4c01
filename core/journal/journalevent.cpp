#include "journalevent.h"

namespace {
const char *const kTypes[] = {"created", "started", "output",    "finished",
                              "session", "sample",  "connection"};
constexpr int kTypeCount = int(sizeof kTypes / sizeof kTypes[0]);

// A whole number of at least 0 and below 2^53 (a double holds it exactly), or -1.
qint64 count(const QJsonValue &v)
{
    if (!v.isDouble())
        return -1;
    const double d = v.toDouble();
    if (!(d >= 0 && d < 9007199254740992.0) || d != double(qint64(d)))
        return -1;
    return qint64(d);
}
} // namespace

QJsonObject JournalEvent::toJson() const
{
    QJsonObject json{{QStringLiteral("type"), QLatin1String(kTypes[int(type)])}};
    switch (type) {
    case Type::Created:
    case Type::Finished:
        json.insert(QStringLiteral("run"), run.toJson(true));
        break;
    case Type::Started:
        json.insert(QStringLiteral("id"), run.id);
        if (!run.engine.isEmpty())
            json.insert(QStringLiteral("engine"), run.engine);
        if (!run.runtime.isEmpty())
            json.insert(QStringLiteral("runtime"), run.runtime);
        break;
    case Type::Session:
        json.insert(QStringLiteral("session"), run.sessionId);
        json.insert(QStringLiteral("state"), sessionState);
        json.insert(QStringLiteral("language"), run.language);
        break;
    case Type::Output:
        json.insert(QStringLiteral("id"), run.id);
        json.insert(QStringLiteral("stream"), stream);
        json.insert(QStringLiteral("data"), QString::fromLatin1(data.toBase64()));
        break;
    case Type::Sample:
        json.insert(QStringLiteral("id"), run.id);
        json.insert(QStringLiteral("elapsed_ms"), sample.elapsedMs);
        json.insert(QStringLiteral("memory_bytes"), sample.memoryBytes);
        json.insert(QStringLiteral("cpu_time_ms"), sample.cpuTimeMs);
        break;
    case Type::Connection:
        json.insert(QStringLiteral("id"), run.id);
        json.insert(QStringLiteral("connection"), connection.toJson());
        json.insert(QStringLiteral("connection_id"), qint64(connection.id));
        break;
    }
    return json;
}

std::optional<JournalEvent> JournalEvent::fromJson(const QJsonObject &json)
{
    const QString type = json.value(u"type").toString();
    JournalEvent event;
    int index = -1;
    for (int i = 0; i < kTypeCount; ++i) {
        if (type == QLatin1String(kTypes[i]))
            index = i;
    }
    if (index < 0)
        return std::nullopt;
    event.type = Type(index);
    if (event.type == Type::Session) {
        event.run.sessionId = json.value(u"session").toString();
        event.run.language = json.value(u"language").toString();
        event.sessionState = json.value(u"state").toString();
        if (event.run.sessionId.isEmpty() || event.sessionState.isEmpty())
            return std::nullopt;
        return event;
    }
    if (event.type == Type::Created || event.type == Type::Finished) {
        if (!json.value(u"run").isObject())
            return std::nullopt;
        event.run = RunRecord::fromJson(json.value(u"run").toObject());
    } else {
        event.run.id = json.value(u"id").toString();
    }
    if (event.run.id.isEmpty())
        return std::nullopt;
    if (event.type == Type::Started) {
        event.run.status = RunRecord::Status::Running;
        event.run.engine = json.value(u"engine").toString();
        event.run.runtime = json.value(u"runtime").toString();
    }
    if (event.type == Type::Sample) {
        // All three, each a plain count: a sample the chart would have to guess at is none.
        event.sample.elapsedMs = count(json.value(u"elapsed_ms"));
        event.sample.memoryBytes = count(json.value(u"memory_bytes"));
        event.sample.cpuTimeMs = count(json.value(u"cpu_time_ms"));
        if (event.sample.elapsedMs < 0 || event.sample.memoryBytes < 0 ||
            event.sample.cpuTimeMs < 0)
            return std::nullopt;
    }
    if (event.type == Type::Connection) {
        const std::optional<NetworkAttempt> attempt =
            NetworkAttempt::fromJson(json.value(u"connection").toObject());
        const qint64 connectionId = count(json.value(u"connection_id"));
        if (!attempt || connectionId < 0)
            return std::nullopt;
        event.connection = *attempt;
        event.connection.id = quint64(connectionId);
    }
    if (event.type == Type::Output) {
        event.stream = json.value(u"stream").toInt(1) == 2 ? 2 : 1;
        event.data = QByteArray::fromBase64(json.value(u"data").toString().toLatin1());
    }
    return event;
}
