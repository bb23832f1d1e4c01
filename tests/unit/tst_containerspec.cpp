#include "builtinlanguage.h"
#include "containerspec.h"
#include "egressendpoint.h"
#include "languageregistry.h"
#include "runnetwork.h"
#include "sandboxconfig.h"
#include "sandboxspec.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QJsonArray>
#include <QTest>

namespace {
const QString kImage = QStringLiteral("code-sandbox/python:latest");
const QString kInstance = QStringLiteral("3d1f0c2a-unit");

const Language &lang(const QString &name)
{
    return builtInLanguage(name);
}

QJsonObject build(const SandboxConfig &config, const QString &language = QStringLiteral("python"),
                  const QString &librariesVolume = QString())
{
    const Language &l = lang(language);
    return ContainerSpec::render(
        SandboxSpec::forRun(l, l.image, config, RunNetwork::decide(config), librariesVolume));
}

SandboxConfig defaultConfig()
{
    SandboxConfig c;
    c.instanceId = kInstance;
    return c;
}

// Walks keys given one per element, so keys containing '/' (Tmpfs mounts) need no escaping.
QJsonValue at(const QJsonObject &root, const QStringList &keys)
{
    QJsonValue v = root;
    for (const QString &k : keys)
        v = v.toObject().value(k);
    return v;
}

QStringList strings(const QJsonValue &array)
{
    QStringList out;
    for (const QJsonValue &v : array.toArray())
        out.append(v.toString());
    return out;
}

const QStringList kBaseEnv = {"HOME=/sandbox", "LANG=C.UTF-8",
                              "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                              "OUTPUT_DIR=/sandbox/outputs"};
// Python preloads its interpreter (see containers/cs-run), which adds CS_PRELOAD.
const QStringList kPythonEnv = {"PYTHONUNBUFFERED=1", "PYTHONDONTWRITEBYTECODE=1", "MPLBACKEND=Agg",
                                "MPLCONFIGDIR=/tmp/matplotlib", "CS_PRELOAD=/tmp/.cs-nonce"};
} // namespace

class tst_ContainerSpec : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void hardenedDefaults_data();
    void hardenedDefaults();
    void nonRootUser();
    void command_data();
    void command();
    void pythonBootNamesItsLoader();
    void environment_data();
    void environment();
    void network();
    void allowlistWithoutGatewayHasNoNetwork();
    void joinEgress();
    void limits_data();
    void limits();
    void librariesVolume();
    void workspaceScratch();
    void installContainer();
    void customImage();
};

void tst_ContainerSpec::hardenedDefaults_data()
{
    QTest::addColumn<QStringList>("keys");
    QTest::addColumn<QJsonValue>("expected");

    const qint64 mib512 = 512LL * 1024 * 1024;
    const QString tmpfs = QStringLiteral("rw,nosuid,nodev,size=%1").arg(64LL * 1024 * 1024);
    QTest::newRow("Image") << QStringList{"Image"} << QJsonValue(kImage);
    QTest::newRow("NetworkMode") << QStringList{"HostConfig", "NetworkMode"} << QJsonValue("none");
    QTest::newRow("NetworkDisabled") << QStringList{"NetworkDisabled"} << QJsonValue(true);
    QTest::newRow("Memory") << QStringList{"HostConfig", "Memory"} << QJsonValue(mib512);
    QTest::newRow("MemorySwap equals Memory")
        << QStringList{"HostConfig", "MemorySwap"} << QJsonValue(mib512);
    QTest::newRow("NanoCpus") << QStringList{"HostConfig", "NanoCpus"}
                              << QJsonValue(qint64(1000000000));
    QTest::newRow("PidsLimit") << QStringList{"HostConfig", "PidsLimit"} << QJsonValue(256);
    QTest::newRow("ReadonlyRootfs")
        << QStringList{"HostConfig", "ReadonlyRootfs"} << QJsonValue(true);
    QTest::newRow("Tmpfs /tmp") << QStringList{"HostConfig", "Tmpfs", "/tmp"}
                                << QJsonValue(tmpfs + ",mode=1777");
    QTest::newRow("only one tmpfs mount")
        << QStringList{"HostConfig", "Tmpfs"}
        << QJsonValue(QJsonObject{{"/tmp", tmpfs + ",mode=1777"}});
    // The workdir: a tmpfs-backed volume (the archive endpoint reaches volumes, not tmpfs).
    QTest::newRow("workdir volume")
        << QStringList{"HostConfig", "Mounts"}
        << QJsonValue(QJsonArray{QJsonObject{
               {"Type", "volume"},
               {"Target", "/sandbox"},
               {"VolumeOptions",
                QJsonObject{{"Labels", build(defaultConfig()).value("Labels")},
                            {"DriverConfig",
                             QJsonObject{{"Name", "local"},
                                         {"Options",
                                          QJsonObject{{"type", "tmpfs"},
                                                      {"device", "tmpfs"},
                                                      {"o", "nosuid,nodev,size=67108864,"
                                                            "uid=1000,gid=1000,mode=0755"}}}}}}}}});
    QTest::newRow("CapDrop") << QStringList{"HostConfig", "CapDrop"}
                             << QJsonValue(QJsonArray{"ALL"});
    QTest::newRow("no CapAdd") << QStringList{"HostConfig", "CapAdd"}
                               << QJsonValue(QJsonValue::Undefined);
    QTest::newRow("not privileged")
        << QStringList{"HostConfig", "Privileged"} << QJsonValue(QJsonValue::Undefined);
    QTest::newRow("no binds") << QStringList{"HostConfig", "Binds"}
                              << QJsonValue(QJsonValue::Undefined);
    QTest::newRow("SecurityOpt") << QStringList{"HostConfig", "SecurityOpt"}
                                 << QJsonValue(QJsonArray{"no-new-privileges"});
    QTest::newRow("Init") << QStringList{"HostConfig", "Init"} << QJsonValue(true);
    QTest::newRow("IpcMode") << QStringList{"HostConfig", "IpcMode"} << QJsonValue("private");
    QTest::newRow("User") << QStringList{"User"} << QJsonValue("1000:1000");
    QTest::newRow("WorkingDir") << QStringList{"WorkingDir"} << QJsonValue("/sandbox");
    QTest::newRow("Entrypoint cleared") << QStringList{"Entrypoint"} << QJsonValue(QJsonArray());
    QTest::newRow("label app") << QStringList{"Labels", "code-sandbox"} << QJsonValue("1");
    QTest::newRow("label instance")
        << QStringList{"Labels", "code-sandbox.instance"} << QJsonValue(kInstance);
    QTest::newRow("label pid") << QStringList{"Labels", "code-sandbox.pid"}
                               << QJsonValue(QString::number(QCoreApplication::applicationPid()));
    QTest::newRow("label language")
        << QStringList{"Labels", "code-sandbox.language"} << QJsonValue("python");
    QTest::newRow("AttachStdin") << QStringList{"AttachStdin"} << QJsonValue(true);
    QTest::newRow("AttachStdout") << QStringList{"AttachStdout"} << QJsonValue(true);
    QTest::newRow("AttachStderr") << QStringList{"AttachStderr"} << QJsonValue(true);
    QTest::newRow("OpenStdin") << QStringList{"OpenStdin"} << QJsonValue(true);
    QTest::newRow("StdinOnce") << QStringList{"StdinOnce"} << QJsonValue(true);
    QTest::newRow("Tty") << QStringList{"Tty"} << QJsonValue(false);
}

void tst_ContainerSpec::hardenedDefaults()
{
    QFETCH(QStringList, keys);
    QFETCH(QJsonValue, expected);

    QCOMPARE(at(build(defaultConfig()), keys), expected);
}

void tst_ContainerSpec::nonRootUser()
{
    const QStringList ids = build(defaultConfig()).value("User").toString().split(u':');
    QCOMPARE(ids.size(), 2);
    for (const QString &id : ids) {
        bool ok = false;
        QVERIFY(id.toInt(&ok) > 0);
        QVERIFY(ok);
    }
}

void tst_ContainerSpec::command_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QStringList>("tail"); // after the supervisor and its own name

    // Python runs its preloading loader, inline (so custom images need nothing of ours), through
    // the boot script that takes the image's compiled copy of that loader where there is one.
    QTest::newRow("python") << "python"
                            << QStringList{"main.py", "python3", "-u", "-c"} +
                                   lang("python").preloadCommand.mid(3);
    QTest::newRow("javascript") << "javascript"
                                << QStringList{"main.js", "node", "-e"} +
                                       lang("javascript").preloadCommand.mid(2);
    QTest::newRow("typescript: the same loader, told so")
        << "typescript"
        << QStringList{"main.ts", "node", "-e", lang("javascript").preloadCommand.at(2),
                       "typescript"};
    QTest::newRow("bash") << "bash" << QStringList{"main.sh", "bash", "main.sh"};
    QTest::newRow("c runs what the build step made") << "c" << QStringList{"main.c", "./main"};
    QTest::newRow("ruby") << "ruby" << QStringList{"main.rb", "ruby", "main.rb"};
}

void tst_ContainerSpec::command()
{
    QFETCH(QString, language);
    QFETCH(QStringList, tail);

    const QStringList cmd = strings(build(defaultConfig(), language).value("Cmd"));
    QCOMPARE(cmd, QStringList({"/bin/sh", "-c",
                               QString::fromLatin1(SandboxSpec::supervisorScript()), "cs-run"}) +
                      tail);
}

void tst_ContainerSpec::pythonBootNamesItsLoader()
{
    // The image's copy is python-loader-<the first 16 hex digits of the text's SHA-256>.bin, as
    // containers/build-images.sh names it with sha256sum: the boot takes it only when it is of
    // the very loader that follows it.
    const QStringList preload = lang("python").preloadCommand;
    QCOMPARE(preload.size(), 5);
    QCOMPARE(preload.mid(0, 3), QStringList({"python3", "-u", "-c"}));
    const QString boot = preload.at(3);
    const QString loader = preload.at(4);
    QVERIFY(loader.startsWith("# Python entry point of a sandbox container"));
    const QByteArray hash =
        QCryptographicHash::hash(loader.toUtf8(), QCryptographicHash::Sha256).toHex().left(16);
    QVERIFY2(boot.contains(QStringLiteral("/usr/local/share/code-sandbox/python-loader-%1.bin")
                               .arg(QString::fromLatin1(hash))),
             qPrintable(boot));
    QVERIFY(!boot.contains("CS_LOADER_HASH"));
    // Without the file it compiles the loader it was given.
    QVERIFY(boot.contains("compile(sys.argv[1]"));
}

void tst_ContainerSpec::environment_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QStringList>("passThrough"); // NAME=value
    QTest::addColumn<QStringList>("env");

    QTest::newRow("python, nothing passed") << "python" << QStringList() << kBaseEnv + kPythonEnv;
    QTest::newRow("javascript, nothing passed")
        << "javascript" << QStringList() << kBaseEnv + QStringList{"CS_PRELOAD=/tmp/.cs-nonce"};
    QTest::newRow("one variable") << "python" << QStringList{"API_KEY=secret"}
                                  << kBaseEnv + kPythonEnv + QStringList{"API_KEY=secret"};
    QTest::newRow("c: the build step")
        << "c" << QStringList()
        << kBaseEnv + QStringList{"CS_COMPILE=gcc -O2 -std=c17 -Wall -o main main.c -lm"};
    QTest::newRow("go: its caches in /tmp, pass-through last")
        << "go" << QStringList{"GOCACHE=mine"}
        << kBaseEnv + lang("go").env +
               QStringList{"CS_COMPILE=go build -o main main.go", "GOCACHE=mine"};
    QTest::newRow("values kept verbatim")
        << "javascript" << QStringList{"DSN=postgres://u:p@h/db?x=1", "EMPTY=", "SPACED=a b"}
        << kBaseEnv + QStringList{"CS_PRELOAD=/tmp/.cs-nonce", "DSN=postgres://u:p@h/db?x=1",
                                  "EMPTY=", "SPACED=a b"};
}

void tst_ContainerSpec::environment()
{
    QFETCH(QString, language);
    QFETCH(QStringList, passThrough);
    QFETCH(QStringList, env);

    // Set in this process to prove the host environment is not copied in.
    qputenv("CODE_SANDBOX_UNIT_HOST_ONLY", "must-not-leak");
    SandboxConfig config = defaultConfig();
    for (const QString &a : passThrough) {
        const qsizetype eq = a.indexOf(u'=');
        config.passThroughEnv.append({a.left(eq), a.mid(eq + 1)});
    }
    const QStringList actual = strings(build(config, language).value("Env"));
    qunsetenv("CODE_SANDBOX_UNIT_HOST_ONLY");
    QCOMPARE(actual, env);
}

void tst_ContainerSpec::network()
{
    SandboxConfig config = defaultConfig();
    config.network = true;
    const QJsonObject spec = build(config);
    QCOMPARE(at(spec, {"HostConfig", "NetworkMode"}), QJsonValue("bridge"));
    QCOMPARE(spec.value("NetworkDisabled"), QJsonValue(false));
    // Everything else stays hardened.
    QCOMPARE(at(spec, {"HostConfig", "CapDrop"}), QJsonValue(QJsonArray{"ALL"}));
    QCOMPARE(at(spec, {"HostConfig", "ReadonlyRootfs"}), QJsonValue(true));
}

void tst_ContainerSpec::allowlistWithoutGatewayHasNoNetwork()
{
    // Rendered alone (no gateway joined), an allow-list sandbox is as cut off as one without
    // network, even when --network is set: it fails closed.
    SandboxConfig config = defaultConfig();
    config.network = true;
    config.egress = {QStringLiteral("pypi.org")};
    const QJsonObject spec = build(config);
    QCOMPARE(at(spec, {"HostConfig", "NetworkMode"}), QJsonValue("none"));
    QCOMPARE(spec.value("NetworkDisabled"), QJsonValue(true));
    QVERIFY(!strings(spec.value("Env")).join(u'\n').contains(QStringLiteral("PROXY")));
}

void tst_ContainerSpec::joinEgress()
{
    SandboxConfig config = defaultConfig();
    config.egress = {QStringLiteral("pypi.org")};
    config.passThroughEnv = {{QStringLiteral("HTTPS_PROXY"), QStringLiteral("http://corp:8080")}};
    const QJsonObject body = build(config);
    const EgressEndpoint egress{QStringLiteral("code-sandbox-egress-x"),
                                QStringLiteral("172.30.0.2"),
                                3128,
                                QStringLiteral("c0ffee"),
                                {}};
    const QJsonObject joined = ContainerSpec::joinEgress(body, egress);
    QCOMPARE(at(joined, {"HostConfig", "NetworkMode"}), QJsonValue("code-sandbox-egress-x"));
    QCOMPARE(joined.value("NetworkDisabled"), QJsonValue(false));
    // Names are the gateway's to resolve: the sandbox's resolver asks an address nothing answers.
    QCOMPARE(at(joined, {"HostConfig", "Dns"}), QJsonValue(QJsonArray{"192.0.2.1"}));
    const QStringList env = strings(joined.value("Env"));
    const QString url = QStringLiteral("http://sandbox:c0ffee@172.30.0.2:3128");
    for (const char *name : {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                             "all_proxy", "npm_config_proxy", "npm_config_https_proxy"})
        QVERIFY2(env.contains(QString::fromLatin1(name) + u'=' + url), name);
    // After the passed-through proxy, so the engine's last-wins makes ours the one in force.
    QVERIFY(env.lastIndexOf(QStringLiteral("HTTPS_PROXY=") + url) >
            env.indexOf(QStringLiteral("HTTPS_PROXY=http://corp:8080")));
    QVERIFY(env.contains(QStringLiteral("NO_PROXY=localhost,127.0.0.1,::1")));
    // Nothing else changes: the hardening is the body's.
    QJsonObject hostBefore = body.value("HostConfig").toObject();
    QJsonObject hostAfter = joined.value("HostConfig").toObject();
    hostAfter.remove(QStringLiteral("NetworkMode"));
    hostAfter.remove(QStringLiteral("Dns"));
    hostBefore.remove(QStringLiteral("NetworkMode"));
    QCOMPARE(hostAfter, hostBefore);
}

void tst_ContainerSpec::limits_data()
{
    QTest::addColumn<qint64>("memory");
    QTest::addColumn<double>("cpus");
    QTest::addColumn<int>("pids");
    QTest::addColumn<qint64>("tmpfs");
    QTest::addColumn<qint64>("nanoCpus");

    const qint64 mib = 1024 * 1024;
    QTest::newRow("1 GiB") << 1024 * mib << 1.0 << 256 << 64 * mib << qint64(1000000000);
    QTest::newRow("half a CPU") << 512 * mib << 0.5 << 256 << 64 * mib << qint64(500000000);
    QTest::newRow("two CPUs") << 512 * mib << 2.0 << 256 << 64 * mib << qint64(2000000000);
    QTest::newRow("smallest CPU share") << 512 * mib << 0.01 << 256 << 64 * mib << qint64(10000000);
    // 2.01 is not exact in binary; truncating 2.01 * 1e9 would give 2009999999.
    QTest::newRow("2.01 CPUs") << 512 * mib << 2.01 << 256 << 64 * mib << qint64(2010000000);
    QTest::newRow("fewer processes, smaller tmpfs")
        << 256 * mib << 1.0 << 32 << 8 * mib << qint64(1000000000);
}

void tst_ContainerSpec::limits()
{
    QFETCH(qint64, memory);
    QFETCH(double, cpus);
    QFETCH(int, pids);
    QFETCH(qint64, tmpfs);
    QFETCH(qint64, nanoCpus);

    SandboxConfig config = defaultConfig();
    config.memoryBytes = memory;
    config.cpus = cpus;
    config.pidsLimit = pids;
    config.tmpfsBytes = tmpfs;
    const QJsonObject host = build(config).value("HostConfig").toObject();
    QCOMPARE(host.value("Memory").toInteger(), memory);
    QCOMPARE(host.value("MemorySwap").toInteger(), memory);
    QCOMPARE(host.value("NanoCpus").toInteger(), nanoCpus);
    QCOMPARE(host.value("PidsLimit").toInteger(), qint64(pids));
    const QString size = QStringLiteral("size=%1,").arg(tmpfs);
    QVERIFY(at(host, {"Tmpfs", "/tmp"}).toString().contains(size));
    QVERIFY(host.value("Mounts")[0]["VolumeOptions"]["DriverConfig"]["Options"]["o"]
                .toString()
                .contains(size));
}

void tst_ContainerSpec::librariesVolume()
{
    const QJsonObject spec = build(defaultConfig(), "python", "code-sandbox-libs-python-1234");
    const QJsonArray mounts = at(spec, {"HostConfig", "Mounts"}).toArray();
    QCOMPARE(mounts.size(), 2);
    QCOMPARE(mounts.at(1), QJsonValue(QJsonObject{{"Type", "volume"},
                                                  {"Source", "code-sandbox-libs-python-1234"},
                                                  {"Target", "/opt/cs-libs"},
                                                  {"ReadOnly", true}}));
    QVERIFY(strings(spec.value("Env")).contains("PYTHONPATH=/opt/cs-libs/python"));
    // Installed libraries never bring network with them.
    QCOMPARE(at(spec, {"HostConfig", "NetworkMode"}), QJsonValue("none"));
    QVERIFY(!strings(build(defaultConfig(), "python").value("Env"))
                 .contains("PYTHONPATH=/opt/cs-libs/python"));
}

// A run's workspaces: a memory-backed volume of the size asked, root's, labelled like the sandbox.
void tst_ContainerSpec::workspaceScratch()
{
    const SandboxConfig config = defaultConfig();
    const Language &l = lang(QStringLiteral("python"));
    SandboxSpec run = SandboxSpec::forRun(l, l.image, config, RunNetwork::decide(config));
    run.mounts.append({SandboxSpec::Mount::Kind::Scratch, QString(),
                       QStringLiteral("/sandbox/.cs-workspace"), false, 300 << 20});
    const QJsonArray mounts = at(ContainerSpec::render(run), {"HostConfig", "Mounts"}).toArray();
    QCOMPARE(mounts.size(), 2);
    const QJsonObject scratch = mounts.at(1).toObject();
    QCOMPARE(scratch.value("Type"), QJsonValue("volume"));
    QCOMPARE(scratch.value("Target"), QJsonValue("/sandbox/.cs-workspace"));
    QCOMPARE(
        scratch["VolumeOptions"]["DriverConfig"]["Options"]["o"],
        QJsonValue(QStringLiteral("nosuid,nodev,size=%1,uid=0,gid=0,mode=0755").arg(300 << 20)));
    QCOMPARE(scratch["VolumeOptions"]["Labels"], mounts.at(0)["VolumeOptions"]["Labels"]);
    // Another size is another sandbox: no warm one of the plain spec serves it.
    SandboxSpec bigger = run;
    bigger.mounts.last().sizeBytes += 1;
    QVERIFY(bigger.key() != run.key());
}

void tst_ContainerSpec::installContainer()
{
    const Language &l = lang("javascript");
    SandboxConfig config = defaultConfig();
    config.passThroughEnv = {{"CS_TEST_SECRET", "hunter2"}};
    config.installEnv = {"HTTPS_PROXY=http://proxy:3128"};
    config.installCaBundle = "/etc/ssl/certs/ca.crt";
    const QJsonObject spec = ContainerSpec::render(
        SandboxSpec::forInstall(l, l.image, config, "code-sandbox-libs-js-1"));
    // No network of its own even behind the host's proxy: DockerContainer joins it to the
    // gateway's (which goes out through that proxy).
    QCOMPARE(at(spec, {"HostConfig", "NetworkMode"}), QJsonValue("none"));
    QCOMPARE(spec.value("NetworkDisabled"), QJsonValue(true));
    QCOMPARE(at(spec, {"Labels", "code-sandbox.role"}), QJsonValue("install"));
    const QStringList cmd = strings(spec.value("Cmd"));
    QCOMPARE(cmd.mid(3), QStringList({"cs-run", "install.sh", "sh", "install.sh"}));
    const QJsonArray mounts = at(spec, {"HostConfig", "Mounts"}).toArray();
    QCOMPARE(mounts.size(), 3);
    QCOMPARE(mounts.at(1), QJsonValue(QJsonObject{{"Type", "volume"},
                                                  {"Source", "code-sandbox-libs-js-1"},
                                                  {"Target", "/opt/cs-libs"}}));
    QCOMPARE(mounts.at(2), QJsonValue(QJsonObject{{"Type", "bind"},
                                                  {"Source", "/etc/ssl/certs/ca.crt"},
                                                  {"Target", "/etc/code-sandbox/host-ca.crt"},
                                                  {"ReadOnly", true}}));
    const QStringList env = strings(spec.value("Env"));
    QVERIFY(!env.join(u' ').contains("proxy:3128"));
    QVERIFY(env.contains("NODE_EXTRA_CA_CERTS=/etc/code-sandbox/host-ca.crt"));
    QVERIFY(!env.contains("CS_PRELOAD=/tmp/.cs-nonce"));
    // Package install code runs here with network: the operator's secrets stay out (a run of
    // the same config gets them).
    QVERIFY2(!env.join(u' ').contains("hunter2"), qPrintable(env.join(u' ')));
    QVERIFY(strings(ContainerSpec::render(
                        SandboxSpec::forRun(l, l.image, config, RunNetwork::decide(config)))
                        .value("Env"))
                .contains("CS_TEST_SECRET=hunter2"));
    // The rest stays as hardened as a run.
    for (const char *key : {"Memory", "MemorySwap", "NanoCpus", "PidsLimit", "SecurityOpt", "Init",
                            "IpcMode", "Ulimits"})
        QCOMPARE(at(spec, {"HostConfig", key}),
                 at(ContainerSpec::render(
                        SandboxSpec::forRun(l, l.image, config, RunNetwork::decide(config))),
                    {"HostConfig", key}));
    QCOMPARE(at(spec, {"HostConfig", "CapDrop"}), QJsonValue(QJsonArray{"ALL"}));
    QCOMPARE(at(spec, {"HostConfig", "ReadonlyRootfs"}), QJsonValue(true));
    QCOMPARE(spec.value("User"), QJsonValue("1000:1000"));
}

// --python-image and friends: the image is set on this registry's copy only, by name or alias.
void tst_ContainerSpec::customImage()
{
    LanguageRegistry custom = LanguageRegistry::builtIn();
    QVERIFY(custom.setImage(QStringLiteral("py"), QStringLiteral("example/python:1")));
    QCOMPARE(custom.find(QStringLiteral("python"))->image, QStringLiteral("example/python:1"));
    QVERIFY(!custom.setImage(QStringLiteral("cobol"), QStringLiteral("x")));
    QCOMPARE(LanguageRegistry::builtIn().find(QStringLiteral("python"))->image,
             QStringLiteral("code-sandbox/python:latest"));
}

QTEST_GUILESS_MAIN(tst_ContainerSpec)
#include "tst_containerspec.moc"
