#include "containerspec.h"
#include "egressgateway.h"
#include "languageregistry.h"
#include "podgateway.h"
#include "podspec.h"
#include "runnetwork.h"
#include "sandboxconfig.h"
#include "sandboxlayout.h"
#include "sandboxspec.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTest>
#include <optional>
#include <yaml-cpp/yaml.h>

namespace {
const QString kInstance = QStringLiteral("3d1f0c2a-5b8e-4f7a-9c1d-2e3f4a5b6c7d");

const LanguageRegistry &registry()
{
    static const LanguageRegistry r = LanguageRegistry::builtIn();
    return r;
}

const Language &lang(const QString &name)
{
    const Language *l = registry().find(name);
    if (!l)
        qFatal("unknown language in the test itself");
    return *l;
}

SandboxConfig defaultConfig()
{
    SandboxConfig c;
    c.instanceId = kInstance;
    return c;
}

// What the sandbox room asks a backend for: a run of `language` with `config`.
SandboxSpec specFor(const SandboxConfig &config = defaultConfig(),
                    const QString &language = QStringLiteral("python"), bool session = false)
{
    const Language &l = lang(language);
    return SandboxSpec::forRun(l, l.image, config, RunNetwork::decide(config), {}, session);
}

QJsonObject build(const SandboxConfig &config = defaultConfig(),
                  const PodSpec::Options &options = {},
                  const QString &language = QStringLiteral("python"))
{
    return PodSpec::render(specFor(config, language), options);
}

QJsonValue at(const QJsonObject &root, const QStringList &keys)
{
    QJsonValue v = root;
    for (const QString &k : keys) {
        bool isIndex = false;
        const int index = k.toInt(&isIndex);
        v = isIndex ? v.toArray().at(index) : v.toObject().value(k);
    }
    return v;
}

QJsonObject container(const QJsonObject &pod)
{
    return at(pod, {"spec", "containers", "0"}).toObject();
}

// The pod's env as NAME=value, in order.
QStringList envOf(const QJsonObject &pod)
{
    QStringList out;
    for (const QJsonValue &v : container(pod).value(u"env").toArray())
        out.append(v[u"name"].toString() + u'=' + v[u"value"].toString());
    return out;
}

// Removes or replaces the value at `keys` (a path of object keys and array indexes).
QJsonValue edited(const QJsonValue &node, QStringList keys, const std::optional<QJsonValue> &to)
{
    const QString key = keys.takeFirst();
    bool isIndex = false;
    const int index = key.toInt(&isIndex);
    if (isIndex) {
        QJsonArray a = node.toArray();
        if (keys.isEmpty()) {
            if (to)
                a[index] = *to;
            else
                a.removeAt(index);
        } else {
            a[index] = edited(a.at(index), keys, to);
        }
        return a;
    }
    QJsonObject o = node.toObject();
    if (keys.isEmpty()) {
        if (to)
            o.insert(key, *to);
        else
            o.remove(key);
    } else {
        o.insert(key, edited(o.value(key), keys, to));
    }
    return o;
}

QJsonValue fromYaml(const YAML::Node &node)
{
    switch (node.Type()) {
    case YAML::NodeType::Map: {
        QJsonObject o;
        for (const auto &kv : node)
            o.insert(QString::fromStdString(kv.first.as<std::string>()), fromYaml(kv.second));
        return o;
    }
    case YAML::NodeType::Sequence: {
        QJsonArray a;
        for (const auto &item : node)
            a.append(fromYaml(item));
        return a;
    }
    case YAML::NodeType::Scalar:
        return QString::fromStdString(node.as<std::string>());
    default:
        return QJsonValue::Null;
    }
}

QJsonArray networkPolicies()
{
    const QString path = QFINDTESTDATA("../../packaging/kubernetes/40-networkpolicy.yaml");
    if (path.isEmpty())
        qFatal("packaging/kubernetes/40-networkpolicy.yaml not found");
    QJsonArray out;
    for (const YAML::Node &doc : YAML::LoadAllFromFile(path.toStdString()))
        out.append(fromYaml(doc));
    return out;
}

QJsonObject policy(const QJsonObject &podSelector, const QJsonArray &types,
                   const QJsonArray &egress = {})
{
    QJsonObject spec{{"podSelector", podSelector}, {"policyTypes", types}};
    if (!egress.isEmpty())
        spec.insert("egress", egress);
    return {{"metadata", QJsonObject{{"name", "p"}}}, {"spec", spec}};
}

const QJsonObject kSandboxes{{"matchLabels", QJsonObject{{"code-sandbox", "1"}}}};
const QJsonArray kAnywhere{
    QJsonObject{{"to", QJsonArray{QJsonObject{{"ipBlock", QJsonObject{{"cidr", "0.0.0.0/0"}}}}}}}};
const QJsonArray kFromAnywhere{QJsonObject{
    {"from", QJsonArray{QJsonObject{{"ipBlock", QJsonObject{{"cidr", "0.0.0.0/0"}}}}}}}};

// A policy with ingress rules (and no egress ones).
QJsonObject ingressPolicy(const QJsonObject &podSelector, const QJsonArray &types,
                          const QJsonArray &ingress)
{
    QJsonObject p = policy(podSelector, types);
    QJsonObject spec = p.value("spec").toObject();
    spec.insert("ingress", ingress);
    p.insert("spec", spec);
    return p;
}
} // namespace

class tst_PodSpec : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void hardenedDefaults_data();
    void hardenedDefaults();
    void runsWhatContainerSpecRuns_data();
    void runsWhatContainerSpecRuns();
    void limits();
    void volumes();
    void labels();
    void network();
    void allowlist();
    void gatewayPod();
    void passThroughEnvironment();
    void optionalPlacement();
    void deadline();
    void imagePrefix();
    void labelValue_data();
    void labelValue();
    void violations_data();
    void violations();
    void everyLanguageIsHardened();
    void shippedNetworkPolicyIsolates();
    void egressPolicies_data();
    void egressPolicies();
    void ingressPolicies_data();
    void ingressPolicies();
    void isolationNamesWhatIsMissing();
    void allowlistPolicies_data();
    void allowlistPolicies();
    void writeForSchemaCheck();
};

void tst_PodSpec::hardenedDefaults_data()
{
    QTest::addColumn<QStringList>("keys");
    QTest::addColumn<QJsonValue>("expected");
    const auto row = [](const char *name, const QStringList &keys, const QJsonValue &v) {
        QTest::newRow(name) << keys << v;
    };
    row("apiVersion", {"apiVersion"}, "v1");
    row("kind", {"kind"}, "Pod");
    row("restartPolicy", {"spec", "restartPolicy"}, "Never");
    row("no token", {"spec", "automountServiceAccountToken"}, false);
    row("no service links", {"spec", "enableServiceLinks"}, false);
    row("no hostNetwork", {"spec", "hostNetwork"}, false);
    row("no hostPID", {"spec", "hostPID"}, false);
    row("no hostIPC", {"spec", "hostIPC"}, false);
    row("pod runAsNonRoot", {"spec", "securityContext", "runAsNonRoot"}, true);
    row("pod runAsUser", {"spec", "securityContext", "runAsUser"}, 1000);
    row("pod runAsGroup", {"spec", "securityContext", "runAsGroup"}, 1000);
    row("pod seccomp", {"spec", "securityContext", "seccompProfile", "type"}, "RuntimeDefault");
    const QStringList c = {"spec", "containers", "0"};
    row("stdin", c + QStringList{"stdin"}, true);
    row("stdinOnce", c + QStringList{"stdinOnce"}, true);
    row("tty", c + QStringList{"tty"}, false);
    row("runAsNonRoot", c + QStringList{"securityContext", "runAsNonRoot"}, true);
    row("runAsUser", c + QStringList{"securityContext", "runAsUser"}, 1000);
    row("runAsGroup", c + QStringList{"securityContext", "runAsGroup"}, 1000);
    row("read-only root", c + QStringList{"securityContext", "readOnlyRootFilesystem"}, true);
    row("no escalation", c + QStringList{"securityContext", "allowPrivilegeEscalation"}, false);
    row("not privileged", c + QStringList{"securityContext", "privileged"}, false);
    row("caps dropped", c + QStringList{"securityContext", "capabilities", "drop"},
        QJsonArray{"ALL"});
    row("seccomp", c + QStringList{"securityContext", "seccompProfile", "type"}, "RuntimeDefault");
    row("workingDir", c + QStringList{"workingDir"}, "/sandbox");
    row("image", c + QStringList{"image"}, "code-sandbox/python:latest");
    row("no runtimeClass", {"spec", "runtimeClassName"}, QJsonValue::Undefined);
    row("no nodeSelector", {"spec", "nodeSelector"}, QJsonValue::Undefined);
    row("no hostPath", {"spec", "volumes", "0", "hostPath"}, QJsonValue::Undefined);
}

void tst_PodSpec::hardenedDefaults()
{
    QFETCH(QStringList, keys);
    QFETCH(QJsonValue, expected);
    const QJsonObject pod = build();
    QCOMPARE(at(pod, keys), expected);
    QCOMPARE(PodSpec::hardeningViolations(pod), QStringList());
}

void tst_PodSpec::runsWhatContainerSpecRuns_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<bool>("session");
    for (const Language &l : registry().all()) {
        QTest::newRow(qPrintable(l.name)) << l.name << false;
        QTest::newRow(qPrintable(l.name + QStringLiteral(" session"))) << l.name << true;
    }
}

void tst_PodSpec::runsWhatContainerSpecRuns()
{
    // The supervisor reading the program on stdin, with the same variables, as on Docker.
    QFETCH(QString, language);
    QFETCH(bool, session);
    const Language &l = lang(language);
    const SandboxSpec spec = specFor(defaultConfig(), language, session);
    const QJsonObject pod = PodSpec::render(spec);
    const QJsonObject docker = ContainerSpec::render(spec);
    QCOMPARE(container(pod).value(u"command"), docker.value(u"Cmd"));
    QCOMPARE(container(pod).value(u"command")[2].toString(),
             QString::fromLatin1(SandboxSpec::supervisorScript()));
    QStringList dockerEnv;
    for (const QJsonValue &v : docker.value(u"Env").toArray())
        dockerEnv.append(v.toString());
    QCOMPARE(envOf(pod), dockerEnv);
    QCOMPARE(envOf(pod).contains(QStringLiteral("CS_SESSION=1")), session);
    QCOMPARE(container(pod).value(u"image").toString(), l.image);
    QCOMPARE(at(pod, {"metadata", "generateName"}).toString(), "cs-" + l.name + "-");
}

void tst_PodSpec::limits()
{
    SandboxConfig config = defaultConfig();
    QJsonObject expected{{"cpu", "1"}, {"memory", "512Mi"}, {"ephemeral-storage", "64Mi"}};
    QJsonObject resources = container(build(config)).value(u"resources").toObject();
    QCOMPARE(resources.value(u"limits").toObject(), expected);
    QCOMPARE(resources.value(u"requests").toObject(), expected);

    config.cpus = 0.5;
    config.memoryBytes = 3LL * 1024 * 1024 * 1024;
    config.tmpfsBytes = 100 * 1000; // not a multiple of a binary unit
    expected = {{"cpu", "500m"}, {"memory", "3Gi"}, {"ephemeral-storage", "100000"}};
    resources = container(build(config)).value(u"resources").toObject();
    QCOMPARE(resources.value(u"limits").toObject(), expected);
    QCOMPARE(resources.value(u"requests").toObject(), expected);

    config.cpus = 2.25;
    QCOMPARE(at(container(build(config)), {"resources", "limits", "cpu"}).toString(), "2250m");
}

void tst_PodSpec::volumes()
{
    SandboxConfig config = defaultConfig();
    config.tmpfsBytes = 32LL * 1024 * 1024;
    const QJsonObject pod = build(config);
    const QJsonArray volumes = at(pod, {"spec", "volumes"}).toArray();
    QCOMPARE(volumes.size(), 2);
    for (const QJsonValue &v : volumes) {
        QCOMPARE(v.toObject().keys(), QStringList({"emptyDir", "name"}));
        QCOMPARE(v[u"emptyDir"].toObject(),
                 QJsonObject({{"medium", "Memory"}, {"sizeLimit", "32Mi"}}));
    }
    QCOMPARE(container(pod).value(u"volumeMounts").toArray(),
             QJsonArray({QJsonObject{{"name", "tmp"}, {"mountPath", "/tmp"}},
                         QJsonObject{{"name", "workdir"}, {"mountPath", "/sandbox"}}}));
    QCOMPARE(volumes.at(0)[u"name"].toString(), "tmp");
    QCOMPARE(volumes.at(1)[u"name"].toString(), "workdir");

    // A cached workspace's volume is a claim, mounted read-only; a run's scratch space for its
    // copied workspaces a memory-backed emptyDir of its size; a file of the engine's machine
    // nothing.
    SandboxSpec withClaim = specFor(config);
    withClaim.mounts.append(
        {SandboxSpec::Mount::Kind::Scratch, QString(), "/sandbox/.cs-workspace", false, 1024});
    withClaim.mounts.append({SandboxSpec::Mount::Kind::Volume, "code-sandbox-workspace-ab",
                             "/sandbox/.cs-workspace/data", true});
    withClaim.mounts.append({SandboxSpec::Mount::Kind::HostFile, "/etc/ssl/certs/ca.pem",
                             "/etc/code-sandbox/host-ca.crt", true});
    const QJsonObject claimed = PodSpec::render(withClaim);
    const QJsonArray claimVolumes = at(claimed, {"spec", "volumes"}).toArray();
    QCOMPARE(claimVolumes.size(), 4);
    QCOMPARE(claimVolumes.at(2).toObject(),
             QJsonObject({{"name", "scratch-0"},
                          {"emptyDir", QJsonObject{{"medium", "Memory"}, {"sizeLimit", "1Ki"}}}}));
    QCOMPARE(claimVolumes.at(3).toObject(),
             QJsonObject(
                 {{"name", "claim-1"},
                  {"persistentVolumeClaim",
                   QJsonObject{{"claimName", "code-sandbox-workspace-ab"}, {"readOnly", true}}}}));
    const QJsonArray claimMounts = container(claimed).value(u"volumeMounts").toArray();
    QCOMPARE(claimMounts.size(), 4);
    QCOMPARE(claimMounts.at(2).toObject(),
             QJsonObject({{"name", "scratch-0"}, {"mountPath", "/sandbox/.cs-workspace"}}));
    QCOMPARE(claimMounts.at(3).toObject(),
             QJsonObject({{"name", "claim-1"},
                          {"mountPath", "/sandbox/.cs-workspace/data"},
                          {"readOnly", true}}));
    QCOMPARE(PodSpec::hardeningViolations(claimed), QStringList());
}

void tst_PodSpec::labels()
{
    // The same labels as the Docker container (so the sweep finds leftovers by them), with the
    // values Kubernetes accepts; a value that had to change is kept in an annotation.
    const QJsonObject pod = build();
    const QJsonObject docker = ContainerSpec::render(specFor());
    const QJsonObject labels = at(pod, {"metadata", "labels"}).toObject();
    const QJsonObject dockerLabels = docker.value(u"Labels").toObject();
    QCOMPARE(labels.keys(), dockerLabels.keys());
    const QJsonObject annotations = at(pod, {"metadata", "annotations"}).toObject();
    static const QRegularExpression valid(
        QStringLiteral("^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"));
    for (const QString &key : labels.keys()) {
        const QString value = labels.value(key).toString();
        QVERIFY2(value.size() <= 63 && valid.match(value).hasMatch(), qPrintable(value));
        QCOMPARE(value, PodSpec::labelValue(dockerLabels.value(key).toString()));
        QCOMPARE(annotations.value(key).toString(), value == dockerLabels.value(key).toString()
                                                        ? QString()
                                                        : dockerLabels.value(key).toString());
    }
    QCOMPARE(labels.value(u"code-sandbox").toString(), "1");
    QCOMPARE(labels.value(u"code-sandbox.instance").toString(), kInstance);
    QCOMPARE(labels.value(u"code-sandbox.language").toString(), "python");
    QCOMPARE(labels.value(u"code-sandbox.host").toString(),
             PodSpec::labelValue(SandboxLayout::hostId()));
}

void tst_PodSpec::network()
{
    // A pod always has an interface: what keeps it off the network is the NetworkPolicy, which
    // leaves out exactly the pods labelled with network.
    QVERIFY(!at(build(), {"metadata", "labels"}).toObject().contains(PodSpec::kLabelNetwork));
    SandboxConfig config = defaultConfig();
    config.network = true;
    const QJsonObject pod = build(config);
    QCOMPARE(at(pod, {"metadata", "labels", PodSpec::kLabelNetwork}).toString(), "on");
    QCOMPARE(PodSpec::hardeningViolations(pod), QStringList());
}

namespace {
// An allow-list run: its own policy's label, no cluster DNS, and once the gateway answered
// the proxy variables last, replacing passed-through ones of the same name.
QJsonObject allowlistPod()
{
    SandboxConfig config = defaultConfig();
    config.egress = {"pypi.org"};
    config.passThroughEnv = {{"HTTPS_PROXY", "http://corporate:3128"}};
    return PodSpec::joinEgress(PodSpec::render(specFor(config)),
                               {QString(), "10.96.7.9", 3128, "c0ffee", {}});
}
} // namespace

void tst_PodSpec::allowlist()
{
    const QJsonObject pod = allowlistPod();
    QCOMPARE(at(pod, {"metadata", "labels", PodSpec::kLabelNetwork}).toString(), "allowlist");
    QCOMPARE(at(pod, {"spec", "dnsPolicy"}).toString(), "None");
    QCOMPARE(at(pod, {"spec", "dnsConfig", "nameservers"}).toArray(),
             QJsonArray{EgressEndpoint::kNoNameServer});
    const QStringList env = envOf(pod);
    const QString proxy = "http://sandbox:c0ffee@10.96.7.9:3128";
    QCOMPARE(env.filter(QRegularExpression("^HTTPS_PROXY=")), QStringList{"HTTPS_PROXY=" + proxy});
    QVERIFY(env.contains("npm_config_proxy=" + proxy));
    QVERIFY(env.contains("NO_PROXY=localhost,127.0.0.1,::1"));
    QCOMPARE(PodSpec::hardeningViolations(pod), QStringList());
    // Without network, neither label nor DNS setting.
    QVERIFY(!at(build(), {"spec"}).toObject().contains("dnsPolicy"));
}

void tst_PodSpec::gatewayPod()
{
    const QJsonObject labels{{EgressGateway::kLabelRole, "gateway"},
                             {EgressGateway::kLabelGatewayOf, "inst"}};
    const QJsonObject pod =
        PodGateway::podManifest("code-sandbox-gateway-x-1", "code-sandbox/gateway:latest",
                                {"--listen", "0.0.0.0:3128"}, labels);
    QCOMPARE(PodSpec::hardeningViolations(pod), QStringList());
    QCOMPARE(at(pod, {"spec", "containers", "0", "securityContext", "runAsUser"}).toInt(), 65534);
    QCOMPARE(at(pod, {"spec", "containers", "0", "stdin"}), QJsonValue(true));
    QCOMPARE(at(pod, {"spec", "containers", "0", "args", "1"}).toString(), "0.0.0.0:3128");
    // Not a sandbox: neither the sandbox policies nor the janitor's listing select it.
    QVERIFY(!at(pod, {"metadata", "labels"}).toObject().contains(SandboxLayout::kLabelApp));
    // It matches what the shipped policies let allow-list pods reach.
    const QJsonArray shipped = networkPolicies();
    bool reached = false;
    for (const QJsonValue &p : shipped)
        for (const QJsonValue &rule : at(p.toObject(), {"spec", "egress"}).toArray())
            for (const QJsonValue &peer : rule[u"to"].toArray())
                reached |= peer[u"podSelector"][u"matchLabels"][EgressGateway::kLabelRole] ==
                           at(pod, {"metadata", "labels", EgressGateway::kLabelRole});
    QVERIFY(reached);
    const QJsonObject service = PodGateway::serviceManifest(
        "code-sandbox-gateway-x", labels, QJsonObject{{EgressGateway::kLabelRole, "gateway"}});
    QCOMPARE(at(service, {"spec", "ports", "0", "port"}).toInt(), EgressGateway::kPort);
    QCOMPARE(at(service, {"spec", "selector", EgressGateway::kLabelRole}).toString(), "gateway");
}

void tst_PodSpec::passThroughEnvironment()
{
    SandboxConfig config = defaultConfig();
    config.passThroughEnv = {{"OPENAI_API_KEY", "sk-test"}, {"MPLBACKEND", "svg"}};
    const QStringList env = envOf(build(config));
    // Passed through last, and the operator's value wins over the language's without naming
    // the variable twice (the API server warns of duplicates and keeps the last).
    QCOMPARE(env.filter(QRegularExpression("^MPLBACKEND=")), QStringList{"MPLBACKEND=svg"});
    QCOMPARE(env.mid(env.size() - 2), QStringList({"OPENAI_API_KEY=sk-test", "MPLBACKEND=svg"}));
    QVERIFY(env.contains("HOME=/sandbox"));
}

void tst_PodSpec::optionalPlacement()
{
    PodSpec::Options options;
    options.nodeSelector = {{"sandbox.example.com/pool", "code"}, {"kubernetes.io/os", "linux"}};
    SandboxSpec spec = specFor();
    spec.runtime = "gvisor";
    const QJsonObject pod = PodSpec::render(spec, options);
    QCOMPARE(at(pod, {"spec", "runtimeClassName"}).toString(), "gvisor");
    QCOMPARE(at(pod, {"spec", "nodeSelector"}).toObject(),
             QJsonObject({{"sandbox.example.com/pool", "code"}, {"kubernetes.io/os", "linux"}}));
    QCOMPARE(PodSpec::hardeningViolations(pod), QStringList());
}

void tst_PodSpec::deadline()
{
    SandboxConfig config = defaultConfig();
    config.maxTimeoutSec = 120;
    QCOMPARE(at(build(config), {"spec", "activeDeadlineSeconds"}).toInteger(),
             PodSpec::kWarmWaitSec + 120 + PodSpec::kDeadlineMarginSec);
    const SandboxSpec session = specFor(config, "python", true);
    QCOMPARE(at(PodSpec::render(session), {"spec", "activeDeadlineSeconds"}).toInteger(),
             PodSpec::kSessionDeadlineSec);
    PodSpec::Options options;
    options.activeDeadlineSeconds = 77;
    QCOMPARE(at(PodSpec::render(session, options), {"spec", "activeDeadlineSeconds"}).toInteger(),
             77);
}

void tst_PodSpec::imagePrefix()
{
    PodSpec::Options options;
    options.imagePrefix = "registry.example.com:5000/team/";
    QCOMPARE(container(build(defaultConfig(), options)).value(u"image").toString(),
             "registry.example.com:5000/team/code-sandbox/python:latest");
    SandboxSpec custom = specFor();
    custom.image = "my/python:3.12";
    QCOMPARE(container(PodSpec::render(custom, options)).value(u"image").toString(),
             "registry.example.com:5000/team/my/python:3.12");
    QCOMPARE(PodSpec::prefixedImage({}, "code-sandbox/go:latest"), "code-sandbox/go:latest");
}

void tst_PodSpec::labelValue_data()
{
    QTest::addColumn<QString>("value");
    QTest::addColumn<bool>("unchanged");
    QTest::newRow("uuid") << kInstance << true;
    QTest::newRow("empty") << QString() << true;
    QTest::newRow("pid") << "4242" << true;
    QTest::newRow("host id") << "0123456789abcdef-build-host.example" << true;
    QTest::newRow("spaces") << "0123456789abcdef-Jane's Laptop" << false;
    QTest::newRow("too long") << "0123456789abcdef-" + QString(60, u'h') << false;
    QTest::newRow("ends badly") << "host-" << false;
    QTest::newRow("unicode") << QString::fromUtf8("h\xc3\xb4te") << false;
}

void tst_PodSpec::labelValue()
{
    QFETCH(QString, value);
    QFETCH(bool, unchanged);
    const QString label = PodSpec::labelValue(value);
    static const QRegularExpression valid(
        QStringLiteral("^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"));
    QVERIFY2(label.size() <= 63 && valid.match(label).hasMatch(), qPrintable(label));
    QCOMPARE(label == value, unchanged);
    QCOMPARE(PodSpec::labelValue(value), label); // the same every time: selectors match it
    if (!unchanged)
        QVERIFY(PodSpec::labelValue(value + u'x') != label);
}

void tst_PodSpec::violations_data()
{
    // Each row takes one piece of the hardening away from a built pod (removes the field, or
    // sets it as given) and names what hardeningViolations() must report.
    QTest::addColumn<QStringList>("keys");
    QTest::addColumn<QJsonValue>("value"); // Undefined: removed
    QTest::addColumn<QStringList>("expected");
    const auto row = [](const char *name, const QStringList &keys, const QJsonValue &value,
                        const QStringList &expected) {
        QTest::newRow(name) << keys << value << expected;
    };
    const QJsonValue removed = QJsonValue::Undefined;
    const QStringList c = {"spec", "containers", "0", "securityContext"};
    const QString cs = "spec.containers[0].securityContext.";
    const QStringList ps = {"spec", "securityContext"};
    row("restartPolicy", {"spec", "restartPolicy"}, "Always", {"spec.restartPolicy"});
    row("activeDeadlineSeconds", {"spec", "activeDeadlineSeconds"}, removed,
        {"spec.activeDeadlineSeconds"});
    row("automountServiceAccountToken", {"spec", "automountServiceAccountToken"}, removed,
        {"spec.automountServiceAccountToken"});
    row("enableServiceLinks", {"spec", "enableServiceLinks"}, true, {"spec.enableServiceLinks"});
    row("hostNetwork", {"spec", "hostNetwork"}, true, {"spec.hostNetwork"});
    row("hostPID", {"spec", "hostPID"}, true, {"spec.hostPID"});
    row("hostIPC", {"spec", "hostIPC"}, true, {"spec.hostIPC"});
    row("readOnlyRootFilesystem", c + QStringList{"readOnlyRootFilesystem"}, removed,
        {cs + "readOnlyRootFilesystem"});
    row("allowPrivilegeEscalation", c + QStringList{"allowPrivilegeEscalation"}, removed,
        {cs + "allowPrivilegeEscalation"});
    row("privileged", c + QStringList{"privileged"}, true, {cs + "privileged"});
    row("capabilities.drop", c + QStringList{"capabilities"}, removed, {cs + "capabilities.drop"});
    row("capabilities.add", c + QStringList{"capabilities", "add"}, QJsonArray{"SYS_ADMIN"},
        {cs + "capabilities.add"});
    row("container runAsNonRoot false", c + QStringList{"runAsNonRoot"}, false,
        {cs + "runAsNonRoot"});
    row("container runAsUser 0", c + QStringList{"runAsUser"}, 0, {cs + "runAsUser"});
    row("container seccomp Unconfined", c + QStringList{"seccompProfile"},
        QJsonObject{{"type", "Unconfined"}}, {cs + "seccompProfile.type"});
    // The container states all three itself, so the pod's context may go (the bare pod in
    // everyLanguageIsHardened shows the pod's names reported when neither has them).
    row("pod runAsNonRoot only", ps + QStringList{"runAsNonRoot"}, removed, {});
    row("no pod securityContext", {"spec", "securityContext"}, removed, {});
    row("resources", {"spec", "containers", "0", "resources"}, removed,
        {"spec.containers[0].resources.limits.cpu", "spec.containers[0].resources.limits.memory",
         "spec.containers[0].resources.limits.ephemeral-storage"});
    row("ephemeral-storage",
        {"spec", "containers", "0", "resources", "limits", "ephemeral-storage"}, removed,
        {"spec.containers[0].resources.limits.ephemeral-storage"});
    row("hostPath volume", {"spec", "volumes", "0"},
        QJsonObject{{"name", "tmp"}, {"hostPath", QJsonObject{{"path", "/"}}}},
        {"spec.volumes[0].hostPath"});
    row("emptyDir on disk", {"spec", "volumes", "1", "emptyDir", "medium"}, removed,
        {"spec.volumes[1].emptyDir.medium"});
    row("emptyDir without size", {"spec", "volumes", "0", "emptyDir", "sizeLimit"}, removed,
        {"spec.volumes[0].emptyDir.sizeLimit"});
    row("hostPort", {"spec", "containers", "0", "ports"},
        QJsonArray{QJsonObject{{"containerPort", 80}, {"hostPort", 80}}},
        {"spec.containers[0].ports[0].hostPort"});
    row("no containers", {"spec", "containers"}, removed, {"spec.containers"});
}

void tst_PodSpec::violations()
{
    QFETCH(QStringList, keys);
    QFETCH(QJsonValue, value);
    QFETCH(QStringList, expected);
    const QJsonObject pod = build();
    QCOMPARE(PodSpec::hardeningViolations(pod), QStringList());
    const QJsonObject weakened =
        edited(pod, keys, value.isUndefined() ? std::nullopt : std::optional<QJsonValue>(value))
            .toObject();
    QVERIFY(weakened != pod);
    QCOMPARE(PodSpec::hardeningViolations(weakened), expected);
}

void tst_PodSpec::everyLanguageIsHardened()
{
    // The pod without the hardening fields: a bare pod with only the container in it.
    const QJsonObject bare{
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"spec", QJsonObject{{"containers",
                              QJsonArray{QJsonObject{{"name", "sandbox"}, {"image", "x"}}}}}}};
    const QStringList missing = PodSpec::hardeningViolations(bare);
    const QStringList all = {
        "spec.restartPolicy",
        "spec.activeDeadlineSeconds",
        "spec.automountServiceAccountToken",
        "spec.enableServiceLinks",
        "spec.containers[0].securityContext.allowPrivilegeEscalation",
        "spec.containers[0].securityContext.readOnlyRootFilesystem",
        "spec.containers[0].securityContext.capabilities.drop",
        "spec.securityContext.runAsNonRoot",
        "spec.securityContext.runAsUser",
        "spec.securityContext.seccompProfile.type",
        "spec.containers[0].resources.limits.cpu",
        "spec.containers[0].resources.limits.memory",
        "spec.containers[0].resources.limits.ephemeral-storage",
    };
    QCOMPARE(missing, all);

    for (const Language &l : registry().all()) {
        for (bool network : {false, true}) {
            SandboxConfig config = defaultConfig();
            config.network = network;
            QCOMPARE(PodSpec::hardeningViolations(build(config, {}, l.name)), QStringList());
        }
    }
}

void tst_PodSpec::shippedNetworkPolicyIsolates()
{
    const QJsonArray shipped = networkPolicies();
    // Deny egress, deny ingress, confine allow-list pods, the gateway's.
    QCOMPARE(shipped.size(), 4);
    QVERIFY(PodSpec::deniesSandboxEgress(shipped.at(0).toObject()));
    QCOMPARE(PodSpec::sandboxEgressProblem(shipped), QString());
    QVERIFY(PodSpec::deniesSandboxIngress(shipped.at(1).toObject()));
    QCOMPARE(PodSpec::sandboxIngressProblem(shipped), QString());
    QCOMPARE(PodSpec::sandboxIsolationProblem(shipped), QString());
    // Its selector really picks the pods PodSpec builds, and leaves out those with network.
    const QJsonObject selector = at(shipped.at(0).toObject(), {"spec", "podSelector"}).toObject();
    const QJsonObject labels = at(build(), {"metadata", "labels"}).toObject();
    const QJsonObject matchLabels = selector.value(u"matchLabels").toObject();
    for (auto it = matchLabels.begin(); it != matchLabels.end(); ++it)
        QCOMPARE(labels.value(it.key()), it.value());
    QCOMPARE(at(selector, {"matchExpressions", "0", "key"}).toString(), PodSpec::kLabelNetwork);
    QCOMPARE(at(selector, {"matchExpressions", "0", "operator"}).toString(), "DoesNotExist");
    // The allow-list policy selects an allow-list pod by all its labels.
    const QJsonObject allowlistLabels = at(allowlistPod(), {"metadata", "labels"}).toObject();
    const QJsonObject confine =
        at(shipped.at(2).toObject(), {"spec", "podSelector", "matchLabels"}).toObject();
    QVERIFY(!confine.isEmpty());
    for (auto it = confine.begin(); it != confine.end(); ++it)
        QCOMPARE(allowlistLabels.value(it.key()), it.value());
}

void tst_PodSpec::egressPolicies_data()
{
    QTest::addColumn<QJsonArray>("policies");
    QTest::addColumn<bool>("isolated");
    const QJsonObject deny = policy(kSandboxes, {"Egress"});
    QTest::newRow("none") << QJsonArray{} << false;
    QTest::newRow("deny") << QJsonArray{deny} << true;
    QTest::newRow("deny everything in the namespace")
        << QJsonArray{policy({}, {"Ingress", "Egress"})} << true;
    QTest::newRow("ingress only") << QJsonArray{policy(kSandboxes, {"Ingress"})} << false;
    QTest::newRow("no policyTypes, no rules: ingress only")
        << QJsonArray{QJsonObject{{"spec", QJsonObject{{"podSelector", kSandboxes}}}}} << false;
    QTest::newRow("only python sandboxes")
        << QJsonArray{policy(
               QJsonObject{{"matchLabels", QJsonObject{{"code-sandbox", "1"},
                                                       {"code-sandbox.language", "python"}}}},
               {"Egress"})}
        << false;
    QTest::newRow("allows egress")
        << QJsonArray{policy(kSandboxes, {"Egress"}, kAnywhere)} << false;
    QTest::newRow("deny, and another allows the sandboxes")
        << QJsonArray{deny, policy({}, {"Egress"}, kAnywhere)} << false;
    QTest::newRow("deny, and another allows other pods")
        << QJsonArray{deny, policy(QJsonObject{{"matchLabels", QJsonObject{{"app", "web"}}}},
                                   {"Egress"}, kAnywhere)}
        << true;
    QTest::newRow("deny, and another allows pods with network")
        << QJsonArray{deny, policy(QJsonObject{{"matchLabels",
                                                QJsonObject{{"code-sandbox", "1"},
                                                            {PodSpec::kLabelNetwork, "on"}}}},
                                   {"Egress"}, kAnywhere)}
        << true;
}

void tst_PodSpec::egressPolicies()
{
    QFETCH(QJsonArray, policies);
    QFETCH(bool, isolated);
    const QString problem = PodSpec::sandboxEgressProblem(policies);
    QVERIFY2(problem.isEmpty() == isolated, qPrintable(problem));
}

void tst_PodSpec::ingressPolicies_data()
{
    QTest::addColumn<QJsonArray>("policies");
    QTest::addColumn<bool>("isolated");
    const QJsonObject deny = policy(kSandboxes, {"Ingress"});
    QTest::newRow("none") << QJsonArray{} << false;
    QTest::newRow("deny") << QJsonArray{deny} << true;
    QTest::newRow("deny everything in the namespace")
        << QJsonArray{policy({}, {"Ingress", "Egress"})} << true;
    QTest::newRow("egress only") << QJsonArray{policy(kSandboxes, {"Egress"})} << false;
    QTest::newRow("no policyTypes, no rules: ingress denied")
        << QJsonArray{QJsonObject{{"spec", QJsonObject{{"podSelector", kSandboxes}}}}} << true;
    QTest::newRow("only python sandboxes")
        << QJsonArray{policy(
               QJsonObject{{"matchLabels", QJsonObject{{"code-sandbox", "1"},
                                                       {"code-sandbox.language", "python"}}}},
               {"Ingress"})}
        << false;
    QTest::newRow("allows ingress")
        << QJsonArray{ingressPolicy(kSandboxes, {"Ingress"}, kFromAnywhere)} << false;
    QTest::newRow("deny, and another allows the sandboxes")
        << QJsonArray{deny, ingressPolicy({}, {"Ingress"}, kFromAnywhere)} << false;
    QTest::newRow("deny, and another without policyTypes allows the sandboxes")
        << QJsonArray{deny, QJsonObject{{"spec", QJsonObject{{"podSelector", kSandboxes},
                                                             {"ingress", kFromAnywhere}}}}}
        << false;
    QTest::newRow("deny, and another allows other pods")
        << QJsonArray{deny, ingressPolicy(QJsonObject{{"matchLabels", QJsonObject{{"app", "web"}}}},
                                          {"Ingress"}, kFromAnywhere)}
        << true;
}

void tst_PodSpec::ingressPolicies()
{
    QFETCH(QJsonArray, policies);
    QFETCH(bool, isolated);
    const QString problem = PodSpec::sandboxIngressProblem(policies);
    QVERIFY2(problem.isEmpty() == isolated, qPrintable(problem));
}

void tst_PodSpec::isolationNamesWhatIsMissing()
{
    // A namespace with only the shipped deny-egress policy: ingress is what it lacks.
    const QJsonArray shipped = networkPolicies();
    const QString egressOnly = PodSpec::sandboxIsolationProblem(QJsonArray{shipped.at(0)});
    QVERIFY2(egressOnly.startsWith(u"no NetworkPolicy in the namespace denies ingress to every "
                                   u"sandbox pod (code-sandbox-deny-ingress"),
             qPrintable(egressOnly));
    QVERIFY2(!egressOnly.contains(u"egress"), qPrintable(egressOnly));
    // Only the ingress one: egress is missing.
    const QString ingressOnly = PodSpec::sandboxIsolationProblem(QJsonArray{shipped.at(1)});
    QVERIFY2(ingressOnly.startsWith(u"no NetworkPolicy in the namespace denies egress"),
             qPrintable(ingressOnly));
    QVERIFY2(!ingressOnly.contains(u"ingress"), qPrintable(ingressOnly));
    // None: both are named.
    const QString none = PodSpec::sandboxIsolationProblem(QJsonArray{});
    QVERIFY2(none.contains(u"code-sandbox-deny-egress") &&
                 none.contains(u"code-sandbox-deny-ingress"),
             qPrintable(none));
}

void tst_PodSpec::allowlistPolicies_data()
{
    QTest::addColumn<QJsonArray>("policies");
    QTest::addColumn<bool>("confined");
    const QJsonObject allowlisted{
        {"matchLabels", QJsonObject{{"code-sandbox", "1"}, {PodSpec::kLabelNetwork, "allowlist"}}}};
    const QJsonObject gatewayPods{
        {"podSelector",
         QJsonObject{{"matchLabels", QJsonObject{{"code-sandbox.role", "gateway"}}}}}};
    const QJsonArray toGateway{QJsonObject{{"to", QJsonArray{gatewayPods}}}};
    const QJsonObject confine = policy(allowlisted, {"Egress"}, toGateway);
    QTest::newRow("shipped") << networkPolicies() << true;
    QTest::newRow("none") << QJsonArray{} << false;
    QTest::newRow("only the sandboxes' deny") << QJsonArray{networkPolicies().at(0)} << false;
    QTest::newRow("confine") << QJsonArray{confine} << true;
    QTest::newRow("confine, and another lets every pod out")
        << QJsonArray{confine, policy({}, {"Egress"}, kAnywhere)} << false;
    QTest::newRow("confine, and another lets the sandboxes out")
        << QJsonArray{confine, policy(kSandboxes, {"Egress"}, kAnywhere)} << false;
    QTest::newRow("confine, and another lets pods with network out")
        << QJsonArray{confine, policy(QJsonObject{{"matchLabels",
                                                   QJsonObject{{PodSpec::kLabelNetwork, "on"}}}},
                                      {"Egress"}, kAnywhere)}
        << true;
    QTest::newRow("to the gateway and an address block")
        << QJsonArray{policy(allowlisted, {"Egress"}, toGateway + kAnywhere.at(0))} << false;
    QTest::newRow("to gateways of any namespace")
        << QJsonArray{policy(
               allowlisted, {"Egress"},
               QJsonArray{QJsonObject{
                   {"to", QJsonArray{QJsonObject{{"podSelector", gatewayPods.value("podSelector")},
                                                 {"namespaceSelector", QJsonObject{}}}}}}})}
        << false;
    QTest::newRow("to every pod")
        << QJsonArray{policy(allowlisted, {"Egress"},
                             QJsonArray{QJsonObject{
                                 {"to", QJsonArray{QJsonObject{{"podSelector", QJsonObject{}}}}}}})}
        << false;
    QTest::newRow("only python's allow-list pods")
        << QJsonArray{policy(
               QJsonObject{{"matchLabels", QJsonObject{{"code-sandbox", "1"},
                                                       {PodSpec::kLabelNetwork, "allowlist"},
                                                       {"code-sandbox.language", "python"}}}},
               {"Egress"}, toGateway)}
        << false;
}

void tst_PodSpec::allowlistPolicies()
{
    QFETCH(QJsonArray, policies);
    QFETCH(bool, confined);
    const QString problem = PodSpec::allowlistEgressProblem(policies);
    QVERIFY2(problem.isEmpty() == confined, qPrintable(problem));
    if (!confined && policies.isEmpty())
        QVERIFY2(problem.contains("code-sandbox-allowlist-egress"), qPrintable(problem));
}

void tst_PodSpec::writeForSchemaCheck()
{
    // tests/kubernetes/schema/validate.py runs this function with CS_PODSPEC_DIR set and checks
    // every pod written there against Kubernetes' OpenAPI schema.
    QList<QPair<QString, QJsonObject>> pods;
    pods.append({"defaults", build()});
    SandboxConfig network = defaultConfig();
    network.network = true;
    pods.append({"network", build(network)});
    PodSpec::Options gvisor;
    gvisor.nodeSelector = {{"sandbox.example.com/runtime", "gvisor"}};
    SandboxSpec runtime = specFor();
    runtime.runtime = "gvisor";
    pods.append({"runtimeclass", PodSpec::render(runtime, gvisor)});
    SandboxConfig env = defaultConfig();
    env.passThroughEnv = {{"OPENAI_API_KEY", "sk-test"}, {"HTTPS_PROXY", "http://proxy:3128"}};
    pods.append({"passthrough", build(env)});
    SandboxConfig small = defaultConfig();
    small.cpus = 0.25;
    small.memoryBytes = 100 * 1000 * 1000;
    small.tmpfsBytes = 16LL * 1024 * 1024;
    PodSpec::Options prefix;
    prefix.imagePrefix = "registry.example.com/team";
    pods.append({"session-small", PodSpec::render(specFor(small, "python", true), prefix)});
    pods.append({"allowlist", allowlistPod()});
    SandboxSpec claimed = specFor();
    claimed.mounts.append({SandboxSpec::Mount::Kind::Volume, "code-sandbox-workspace-ab",
                           "/sandbox/.cs-workspace/data", true});
    pods.append({"workspace-claim", PodSpec::render(claimed)});
    pods.append({"gateway",
                 PodGateway::podManifest("code-sandbox-gateway-x-1", "code-sandbox/gateway:latest",
                                         {"--listen", "0.0.0.0:3128"},
                                         QJsonObject{{"code-sandbox.role", "gateway"}})});
    for (const Language &l : registry().all())
        pods.append({"language-" + l.name, build(defaultConfig(), {}, l.name)});
    QVERIFY(pods.size() >= 8 + 11);

    const QString dir = qEnvironmentVariable("CS_PODSPEC_DIR");
    for (const auto &[name, pod] : pods) {
        QCOMPARE(PodSpec::hardeningViolations(pod), QStringList());
        if (dir.isEmpty())
            continue;
        QFile f(QDir(dir).filePath(name + ".json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(pod).toJson());
    }
    // And the gateway's Service.
    if (!dir.isEmpty()) {
        QFile f(QDir(dir).filePath("gateway-service.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(PodGateway::serviceManifest(
                                  "code-sandbox-gateway-x",
                                  QJsonObject{{"code-sandbox.role", "gateway-service"}},
                                  QJsonObject{{"code-sandbox.role", "gateway"}}))
                    .toJson());
    }
}

QTEST_GUILESS_MAIN(tst_PodSpec)
#include "tst_podspec.moc"
