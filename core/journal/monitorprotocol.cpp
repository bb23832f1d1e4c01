#include "monitorprotocol.h"

#include <QJsonDocument>

namespace {
template <class... Ts> struct MessageVisitor : Ts...
{
    using Ts::operator()...;
};
template <class... Ts> MessageVisitor(Ts...) -> MessageVisitor<Ts...>;

// Reads the fields of one message: a field that is there must have its type (an old or a new
// instance never sends another), one that is missing reads as empty; `ok` says whether all held.
struct MessageFields
{
    const QJsonObject &json;
    bool ok = true;

    QString string(QStringView key)
    {
        const QJsonValue v = json.value(key);
        if (v.isUndefined())
            return {};
        ok = ok && v.isString();
        return v.toString();
    }
    // A string that must be there and not be empty.
    QString name(QStringView key)
    {
        const QString value = string(key);
        ok = ok && !value.isEmpty();
        return value;
    }
    qint64 integer(QStringView key)
    {
        const QJsonValue v = json.value(key);
        if (v.isUndefined())
            return 0;
        ok = ok && v.isDouble();
        return v.toInteger();
    }
};

MonitorProtocol::Decoded rejectedLine(const QString &type, const QString &error)
{
    // The type only names the line in a log message: a long one is not a type of ours.
    return {std::nullopt, type.left(40), error};
}

MonitorProtocol::Decoded decodeToWindow(const QJsonObject &json, const QString &type)
{
    using P = MonitorProtocol;
    MessageFields f{json};
    if (type == u"hello") {
        P::Hello hello{f.name(u"instance"), f.integer(u"pid"), f.string(u"mode"),
                       f.string(u"version")};
        if (!f.ok)
            return rejectedLine(
                type,
                QStringLiteral("a hello without its instance, or with a field of another type"));
        return {hello, type, {}};
    }
    if (type == u"show")
        return {P::Show{}, type, {}};
    if (type == u"approve") {
        std::optional<ApprovalRequest> request =
            ApprovalRequest::fromJson(json.value(u"request").toObject());
        if (!request || !json.value(u"request").isObject())
            return rejectedLine(
                type,
                QStringLiteral("an approval request without an id, or with a field too long"));
        return {P::Approve{*request}, type, {}};
    }
    if (type == u"sign-in") {
        P::SignIn signIn{f.name(u"id"),       f.string(u"clientId"),    f.string(u"clientName"),
                         f.string(u"source"), f.string(u"redirectUri"), f.string(u"openedFrom")};
        for (const QString *field : {&signIn.id, &signIn.clientId, &signIn.clientName,
                                     &signIn.source, &signIn.redirectUri, &signIn.openedFrom})
            f.ok = f.ok && field->size() <= P::kMaxSignInField;
        if (!f.ok)
            return rejectedLine(type, QStringLiteral("a sign-in without its id, or with a field "
                                                     "of another type or too long"));
        return {signIn, type, {}};
    }
    if (type == u"withdraw") {
        P::Withdraw withdraw{f.name(u"id"), f.string(u"why").left(P::kMaxWhy)};
        if (!f.ok)
            return rejectedLine(
                type,
                QStringLiteral(
                    "a withdrawal without the approval's id, or with a field of another type"));
        return {withdraw, type, {}};
    }
    if (std::optional<JournalEvent> event = JournalEvent::fromJson(json))
        return {*event, type, {}};
    return rejectedLine(type, QStringLiteral("an unknown message"));
}

MonitorProtocol::Decoded decodeToInstance(const QJsonObject &json, const QString &type)
{
    using P = MonitorProtocol;
    MessageFields f{json};
    if (type == u"stop") {
        P::Stop stop{f.name(u"run")};
        if (!f.ok)
            return rejectedLine(
                type,
                QStringLiteral("a stop request without its run, or with a field of another type"));
        return {stop, type, {}};
    }
    if (type == u"sign-in-answer") {
        const QJsonValue allow = json.value(u"allow");
        P::SignInAnswer answer{f.name(u"id"), allow.toBool(), f.string(u"assistant")};
        if (!f.ok || !allow.isBool())
            return rejectedLine(type, QStringLiteral("a sign-in's answer without its id or "
                                                     "allow, or with a field of another type"));
        return {answer, type, {}};
    }
    if (type == u"approval") {
        P::Answer answer{f.name(u"id"), f.string(u"answer"), f.string(u"reason")};
        if (!f.ok)
            return rejectedLine(
                type, QStringLiteral(
                          "an answer without the approval's id, or with a field of another type"));
        return {answer, type, {}};
    }
    return rejectedLine(type, QStringLiteral("an unknown message"));
}
} // namespace

QJsonObject MonitorProtocol::Hello::toJson() const
{
    return {{QStringLiteral("type"), QStringLiteral("hello")},
            {QStringLiteral("instance"), instance},
            {QStringLiteral("pid"), pid},
            {QStringLiteral("mode"), mode},
            {QStringLiteral("version"), version}};
}

qsizetype MonitorProtocol::maxLine(Direction direction)
{
    return direction == Direction::ToWindow ? kMaxLineToWindow : kMaxLineToInstance;
}

QByteArray MonitorProtocol::encode(const Message &message)
{
    const QJsonObject json = std::visit(
        MessageVisitor{
            [](const Hello &m) { return m.toJson(); },
            [](const Show &) {
                return QJsonObject{{QStringLiteral("type"), QStringLiteral("show")}};
            },
            [](const JournalEvent &m) { return m.toJson(); },
            [](const Approve &m) {
                return QJsonObject{{QStringLiteral("type"), QStringLiteral("approve")},
                                   {QStringLiteral("request"), m.request.toJson()}};
            },
            [](const Withdraw &m) {
                return QJsonObject{{QStringLiteral("type"), QStringLiteral("withdraw")},
                                   {QStringLiteral("id"), m.id},
                                   {QStringLiteral("why"), m.why}};
            },
            [](const Stop &m) {
                return QJsonObject{{QStringLiteral("type"), QStringLiteral("stop")},
                                   {QStringLiteral("run"), m.run}};
            },
            [](const SignIn &m) {
                return QJsonObject{{QStringLiteral("type"), QStringLiteral("sign-in")},
                                   {QStringLiteral("id"), m.id},
                                   {QStringLiteral("clientId"), m.clientId},
                                   {QStringLiteral("clientName"), m.clientName},
                                   {QStringLiteral("source"), m.source},
                                   {QStringLiteral("redirectUri"), m.redirectUri},
                                   {QStringLiteral("openedFrom"), m.openedFrom}};
            },
            [](const SignInAnswer &m) {
                return QJsonObject{{QStringLiteral("type"), QStringLiteral("sign-in-answer")},
                                   {QStringLiteral("id"), m.id},
                                   {QStringLiteral("allow"), m.allow},
                                   {QStringLiteral("assistant"), m.assistant}};
            },
            [](const Answer &m) {
                return QJsonObject{{QStringLiteral("type"), QStringLiteral("approval")},
                                   {QStringLiteral("id"), m.id},
                                   {QStringLiteral("answer"), m.answer},
                                   {QStringLiteral("reason"), m.reason}};
            },
        },
        message);
    return QJsonDocument(json).toJson(QJsonDocument::Compact) + '\n';
}

MonitorProtocol::Decoded MonitorProtocol::decode(const QByteArray &line, Direction direction)
{
    if (line.size() > maxLine(direction))
        return rejectedLine({},
                            QStringLiteral("a line longer than %1 bytes").arg(maxLine(direction)));
    const QJsonDocument doc = QJsonDocument::fromJson(line);
    if (!doc.isObject())
        return rejectedLine({}, QStringLiteral("a message that is not a JSON object"));
    const QJsonObject json = doc.object();
    const QJsonValue type = json.value(u"type");
    if (!type.isString())
        return rejectedLine({}, QStringLiteral("a message without a type"));
    return direction == Direction::ToWindow ? decodeToWindow(json, type.toString())
                                            : decodeToInstance(json, type.toString());
}
