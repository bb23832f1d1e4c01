#include "sessionblueprint.h"

#include "sandboxconfig.h"

#include <QJsonArray>

namespace {
QString modeName(SandboxSpec::Network mode)
{
    switch (mode) {
    case SandboxSpec::Network::None:
        return QStringLiteral("none");
    case SandboxSpec::Network::Open:
        return QStringLiteral("open");
    case SandboxSpec::Network::Allowlist:
        return QStringLiteral("allowlist");
    }
    return QString();
}

QStringList strings(const QJsonValue &v)
{
    QStringList list;
    for (const QJsonValue &item : v.toArray())
        list.append(item.toString());
    return list;
}
} // namespace

QJsonObject SessionBlueprint::toJson() const
{
    QStringList secrets;
    for (const SandboxSpec::Secret &s : network.secrets)
        secrets.append(s.name);
    const QJsonObject net{{QStringLiteral("mode"), modeName(network.mode)},
                          {QStringLiteral("hosts"), QJsonArray::fromStringList(network.hosts)},
                          {QStringLiteral("secrets"), QJsonArray::fromStringList(secrets)},
                          {QStringLiteral("ask_other_hosts"), network.askOtherHosts},
                          {QStringLiteral("isolation"), network.isolation}};
    return {{QStringLiteral("assistant"), assistant},
            {QStringLiteral("language"), language},
            {QStringLiteral("libraries"), QJsonArray::fromStringList(libraries)},
            {QStringLiteral("timeout_sec"), timeoutSec},
            {QStringLiteral("network"), net},
            {QStringLiteral("workspaces"), QJsonArray::fromStringList(workspaces)},
            {QStringLiteral("kept"), kept},
            {QStringLiteral("created_at"), createdAt.toString(Qt::ISODateWithMs)}};
}

SessionBlueprint SessionBlueprint::fromJson(const QJsonObject &o, const SandboxConfig &config)
{
    SessionBlueprint b;
    b.assistant = o.value(u"assistant").toString();
    b.language = o.value(u"language").toString();
    b.libraries = strings(o.value(u"libraries"));
    b.timeoutSec = o.value(u"timeout_sec").toInt();
    const QJsonObject net = o.value(u"network").toObject();
    const QString mode = net.value(u"mode").toString();
    b.network.mode = mode == u"open"        ? SandboxSpec::Network::Open
                     : mode == u"allowlist" ? SandboxSpec::Network::Allowlist
                                            : SandboxSpec::Network::None;
    b.network.hosts = strings(net.value(u"hosts"));
    const QStringList secrets = strings(net.value(u"secrets"));
    for (const SandboxSpec::Secret &s : config.secrets)
        if (secrets.contains(s.name))
            b.network.secrets.append(s);
    b.network.askOtherHosts = net.value(u"ask_other_hosts").toBool();
    b.network.isolation = net.value(u"isolation").toString();
    for (const QString &name : strings(o.value(u"workspaces")))
        if (config.workspace(name))
            b.workspaces.append(name);
    b.kept = o.value(u"kept").toBool();
    b.createdAt = QDateTime::fromString(o.value(u"created_at").toString(), Qt::ISODateWithMs);
    return b;
}
