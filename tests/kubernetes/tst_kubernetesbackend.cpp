// KubernetesBackend against tests/kubernetes/testapiserver.py, whose pods are real sandbox
// containers on the local Docker engine: the kubeconfig the server writes is resolved with
// KubeConfig, the backend drives it through KubeClient and KubeStream (attach and exec over
// WebSocket), and SandboxService runs Python and JavaScript on it as it does on Docker.

#include "containerpool.h"
#include "egressprograms.h"
#include "engineclient.h"
#include "enginelocator.h"
#include "enginereply.h"
#include "execution.h"
#include "executionrequest.h"
#include "kubeclient.h"
#include "kubeconfig.h"
#include "kubereply.h"
#include "kubernetesbackend.h"
#include "kubetarget.h"
#include "podgateway.h"
#include "podsapi.h"
#include "podspec.h"
#include "runnetwork.h"
#include "sandboxlayout.h"
#include "sandboxservice.h"
#include "secretprograms.h"
#include "servicesapi.h"
#include "testcertificates.h"
#include "tunnelproxy.h"
#include "worldserver.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <QUuid>
#include <algorithm>
#include <memory>

class TestKubernetesBackend : public QObject
{
    Q_OBJECT

private:
    struct Server
    {
        std::unique_ptr<QProcess> process;
        QString kubeconfig;
        QTemporaryDir state;
    };

    // Starts the test API server, with `policies` loaded as its NetworkPolicies (empty: none).
    bool startServer(Server &server, const QString &policies, const QStringList &more = {})
    {
        if (!server.state.isValid())
            return false;
        server.process = std::make_unique<QProcess>();
        server.process->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        QStringList args{QStringLiteral(CS_TESTAPISERVER), QStringLiteral("--port"),
                         QStringLiteral("0"), QStringLiteral("--token"),
                         QUuid::createUuid().toString(QUuid::Id128), QStringLiteral("--state-dir"),
                         server.state.path(),
                         // Every pod the backend sends must pass Kubernetes' own schema.
                         QStringLiteral("--validate-schema"),
                         QStringLiteral(CS_TESTAPISERVER)
                             .replace(QStringLiteral("testapiserver.py"),
                                      QStringLiteral("schema/k8s-1.35-openapi-v3.json"))};
        if (!policies.isEmpty())
            args << QStringLiteral("--network-policies") << policies;
        args << more;
        // Debian's interpreter, for its packages (python3-aiohttp, python3-yaml).
        server.process->start(QStringLiteral("/usr/bin/python3"), args);
        if (!server.process->waitForStarted(10000))
            return false;
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 60000) {
            if (!server.process->canReadLine() && !server.process->waitForReadyRead(1000)) {
                if (server.process->state() != QProcess::Running)
                    return false;
                continue;
            }
            while (server.process->canReadLine()) {
                const QString line = QString::fromUtf8(server.process->readLine()).trimmed();
                if (line.startsWith(QLatin1String("kubeconfig: ")))
                    server.kubeconfig = line.mid(12);
            }
            if (!server.kubeconfig.isEmpty())
                return true;
        }
        return false;
    }

    static void stopServer(Server &server)
    {
        if (!server.process || server.process->state() != QProcess::Running)
            return;
        server.process->terminate(); // SIGTERM: it removes its containers
        if (!server.process->waitForFinished(30000))
            server.process->kill();
    }

    static KubeAccess accessFor(const Server &server)
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("KUBECONFIG"), server.kubeconfig);
        const KubeConfig::Result r = KubeConfig::resolve(
            KubeTarget::parse(QStringLiteral("k8s://testapiserver")), env, KubeConfig::Options());
        if (!r.ok())
            qWarning() << r.error;
        return r.access;
    }

    SandboxConfig makeConfig()
    {
        SandboxConfig c;
        c.instanceId = QStringLiteral("kbtest-") + QUuid::createUuid().toString(QUuid::Id128);
        c.poolSize = 1;
        c.warmLanguages = {QStringLiteral("python"), QStringLiteral("javascript")};
        m_instance = c.instanceId;
        return c;
    }

    static ExecutionResult resultOf(Execution *e, int waitMs)
    {
        QSignalSpy spy(e, &Execution::finished);
        if (!spy.wait(waitMs))
            return {};
        return spy.first().first().value<ExecutionResult>();
    }

    ExecutionResult run(SandboxService &service, const QString &language, const QString &code,
                        int timeoutSec = 30)
    {
        return resultOf(service.execute({language, code, timeoutSec}), (timeoutSec + 90) * 1000);
    }

    // Pods of this test's instance the API server still has.
    static int pods(KubernetesBackend &backend, const QString &instance)
    {
        QObject context;
        int count = -1;
        bool answered = false;
        backend.list({QStringLiteral("code-sandbox.instance=") + instance}, &context,
                     [&](const QList<SandboxBackend::Listed> &found, const QString &error) {
                         count = error.isEmpty() ? int(found.size()) : -1;
                         answered = true;
                     });
        if (!QTest::qWaitFor([&] { return answered; }, 10000))
            return -1;
        return count;
    }

    // Docker containers made for pods of this test's instance (their names carry the pod's).
    static QStringList dockerContainers(const QString &instance)
    {
        EngineClient engine(EngineLocator::locate(QString()).socketPath);
        const QJsonObject filters{
            {QStringLiteral("label"), QJsonArray{QStringLiteral("io.kubernetes.pod.name")}},
            {QStringLiteral("name"), QJsonArray{PodSpec::podName(instance)}}};
        EngineReply *r = engine.get("/containers/json?all=1&filters=" +
                                    QUrl::toPercentEncoding(QString::fromUtf8(
                                        QJsonDocument(filters).toJson(QJsonDocument::Compact))));
        QSignalSpy spy(r, &EngineReply::finished);
        if (!spy.wait(10000) || !r->ok())
            return {QStringLiteral("<engine query failed>")};
        QStringList names;
        for (const QJsonValue &v : QJsonDocument::fromJson(r->body()).array())
            names.append(v.toObject().value(u"Names").toArray().at(0).toString());
        return names;
    }

    // A file with some of the shipped policies (their indexes in 40-networkpolicy.yaml), for
    // a namespace that lacks the others.
    QString policiesFile(const QString &name, const QList<int> &which)
    {
        QFile shipped(m_policies);
        if (!shipped.open(QIODevice::ReadOnly))
            return {};
        const QStringList docs =
            QString::fromUtf8(shipped.readAll()).split(QStringLiteral("\n---\n"));
        QStringList kept;
        for (int i : which)
            kept.append(docs.value(i));
        QFile file(m_dir.filePath(name));
        if (docs.size() != 4 || !file.open(QIODevice::WriteOnly))
            return {};
        file.write(kept.join(QStringLiteral("\n---\n")).toUtf8());
        return file.fileName();
    }

    QString m_policies;
    QString m_instance;
    QTemporaryDir m_dir;

private Q_SLOTS:
    void initTestCase()
    {
        qRegisterMetaType<ExecutionResult>();
        QVERIFY(m_dir.isValid());
        // The policy the cluster is meant to have (packaging/kubernetes/), as the server loads it.
        m_policies = QStringLiteral(CS_SOURCE_DIR "/packaging/kubernetes/40-networkpolicy.yaml");
        QVERIFY(QFile::exists(m_policies));
    }

    void runsProgramsInPods()
    {
        Server server;
        QVERIFY(startServer(server, m_policies));
        const auto stop = qScopeGuard([&] { stopServer(server); });
        const KubeAccess access = accessFor(server);
        QVERIFY(access.isValid());
        KubeClient client(access);
        KubernetesBackend backend(&client, KubernetesBackend::Options());
        {
            SandboxService service(&backend, LanguageRegistry::builtIn(), makeConfig());
            const QString instance = m_instance;
            // As the app starts it: leftovers of dead instances swept, the pools warmed.
            service.reapOrphans();
            service.warmUp();

            // Output, through the warm pool.
            ExecutionResult r = run(service, QStringLiteral("python"),
                                    QStringLiteral("import sys\nprint('hello from a pod')\n"
                                                   "print('to stderr', file=sys.stderr)"));
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QCOMPARE(r.exitCode, 0);
            QCOMPARE(r.stdoutData, QByteArray("hello from a pod\n"));
            QCOMPARE(r.stderrData, QByteArray("to stderr\n"));

            r = run(service, QStringLiteral("javascript"),
                    QStringLiteral("console.log(6 * 7); process.exit(3)"));
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QCOMPARE(r.stdoutData, QByteArray("42\n"));
            QCOMPARE(r.exitCode, 3);

            // A non-zero exit.
            r = run(service, QStringLiteral("python"), QStringLiteral("raise SystemExit(7)"));
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QCOMPARE(r.exitCode, 7);

            // An output file and a figure, fetched by tar over exec.
            r = run(service, QStringLiteral("python"), QStringLiteral(R"py(
import os, matplotlib.pyplot as plt
open(os.path.join(os.environ["OUTPUT_DIR"], "report.txt"), "w").write("report body")
plt.plot([1, 2, 3])
plt.show()
print("done")
)py"));
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QCOMPARE(r.exitCode, 0);
            QCOMPARE(r.stdoutData, QByteArray("done\n"));
            bool report = false, plot = false;
            for (const OutputFile &f : r.files) {
                if (f.kind == OutputFile::Kind::Output && f.name == u"report.txt")
                    report = f.data == "report body";
                if (f.kind == OutputFile::Kind::Plot)
                    plot = f.data.startsWith("\x89PNG");
            }
            QVERIFY2(report, "the output file did not come back");
            QVERIFY2(plot, "the figure did not come back");

            // Input files, placed by tar over exec (stdin ended with v5's close) before the
            // program.
            ExecutionRequest withFiles(QStringLiteral("python"),
                                       QStringLiteral("print(open('data/in.txt').read())"), 30);
            withFiles.files = {{QStringLiteral("data/in.txt"), QByteArray("input file body")}};
            r = resultOf(service.execute(withFiles), 120000);
            QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
            QCOMPARE(r.stdoutData, QByteArray("input file body\n"));

            // A timeout: the pod is deleted.
            r = run(service, QStringLiteral("python"),
                    QStringLiteral("import time\nprint('started', flush=True)\ntime.sleep(60)"), 2);
            QVERIFY(r.timedOut);
            QCOMPARE(r.stdoutData, QByteArray("started\n"));

            // A cancel while the program runs.
            Execution *e = service.execute(
                {QStringLiteral("javascript"), QStringLiteral("setInterval(() => {}, 1000)"), 60});
            QSignalSpy started(e, &Execution::started);
            QSignalSpy finished(e, &Execution::finished);
            QVERIFY(started.wait(60000));
            e->cancel(QStringLiteral("test"));
            QVERIFY(finished.count() == 1 || finished.wait(10000));
            QVERIFY(finished.first().first().value<ExecutionResult>().cancelled);

            // Warm pods: the pool is refilled ahead, and later calls take a pod from it.
            ContainerPool *pool = service.pool();
            QVERIFY(pool);
            QList<qint64> latencies;
            for (int i = 0; i < 5; ++i) {
                QTRY_VERIFY_WITH_TIMEOUT(
                    pool->warmCount(
                        *backend
                             .runSpec(*LanguageRegistry::builtIn().find(QStringLiteral("python")),
                                      QStringLiteral("code-sandbox/python:latest"),
                                      service.config(), RunNetwork::decide(service.config()), {},
                                      false)
                             .spec) > 0,
                    60000);
                const int takes = pool->warmTakes();
                QElapsedTimer clock;
                clock.start();
                r = run(service, QStringLiteral("python"), QStringLiteral("print(1)"));
                latencies.append(clock.elapsed());
                QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
                QCOMPARE(r.stdoutData, QByteArray("1\n"));
                QCOMPARE(pool->warmTakes(), takes + 1);
            }
            std::sort(latencies.begin(), latencies.end());
            qInfo() << "warm print(1) through the Kubernetes backend, ms:" << latencies;

            service.shutdown();
            QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, 30000);
            // A deleted pod can still be listed for a moment after the API answered the delete
            // (as on a cluster, where the kubelet confirms it); gone within seconds.
            QTRY_COMPARE_WITH_TIMEOUT(pods(backend, instance), 0, 15000);
            QTRY_COMPARE_WITH_TIMEOUT(dockerContainers(instance), QStringList(), 15000);
        }
    }

    void refusesWithoutEgressPolicy()
    {
        Server server;
        QVERIFY(startServer(server, QString()));
        const auto stop = qScopeGuard([&] { stopServer(server); });
        KubeClient client(accessFor(server));
        KubernetesBackend backend(&client, KubernetesBackend::Options());
        SandboxConfig config = makeConfig();
        config.poolSize = 0;
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        const ExecutionResult r =
            run(service, QStringLiteral("python"), QStringLiteral("print(1)"));
        QVERIFY2(r.error.contains(QLatin1String("NetworkPolicy")), qPrintable(r.error));
        QVERIFY(r.stdoutData.isEmpty());
        QCOMPARE(pods(backend, m_instance), 0);

        bool answered = false;
        backend.health(false, this, [&](const SandboxBackend::Health &h) {
            QVERIFY(h.reachable);
            QCOMPARE(h.product, QStringLiteral("Kubernetes"));
            QVERIFY2(h.error.contains(QLatin1String("NetworkPolicy")), qPrintable(h.error));
            answered = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(answered, 10000);
    }

    void refusesWithoutIngressPolicy()
    {
        // The shipped deny-egress policy alone: the network could still reach the sandboxes, so
        // the backend refuses to start them and names the policy that is missing.
        const QString egressOnly = policiesFile(QStringLiteral("egress-only.yaml"), {0});
        QVERIFY(!egressOnly.isEmpty());
        QFile file(egressOnly);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QVERIFY(text.contains("code-sandbox-deny-egress"));
        QVERIFY(!text.contains("code-sandbox-deny-ingress"));

        Server server;
        QVERIFY(startServer(server, egressOnly));
        const auto stop = qScopeGuard([&] { stopServer(server); });
        KubeClient client(accessFor(server));
        KubernetesBackend backend(&client, KubernetesBackend::Options());
        SandboxConfig config = makeConfig();
        config.poolSize = 0;
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        const ExecutionResult r =
            run(service, QStringLiteral("python"), QStringLiteral("print(1)"));
        QVERIFY2(r.error.contains(QLatin1String("no NetworkPolicy in the namespace denies ingress "
                                                "to every sandbox pod (code-sandbox-deny-ingress")),
                 qPrintable(r.error));
        QVERIFY2(!r.error.contains(QLatin1String("denies egress")), qPrintable(r.error));
        QVERIFY(r.stdoutData.isEmpty());
        QCOMPARE(pods(backend, m_instance), 0);

        bool answered = false;
        backend.health(false, this, [&](const SandboxBackend::Health &h) {
            QVERIFY(h.reachable);
            QVERIFY2(h.error.contains(QLatin1String("denies ingress")), qPrintable(h.error));
            answered = true;
        });
        QTRY_VERIFY_WITH_TIMEOUT(answered, 10000);
    }

    // The allow-list mode: a gateway pod behind a Service, which the allow-list pods reach
    // (and nothing else, the namespace's policies say, which the test server applies with
    // networks of its own); made again behind the same address when it is killed; deleted with
    // its Service at shutdown. The world is this test's HTTP server on the machine's address,
    // named through the gateway's test-only name map.
    void allowListThroughTheGateway()
    {
        WorldServer<QTcpServer> world;
        QVERIFY(world.listen(QHostAddress::AnyIPv4));
        const QString address = outwardAddress();
        QVERIFY(!address.isEmpty());
        const QString port = QString::number(world.serverPort());
        qputenv(EgressGateway::kTestHostsVar,
                QStringLiteral("world.test=%1,other.test=%1").arg(address).toUtf8());
        const auto unset = qScopeGuard([] { qunsetenv(EgressGateway::kTestHostsVar); });

        Server server;
        // The gateway's egress policy lets it out: onto the engine's bridge, as a cluster's pod
        // network would.
        QVERIFY(startServer(server, m_policies,
                            {QStringLiteral("--pod-network"), QStringLiteral("bridge")}));
        const auto stop = qScopeGuard([&] { stopServer(server); });
        KubeClient client(accessFor(server));
        KubernetesBackend backend(&client, KubernetesBackend::Options());
        SandboxConfig config = makeConfig();
        config.egress = {QStringLiteral("world.test:") + port};
        config.warmLanguages = {QStringLiteral("python")};
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        const QString instance = m_instance;
        service.warmUp(); // a warm allow-list pod holds a grant, and must outlive a gateway

        const auto runJson = [&](const QString &code) {
            const ExecutionResult r = run(service, QStringLiteral("python"), code, 40);
            const QJsonObject out = QJsonDocument::fromJson(r.stdoutData).object();
            if (out.isEmpty())
                qWarning().noquote()
                    << "exit" << r.exitCode << r.stdoutData << r.stderrData << r.error;
            return std::make_pair(out, r);
        };
        auto [out, r] = runJson(QString::fromLatin1(kReachProgram).arg(port, address));
        QCOMPARE(reachMismatch(out, port), QString());
        QCOMPARE(world.requests, QByteArrayList{"/a"});
        QCOMPARE(attemptsSeen(r.network),
                 (QStringList{QStringLiteral("world.test:%1 allowed").arg(port),
                              QStringLiteral("other.test:%1 refused").arg(port),
                              QStringLiteral("%1:%2 refused").arg(address, port)}));

        // The proxy is the Service's address, not the pod's.
        PodGateway *gateway = backend.egressGateway();
        QVERIFY(gateway);
        const QString proxy = out.value(u"proxy").toString();
        const QString serviceName = gateway->serviceName();
        QVERIFY(!serviceName.isEmpty());
        KubeReply *svc = ServicesApi(&client).get(serviceName);
        QSignalSpy svcDone(svc, &KubeReply::finished);
        QVERIFY(svcDone.wait(10000));
        QVERIFY2(svc->ok(), qPrintable(svc->error().toString()));
        const QString clusterIP = svc->json().value(u"spec")[u"clusterIP"].toString();
        QVERIFY2(proxy.contains(u'@' + clusterIP + u':'), qPrintable(proxy + u' ' + clusterIP));

        // The gateway pod killed: made again behind the same address; a warm pod made before
        // keeps working through it.
        QTRY_VERIFY2_WITH_TIMEOUT(gateway->isRunning() && gateway->grantCount() == 1,
                                  qPrintable(QStringLiteral("running %1, grants %2, warm %3")
                                                 .arg(gateway->isRunning())
                                                 .arg(gateway->grantCount())
                                                 .arg(service.pool()->totalCount())),
                                  60000);
        const int generation = gateway->generation();
        KubeReply *kill = PodsApi(&client).remove(gateway->containerId());
        QSignalSpy killed(kill, &KubeReply::finished);
        QVERIFY(killed.wait(10000));
        QVERIFY2(kill->ok(), qPrintable(kill->error().toString()));
        QTRY_VERIFY_WITH_TIMEOUT(gateway->generation() > generation && gateway->isRunning(), 60000);
        std::tie(out, r) = runJson(QString::fromLatin1(kFetchProgram).arg(port));
        QCOMPARE(out.value(u"got").toString(), QStringLiteral("hello world.test:%1 /x").arg(port));

        // Shutdown: the sandboxes, then the gateway pod and its Service.
        service.shutdown();
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, 30000);
        bool shut = false;
        backend.shutdown(this, [&] { shut = true; });
        QTRY_VERIFY_WITH_TIMEOUT(shut, 30000);
        KubeReply *gone = ServicesApi(&client).get(serviceName);
        QSignalSpy goneDone(gone, &KubeReply::finished);
        QVERIFY(goneDone.wait(10000));
        QVERIFY(gone->error().isNotFound());
        KubeReply *gateways = PodsApi(&client).list({QStringLiteral("code-sandbox.role=gateway")});
        QSignalSpy listed(gateways, &KubeReply::finished);
        QVERIFY(listed.wait(10000));
        QVERIFY(gateways->ok());
        QCOMPARE(gateways->json().value(u"items").toArray().size(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(pods(backend, instance), 0, 15000);
    }

    // Bound secrets through the gateway pod (--secret): the same promises as on an engine
    // (tst_secrets), the placeholder and the authority's certificate in the pod's environment.
    void aSecretThroughTheGatewayPod()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY2(makeTestCertificates(dir.path()), "openssl could not make the test certificates");
        WorldServer<QTcpServer> world;
        WorldServer<QSslServer> tlsWorld;
        WorldServer<QSslServer> badWorld;
        world.echo = tlsWorld.echo = true;
        QVERIFY(world.listen(QHostAddress::AnyIPv4));
        QVERIFY(listenWithTls(tlsWorld, dir.filePath(QStringLiteral("server.pem")),
                              dir.filePath(QStringLiteral("server.key"))));
        QVERIFY(listenWithTls(badWorld, dir.filePath(QStringLiteral("bad.pem")),
                              dir.filePath(QStringLiteral("bad.key"))));
        const QString address = outwardAddress();
        QVERIFY(!address.isEmpty());
        qputenv(EgressGateway::kTestHostsVar,
                QStringLiteral("world.test=%1,other.test=%1,bad.test=%1").arg(address).toUtf8());
        const auto unset = qScopeGuard([] { qunsetenv(EgressGateway::kTestHostsVar); });
        const QString tlsPort = QString::number(tlsWorld.serverPort());
        const QString plainPort = QString::number(world.serverPort());
        const QString badPort = QString::number(badWorld.serverPort());

        Server server;
        QVERIFY(startServer(server, m_policies,
                            {QStringLiteral("--pod-network"), QStringLiteral("bridge")}));
        const auto stop = qScopeGuard([&] { stopServer(server); });
        KubeClient client(accessFor(server));
        KubernetesBackend backend(&client, KubernetesBackend::Options());
        const QByteArray value = "sk-kube-0b7e-never-in-a-pod";
        SandboxConfig config = makeConfig();
        config.warmLanguages = {};
        config.secrets = {
            {QStringLiteral("API_KEY"),
             {QStringLiteral("world.test:") + tlsPort, QStringLiteral("bad.test:") + badPort},
             value}};
        config.egress = {QStringLiteral("other.test:") + plainPort};
        config.secretsAuthorityFolder = dir.filePath(QStringLiteral("authority"));
        config.installCaBundle = dir.filePath(QStringLiteral("ca.pem"));
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        const QString instance = m_instance;
        const ExecutionResult r =
            run(service, QStringLiteral("python"),
                QString::fromLatin1(kSecretPythonProgram).arg(tlsPort, plainPort, badPort), 60);
        const QJsonObject out = QJsonDocument::fromJson(r.stdoutData).object();
        QVERIFY2(!out.isEmpty(), r.stdoutData + r.stderrData + r.error.toUtf8());
        const QString key = out.value(u"key").toString();
        QVERIFY2(key.startsWith(QStringLiteral("csb-secret-API_KEY-")), qPrintable(key));
        QCOMPARE(tlsWorld.authorizations, QByteArrayList{"Bearer " + value});
        QCOMPARE(out.value(u"bound").toString(),
                 QStringLiteral("hello world.test:%1 /bound auth=Bearer %2").arg(tlsPort, key));
        QCOMPARE(world.authorizations, QByteArrayList{"Bearer " + key.toUtf8()});
        QVERIFY2(out.value(u"untrusted").toString().contains(QStringLiteral("not trusted")),
                 qPrintable(out.value(u"untrusted").toString()));
        QCOMPARE(badWorld.requests, QByteArrayList());
        QVERIFY(!r.stdoutData.contains(value) && !r.stderrData.contains(value));
        QVERIFY(!QJsonDocument(r.toJson()).toJson().contains(value));
        bool secretAdded = false;
        for (const NetworkAttempt &a : r.network)
            secretAdded = secretAdded || (a.host == u"world.test" &&
                                          a.secrets == QStringList{QStringLiteral("API_KEY")});
        QVERIFY(secretAdded);

        service.shutdown();
        QTRY_COMPARE_WITH_TIMEOUT(service.activeContainers(), 0, 30000);
        bool shut = false;
        backend.shutdown(this, [&] { shut = true; });
        QTRY_VERIFY_WITH_TIMEOUT(shut, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(pods(backend, instance), 0, 15000);
    }

    void allowListNeedsItsPolicy_data()
    {
        QTest::addColumn<QList<int>>("policies");
        QTest::addColumn<QString>("named");
        QTest::addColumn<QString>("notNamed");
        // The shipped deny policies without the allow-list one: sandboxes without network would
        // run, but no gateway starts.
        QTest::newRow("no allow-list policy")
            << QList<int>{0, 1} << QStringLiteral("code-sandbox-allowlist-egress")
            << QStringLiteral("ingress");
        // Confined on the way out, but reachable from the network.
        QTest::newRow("no ingress policy")
            << QList<int>{0, 2, 3} << QStringLiteral("code-sandbox-deny-ingress")
            << QStringLiteral("code-sandbox-allowlist-egress");
    }

    void allowListNeedsItsPolicy()
    {
        QFETCH(QList<int>, policies);
        QFETCH(QString, named);
        QFETCH(QString, notNamed);
        const QString file = policiesFile(QStringLiteral("some.yaml"), policies);
        QVERIFY(!file.isEmpty());

        Server server;
        QVERIFY(startServer(server, file));
        const auto stop = qScopeGuard([&] { stopServer(server); });
        KubeClient client(accessFor(server));
        KubernetesBackend backend(&client, KubernetesBackend::Options());
        SandboxConfig config = makeConfig();
        config.poolSize = 0;
        config.egress = {QStringLiteral("world.test")};
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        const ExecutionResult r =
            run(service, QStringLiteral("python"), QStringLiteral("print(1)"));
        QVERIFY2(r.error.contains(named), qPrintable(r.error));
        QVERIFY2(!r.error.contains(notNamed), qPrintable(r.error));
        QVERIFY(r.stdoutData.isEmpty());
        // Neither a sandbox pod nor a gateway was made.
        QCOMPARE(pods(backend, m_instance), 0);
        KubeReply *gateways = PodsApi(&client).list({QStringLiteral("code-sandbox.role=gateway")});
        QSignalSpy listed(gateways, &KubeReply::finished);
        QVERIFY(listed.wait(10000));
        QVERIFY(gateways->ok());
        QCOMPARE(gateways->json().value(u"items").toArray().size(), 0);
    }

    void reapsADeadServersGateway()
    {
        // What a server that died left of its gateway: the pod (its program exits when the
        // server's stream ends) and the Service, both with the dead server's pid and host.
        QProcess gone;
        gone.start(QStringLiteral("true"));
        QVERIFY(gone.waitForStarted());
        const QString deadPid = QString::number(gone.processId());
        QVERIFY(gone.waitForFinished());

        Server server;
        QVERIFY(startServer(server, m_policies));
        const auto stop = qScopeGuard([&] { stopServer(server); });
        KubeClient client(accessFor(server));
        KubernetesBackend backend(&client, KubernetesBackend::Options());
        const auto labels = [&](const char *role) {
            return PodGateway::kubeLabels(
                {{EgressGateway::kLabelRole, QString::fromLatin1(role)},
                 {EgressGateway::kLabelGatewayOf, QStringLiteral("dead-instance")},
                 {SandboxLayout::kLabelPid, deadPid},
                 {SandboxLayout::kLabelHost, SandboxLayout::hostId()}});
        };
        const auto answered = [](KubeReply *r) {
            QSignalSpy spy(r, &KubeReply::finished);
            return (r->isFinished() || spy.wait(10000)) && r->ok();
        };
        QVERIFY(answered(ServicesApi(&client).create(PodGateway::serviceManifest(
            QStringLiteral("code-sandbox-gateway-dead"), labels("gateway-service"),
            QJsonObject{{EgressGateway::kLabelRole, QStringLiteral("gateway")}}))));
        QVERIFY(answered(PodsApi(&client).create(
            PodGateway::podManifest(QStringLiteral("code-sandbox-gateway-dead-1"),
                                    EgressGateway::kImage, {}, labels("gateway")))));
        // And one of a live server (this process) that must stay.
        QJsonObject live = labels("gateway-service");
        live.insert(SandboxLayout::kLabelPid, QString::number(QCoreApplication::applicationPid()));
        QVERIFY(answered(ServicesApi(&client).create(PodGateway::serviceManifest(
            QStringLiteral("code-sandbox-gateway-live"), live,
            QJsonObject{{EgressGateway::kLabelRole, QStringLiteral("gateway")}}))));

        SandboxConfig config = makeConfig();
        config.poolSize = 0;
        SandboxService service(&backend, LanguageRegistry::builtIn(), config);
        service.reapOrphans();
        const auto exists = [&](KubeReply *r) {
            QSignalSpy spy(r, &KubeReply::finished);
            spy.wait(10000);
            return !r->error().isNotFound();
        };
        QTRY_VERIFY_WITH_TIMEOUT(
            !exists(ServicesApi(&client).get(QStringLiteral("code-sandbox-gateway-dead"))), 15000);
        QTRY_VERIFY_WITH_TIMEOUT(
            !exists(PodsApi(&client).get(QStringLiteral("code-sandbox-gateway-dead-1"))), 15000);
        QVERIFY(exists(ServicesApi(&client).get(QStringLiteral("code-sandbox-gateway-live"))));
    }

    // Libraries are not installed on a cluster; volumes (a cached workspace's) are claims.
    void refusesLibrariesAndKeepsClaims()
    {
        Server server;
        QVERIFY(startServer(server, m_policies));
        const auto stop = qScopeGuard([&] { stopServer(server); });
        KubeClient client(accessFor(server));
        KubernetesBackend backend(&client, KubernetesBackend::Options());
        const Language python = *LanguageRegistry::builtIn().find(QStringLiteral("python"));
        const SandboxSpec::Result install =
            backend.installSpec(python, python.image, SandboxConfig(), QStringLiteral("libs"));
        QVERIFY(!install.ok());
        QVERIFY2(install.error.contains(QLatin1String("not supported on Kubernetes yet")),
                 qPrintable(install.error));

        const QString claim = QStringLiteral("code-sandbox-workspace-test");
        const auto has = [&] {
            std::optional<bool> answer;
            backend.hasVolume(claim, this, [&](bool exists, const QString &) { answer = exists; });
            return QTest::qWaitFor([&] { return answer.has_value(); }, 10000) && *answer;
        };
        QVERIFY(!has());
        QString error = QStringLiteral("<no answer>");
        backend.createVolume(claim, QJsonObject{{"code-sandbox", "1"}}, this,
                             [&](const QString &e) { error = e; });
        QTRY_VERIFY_WITH_TIMEOUT(error != QLatin1String("<no answer>"), 10000);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(has());
        backend.removeVolume(claim);
        QTRY_VERIFY_WITH_TIMEOUT(!has(), 10000);
    }
};

QTEST_MAIN(TestKubernetesBackend)
#include "tst_kubernetesbackend.moc"
