#include "kubeerror.h"

#include <QJsonDocument>
#include <QJsonObject>

KubeError KubeError::fromHttp(int status, const QByteArray &body)
{
    KubeError e;
    e.kind = Kind::Http;
    e.status = status;
    const QJsonObject o = QJsonDocument::fromJson(body).object();
    if (o.value(u"kind").toString() == QStringLiteral("Status")) {
        e.reason = o.value(u"reason").toString();
        const QString message = o.value(u"message").toString();
        // As kubectl prints it: "Error from server (Forbidden): pods is forbidden: …".
        e.message = QStringLiteral("the cluster refused (%1): %2")
                        .arg(e.reason.isEmpty() ? QStringLiteral("HTTP %1").arg(status) : e.reason,
                             message.isEmpty() ? QStringLiteral("no message") : message);
        return e;
    }
    constexpr int kShown = 200;
    QString start = QString::fromUtf8(body.left(kShown)).simplified();
    if (body.size() > kShown)
        start += u'…';
    e.message = QStringLiteral("the cluster answered HTTP %1%2")
                    .arg(status)
                    .arg(start.isEmpty() ? QString() : QStringLiteral(": ") + start);
    return e;
}
