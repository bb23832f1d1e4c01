// The assistants' policies: which rule refuses what, and the JSON they are kept in (a hand-edited
// settings file, and approvals crossing the monitor socket, are never trusted).
#include "approvalrequest.h"
#include "assistantpolicies.h"
#include "runnetwork.h"
#include "sandboxconfig.h"

#include <QJsonArray>
#include <QTest>

class TestAssistantPolicy : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void defaultAllowsEverythingTheServerDoes()
    {
        const AssistantPolicy p;
        SandboxConfig config;
        config.network = true;
        int timeout = 300;
        QVERIFY(
            p.check(QStringLiteral("rust"), &timeout, {QStringLiteral("numpy")}, config).isEmpty());
        QCOMPARE(timeout, 300);
        QVERIFY(AssistantPolicies().isOpen());
    }

    void refusesALanguageNamingThePolicy()
    {
        AssistantPolicy p;
        p.client = QStringLiteral("claude-code");
        p.languages = {QStringLiteral("python"), QStringLiteral("javascript")};
        int timeout = 0;
        const QString why = p.check(QStringLiteral("ruby"), &timeout, {}, SandboxConfig());
        QVERIFY(why.contains(u"the policy for assistant 'claude-code'"));
        QVERIFY(why.contains(u"ruby is not among the languages it allows: python, javascript"));
        QVERIFY(p.check(QStringLiteral("Python"), &timeout, {}, SandboxConfig()).isEmpty());
    }

    void refusesNetworkOnlyWhereTheServerGivesIt()
    {
        AssistantPolicy p;
        p.network = false;
        int timeout = 0;
        SandboxConfig closed;
        QVERIFY(p.check(QStringLiteral("python"), &timeout, {}, closed).isEmpty());
        SandboxConfig open;
        open.network = true;
        const QString why = p.check(QStringLiteral("python"), &timeout, {}, open);
        QVERIFY2(why.contains(u"network access is not allowed"), qPrintable(why));
        QVERIFY(why.contains(u"the default policy"));
        // Installing needs the network too.
        const QString install =
            p.check(QStringLiteral("python"), &timeout, {QStringLiteral("rich")}, closed);
        QVERIFY2(install.contains(u"installing libraries needs network access"),
                 qPrintable(install));
    }

    void refusesLibraries()
    {
        AssistantPolicy p;
        p.libraries = false;
        int timeout = 0;
        QVERIFY(p.check(QStringLiteral("python"), &timeout, {}, SandboxConfig()).isEmpty());
        QVERIFY(
            p.check(QStringLiteral("python"), &timeout, {QStringLiteral("rich")}, SandboxConfig())
                .contains(u"installing libraries is not allowed"));
    }

    void capsOrRefusesTheTimeout()
    {
        AssistantPolicy p;
        p.maxTimeoutSec = 20;
        SandboxConfig config; // default 30 s
        int asked = 60;
        QVERIFY(p.check(QStringLiteral("python"), &asked, {}, config)
                    .contains(u"a timeout of 60 s is above its largest, 20 s"));
        int none = 0;
        QVERIFY(p.check(QStringLiteral("python"), &none, {}, config).isEmpty());
        QCOMPARE(none, 20);
        int within = 10;
        QVERIFY(p.check(QStringLiteral("python"), &within, {}, config).isEmpty());
        QCOMPARE(within, 10);
    }

    void refusesMoreMemoryThanItsLargest()
    {
        AssistantPolicy p;
        p.maxMemoryMiB = 256;
        SandboxConfig config; // 512 MiB
        int timeout = 0;
        QVERIFY(p.check(QStringLiteral("python"), &timeout, {}, config)
                    .contains(u"sandboxes on this server get 512 MiB of memory, above its "
                              u"largest, 256 MiB"));
        config.memoryBytes = 256LL * 1024 * 1024;
        QVERIFY(p.check(QStringLiteral("python"), &timeout, {}, config).isEmpty());
    }

    void matchesClientsWithoutCase()
    {
        AssistantPolicies set;
        AssistantPolicy claude;
        claude.client = QStringLiteral("Claude-Code");
        claude.action = AssistantPolicy::Action::Ask;
        set.assistants.append(claude);
        QCOMPARE(set.forClient(QStringLiteral("claude-code")).action, AssistantPolicy::Action::Ask);
        QCOMPARE(set.forClient(QStringLiteral("other")).action, AssistantPolicy::Action::Run);
        QVERIFY(set.forClient(QString()).isDefault());
        QVERIFY(!set.isOpen());
    }

    void allowAlwaysKeepsTheLimits()
    {
        AssistantPolicies set;
        set.fallback.action = AssistantPolicy::Action::Ask;
        set.fallback.languages = {QStringLiteral("python")};
        set.allowAlways(QStringLiteral("cursor"));
        QCOMPARE(set.assistants.size(), 1);
        QCOMPARE(set.forClient(QStringLiteral("cursor")).action, AssistantPolicy::Action::Run);
        QCOMPARE(set.forClient(QStringLiteral("cursor")).languages,
                 QStringList{QStringLiteral("python")});
        // Others still ask.
        QCOMPARE(set.forClient(QStringLiteral("other")).action, AssistantPolicy::Action::Ask);
        set.allowAlways(QStringLiteral("CURSOR"));
        QCOMPARE(set.assistants.size(), 1);
    }

    void allowAlwaysNeedsAName()
    {
        // The default policy is the only one matching a client without a name, and it is every
        // other assistant's too: "always" for no name must not make it "run".
        AssistantPolicies set;
        set.fallback.action = AssistantPolicy::Action::Ask;
        const AssistantPolicies before = set;
        set.allowAlways(QString());
        set.allowAlways(QStringLiteral("  "));
        QCOMPARE(set, before);
        QCOMPARE(set.forClient(QString()).action, AssistantPolicy::Action::Ask);
        QCOMPARE(set.forClient(QStringLiteral("other")).action, AssistantPolicy::Action::Ask);
        set.allowAlways(QStringLiteral("cursor"));
        QCOMPARE(set.forClient(QStringLiteral("other")).action, AssistantPolicy::Action::Ask);
    }

    void jsonRoundTrip()
    {
        AssistantPolicies set;
        set.fallback.action = AssistantPolicy::Action::Refuse;
        AssistantPolicy a;
        a.client = QStringLiteral("claude-code");
        a.action = AssistantPolicy::Action::Ask;
        a.languages = {QStringLiteral("python")};
        a.network = false;
        a.libraries = false;
        a.maxTimeoutSec = 45;
        a.maxMemoryMiB = 300;
        a.keepSessions = true;
        set.assistants.append(a);
        AssistantPolicy b;
        b.client = QStringLiteral("cursor");
        b.egress = {QStringLiteral("api.github.com"), QStringLiteral("*.pypi.org:443")};
        b.otherHosts = AssistantPolicy::OtherHosts::Ask;
        b.isolation = QStringLiteral("gvisor");
        set.assistants.append(b);
        set.approvalTimeoutSec = 30;
        set.runWhenNoWindow = true;
        QStringList warnings;
        QCOMPARE(AssistantPolicies::fromJson(set.toJson(), &warnings), set);
        QVERIFY(warnings.isEmpty());
    }

    // Isolation is kept as written: "container" is the default, and a name no engine has (a
    // hand edit's typo) stays, so its runs are refused rather than run anywhere.
    void isolationIsKeptAsWritten()
    {
        const auto read = [](const QJsonValue &isolation) {
            return AssistantPolicy::fromJson({{QStringLiteral("action"), QStringLiteral("run")},
                                              {QStringLiteral("isolation"), isolation}})
                ->isolation;
        };
        QCOMPARE(read(QStringLiteral("gvisor")), QStringLiteral("gvisor"));
        QCOMPARE(read(QStringLiteral("container")), QString());
        QCOMPARE(read(QStringLiteral(" gvsior ")), QStringLiteral("gvsior"));
        QCOMPARE(read(QJsonValue()), QString());
        QVERIFY(!AssistantPolicy().toJson().contains(u"isolation"));
    }

    void badEntriesAreDroppedNotTheSet()
    {
        const QJsonObject json{
            {QStringLiteral("default"),
             QJsonObject{{QStringLiteral("action"), QStringLiteral("ask")}}},
            {QStringLiteral("assistants"),
             QJsonArray{QJsonObject{{QStringLiteral("client"), QStringLiteral("a")},
                                    {QStringLiteral("action"), QStringLiteral("explode")}},
                        QJsonObject{{QStringLiteral("action"), QStringLiteral("run")}},
                        QJsonObject{{QStringLiteral("client"), 7},
                                    {QStringLiteral("action"), QStringLiteral("run")}},
                        QJsonObject{{QStringLiteral("client"), QStringLiteral("b")},
                                    {QStringLiteral("action"), QStringLiteral("refuse")},
                                    {QStringLiteral("maxTimeoutSec"), 99999}},
                        QJsonObject{{QStringLiteral("client"), QStringLiteral("B")},
                                    {QStringLiteral("action"), QStringLiteral("run")}},
                        QStringLiteral("not an object")}},
            {QStringLiteral("approvalTimeoutSec"), 1}};
        QStringList warnings;
        const AssistantPolicies set = AssistantPolicies::fromJson(json, &warnings);
        QCOMPARE(set.fallback.action, AssistantPolicy::Action::Ask);
        QCOMPARE(set.assistants.size(), 1);
        QCOMPARE(set.assistants.first().client, QStringLiteral("b"));
        QCOMPARE(set.assistants.first().action, AssistantPolicy::Action::Refuse);
        QCOMPARE(set.assistants.first().maxTimeoutSec, 0); // out of range: the server's
        QCOMPARE(set.approvalTimeoutSec, 120);             // out of range: the default
        QCOMPARE(warnings.size(), 6);
    }

    // The policy's hosts: a call's list must lie within them, a call that names none gets them
    // (cut to the server's), and a policy without network gives an allow-list server's runs none.
    void egressWithinThePolicy_data()
    {
        QTest::addColumn<QStringList>("policyHosts");
        QTest::addColumn<bool>("policyNetwork");
        QTest::addColumn<QStringList>("serverHosts");
        QTest::addColumn<bool>("serverOpen");
        QTest::addColumn<QVariant>("asked");  // QStringList, or nothing: the call did not say
        QTest::addColumn<QString>("refusal"); // a part of it; empty: none
        QTest::addColumn<QVariant>("gets");   // what the run gets; nothing: the server's
        const QVariant unsaid;
        const QStringList github{"api.github.com"};
        QTest::newRow("no list: as asked")
            << QStringList() << true << QStringList{"*.github.com"} << false << QVariant(github)
            << QString() << QVariant(github);
        QTest::newRow("no list, unsaid: the server's")
            << QStringList() << true << QStringList{"*.github.com"} << false << unsaid << QString()
            << unsaid;
        QTest::newRow("asked within")
            << QStringList{"*.github.com"} << true << QStringList{"*.github.com"} << false
            << QVariant(github) << QString() << QVariant(github);
        QTest::newRow("asked beyond")
            << QStringList{"pypi.org"} << true << QStringList{"*.github.com", "pypi.org"} << false
            << QVariant(github)
            << QStringLiteral("the call asks for api.github.com, which is not on its "
                              "allow-list (pypi.org)")
            << unsaid;
        QTest::newRow("unsaid: the policy's, cut to the server's")
            << QStringList{"pypi.org", "api.github.com", "evil.test"} << true
            << QStringList{"*.github.com", "pypi.org"} << false << unsaid << QString()
            << QVariant(QStringList{"pypi.org", "api.github.com"});
        QTest::newRow("unsaid, none within the server's: no network")
            << QStringList{"evil.test"} << true << QStringList{"pypi.org"} << false << unsaid
            << QString() << QVariant(QStringList());
        QTest::newRow("unsaid on an open server: the policy's")
            << QStringList{"evil.test"} << true << QStringList() << true << unsaid << QString()
            << QVariant(QStringList{"evil.test"});
        QTest::newRow("unsaid on a server without network: none")
            << QStringList{"pypi.org"} << true << QStringList() << false << unsaid << QString()
            << unsaid;
        QTest::newRow("asked for none")
            << QStringList{"pypi.org"} << true << QStringList{"pypi.org"} << false
            << QVariant(QStringList()) << QString() << QVariant(QStringList());
        QTest::newRow("no network, unsaid: none on an allow-list server")
            << QStringList() << false << QStringList{"pypi.org"} << false << unsaid << QString()
            << QVariant(QStringList());
        QTest::newRow("no network, asked")
            << QStringList() << false << QStringList{"pypi.org"} << false
            << QVariant(QStringList{"pypi.org"})
            << QStringLiteral("network access is not allowed for it, and the call asks for "
                              "pypi.org")
            << unsaid;
    }
    void egressWithinThePolicy()
    {
        QFETCH(QStringList, policyHosts);
        QFETCH(bool, policyNetwork);
        QFETCH(QStringList, serverHosts);
        QFETCH(bool, serverOpen);
        QFETCH(QVariant, asked);
        QFETCH(QString, refusal);
        QFETCH(QVariant, gets);
        AssistantPolicy p;
        p.client = QStringLiteral("claude-code");
        p.egress = policyHosts;
        p.network = policyNetwork;
        SandboxConfig config;
        config.egress = serverHosts;
        config.network = serverOpen;
        std::optional<QStringList> egress;
        if (asked.isValid())
            egress = asked.toStringList();
        int timeout = 0;
        const QString why = p.check(QStringLiteral("python"), &timeout, {}, config, &egress);
        if (refusal.isEmpty()) {
            QVERIFY2(why.isEmpty(), qPrintable(why));
            QCOMPARE(egress.has_value(), gets.isValid());
            if (gets.isValid())
                QCOMPARE(*egress, gets.toStringList());
        } else {
            QVERIFY2(why.contains(refusal), qPrintable(why));
            QVERIFY(why.contains(u"the policy for assistant 'claude-code'"));
        }
    }

    void allowHostJoinsTheAssistantsOwnList()
    {
        using H = AssistantPolicies::HostAdded;
        AssistantPolicies set;
        // The default has no list: the server decides, and one host would narrow it.
        QCOMPARE(set.allowHost(QStringLiteral("cursor"), QStringLiteral("pypi.org")),
                 H::ServerDecides);
        QVERIFY(set.assistants.isEmpty());
        set.fallback.egress = {QStringLiteral("pypi.org")};
        QCOMPARE(set.allowHost(QString(), QStringLiteral("api.github.com")), H::NoName);
        QCOMPARE(set.allowHost(QStringLiteral("cursor"), QStringLiteral("https://x/")),
                 H::NotAPattern);
        QCOMPARE(set.allowHost(QStringLiteral("cursor"), QStringLiteral("PyPI.org")),
                 H::AlreadyListed);
        // From the default, a policy of its own: the default itself is untouched.
        QCOMPARE(set.allowHost(QStringLiteral("cursor"), QStringLiteral("api.github.com")),
                 H::Added);
        QCOMPARE(set.fallback.egress, QStringList{QStringLiteral("pypi.org")});
        QCOMPARE(set.forClient(QStringLiteral("Cursor")).egress,
                 (QStringList{QStringLiteral("pypi.org"), QStringLiteral("api.github.com")}));
        QCOMPARE(set.allowHost(QStringLiteral("cursor"), QStringLiteral("evil.test:8443")),
                 H::Added);
        QCOMPARE(set.assistants.size(), 1);
        QCOMPARE(set.assistants.first().egress.last(), QStringLiteral("evil.test:8443"));
        // A policy without network stays without.
        set.assistants.first().network = false;
        QCOMPARE(set.allowHost(QStringLiteral("cursor"), QStringLiteral("a.test")),
                 H::ServerDecides);
    }

    void noNetworkMeansNoSecret()
    {
        // A server whose runs reach only its secrets' hosts: a policy without network gives its
        // runs an empty list, which is no network and no secret (RunNetwork::decide).
        AssistantPolicy p;
        p.network = false;
        SandboxConfig config;
        config.secrets = {{QStringLiteral("API_KEY"), {QStringLiteral("api.example.com")}, "v"}};
        int timeout = 0;
        std::optional<QStringList> egress;
        QCOMPARE(p.check(QStringLiteral("python"), &timeout, {}, config, &egress), QString());
        QVERIFY(egress.has_value());
        QCOMPARE(*egress, QStringList());
        const RunNetwork run = RunNetwork::decide(config, egress, &p);
        QVERIFY(!run.reachesNetwork());
        QVERIFY(run.secrets.isEmpty());
        // The same policy with network leaves the run its secrets.
        p.network = true;
        egress.reset();
        QCOMPARE(p.check(QStringLiteral("python"), &timeout, {}, config, &egress), QString());
        QVERIFY(RunNetwork::decide(config, egress, &p).bindsSecrets());
    }

    void namesTheSecretsItsRunsGet()
    {
        AssistantPolicy p;
        p.client = QStringLiteral("cursor");
        p.secrets = QStringList{QStringLiteral("B")};
        // Through the settings file and back; a list that is not one reads as none given.
        QCOMPARE(AssistantPolicy::fromJson(p.toJson()), std::optional<AssistantPolicy>(p));
        QJsonObject odd = p.toJson();
        odd.insert(QStringLiteral("secrets"), QStringLiteral("B"));
        QVERIFY(!AssistantPolicy::fromJson(odd)->secrets.has_value());
        AssistantPolicy none = p;
        none.secrets = QStringList();
        QCOMPARE(AssistantPolicy::fromJson(none.toJson())->secrets,
                 std::optional<QStringList>(QStringList()));
        // A run's network keeps only the names its policy gives.
        SandboxConfig config;
        config.secrets = {{QStringLiteral("A"), {QStringLiteral("a.example.com")}, "1"},
                          {QStringLiteral("B"), {QStringLiteral("b.example.com")}, "2"}};
        QCOMPARE(RunNetwork::decide(config, std::nullopt, &p).secrets.size(), 1);
        QCOMPARE(RunNetwork::decide(config, std::nullopt, &p).secrets.first().name,
                 QStringLiteral("B"));
        QVERIFY(!RunNetwork::decide(config, std::nullopt, &none).bindsSecrets());
        QCOMPARE(RunNetwork::decide(config).secrets.size(), 2);
    }

    void askingForOtherHostsKeepsTheListedOnes()
    {
        AssistantPolicy p;
        p.client = QStringLiteral("claude-code");
        p.egress = {QStringLiteral("pypi.org"), QStringLiteral("*.github.com")};
        p.otherHosts = AssistantPolicy::OtherHosts::Ask;
        SandboxConfig config;
        config.egress = {QStringLiteral("pypi.org"), QStringLiteral("*.github.com"),
                         QStringLiteral("evil.test")};
        int timeout = 0;
        // Beyond the list: not refused; the run gets the listed ones, the rest are asked live.
        std::optional<QStringList> egress =
            QStringList{QStringLiteral("api.github.com"), QStringLiteral("evil.test")};
        QCOMPARE(p.check(QStringLiteral("python"), &timeout, {}, config, &egress), QString());
        QCOMPARE(*egress, QStringList{QStringLiteral("api.github.com")});
        // None listed: what a call that did not say gets, not "no network".
        egress = QStringList{QStringLiteral("evil.test")};
        QCOMPARE(p.check(QStringLiteral("python"), &timeout, {}, config, &egress), QString());
        QCOMPARE(*egress,
                 (QStringList{QStringLiteral("pypi.org"), QStringLiteral("*.github.com")}));
        QVERIFY(p.asksOtherHosts());
        // Refuse (the default) refuses the same call, naming the rule.
        p.otherHosts = AssistantPolicy::OtherHosts::Refuse;
        egress = QStringList{QStringLiteral("evil.test")};
        QVERIFY(p.check(QStringLiteral("python"), &timeout, {}, config, &egress)
                    .contains(u"not on its allow-list"));
        QVERIFY(!p.asksOtherHosts());
        // Without network there is nothing to ask about.
        p.otherHosts = AssistantPolicy::OtherHosts::Ask;
        p.network = false;
        QVERIFY(!p.asksOtherHosts());
        // Only the word "ask" asks: a broken one refuses.
        const auto read = [](const QString &word) {
            return AssistantPolicy::fromJson({{QStringLiteral("action"), QStringLiteral("run")},
                                              {QStringLiteral("otherHosts"), word}})
                ->otherHosts;
        };
        QCOMPARE(read(QStringLiteral("ASK")), AssistantPolicy::OtherHosts::Ask);
        QCOMPARE(read(QStringLiteral("askk")), AssistantPolicy::OtherHosts::Refuse);
        QVERIFY(!AssistantPolicy().toJson().contains(u"otherHosts"));
    }

    void allowHostSeedsAPolicyWithoutAList()
    {
        using H = AssistantPolicies::HostAdded;
        AssistantPolicies set;
        // "Always" on a held connection: the assistant's list becomes the run's hosts and this one.
        QCOMPARE(set.allowHost(QStringLiteral("cursor"), QStringLiteral("api.github.com"),
                               {QStringLiteral("pypi.org")}),
                 H::Added);
        QCOMPARE(set.forClient(QStringLiteral("cursor")).egress,
                 (QStringList{QStringLiteral("pypi.org"), QStringLiteral("api.github.com")}));
        QVERIFY(set.fallback.egress.isEmpty());
        // A list of its own is not seeded again.
        QCOMPARE(set.allowHost(QStringLiteral("cursor"), QStringLiteral("a.test"),
                               {QStringLiteral("b.test")}),
                 H::Added);
        QCOMPARE(set.forClient(QStringLiteral("cursor")).egress.size(), 3);
        QCOMPARE(set.allowHost(QStringLiteral("cursor"), QStringLiteral("a.test"),
                               {QStringLiteral("b.test")}),
                 H::AlreadyListed);
    }

    void aBrokenHostListFailsClosed()
    {
        // A hand edit that left no valid host: no network, never the server's whole list.
        const auto read = [](const QJsonArray &hosts) {
            return *AssistantPolicy::fromJson({{QStringLiteral("action"), QStringLiteral("run")},
                                               {QStringLiteral("egress"), hosts}});
        };
        const AssistantPolicy broken = read({QStringLiteral("http://pypi.org/"), 7});
        QVERIFY(broken.egress.isEmpty());
        QVERIFY(!broken.network);
        const AssistantPolicy partly =
            read({QStringLiteral("http://pypi.org/"), QStringLiteral("PyPI.org.")});
        QCOMPARE(partly.egress, QStringList{QStringLiteral("pypi.org")});
        QVERIFY(partly.network);
        QVERIFY(read({}).network);
    }

    void workspacesAreTheServersUnlessTheyAreListed()
    {
        const QStringList asked{QStringLiteral("data"), QStringLiteral("repo")};
        AssistantPolicy p;
        p.client = QStringLiteral("claude-code");
        // Nothing listed: all the server's (the server's list is the opt-in).
        QCOMPARE(p.checkWorkspaces(asked), QString());
        p.workspaces = QStringList{QStringLiteral("data")};
        QCOMPARE(p.checkWorkspaces({QStringLiteral("data")}), QString());
        const QString refused = p.checkWorkspaces(asked);
        QVERIFY2(refused.contains(QStringLiteral("the workspace repo is not among those it may "
                                                 "use (data)")),
                 qPrintable(refused));
        QVERIFY(refused.contains(QStringLiteral("'claude-code'")));
        p.workspaces = QStringList();
        QVERIFY(p.checkWorkspaces(asked).contains(QStringLiteral("data, repo are not among those "
                                                                 "it may use (none)")));
        // Asking: a person decides, with the workspaces in the question.
        p.action = AssistantPolicy::Action::Ask;
        QCOMPARE(p.checkWorkspaces(asked), QString());
        // The list survives the settings file; a name that cannot be one is dropped, and
        // anything but a list means all of them.
        p.workspaces = QStringList{QStringLiteral("data")};
        QCOMPARE(AssistantPolicy::fromJson(p.toJson())->workspaces, p.workspaces);
        QJsonObject json = p.toJson();
        json.insert(QStringLiteral("workspaces"),
                    QJsonArray{QStringLiteral("data"), QStringLiteral("../etc"), 3});
        QCOMPARE(AssistantPolicy::fromJson(json)->workspaces, QStringList{QStringLiteral("data")});
        json.insert(QStringLiteral("workspaces"), QStringLiteral("data"));
        QVERIFY(!AssistantPolicy::fromJson(json)->workspaces.has_value());
        p.workspaces.reset();
        QVERIFY(!p.toJson().contains(u"workspaces"));
    }

    void approvalRequestRoundTripAndBounds()
    {
        ApprovalRequest r;
        r.id = QStringLiteral("id-1");
        r.client = QStringLiteral("claude-code");
        r.tool = QStringLiteral("execute_code");
        r.language = QStringLiteral("python");
        r.code = QStringLiteral("print(1)");
        r.timeoutSec = 30;
        r.libraries = {QStringLiteral("rich")};
        r.files = {{QStringLiteral("data.csv"), 12}};
        r.memoryBytes = 512 << 20;
        r.cpus = 1.5;
        r.network = true;
        r.mode = QStringLiteral("stdio");
        r.waitSec = 120;
        const std::optional<ApprovalRequest> back = ApprovalRequest::fromJson(r.toJson());
        QVERIFY(back);
        QCOMPARE(back->code, r.code);
        QCOMPARE(back->files, r.files);
        QCOMPARE(back->libraries, r.libraries);
        QCOMPARE(back->cpus, 1.5);
        QVERIFY(back->network);
        QVERIFY(back->egress.isEmpty());
        // Hosts travel only when there are any: the lines of other runs stay as they were.
        QVERIFY(!r.toJson().contains(u"egress"));
        r.egress = {QStringLiteral("api.github.com"), QStringLiteral("*.pypi.org")};
        QCOMPARE(ApprovalRequest::fromJson(r.toJson())->egress, r.egress);
        // So do the workspaces it would see.
        QVERIFY(!r.toJson().contains(u"workspaces"));
        r.workspaces = {QStringLiteral("data (read-only)")};
        QCOMPARE(ApprovalRequest::fromJson(r.toJson())->workspaces, r.workspaces);
        // A held connection's question: its host, port and run cross too.
        r.host = QStringLiteral("api.github.com");
        r.port = 8443;
        r.runId = QStringLiteral("run-1");
        const std::optional<ApprovalRequest> held = ApprovalRequest::fromJson(r.toJson());
        QVERIFY(held && held->isConnection());
        QCOMPARE(held->hostPort(), QStringLiteral("api.github.com:8443"));
        QCOMPARE(held->hostPattern(), QStringLiteral("api.github.com:8443"));
        QCOMPARE(held->runId, QStringLiteral("run-1"));
        r.port = 443;
        QCOMPARE(r.hostPattern(), QStringLiteral("api.github.com"));
        r.host = QStringLiteral("::1");
        QCOMPARE(r.hostPort(), QStringLiteral("[::1]:443"));
        QJsonObject badPort = r.toJson();
        badPort.insert(QStringLiteral("port"), 70000);
        QVERIFY(!ApprovalRequest::fromJson(badPort));
        QJsonObject longHost = r.toJson();
        longHost.insert(QStringLiteral("host"), QString(300, u'h'));
        QVERIFY(!ApprovalRequest::fromJson(longHost));
        r.host.clear();
        r.port = 0;
        QVERIFY(!r.toJson().contains(u"host"));
        r.egress.clear();
        QVERIFY(!ApprovalRequest::fromJson(QJsonObject{}));
        // What runs crosses whole, however large (the monitor's line bounds it, not a cut).
        QJsonObject large = r.toJson();
        QString program;
        for (int i = 0; program.size() < 300 * 1024; ++i)
            program += QStringLiteral("print(%1)\n").arg(i);
        program += QStringLiteral("import os  # the tail runs too\n");
        QJsonArray fileList;
        for (int i = 0; i < 2000; ++i) {
            const QString path = QStringLiteral("f%1/").arg(i) + QString(1000, u'p');
            fileList.append(
                QJsonObject{{QStringLiteral("path"), path}, {QStringLiteral("size"), i}});
        }
        const QString longName = QString(5000, u'n');
        large.insert(QStringLiteral("code"), program);
        large.insert(QStringLiteral("files"), fileList);
        large.insert(QStringLiteral("client"), longName);
        large.insert(QStringLiteral("libraries"), QJsonArray{QString(400, u'l')});
        large.insert(QStringLiteral("timeoutSec"), -5);
        const std::optional<ApprovalRequest> whole = ApprovalRequest::fromJson(large);
        QVERIFY(whole);
        QCOMPARE(whole->code, program);
        QCOMPARE(whole->files.size(), 2000);
        QCOMPARE(whole->files.last().first, fileList.last().toObject().value(u"path").toString());
        QCOMPARE(whole->client, longName);
        QCOMPARE(whole->libraries, QStringList{QString(400, u'l')});
        QCOMPARE(whole->timeoutSec, 0);
        r.code = program;
        QCOMPARE(ApprovalRequest::fromJson(r.toJson())->code, program);
        // A field that only names something is never shortened: too long, and it is no request.
        QJsonObject odd = r.toJson();
        odd.insert(QStringLiteral("language"), QString(65, u'x'));
        QVERIFY(!ApprovalRequest::fromJson(odd));
    }
};

QTEST_GUILESS_MAIN(TestAssistantPolicy)
#include "tst_assistantpolicy.moc"
