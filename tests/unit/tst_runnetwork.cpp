#include "assistantpolicy.h"
#include "languageregistry.h"
#include "runnetwork.h"
#include "sandboxconfig.h"

#include <QTest>

using Network = SandboxSpec::Network;
using Hosts = std::optional<QStringList>;
Q_DECLARE_METATYPE(Hosts)

// RunNetwork::decide is the one place a run's network is made from the server's settings, the
// caller's policy and the call: every mode, what each input takes away, and what the other parts
// read from the one value (the spec, the record's secrets, the question's hosts).
class tst_RunNetwork : public QObject
{
    Q_OBJECT

    static SandboxSpec::Secret secret(const char *name, const char *host)
    {
        return {QString::fromLatin1(name), {QString::fromLatin1(host)}, "value"};
    }
    static const QStringList kListed;

private Q_SLOTS:
    void decide_data()
    {
        QTest::addColumn<bool>("open");          // --network
        QTest::addColumn<QStringList>("egress"); // --egress
        QTest::addColumn<bool>("withSecret");    // --secret API_KEY=…@api.example.com
        QTest::addColumn<Hosts>("asked");        // the call's `network`
        QTest::addColumn<int>("mode");
        QTest::addColumn<QStringList>("hosts");
        QTest::addColumn<QStringList>("reachable");

        const QStringList none;
        const QStringList api{QStringLiteral("api.example.com")};
        const QStringList pypi{QStringLiteral("pypi.org")};
        QTest::newRow("no network")
            << false << none << false << Hosts() << int(Network::None) << none << none;
        QTest::newRow("open") << true << none << false << Hosts() << int(Network::Open) << none
                              << none;
        QTest::newRow("open, a call's list narrows it")
            << true << none << false << Hosts(pypi) << int(Network::Allowlist) << pypi << pypi;
        QTest::newRow("open, a call's empty list: none")
            << true << none << false << Hosts(QStringList()) << int(Network::None) << none << none;
        QTest::newRow("the server's list") << false << kListed << false << Hosts()
                                           << int(Network::Allowlist) << kListed << kListed;
        QTest::newRow("the server's list, the call's own")
            << false << kListed << false << Hosts(pypi) << int(Network::Allowlist) << pypi << pypi;
        QTest::newRow("secrets alone reach their hosts")
            << false << none << true << Hosts() << int(Network::Allowlist) << none << api;
        QTest::newRow("secrets on the open network are not bound")
            << true << none << true << Hosts() << int(Network::Open) << none << none;
        QTest::newRow("secrets with a list: both")
            << false << kListed << true << Hosts() << int(Network::Allowlist) << kListed
            << kListed + api;
        QTest::newRow("secrets, the call's empty list: nothing")
            << false << kListed << true << Hosts(QStringList()) << int(Network::None) << none
            << none;
    }
    void decide()
    {
        QFETCH(bool, open);
        QFETCH(QStringList, egress);
        QFETCH(bool, withSecret);
        QFETCH(Hosts, asked);
        QFETCH(int, mode);
        QFETCH(QStringList, hosts);
        QFETCH(QStringList, reachable);
        SandboxConfig server;
        server.network = open;
        server.egress = egress;
        if (withSecret)
            server.secrets = {secret("API_KEY", "api.example.com")};
        const RunNetwork run = RunNetwork::decide(server, asked);
        QCOMPARE(int(run.mode), mode);
        QCOMPARE(run.hosts, hosts);
        QCOMPARE(run.reachableHosts(), reachable);
        QCOMPARE(run.reachesNetwork(), mode != int(Network::None));
        // Secrets travel only where they are bound: through the gateway.
        QCOMPARE(run.bindsSecrets(), reachable != hosts);
        QVERIFY(!run.askOtherHosts); // no policy, nobody to ask
        // The sandbox gets exactly this: its mode, every reachable host, the secrets.
        const Language &python = *LanguageRegistry::builtIn().find(QStringLiteral("python"));
        const SandboxSpec spec = SandboxSpec::forRun(python, python.image, server, run);
        QCOMPARE(int(spec.network), mode);
        QCOMPARE(spec.egress, reachable);
        QCOMPARE(spec.secrets.size(), run.secrets.size());
    }

    void thePolicyChoosesSecretsAskingAndIsolation()
    {
        SandboxConfig server;
        server.egress = kListed;
        server.secrets = {secret("A", "a.example.com"), secret("B", "b.example.com")};
        AssistantPolicy policy;
        policy.secrets = QStringList{QStringLiteral("B")};
        policy.otherHosts = AssistantPolicy::OtherHosts::Ask;
        policy.isolation = QString::fromLatin1(SandboxSpec::kIsolationGvisor);
        const RunNetwork run = RunNetwork::decide(server, std::nullopt, &policy);
        QCOMPARE(run.mode, Network::Allowlist);
        QCOMPARE(run.secrets.size(), 1);
        QCOMPARE(run.secrets.first().name, QStringLiteral("B"));
        QVERIFY(run.askOtherHosts);
        QCOMPARE(run.isolation, QString::fromLatin1(SandboxSpec::kIsolationGvisor));
        // Asking needs listed hosts to go beyond: secrets' hosts alone have none.
        SandboxConfig secretsOnly;
        secretsOnly.secrets = server.secrets;
        QVERIFY(!RunNetwork::decide(secretsOnly, std::nullopt, &policy).askOtherHosts);
        // A policy that gives no secret, on a server whose runs reach only their secrets' hosts:
        // no network at all.
        AssistantPolicy noSecret;
        noSecret.secrets = QStringList();
        QCOMPARE(RunNetwork::decide(secretsOnly, std::nullopt, &noSecret).mode, Network::None);
        // Nothing decided twice gives anything else.
        QCOMPARE(RunNetwork::decide(server, std::nullopt, &policy),
                 RunNetwork::decide(server, std::nullopt, &policy));
        QVERIFY(RunNetwork::decide(server, std::nullopt, &policy) != RunNetwork::decide(server));
    }
};

const QStringList tst_RunNetwork::kListed{QStringLiteral("registry.npmjs.org"),
                                          QStringLiteral("*.github.com")};

QTEST_GUILESS_MAIN(tst_RunNetwork)
#include "tst_runnetwork.moc"
