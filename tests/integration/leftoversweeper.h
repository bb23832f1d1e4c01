#pragma once

#include "engineclient.h"
#include "enginereply.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSignalSpy>
#include <QStringList>
#include <QTest>
#include <QUrl>

// After a failed test the service may not have removed its containers (the test returned early);
// this removes whatever carries the test's instance label so one failure does not cascade into
// the next tests, which check that nothing is left.
class LeftoverSweeper
{
public:
    // The engine's filters argument that picks what carries the instance's label.
    static QByteArray filterOf(const QString &instance)
    {
        const QJsonObject filters{
            {QStringLiteral("label"),
             QJsonArray{QStringLiteral("code-sandbox.instance=") + instance}}};
        return QUrl::toPercentEncoding(
            QString::fromUtf8(QJsonDocument(filters).toJson(QJsonDocument::Compact)));
    }

    static QStringList containersOf(EngineClient &engine, const QString &instance)
    {
        EngineReply *r = engine.get("/containers/json?all=1&filters=" + filterOf(instance));
        QSignalSpy spy(r, &EngineReply::finished);
        if (!spy.wait(10000) || !r->ok())
            return {QStringLiteral("<engine query failed>")};
        QStringList ids;
        for (const QJsonValue &v : QJsonDocument::fromJson(r->body()).array())
            ids.append(v.toObject().value(u"Id").toString());
        return ids;
    }

    // The names of the volumes that carry the instance's label (the sandboxes' work volumes).
    static QStringList volumesOf(EngineClient &engine, const QString &instance)
    {
        EngineReply *r = engine.get("/volumes?filters=" + filterOf(instance));
        QSignalSpy spy(r, &EngineReply::finished);
        if (!spy.wait(10000) || !r->ok())
            return {QStringLiteral("<engine query failed>")};
        QStringList names;
        for (const QJsonValue &v : r->json().value(u"Volumes").toArray())
            names.append(v.toObject().value(u"Name").toString());
        return names;
    }

    // For a test's cleanup(): after a failure, sweeps every instance the test used; always
    // forgets them.
    static void sweepAfterFailure(const QString &socket, QStringList &instances)
    {
        if (QTest::currentTestFailed())
            for (const QString &instance : std::as_const(instances))
                sweep(socket, instance);
        instances.clear();
    }

    static void sweep(const QString &socket, const QString &instance)
    {
        EngineClient engine(socket);
        for (const QString &id : containersOf(engine, instance)) {
            EngineReply *r = engine.del("/containers/" + id.toLatin1() + "?force=1&v=1");
            QSignalSpy spy(r, &EngineReply::finished);
            spy.wait(10000);
        }
    }
};
