#include "journalevent.h"

namespace {
const char *const kTypes[] = {"created", "started", "output", "finished", "session"};
}

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
    }
    return json;
}

std::optional<JournalEvent> JournalEvent::fromJson(const QJsonObject &json)
{
    const QString type = json.value(u"type").toString();
    JournalEvent event;
    int index = -1;
    for (int i = 0; i < 5; ++i) {
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
    }
    if (event.type == Type::Output) {
        event.stream = json.value(u"stream").toInt(1) == 2 ? 2 : 1;
        event.data = QByteArray::fromBase64(json.value(u"data").toString().toLatin1());
    }
    return event;
}
