#pragma once

#include "engineclient.h"
#include "enginelocator.h"
#include "enginereply.h"
#include "execution.h"
#include "executionrequest.h"
#include "leftoversweeper.h"
#include "sandboxservice.h"

#include <QSignalSpy>
#include <QTest>
#include <QUuid>

// What the tests against a real engine share: the engine's socket, found the way the app finds
// it (DOCKER_HOST first, which is how podman.sh points them at Podman) and checked to answer; a
// fresh instance label for every service, so that the containers a test looks for are its own;
// and a sweep of those labels after a failed test, so that one failure does not cascade into the
// next tests, which check that nothing is left.
class EngineTestCase : public QObject
{
    Q_OBJECT

protected:
    // A default config under a new instance label (remembered for the sweep).
    SandboxConfig newConfig(const QString &prefix = QStringLiteral("test-"))
    {
        SandboxConfig c;
        c.instanceId = prefix + QUuid::createUuid().toString(QUuid::WithoutBraces);
        m_instances.append(c.instanceId);
        return c;
    }

    // The result of an execution, or an empty one when none comes within waitMs.
    static ExecutionResult resultOf(Execution *e, int waitMs)
    {
        QSignalSpy spy(e, &Execution::finished);
        if (!spy.wait(waitMs))
            return {};
        return spy.first().first().value<ExecutionResult>();
    }

    // Every container of the service is confirmed removed, and the engine agrees.
    static void expectNoLeftovers(SandboxService &service, EngineClient &engine)
    {
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, 15000);
        QCOMPARE(LeftoverSweeper::containersOf(engine, service.config().instanceId), QStringList());
    }

    // Shuts the service down and checks that nothing of it is left: sandboxes, and the egress
    // gateway and its networks when it made them.
    static void shutDown(SandboxService &service, EngineClient &engine)
    {
        QSignalSpy done(&service, &SandboxService::shutdownFinished);
        service.shutdown();
        QVERIFY(done.wait(30000));
        const QString instance = service.config().instanceId;
        QCOMPARE(LeftoverSweeper::containersOf(engine, instance), QStringList());
        QCOMPARE(LeftoverSweeper::gatewaysOf(engine, instance), QStringList());
        QCOMPARE(LeftoverSweeper::networksOf(engine, instance), QStringList());
    }

    // The allow-list tests need the egress gateway's image; a clear failure when it is missing.
    bool hasGatewayImage() const
    {
        EngineClient engine(m_socket);
        EngineReply *r = engine.get("/images/code-sandbox/gateway:latest/json");
        QSignalSpy spy(r, &EngineReply::finished);
        if (!spy.wait(10000) || !r->ok()) {
            qWarning("no code-sandbox/gateway image: containers/build-images.sh gateway");
            return false;
        }
        return true;
    }

    QString m_socket;
    QStringList m_instances;

private Q_SLOTS:
    // (Qt Test calls these by name, on the derived test object too.)
    void initTestCase()
    {
        qRegisterMetaType<ExecutionResult>();
        m_socket = EngineLocator::locate(QString()).socketPath;
        EngineClient engine(m_socket);
        EngineReply *r = engine.ping();
        QSignalSpy spy(r, &EngineReply::finished);
        QVERIFY(spy.wait(10000));
        QVERIFY2(r->ok(), qPrintable(QStringLiteral("no container engine at %1: %2")
                                         .arg(m_socket, r->error().toString())));
    }

    void cleanup() { LeftoverSweeper::sweepAfterFailure(m_socket, m_instances); }
};
