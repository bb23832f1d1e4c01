#include "containerspec.h"
#include "egresslist.h"
#include "languageregistry.h"
#include "podspec.h"
#include "runnetwork.h"
#include "sandboxconfig.h"
#include "sandboxspec.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

// SandboxSpec and its two renderings. The bodies are compared with data/sandboxspec-bodies.json:
// the Docker create bodies and pod manifests that ContainerSpec::build and PodSpec::build made
// from the same inputs before both became renderers of a SandboxSpec, so that the spec changed
// nothing an engine or a cluster sees. Values that vary from machine to machine or with the
// scripts (the pid and host labels, the supervisor and the loaders) are left out of both sides.
class tst_SandboxSpec : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void bodiesAsBefore_data();
    void bodiesAsBefore();
    void keys();
    void installHasNoPassThrough();
    void runtime();
    void allowlist();
    void installsReachTheirIndex();
    void hostTrustStore_data();
    void hostTrustStore();
};

namespace {
const LanguageRegistry &registry()
{
    static const LanguageRegistry r = LanguageRegistry::builtIn();
    return r;
}

const Language &lang(const char *name)
{
    const Language *l = registry().find(QString::fromLatin1(name));
    if (!l)
        qFatal("unknown language in the test itself");
    return *l;
}

SandboxConfig base()
{
    SandboxConfig c;
    c.instanceId = QStringLiteral("3d1f0c2a-5b8e-4f7a-9c1d-2e3f4a5b6c7d");
    return c;
}

// Everything loosened or changed that a spec carries.
SandboxConfig loose()
{
    SandboxConfig c = base();
    c.network = true;
    c.passThroughEnv = {{QStringLiteral("API_KEY"), QStringLiteral("s3cret")},
                        {QStringLiteral("HOME"), QStringLiteral("/override")}};
    c.memoryBytes = 1536LL * 1024 * 1024;
    c.cpus = 1.5;
    c.pidsLimit = 100;
    c.tmpfsBytes = 32LL * 1024 * 1024 + 512;
    c.maxTimeoutSec = 120;
    return c;
}

QJsonValue normalized(const QJsonValue &value)
{
    if (value.isObject()) {
        QJsonObject out;
        const QJsonObject in = value.toObject();
        for (auto it = in.begin(); it != in.end(); ++it) {
            if (it.key() == u"code-sandbox.pid" || it.key() == u"code-sandbox.host")
                continue;
            const QJsonValue v = normalized(it.value());
            if (it.key() == u"annotations" && v.toObject().isEmpty())
                continue;
            out.insert(it.key(), v);
        }
        return out;
    }
    if (value.isArray()) {
        QJsonArray out;
        for (const QJsonValue &v : value.toArray())
            out.append(normalized(v));
        return out;
    }
    // (The boot script names the loader by the hash of its text, which changes with the loader.)
    if (value.isString() && value.toString().startsWith(u"# Starts the Python loader"))
        return QStringLiteral("<python-boot>");
    if (value.isString() && value.toString().size() > 1000)
        return QStringLiteral("<script>");
    return value;
}

QJsonObject before()
{
    static const QJsonObject bodies = [] {
        QFile f(QStringLiteral(CS_SPEC_BODIES));
        if (!f.open(QIODevice::ReadOnly))
            qFatal("cannot read %s", CS_SPEC_BODIES);
        return QJsonDocument::fromJson(f.readAll()).object();
    }();
    return bodies;
}

QJsonObject docker(const SandboxSpec &spec)
{
    return ContainerSpec::render(spec);
}

QJsonObject pod(SandboxSpec spec, const QString &runtime = {}, const PodSpec::Options &options = {})
{
    spec.runtime = runtime;
    return PodSpec::render(spec, options);
}
} // namespace

void tst_SandboxSpec::bodiesAsBefore_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QJsonObject>("body");
    const auto row = [](const QString &name, const QJsonObject &body) {
        QTest::newRow(qPrintable(name)) << name << body;
    };
    for (const Language &l : registry().all()) {
        const SandboxSpec run = SandboxSpec::forRun(l, l.image, base(), RunNetwork::decide(base()));
        row(QStringLiteral("docker-run-") + l.name, docker(run));
        row(QStringLiteral("pod-run-") + l.name, pod(run));
    }
    const Language &py = lang("python");
    const Language &js = lang("javascript");
    const Language &c = lang("c");
    row(QStringLiteral("docker-run-python-loose"),
        docker(SandboxSpec::forRun(py, QStringLiteral("my/python:3"), loose(),
                                   RunNetwork::decide(loose()))));
    row(QStringLiteral("docker-run-python-libraries"),
        docker(SandboxSpec::forRun(py, py.image, base(), RunNetwork::decide(base()),
                                   QStringLiteral("cs-libs-abc"))));
    row(QStringLiteral("docker-run-python-session"),
        docker(SandboxSpec::forRun(py, py.image, base(), RunNetwork::decide(base()), {}, true)));
    row(QStringLiteral("docker-run-javascript-libraries-session"),
        docker(SandboxSpec::forRun(js, js.image, loose(), RunNetwork::decide(loose()),
                                   QStringLiteral("cs-libs-js"), true)));
    row(QStringLiteral("docker-run-c-libraries-session"),
        docker(SandboxSpec::forRun(c, c.image, base(), RunNetwork::decide(base()),
                                   QStringLiteral("cs-libs-c"), true)));

    // The host's trust store in runs with network: on the open network, and on the allow-list
    // beside a libraries volume (Docker only: a pod has no such mount, KubernetesBackend takes
    // it out).
    SandboxConfig hostCa = loose();
    hostCa.installCaBundle = QStringLiteral("/etc/ssl/certs/ca-certificates.crt");
    row(QStringLiteral("docker-run-python-network-ca"),
        docker(SandboxSpec::forRun(py, py.image, hostCa, RunNetwork::decide(hostCa))));
    hostCa.egress = {QStringLiteral("registry.npmjs.org")};
    row(QStringLiteral("docker-run-javascript-allowlist-ca-libraries"),
        docker(SandboxSpec::forRun(js, js.image, hostCa, RunNetwork::decide(hostCa),
                                   QStringLiteral("cs-libs-js"))));

    SandboxConfig install = loose();
    install.tmpfsBytes = 1024LL * 1024 * 1024;
    install.installEnv = {QStringLiteral("HTTP_PROXY=http://proxy:3128"),
                          QStringLiteral("HOME=/h")};
    install.installCaBundle = QStringLiteral("/etc/ssl/certs/ca-certificates.crt");
    row(QStringLiteral("docker-install-python-ca"),
        docker(SandboxSpec::forInstall(py, py.image, install, QStringLiteral("cs-libs-x"))));
    row(QStringLiteral("docker-install-javascript"),
        docker(SandboxSpec::forInstall(js, js.image, base(), QStringLiteral("cs-libs-y"))));

    PodSpec::Options options;
    options.imagePrefix = QStringLiteral("registry.example.com/team/");
    options.nodeSelector = {{QStringLiteral("pool"), QStringLiteral("sandboxes")},
                            {QStringLiteral("arch"), QStringLiteral("amd64")}};
    row(QStringLiteral("pod-run-python-options"),
        pod(SandboxSpec::forRun(py, QStringLiteral("my/python:3"), loose(),
                                RunNetwork::decide(loose()), {}, true),
            QStringLiteral("gvisor"), options));
    options.activeDeadlineSeconds = 600;
    row(QStringLiteral("pod-run-python-deadline"),
        pod(SandboxSpec::forRun(py, QStringLiteral("my/python:3"), base(),
                                RunNetwork::decide(base())),
            QStringLiteral("gvisor"), options));
    SandboxConfig odd = base();
    odd.instanceId = QStringLiteral(
        "Weird Instance/ID with spaces, and a tail long enough to pass sixty-three characters");
    const SandboxSpec oddRun = SandboxSpec::forRun(py, py.image, odd, RunNetwork::decide(odd));
    row(QStringLiteral("pod-run-python-odd-instance"), pod(oddRun));
    row(QStringLiteral("docker-run-python-odd-instance"), docker(oddRun));
}

void tst_SandboxSpec::bodiesAsBefore()
{
    QFETCH(QString, name);
    QFETCH(QJsonObject, body);
    QVERIFY2(before().contains(name), qPrintable(name));
    const QByteArray now = QJsonDocument(normalized(body).toObject()).toJson();
    const QByteArray then = QJsonDocument(before().value(name).toObject()).toJson();
    QCOMPARE(now, then);
}

void tst_SandboxSpec::keys()
{
    // The pool keeps sandboxes per key: equal specs share one, any difference makes another.
    const Language &py = lang("python");
    const SandboxSpec run = SandboxSpec::forRun(py, py.image, base(), RunNetwork::decide(base()));
    QCOMPARE(run.key(),
             SandboxSpec::forRun(py, py.image, base(), RunNetwork::decide(base())).key());
    QVERIFY(run == SandboxSpec::forRun(py, py.image, base(), RunNetwork::decide(base())));
    QVERIFY(run.key() !=
            SandboxSpec::forRun(py, py.image, base(), RunNetwork::decide(base()), {}, true).key());
    QVERIFY(run.key() !=
            SandboxSpec::forRun(py, py.image, loose(), RunNetwork::decide(loose())).key());
    QVERIFY(run.key() !=
            SandboxSpec::forRun(py, QStringLiteral("other:1"), base(), RunNetwork::decide(base()))
                .key());
    SandboxSpec other = run;
    other.runtime = QStringLiteral("runsc");
    QVERIFY(run != other);
    other = run;
    other.secrets.append({QStringLiteral("API_TOKEN"), {QStringLiteral("api.example.com")}, "v1"});
    QVERIFY(run != other);
    // Another value of the same secret is another sandbox: a warm one holds the old grant.
    SandboxSpec rotated = other;
    rotated.secrets.first().value = "v2";
    QVERIFY(rotated != other);
    QVERIFY(!other.key().contains(u"v1"));
    other = run;
    other.env.append({QStringLiteral("A"), QStringLiteral("1")});
    QVERIFY(run != other);

    const SandboxSpec::Result refused = SandboxSpec::Result::refused(QStringLiteral("no"));
    QVERIFY(!refused.ok());
    QCOMPARE(refused.error, QStringLiteral("no"));
    QVERIFY(SandboxSpec::Result::of(run).ok());
}

void tst_SandboxSpec::installHasNoPassThrough()
{
    const Language &js = lang("javascript");
    const SandboxSpec install =
        SandboxSpec::forInstall(js, js.image, loose(), QStringLiteral("cs-libs-y"));
    for (const auto &var : install.env)
        QVERIFY2(var.first != u"API_KEY", qPrintable(var.first));
    // --network is for runs: the install reaches its package index only.
    QCOMPARE(install.network, SandboxSpec::Network::Allowlist);
    QCOMPARE(install.role, QStringLiteral("install"));
    QCOMPARE(install.sandboxLabels().value(QStringLiteral("code-sandbox.role")),
             QStringLiteral("install"));
    QVERIFY(!install.labels.contains(QStringLiteral("code-sandbox.role")));
}

void tst_SandboxSpec::runtime()
{
    // Room for runtimes: Docker's Runtime, Kubernetes' RuntimeClass; absent when not set.
    const Language &py = lang("python");
    SandboxSpec spec = SandboxSpec::forRun(py, py.image, base(), RunNetwork::decide(base()));
    QVERIFY(!docker(spec).value(u"HostConfig").toObject().contains(u"Runtime"));
    spec.runtime = QStringLiteral("runsc");
    QCOMPARE(docker(spec).value(u"HostConfig").toObject().value(u"Runtime").toString(),
             QStringLiteral("runsc"));
    QCOMPARE(PodSpec::render(spec).value(u"spec").toObject().value(u"runtimeClassName"),
             QJsonValue(QStringLiteral("runsc")));
}

QTEST_GUILESS_MAIN(tst_SandboxSpec)
#include "tst_sandboxspec.moc"

void tst_SandboxSpec::allowlist()
{
    // An allow-list makes runs Allowlist, narrowing --network; the list is part of the key, so a
    // warm sandbox serves only runs with the same hosts. Installs get their package index, not
    // the runs' list.
    const Language &py = lang("python");
    SandboxConfig config = base();
    config.network = true;
    config.egress = {QStringLiteral("pypi.org"), QStringLiteral("*.example.com:8443")};
    const SandboxSpec run = SandboxSpec::forRun(py, py.image, config, RunNetwork::decide(config));
    QCOMPARE(run.network, SandboxSpec::Network::Allowlist);
    QCOMPARE(run.egress, config.egress);
    QVERIFY(run.key() !=
            SandboxSpec::forRun(py, py.image, base(), RunNetwork::decide(base())).key());
    SandboxConfig other = config;
    other.egress = {QStringLiteral("pypi.org")};
    QVERIFY(run.key() != SandboxSpec::forRun(py, py.image, other, RunNetwork::decide(other)).key());
    QCOMPARE(run.key(),
             SandboxSpec::forRun(py, py.image, config, RunNetwork::decide(config)).key());

    const SandboxSpec install =
        SandboxSpec::forInstall(py, py.image, config, QStringLiteral("cs-libs"));
    QCOMPARE(install.network, SandboxSpec::Network::Allowlist);
    QCOMPARE(install.egress, py.indexHosts);
    QVERIFY(!install.askOtherHosts);
    QCOMPARE(SandboxSpec::forRun(py, py.image, base(), RunNetwork::decide(base())).network,
             SandboxSpec::Network::None);
}

void tst_SandboxSpec::installsReachTheirIndex()
{
    // Every language that installs names the hosts of its index, each a pattern the gateway
    // takes.
    for (const Language &l : registry().all()) {
        if (l.installCommand.isEmpty())
            continue;
        QVERIFY2(!l.indexHosts.isEmpty(), qPrintable(l.name));
        QString error;
        QCOMPARE(EgressList::parse(l.indexHosts, &error), l.indexHosts);
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
    const Language &py = lang("python");
    QCOMPARE(py.indexHosts,
             QStringList({QStringLiteral("pypi.org"), QStringLiteral("files.pythonhosted.org")}));
    QCOMPARE(lang("javascript").indexHosts, QStringList{QStringLiteral("registry.npmjs.org")});

    // The operator's mirrors join the index, once each.
    SandboxConfig config = base();
    config.indexHosts = {QStringLiteral("mirror.example:8080"), QStringLiteral("pypi.org")};
    SandboxSpec install = SandboxSpec::forInstall(py, py.image, config, QStringLiteral("v"));
    QCOMPARE(install.network, SandboxSpec::Network::Allowlist);
    QCOMPARE(install.egress,
             QStringList({QStringLiteral("pypi.org"), QStringLiteral("files.pythonhosted.org"),
                          QStringLiteral("mirror.example:8080")}));
    // The rendered body has no network of its own: DockerContainer joins the gateway's.
    const QJsonObject body = docker(install);
    QCOMPARE(body.value(u"NetworkDisabled").toBool(), true);
    QCOMPARE(body.value(u"HostConfig").toObject().value(u"NetworkMode").toString(),
             QStringLiteral("none"));

    // Behind the host's proxy (either case) the install is still on the allow-list (the
    // gateway chains to that proxy), and the host's proxy variables stay out of it: the
    // sandbox's proxy is the gateway. Its other settings (an index) go in.
    for (const char *entry : {"HTTPS_PROXY=http://u:p@proxy:3128", "http_proxy=http://proxy:3128",
                              "NO_PROXY=x.example", "ALL_PROXY=socks5://s:1080"}) {
        config.installEnv = {QString::fromLatin1(entry),
                             QStringLiteral("PIP_INDEX_URL=https://mirror.example/simple")};
        install = SandboxSpec::forInstall(py, py.image, config, QStringLiteral("v"));
        QCOMPARE(install.network, SandboxSpec::Network::Allowlist);
        QVERIFY(install.egress.contains(QStringLiteral("pypi.org")));
        QCOMPARE(install.envEntries().filter(QStringLiteral("PROXY"), Qt::CaseInsensitive),
                 QStringList());
        QVERIFY(install.envEntries().contains(
            QStringLiteral("PIP_INDEX_URL=https://mirror.example/simple")));
    }
    // The runs' list and asking for other hosts are the runs': an install gets neither.
    config.installEnv.clear();
    config.egress = {QStringLiteral("api.example.com")};
    install = SandboxSpec::forInstall(py, py.image, config, QStringLiteral("v"));
    QVERIFY(!install.egress.contains(QStringLiteral("api.example.com")));
    QVERIFY(!install.askOtherHosts);
}

void tst_SandboxSpec::hostTrustStore_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<bool>("network");
    QTest::addColumn<QStringList>("egress");
    QTest::addColumn<bool>("secret");
    QTest::addColumn<QString>("bundle");
    QTest::addColumn<QString>("libraries");
    QTest::addColumn<bool>("session");
    QTest::addColumn<bool>("noNetworkCall"); // a call's empty list (RunNetwork::decide)
    QTest::addColumn<bool>("trusts");        // the run gets the host's trust store

    const QString system = QStringLiteral("/etc/ssl/certs/ca-certificates.crt");
    const QString corporate = QStringLiteral("/home/me/corp-ca.pem");
    const QStringList list{QStringLiteral("pypi.org")};
    QTest::newRow("no network: nothing") << "python" << false << QStringList() << false << system
                                         << QString() << false << false << false;
    QTest::newRow("no network, libraries and a session: nothing")
        << "python" << false << QStringList() << false << system << "cs-libs-a" << true << false
        << false;
    QTest::newRow("a call's empty list under --network and a secret: nothing")
        << "python" << true << QStringList() << true << corporate << QString() << false << true
        << false;
    QTest::newRow("open network") << "python" << true << QStringList() << false << system
                                  << QString() << false << false << true;
    QTest::newRow("open network, another file") << "javascript" << true << QStringList() << false
                                                << corporate << QString() << false << false << true;
    QTest::newRow("allow-list") << "python" << false << list << false << system << QString()
                                << false << false << true;
    QTest::newRow("allow-list narrowing --network")
        << "bash" << true << list << false << corporate << QString() << false << false << true;
    QTest::newRow("bound secret alone") << "python" << false << QStringList() << true << system
                                        << QString() << false << false << true;
    QTest::newRow("allow-list, libraries, session")
        << "javascript" << false << list << false << system << "cs-libs-b" << true << false << true;
    QTest::newRow("compiled language, open network")
        << "c" << true << QStringList() << false << system << QString() << false << false << true;
    QTest::newRow("'none': the image's own")
        << "python" << true << list << false << QString() << QString() << false << false << false;
}

void tst_SandboxSpec::hostTrustStore()
{
    // A run that goes out (--network, an allow-list, a bound secret) gets the host's trust store
    // as a read-only file at a fixed place and the variable that names it to the supervisor,
    // which adds it to the image's store; a run without network gets neither. Equal configs give
    // equal keys, so warm sandboxes still serve them.
    QFETCH(QString, language);
    QFETCH(bool, network);
    QFETCH(QStringList, egress);
    QFETCH(bool, secret);
    QFETCH(QString, bundle);
    QFETCH(QString, libraries);
    QFETCH(bool, session);
    QFETCH(bool, noNetworkCall);
    QFETCH(bool, trusts);

    const Language &l = lang(qPrintable(language));
    SandboxConfig config = base();
    config.network = network;
    config.egress = egress;
    if (secret)
        config.secrets = {{QStringLiteral("API_KEY"), {QStringLiteral("api.example.com")}, "v"}};
    config.installCaBundle = bundle;
    config.passThroughEnv = {{QStringLiteral("API_TOKEN"), QStringLiteral("t")}};
    // A call's empty list: no network, and so no secret.
    const auto networkOf = [noNetworkCall](const SandboxConfig &c) {
        return RunNetwork::decide(c, noNetworkCall ? std::optional<QStringList>(QStringList())
                                                   : std::nullopt);
    };
    const SandboxSpec spec =
        SandboxSpec::forRun(l, l.image, config, networkOf(config), libraries, session);

    const SandboxSpec::Mount mount{SandboxSpec::Mount::Kind::HostFile, bundle,
                                   QString::fromLatin1(SandboxSpec::kHostTrustStore), true};
    const QString var = QStringLiteral("CS_HOST_CA=/etc/code-sandbox/host-ca.crt");
    QCOMPARE(spec.mounts.contains(mount), trusts);
    QCOMPARE(spec.envEntries().contains(var), trusts);
    QCOMPARE(spec.mounts.size(), (libraries.isEmpty() ? 0 : 1) + (trusts ? 1 : 0));
    if (trusts) {
        // Before the pass-through variables, which stay last.
        QCOMPARE(spec.envEntries().last(), QStringLiteral("API_TOKEN=t"));
        // As the engine is asked for it: a read-only bind of that file.
        const QJsonArray mounts =
            docker(spec).value(u"HostConfig").toObject().value(u"Mounts").toArray();
        QCOMPARE(mounts.last(),
                 QJsonValue(QJsonObject{{QStringLiteral("Type"), "bind"},
                                        {QStringLiteral("Source"), bundle},
                                        {QStringLiteral("Target"), "/etc/code-sandbox/host-ca.crt"},
                                        {QStringLiteral("ReadOnly"), true}}));
    }
    // The pool's key: the same for the same config, another for another store.
    QCOMPARE(spec.key(),
             SandboxSpec::forRun(l, l.image, config, networkOf(config), libraries, session).key());
    SandboxConfig without = config;
    without.installCaBundle.clear();
    const SandboxSpec plain =
        SandboxSpec::forRun(l, l.image, without, networkOf(without), libraries, session);
    QCOMPARE(spec.key() != plain.key(), trusts);
    // Where sandboxes cannot mount a file of this machine (a pod), taking it out leaves the run
    // as it is without one, in its key and in the pod.
    SandboxSpec dropped = spec;
    QCOMPARE(dropped.dropHostTrustStore(), trusts);
    QCOMPARE(dropped.key(), plain.key());
    QCOMPARE(pod(dropped), pod(plain));
    // An install's store is its own (the trust variables name it): not a run's to drop.
    if (!libraries.isEmpty()) {
        SandboxSpec install = SandboxSpec::forInstall(l, l.image, config, libraries);
        const QString before = install.key();
        QVERIFY(!install.dropHostTrustStore());
        QCOMPARE(install.key(), before);
        QVERIFY(!install.envEntries().contains(var));
    }
}
