#include "approvalrequest.h"

#include <QJsonArray>

QJsonObject ApprovalRequest::toJson() const
{
    QJsonArray fileList;
    for (const auto &[path, size] : files)
        fileList.append(
            QJsonObject{{QStringLiteral("path"), path}, {QStringLiteral("size"), size}});
    return {{QStringLiteral("id"), id},
            {QStringLiteral("client"), client},
            {QStringLiteral("tool"), tool},
            {QStringLiteral("language"), language},
            {QStringLiteral("code"), code.left(kMaxCode)},
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
}

std::optional<ApprovalRequest> ApprovalRequest::fromJson(const QJsonObject &json)
{
    ApprovalRequest r;
    r.id = json.value(u"id").toString();
    if (r.id.isEmpty() || r.id.size() > 64)
        return std::nullopt;
    r.client = json.value(u"client").toString().left(256);
    r.tool = json.value(u"tool").toString().left(128);
    r.language = json.value(u"language").toString().left(64);
    r.code = json.value(u"code").toString().left(kMaxCode);
    r.timeoutSec = qBound(0, json.value(u"timeoutSec").toInt(), 24 * 3600);
    const QJsonArray libraries = json.value(u"libraries").toArray();
    for (qsizetype i = 0; i < qMin<qsizetype>(libraries.size(), 256); ++i)
        r.libraries.append(libraries.at(i).toString().left(256));
    const QJsonArray files = json.value(u"files").toArray();
    for (qsizetype i = 0; i < qMin<qsizetype>(files.size(), 1024); ++i) {
        const QJsonObject f = files.at(i).toObject();
        r.files.append({f.value(u"path").toString().left(1024),
                        qint64(qMax(0.0, f.value(u"size").toDouble()))});
    }
    r.sessionId = json.value(u"sessionId").toString().left(128);
    r.memoryBytes = qint64(qMax(0.0, json.value(u"memoryBytes").toDouble()));
    r.cpus = qMax(0.0, json.value(u"cpus").toDouble());
    r.network = json.value(u"network").toBool();
    r.instanceId = json.value(u"instance").toString().left(64);
    r.mode = json.value(u"mode").toString().left(16);
    r.waitSec = qBound(0, json.value(u"waitSec").toInt(), 24 * 3600);
    return r;
}
