#include "approvalrequest.h"

#include <QJsonArray>

QJsonObject ApprovalRequest::toJson() const
{
    QJsonArray fileList;
    for (const auto &[path, size] : files)
        fileList.append(
            QJsonObject{{QStringLiteral("path"), path}, {QStringLiteral("size"), size}});
    QJsonObject o{{QStringLiteral("id"), id},
                  {QStringLiteral("client"), client},
                  {QStringLiteral("tool"), tool},
                  {QStringLiteral("language"), language},
                  {QStringLiteral("code"), code},
                  {QStringLiteral("timeoutSec"), timeoutSec},
                  {QStringLiteral("libraries"), QJsonArray::fromStringList(libraries)},
                  {QStringLiteral("files"), fileList},
                  {QStringLiteral("sessionId"), sessionId},
                  {QStringLiteral("memoryBytes"), memoryBytes},
                  {QStringLiteral("cpus"), cpus},
                  {QStringLiteral("network"), network},
                  {QStringLiteral("instance"), instanceId},
                  {QStringLiteral("mode"), mode},
                  {QStringLiteral("waitSec"), waitSec}};
    // Only when there is one, so that the lines of runs without it stay as they were.
    if (!egress.isEmpty())
        o.insert(QStringLiteral("egress"), QJsonArray::fromStringList(egress));
    if (!workspaces.isEmpty())
        o.insert(QStringLiteral("workspaces"), QJsonArray::fromStringList(workspaces));
    if (!identity.isEmpty())
        o.insert(QStringLiteral("identity"), identity);
    if (isConnection()) {
        o.insert(QStringLiteral("host"), host);
        o.insert(QStringLiteral("port"), port);
        o.insert(QStringLiteral("runId"), runId);
    }
    return o;
}

QString ApprovalRequest::hostPort() const
{
    if (host.contains(u':'))
        return QStringLiteral("[%1]:%2").arg(host).arg(port);
    return QStringLiteral("%1:%2").arg(host).arg(port);
}

QString ApprovalRequest::hostPattern() const
{
    return port == 443 || port == 80 ? host : hostPort();
}

std::optional<ApprovalRequest> ApprovalRequest::fromJson(const QJsonObject &json)
{
    ApprovalRequest r;
    // A field that names something and is longer than any real one: not a request of ours.
    bool valid = true;
    const auto bounded = [&json, &valid](QStringView key, qsizetype max) {
        const QString value = json.value(key).toString();
        valid = valid && value.size() <= max;
        return value;
    };
    r.id = bounded(u"id", 64);
    r.tool = bounded(u"tool", 128);
    r.language = bounded(u"language", 64);
    r.sessionId = bounded(u"sessionId", 128);
    r.instanceId = bounded(u"instance", 64);
    r.mode = bounded(u"mode", 16);
    // A host name is at most 253 characters (an address fewer).
    r.host = bounded(u"host", 253);
    r.runId = bounded(u"runId", 64);
    r.identity = bounded(u"identity", 8192);
    const int port = json.value(u"port").toInt();
    if (!r.host.isEmpty() && (port < 1 || port > 65535))
        valid = false;
    r.port = r.host.isEmpty() ? 0 : port;
    if (!valid || r.id.isEmpty())
        return std::nullopt;
    // What runs, and who asks, whole: the line that carried them bounds them.
    r.client = json.value(u"client").toString();
    r.code = json.value(u"code").toString();
    for (const QJsonValue &library : json.value(u"libraries").toArray())
        r.libraries.append(library.toString());
    for (const QJsonValue &workspace : json.value(u"workspaces").toArray())
        r.workspaces.append(workspace.toString());
    for (const QJsonValue &file : json.value(u"files").toArray()) {
        const QJsonObject f = file.toObject();
        r.files.append(
            {f.value(u"path").toString(), qint64(qMax(0.0, f.value(u"size").toDouble()))});
    }
    r.timeoutSec = qBound(0, json.value(u"timeoutSec").toInt(), 24 * 3600);
    r.memoryBytes = qint64(qMax(0.0, json.value(u"memoryBytes").toDouble()));
    r.cpus = qMax(0.0, json.value(u"cpus").toDouble());
    r.network = json.value(u"network").toBool();
    for (const QJsonValue &host : json.value(u"egress").toArray())
        r.egress.append(host.toString());
    r.waitSec = qBound(0, json.value(u"waitSec").toInt(), 24 * 3600);
    return r;
}
