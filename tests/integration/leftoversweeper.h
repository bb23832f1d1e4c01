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
        return labelFilter(QStringLiteral("code-sandbox.instance=") + instance);
    }
    static QByteArray labelFilter(const QString &label)
    {
        const QJsonObject filters{{QStringLiteral("label"), QJsonArray{label}}};
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

    // The egress gateways (container ids) and their networks (names) an instance made and has
    // not removed.
    static QStringList gatewaysOf(EngineClient &engine, const QString &instance)
    {
        return gatewayLeftovers(engine, "/containers/json?all=1&filters=", instance, u"Id");
    }
    static QStringList networksOf(EngineClient &engine, const QString &instance)
    {
        return gatewayLeftovers(engine, "/networks?filters=", instance, u"Name");
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

    static QStringList gatewayLeftovers(EngineClient &engine, const QByteArray &query,
                                        const QString &instance, QStringView key)
    {
        EngineReply *r =
            engine.get(query + labelFilter(QStringLiteral("code-sandbox.gateway-of=") + instance));
        QSignalSpy spy(r, &EngineReply::finished);
        if (!spy.wait(10000) || !r->ok())
            return {QStringLiteral("<engine query failed>")};
        QStringList left;
        for (const QJsonValue &v : QJsonDocument::fromJson(r->body()).array())
            left.append(v.toObject().value(key).toString());
        return left;
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
