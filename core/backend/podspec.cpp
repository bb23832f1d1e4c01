#include "podspec.h"

#include "egressgateway.h"
#include "sandboxlayout.h"
#include "sandboxspec.h"

#include <QCryptographicHash>
#include <QRegularExpression>

namespace {

constexpr int kMaxLabelValue = 63;

QString cpuQuantity(double cpus)
{
    const qint64 millis = qMax<qint64>(1, qRound64(cpus * 1000));
    return millis % 1000 == 0 ? QString::number(millis / 1000) : QString::number(millis) + u'm';
}

QString bytesQuantity(qint64 bytes)
{
    static const struct
    {
        qint64 unit;
        const char *suffix;
    } units[] = {{1LL << 30, "Gi"}, {1LL << 20, "Mi"}, {1LL << 10, "Ki"}};
    for (const auto &u : units)
        if (bytes > 0 && bytes % u.unit == 0)
            return QString::number(bytes / u.unit) + QLatin1String(u.suffix);
    return QString::number(bytes);
}

bool isAlnum(QChar c)
{
    return c.unicode() < 128 && c.isLetterOrNumber();
}

// The labels every sandbox carries (ContainerSpec's), whose values vary from pod to pod.
const QStringList &sandboxLabelKeys()
{
    static const QStringList keys = {
        QString::fromLatin1(SandboxLayout::kLabelApp),
        QString::fromLatin1(SandboxLayout::kLabelOwner),
        QString::fromLatin1(SandboxLayout::kLabelPid),
        QString::fromLatin1(SandboxLayout::kLabelHost),
        QStringLiteral("code-sandbox.language"),
    };
    return keys;
}

QStringList strings(const QJsonValue &array)
{
    QStringList out;
    for (const QJsonValue &v : array.toArray())
        out.append(v.toString());
    return out;
}

// Whether a label selector matches every pod PodSpec builds without network, whatever its
// instance, pid, host and language.
bool selectsEverySandbox(const QJsonObject &selector)
{
    const QString app = QString::fromLatin1(SandboxLayout::kLabelApp);
    const QString network = QString::fromLatin1(PodSpec::kLabelNetwork);
    const QJsonObject matchLabels = selector.value(u"matchLabels").toObject();
    for (auto it = matchLabels.begin(); it != matchLabels.end(); ++it)
        if (it.key() != app || it.value().toString() != u"1")
            return false;
    for (const QJsonValue &e : selector.value(u"matchExpressions").toArray()) {
        const QString key = e[u"key"].toString();
        const QString op = e[u"operator"].toString();
        const QStringList values = strings(e[u"values"]);
        const bool ours = sandboxLabelKeys().contains(key);
        if (key == app) {
            if (!(op == u"Exists" || (op == u"In" && values.contains(QStringLiteral("1")))))
                return false;
        } else if (!ours || key == network) {
            // A pod without network lacks the key.
            if (op != u"DoesNotExist" && op != u"NotIn")
                return false;
        } else {
            // instance, pid, host, language: any value is possible, so only Exists holds for all.
            if (op != u"Exists")
                return false;
        }
    }
    return true;
}

// False only when the selector certainly matches no pod PodSpec builds without network.
bool mightSelectASandbox(const QJsonObject &selector)
{
    const QString app = QString::fromLatin1(SandboxLayout::kLabelApp);
    const QJsonObject matchLabels = selector.value(u"matchLabels").toObject();
    for (auto it = matchLabels.begin(); it != matchLabels.end(); ++it) {
        if (!sandboxLabelKeys().contains(it.key()))
            return false;
        if (it.key() == app && it.value().toString() != u"1")
            return false;
    }
    for (const QJsonValue &e : selector.value(u"matchExpressions").toArray()) {
        const QString key = e[u"key"].toString();
        const QString op = e[u"operator"].toString();
        const QStringList values = strings(e[u"values"]);
        if (!sandboxLabelKeys().contains(key)) {
            if (op == u"In" || op == u"Exists")
                return false;
        } else if (op == u"DoesNotExist") {
            return false;
        } else if (key == app) {
            if ((op == u"In" && !values.contains(QStringLiteral("1"))) ||
                (op == u"NotIn" && values.contains(QStringLiteral("1"))))
                return false;
        }
    }
    return true;
}

bool hasEgressType(const QJsonObject &spec)
{
    // Without policyTypes, a policy is about egress exactly when it has egress rules.
    if (!spec.contains(u"policyTypes"))
        return !spec.value(u"egress").toArray().isEmpty();
    return strings(spec.value(u"policyTypes")).contains(QStringLiteral("Egress"));
}

bool hasIngressType(const QJsonObject &spec)
{
    // Without policyTypes, every policy is about ingress (Kubernetes' default).
    if (!spec.contains(u"policyTypes"))
        return true;
    return strings(spec.value(u"policyTypes")).contains(QStringLiteral("Ingress"));
}

} // namespace

qint64 PodSpec::defaultDeadlineSeconds(const SandboxSpec &spec)
{
    if (spec.session)
        return kSessionDeadlineSec;
    return kWarmWaitSec + spec.limits.maxTimeoutSec + kDeadlineMarginSec;
}

QString PodSpec::prefixedImage(const QString &imagePrefix, const QString &image)
{
    QString prefix = imagePrefix.trimmed();
    while (prefix.endsWith(u'/'))
        prefix.chop(1);
    return prefix.isEmpty() ? image : prefix + u'/' + image;
}

QString PodSpec::podName(const QString &name)
{
    // DNS-1123 subdomain: lower-case alphanumerics, '-' and '.', alphanumeric at both ends, at
    // most 253 characters.
    QString out;
    out.reserve(name.size());
    for (QChar c : name.toLower())
        out.append((c.unicode() < 128 && c.isLetterOrNumber()) || c == u'-' || c == u'.'
                       ? c
                       : QChar(u'-'));
    out = out.left(253);
    while (!out.isEmpty() && !out.back().isLetterOrNumber())
        out.chop(1);
    while (!out.isEmpty() && !out.front().isLetterOrNumber())
        out.remove(0, 1);
    return out.isEmpty() ? QStringLiteral("code-sandbox") : out;
}

QString PodSpec::labelValue(const QString &value)
{
    static const QRegularExpression valid(
        QStringLiteral("^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"));
    if (value.size() <= kMaxLabelValue && valid.match(value).hasMatch())
        return value;
    QString out;
    out.reserve(value.size());
    for (QChar c : value)
        out.append(isAlnum(c) || c == u'-' || c == u'_' || c == u'.' ? c : QChar(u'_'));
    while (!out.isEmpty() && !isAlnum(out.front()))
        out.remove(0, 1);
    while (!out.isEmpty() && !isAlnum(out.back()))
        out.chop(1);
    // Kept apart from other values that sanitize alike, and short enough: a hash of the whole.
    const QString hash = QString::fromLatin1(
        QCryptographicHash::hash(value.toUtf8(), QCryptographicHash::Sha256).toHex().left(10));
    out = out.left(kMaxLabelValue - hash.size() - 1);
    while (!out.isEmpty() && !isAlnum(out.back()))
        out.chop(1);
    return out.isEmpty() ? hash : out + u'-' + hash;
}

QJsonArray PodSpec::envJson(const SandboxSpec &spec)
{
    // Docker lets a later NAME=value win; a pod's list must not name a variable twice, so the
    // later one replaces the earlier in place of the last.
    QJsonArray env;
    QStringList envNames;
    for (const auto &[name, value] : spec.env) {
        const qsizetype earlier = envNames.indexOf(name);
        if (earlier >= 0) {
            envNames.removeAt(earlier);
            env.removeAt(earlier);
        }
        envNames.append(name);
        env.append(QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("value"), value}});
    }
    return env;
}

QJsonObject PodSpec::metadataJson(const SandboxSpec &spec)
{
    // Label values have a narrower syntax than Docker's; a value that had to change is kept
    // whole in an annotation of the same name.
    QJsonObject labels;
    QJsonObject annotations;
    const QMap<QString, QString> sandboxLabels = spec.sandboxLabels();
    for (auto it = sandboxLabels.begin(); it != sandboxLabels.end(); ++it) {
        const QString label = labelValue(it.value());
        labels.insert(it.key(), label);
        if (label != it.value())
            annotations.insert(it.key(), it.value());
    }
    switch (spec.network) {
    case SandboxSpec::Network::Open:
        labels.insert(QString::fromLatin1(kLabelNetwork), QStringLiteral("on"));
        break;
    case SandboxSpec::Network::Allowlist:
        labels.insert(QString::fromLatin1(kLabelNetwork), QString::fromLatin1(kNetworkAllowlist));
        break;
    case SandboxSpec::Network::None:
        break;
    }
    // generateName: the server adds a random suffix, so pods never collide by name.
    QString prefix = QStringLiteral("cs-");
    for (QChar c : spec.language.toLower())
        prefix.append(isAlnum(c) ? c : QChar(u'-'));
    QJsonObject metadata{
        {QStringLiteral("generateName"), prefix.left(40) + u'-'},
        {QStringLiteral("labels"), labels},
    };
    if (!annotations.isEmpty())
        metadata.insert(QStringLiteral("annotations"), annotations);
    return metadata;
}

QJsonObject PodSpec::containerSecurity(qint64 uid, qint64 gid)
{
    return {
        {QStringLiteral("runAsNonRoot"), true},
        {QStringLiteral("runAsUser"), uid},
        {QStringLiteral("runAsGroup"), gid},
        {QStringLiteral("readOnlyRootFilesystem"), true},
        {QStringLiteral("allowPrivilegeEscalation"), false},
        {QStringLiteral("privileged"), false},
        {QStringLiteral("capabilities"),
         QJsonObject{{QStringLiteral("drop"), QJsonArray{QStringLiteral("ALL")}}}},
        {QStringLiteral("seccompProfile"),
         QJsonObject{{QStringLiteral("type"), QStringLiteral("RuntimeDefault")}}},
    };
}

QJsonObject PodSpec::containerJson(const SandboxSpec &spec, const QString &image)
{
    // Requests equal to limits: the pod is in the Guaranteed QoS class, so it is scheduled only
    // where its memory really is, is the last to be evicted, and gets no swap on nodes with
    // swap (as MemorySwap = Memory on Docker). With a read-only root and memory-backed
    // volumes, what ephemeral-storage bounds is the container's log the node keeps of its
    // output; it gets the size of one scratch mount.
    const QJsonObject quantities{
        {QStringLiteral("cpu"), cpuQuantity(spec.limits.cpus)},
        {QStringLiteral("memory"), bytesQuantity(spec.limits.memoryBytes)},
        {QStringLiteral("ephemeral-storage"), bytesQuantity(spec.limits.tmpfsBytes)},
    };
    const QJsonObject security = containerSecurity(spec.uid, spec.gid);
    return {
        {QStringLiteral("name"), QString::fromLatin1(kContainerName)},
        {QStringLiteral("image"), image},
        // A node keeps the image it has: pods start without a pull, and images loaded into a
        // local cluster (kind, minikube) work without a registry.
        {QStringLiteral("imagePullPolicy"), QStringLiteral("IfNotPresent")},
        {QStringLiteral("command"), QJsonArray::fromStringList(spec.command)},
        {QStringLiteral("workingDir"), spec.workingDir},
        {QStringLiteral("env"), envJson(spec)},
        {QStringLiteral("stdin"), true},
        {QStringLiteral("stdinOnce"), true},
        {QStringLiteral("tty"), false},
        {QStringLiteral("resources"), QJsonObject{{QStringLiteral("limits"), quantities},
                                                  {QStringLiteral("requests"), quantities}}},
        {QStringLiteral("securityContext"), security},
        {QStringLiteral("volumeMounts"), volumeMountsJson(spec)},
    };
}

QJsonArray PodSpec::volumeMountsJson(const SandboxSpec &spec)
{
    QJsonArray mounts{QJsonObject{{QStringLiteral("name"), QStringLiteral("tmp")},
                                  {QStringLiteral("mountPath"), QStringLiteral("/tmp")}},
                      QJsonObject{{QStringLiteral("name"), QStringLiteral("workdir")},
                                  {QStringLiteral("mountPath"), spec.workingDir}}};
    extraVolumes(spec, nullptr, &mounts);
    return mounts;
}

void PodSpec::extraVolumes(const SandboxSpec &spec, QJsonArray *volumes, QJsonArray *mounts)
{
    for (qsizetype i = 0; i < spec.mounts.size(); ++i) {
        const SandboxSpec::Mount &m = spec.mounts.at(i);
        QJsonObject volume;
        if (m.kind == SandboxSpec::Mount::Kind::Volume)
            volume = {{QStringLiteral("name"), QStringLiteral("claim-%1").arg(i)},
                      {QStringLiteral("persistentVolumeClaim"),
                       QJsonObject{{QStringLiteral("claimName"), m.source},
                                   {QStringLiteral("readOnly"), m.readOnly}}}};
        else if (m.kind == SandboxSpec::Mount::Kind::Scratch)
            volume = {{QStringLiteral("name"), QStringLiteral("scratch-%1").arg(i)},
                      {QStringLiteral("emptyDir"),
                       QJsonObject{{QStringLiteral("medium"), QStringLiteral("Memory")},
                                   {QStringLiteral("sizeLimit"), bytesQuantity(m.sizeBytes)}}}};
        else
            continue; // a file of the engine's machine: a pod's node has none of ours
        if (volumes)
            volumes->append(volume);
        if (mounts) {
            QJsonObject mount{{QStringLiteral("name"), volume.value(u"name")},
                              {QStringLiteral("mountPath"), m.target}};
            if (m.kind == SandboxSpec::Mount::Kind::Volume)
                mount.insert(QStringLiteral("readOnly"), m.readOnly);
            mounts->append(mount);
        }
    }
}

QJsonObject PodSpec::render(const SandboxSpec &spec)
{
    return render(spec, Options());
}

QJsonObject PodSpec::render(const SandboxSpec &spec, const Options &options)
{
    const QJsonObject podSecurity{
        {QStringLiteral("runAsNonRoot"), true},
        {QStringLiteral("runAsUser"), spec.uid},
        {QStringLiteral("runAsGroup"), spec.gid},
        {QStringLiteral("fsGroup"), spec.gid},
        {QStringLiteral("seccompProfile"),
         QJsonObject{{QStringLiteral("type"), QStringLiteral("RuntimeDefault")}}},
    };
    // /tmp and the workdir as on Docker: memory-backed (tmpfs pages count toward the memory
    // limit) and each capped at the tmpfs size.
    const auto scratch = [&](const QString &name) {
        return QJsonObject{
            {QStringLiteral("name"), name},
            {QStringLiteral("emptyDir"),
             QJsonObject{{QStringLiteral("medium"), QStringLiteral("Memory")},
                         {QStringLiteral("sizeLimit"), bytesQuantity(spec.limits.tmpfsBytes)}}}};
    };
    const QString image = prefixedImage(options.imagePrefix, spec.image);
    QJsonArray volumes{scratch(QStringLiteral("tmp")), scratch(QStringLiteral("workdir"))};
    extraVolumes(spec, &volumes, nullptr);
    QJsonObject podSpec{
        {QStringLiteral("restartPolicy"), QStringLiteral("Never")},
        {QStringLiteral("activeDeadlineSeconds"), options.activeDeadlineSeconds > 0
                                                      ? options.activeDeadlineSeconds
                                                      : defaultDeadlineSeconds(spec)},
        // No API credentials and no addresses of the namespace's services in the sandbox.
        {QStringLiteral("automountServiceAccountToken"), false},
        {QStringLiteral("enableServiceLinks"), false},
        {QStringLiteral("hostNetwork"), false},
        {QStringLiteral("hostPID"), false},
        {QStringLiteral("hostIPC"), false},
        {QStringLiteral("shareProcessNamespace"), false},
        {QStringLiteral("securityContext"), podSecurity},
        {QStringLiteral("containers"), QJsonArray{containerJson(spec, image)}},
        {QStringLiteral("volumes"), volumes},
    };
    if (!spec.runtime.isEmpty())
        podSpec.insert(QStringLiteral("runtimeClassName"), spec.runtime);
    if (spec.network == SandboxSpec::Network::Allowlist) {
        // No cluster DNS: a name server that answers nothing, as on Docker (its policy lets
        // the pod reach the gateway alone anyway).
        podSpec.insert(QStringLiteral("dnsPolicy"), QStringLiteral("None"));
        podSpec.insert(
            QStringLiteral("dnsConfig"),
            QJsonObject{{QStringLiteral("nameservers"),
                         QJsonArray{QString::fromLatin1(EgressEndpoint::kNoNameServer)}}});
    }
    if (!options.nodeSelector.isEmpty()) {
        QJsonObject selector;
        for (auto it = options.nodeSelector.begin(); it != options.nodeSelector.end(); ++it)
            selector.insert(it.key(), it.value());
        podSpec.insert(QStringLiteral("nodeSelector"), selector);
    }
    return {
        {QStringLiteral("apiVersion"), QStringLiteral("v1")},
        {QStringLiteral("kind"), QStringLiteral("Pod")},
        {QStringLiteral("metadata"), metadataJson(spec)},
        {QStringLiteral("spec"), podSpec},
    };
}

QJsonObject PodSpec::joinEgress(const QJsonObject &pod, const EgressEndpoint &egress)
{
    QJsonObject spec = pod.value(u"spec").toObject();
    QJsonArray containers = spec.value(u"containers").toArray();
    QJsonObject container = containers.at(0).toObject();
    QJsonArray env = container.value(u"env").toArray();
    for (const QString &entry : egress.proxyEnv()) {
        const qsizetype eq = entry.indexOf(u'=');
        const QString name = entry.left(eq);
        for (qsizetype i = env.size() - 1; i >= 0; --i)
            if (env.at(i)[u"name"].toString() == name)
                env.removeAt(i);
        env.append(QJsonObject{{QStringLiteral("name"), name},
                               {QStringLiteral("value"), entry.mid(eq + 1)}});
    }
    container.insert(QStringLiteral("env"), env);
    containers.replace(0, container);
    spec.insert(QStringLiteral("containers"), containers);
    QJsonObject out = pod;
    out.insert(QStringLiteral("spec"), spec);
    return out;
}

namespace {

void requireFalse(QStringList &out, const QJsonObject &o, const QString &key, const QString &path)
{
    if (o.value(key) != QJsonValue(false))
        out.append(path + key);
}

void requireNotTrue(QStringList &out, const QJsonObject &o, const QString &key, const QString &path)
{
    if (o.value(key) == QJsonValue(true))
        out.append(path + key);
}

// The volumes: memory-backed, size-capped scratch space, or a claim; never the node's files.
void checkVolumes(QStringList &out, const QJsonArray &volumes)
{
    for (qsizetype i = 0; i < volumes.size(); ++i) {
        const QJsonObject volume = volumes.at(i).toObject();
        const QString path = QStringLiteral("spec.volumes[%1].").arg(i);
        for (auto it = volume.begin(); it != volume.end(); ++it) {
            if (it.key() == u"name" || it.key() == u"persistentVolumeClaim")
                continue;
            if (it.key() == u"emptyDir") {
                const QJsonObject dir = it.value().toObject();
                if (dir.value(u"medium").toString() != u"Memory")
                    out.append(path + QStringLiteral("emptyDir.medium"));
                if (dir.value(u"sizeLimit").toVariant().toString().isEmpty())
                    out.append(path + QStringLiteral("emptyDir.sizeLimit"));
                continue;
            }
            out.append(path + it.key());
        }
    }
}

// One container (at `path`): its own securityContext, with the three settings it may inherit
// from the pod's (`podSecurity`), its limits and its ports.
void checkContainer(QStringList &out, const QJsonObject &c, const QString &path,
                    const QJsonObject &podSecurity)
{
    const QJsonObject sc = c.value(u"securityContext").toObject();
    const QString scPath = path + QStringLiteral("securityContext.");
    requireFalse(out, sc, QStringLiteral("allowPrivilegeEscalation"), scPath);
    if (sc.value(u"readOnlyRootFilesystem") != QJsonValue(true))
        out.append(scPath + QStringLiteral("readOnlyRootFilesystem"));
    requireNotTrue(out, sc, QStringLiteral("privileged"), scPath);
    const QJsonObject caps = sc.value(u"capabilities").toObject();
    if (!strings(caps.value(u"drop")).contains(QStringLiteral("ALL")))
        out.append(scPath + QStringLiteral("capabilities.drop"));
    if (!caps.value(u"add").toArray().isEmpty())
        out.append(scPath + QStringLiteral("capabilities.add"));

    // These three hold from the pod's context unless the container overrides them.
    const auto effective = [&](const char *key) {
        const QString k = QString::fromLatin1(key);
        return sc.contains(k) ? sc.value(k) : podSecurity.value(k);
    };
    const auto name = [&](const char *key) {
        const QString k = QString::fromLatin1(key);
        return sc.contains(k) ? scPath + k : QStringLiteral("spec.securityContext.") + k;
    };
    if (effective("runAsNonRoot") != QJsonValue(true))
        out.append(name("runAsNonRoot"));
    const QJsonValue runAsUser = effective("runAsUser");
    if (!runAsUser.isDouble() || runAsUser.toInteger() <= 0)
        out.append(name("runAsUser"));
    const QString seccomp = effective("seccompProfile")[u"type"].toString();
    if (seccomp != u"RuntimeDefault" && seccomp != u"Localhost")
        out.append(name("seccompProfile") + QStringLiteral(".type"));

    const QJsonObject limits = c.value(u"resources")[u"limits"].toObject();
    for (const char *resource : {"cpu", "memory", "ephemeral-storage"})
        if (!limits.contains(QLatin1String(resource)))
            out.append(path + QStringLiteral("resources.limits.") + QLatin1String(resource));
    const QJsonArray ports = c.value(u"ports").toArray();
    for (qsizetype p = 0; p < ports.size(); ++p)
        if (ports.at(p)[u"hostPort"].toInteger() != 0)
            out.append(path + QStringLiteral("ports[%1].hostPort").arg(p));
}

} // namespace

QStringList PodSpec::hardeningViolations(const QJsonObject &pod)
{
    QStringList out;
    const QJsonObject spec = pod.value(u"spec").toObject();
    const QString specPath = QStringLiteral("spec.");
    if (spec.value(u"restartPolicy").toString() != u"Never")
        out.append(QStringLiteral("spec.restartPolicy"));
    if (spec.value(u"activeDeadlineSeconds").toInteger() <= 0)
        out.append(QStringLiteral("spec.activeDeadlineSeconds"));
    requireFalse(out, spec, QStringLiteral("automountServiceAccountToken"), specPath);
    requireFalse(out, spec, QStringLiteral("enableServiceLinks"), specPath);
    for (const char *key : {"hostNetwork", "hostPID", "hostIPC"})
        requireNotTrue(out, spec, QString::fromLatin1(key), specPath);
    checkVolumes(out, spec.value(u"volumes").toArray());

    const QJsonObject podSecurity = spec.value(u"securityContext").toObject();
    bool any = false;
    for (const char *list : {"initContainers", "containers", "ephemeralContainers"}) {
        const QJsonArray containers = spec.value(QLatin1String(list)).toArray();
        for (qsizetype i = 0; i < containers.size(); ++i) {
            any = true;
            checkContainer(out, containers.at(i).toObject(),
                           QStringLiteral("spec.%1[%2].").arg(QLatin1String(list)).arg(i),
                           podSecurity);
        }
    }
    if (!any)
        out.append(QStringLiteral("spec.containers"));
    out.removeDuplicates();
    return out;
}

bool PodSpec::deniesSandboxEgress(const QJsonObject &policy)
{
    const QJsonObject spec = policy.value(u"spec").toObject();
    return hasEgressType(spec) && spec.value(u"egress").toArray().isEmpty() &&
           selectsEverySandbox(spec.value(u"podSelector").toObject());
}

QString PodSpec::sandboxEgressProblem(const QJsonArray &policies)
{
    bool denied = false;
    for (const QJsonValue &v : policies) {
        const QJsonObject policy = v.toObject();
        const QJsonObject spec = policy.value(u"spec").toObject();
        if (deniesSandboxEgress(policy)) {
            denied = true;
        } else if (hasEgressType(spec) && !spec.value(u"egress").toArray().isEmpty() &&
                   mightSelectASandbox(spec.value(u"podSelector").toObject())) {
            return QStringLiteral("the NetworkPolicy %1 allows egress to pods that may be "
                                  "sandboxes; policies add up, so sandboxes would reach the "
                                  "network")
                .arg(policy.value(u"metadata")[u"name"].toString());
        }
    }
    if (!denied)
        return QStringLiteral("no NetworkPolicy in the namespace denies egress to every sandbox "
                              "pod (code-sandbox-deny-egress of packaging/kubernetes/; apply it, "
                              "or ask for --network)");
    return {};
}

bool PodSpec::deniesSandboxIngress(const QJsonObject &policy)
{
    const QJsonObject spec = policy.value(u"spec").toObject();
    return hasIngressType(spec) && spec.value(u"ingress").toArray().isEmpty() &&
           selectsEverySandbox(spec.value(u"podSelector").toObject());
}

QString PodSpec::sandboxIngressProblem(const QJsonArray &policies)
{
    bool denied = false;
    for (const QJsonValue &v : policies) {
        const QJsonObject policy = v.toObject();
        const QJsonObject spec = policy.value(u"spec").toObject();
        if (deniesSandboxIngress(policy)) {
            denied = true;
        } else if (hasIngressType(spec) && !spec.value(u"ingress").toArray().isEmpty() &&
                   mightSelectASandbox(spec.value(u"podSelector").toObject())) {
            return QStringLiteral("the NetworkPolicy %1 allows ingress to pods that may be "
                                  "sandboxes; policies add up, so the network would reach "
                                  "sandboxes")
                .arg(policy.value(u"metadata")[u"name"].toString());
        }
    }
    if (!denied)
        return QStringLiteral("no NetworkPolicy in the namespace denies ingress to every sandbox "
                              "pod (code-sandbox-deny-ingress of packaging/kubernetes/; apply "
                              "it, or ask for --network)");
    return {};
}

QString PodSpec::sandboxIsolationProblem(const QJsonArray &policies)
{
    QStringList problems;
    for (const QString &problem : {sandboxEgressProblem(policies), sandboxIngressProblem(policies)})
        if (!problem.isEmpty())
            problems.append(problem);
    return problems.join(QStringLiteral("; and "));
}

namespace {

// Whether a selector matches every allow-list pod, whatever its instance, pid, host and language.
bool selectsEveryAllowlistSandbox(const QJsonObject &selector)
{
    const QString app = QString::fromLatin1(SandboxLayout::kLabelApp);
    const QString network = QString::fromLatin1(PodSpec::kLabelNetwork);
    const QString allowlist = QString::fromLatin1(PodSpec::kNetworkAllowlist);
    const QJsonObject matchLabels = selector.value(u"matchLabels").toObject();
    for (auto it = matchLabels.begin(); it != matchLabels.end(); ++it)
        if (!(it.key() == app && it.value().toString() == u"1") &&
            !(it.key() == network && it.value().toString() == allowlist))
            return false;
    for (const QJsonValue &e : selector.value(u"matchExpressions").toArray()) {
        const QString key = e[u"key"].toString();
        const QString op = e[u"operator"].toString();
        const QStringList values = strings(e[u"values"]);
        if (key == app || key == network) {
            const QString value = key == app ? QStringLiteral("1") : allowlist;
            if (!(op == u"Exists" || (op == u"In" && values.contains(value))))
                return false;
        } else if (sandboxLabelKeys().contains(key)) {
            if (op != u"Exists")
                return false;
        } else if (op != u"DoesNotExist" && op != u"NotIn") {
            return false;
        }
    }
    return true;
}

// False only when the selector certainly matches no allow-list pod.
bool mightSelectAnAllowlistSandbox(const QJsonObject &selector)
{
    const QString app = QString::fromLatin1(SandboxLayout::kLabelApp);
    const QString network = QString::fromLatin1(PodSpec::kLabelNetwork);
    const QString allowlist = QString::fromLatin1(PodSpec::kNetworkAllowlist);
    const QJsonObject matchLabels = selector.value(u"matchLabels").toObject();
    for (auto it = matchLabels.begin(); it != matchLabels.end(); ++it) {
        if (it.key() == network) {
            if (it.value().toString() != allowlist)
                return false;
        } else if (!sandboxLabelKeys().contains(it.key()) ||
                   (it.key() == app && it.value().toString() != u"1")) {
            return false;
        }
    }
    for (const QJsonValue &e : selector.value(u"matchExpressions").toArray()) {
        const QString key = e[u"key"].toString();
        const QString op = e[u"operator"].toString();
        const QStringList values = strings(e[u"values"]);
        const bool known = key == network || sandboxLabelKeys().contains(key);
        if (!known) {
            if (op == u"In" || op == u"Exists")
                return false;
        } else if (op == u"DoesNotExist") {
            return false;
        } else if (key == app || key == network) {
            const QString value = key == app ? QStringLiteral("1") : allowlist;
            if ((op == u"In" && !values.contains(value)) ||
                (op == u"NotIn" && values.contains(value)))
                return false;
        }
    }
    return true;
}

// An egress rule that lets a pod reach the namespace's gateway pods and nothing else.
bool onlyToGateway(const QJsonObject &rule)
{
    const QJsonArray peers = rule.value(u"to").toArray();
    if (peers.isEmpty())
        return false; // no "to": every destination
    for (const QJsonValue &v : peers) {
        const QJsonObject peer = v.toObject();
        if (peer.contains(u"ipBlock") || peer.contains(u"namespaceSelector") ||
            !peer.contains(u"podSelector"))
            return false;
        const QJsonObject labels = peer.value(u"podSelector")[u"matchLabels"].toObject();
        if (labels.value(QLatin1String(EgressGateway::kLabelRole)).toString() != u"gateway")
            return false;
    }
    return true;
}

bool allOnlyToGateway(const QJsonArray &rules)
{
    for (const QJsonValue &rule : rules)
        if (!onlyToGateway(rule.toObject()))
            return false;
    return true;
}

} // namespace

QString PodSpec::allowlistEgressProblem(const QJsonArray &policies)
{
    bool confined = false;
    for (const QJsonValue &v : policies) {
        const QJsonObject policy = v.toObject();
        const QJsonObject spec = policy.value(u"spec").toObject();
        if (!hasEgressType(spec))
            continue;
        const QJsonObject selector = spec.value(u"podSelector").toObject();
        const QJsonArray rules = spec.value(u"egress").toArray();
        if (!mightSelectAnAllowlistSandbox(selector))
            continue;
        if (!allOnlyToGateway(rules))
            return QStringLiteral("the NetworkPolicy %1 allows allow-list sandboxes egress to "
                                  "more than the egress gateway; policies add up, so they would "
                                  "reach the network past it")
                .arg(policy.value(u"metadata")[u"name"].toString());
        if (!rules.isEmpty() && selectsEveryAllowlistSandbox(selector))
            confined = true;
    }
    if (!confined)
        return QStringLiteral("no NetworkPolicy in the namespace lets allow-list sandbox pods "
                              "reach the egress gateway and nothing else "
                              "(code-sandbox-allowlist-egress of packaging/kubernetes/; apply "
                              "it, or run without --egress there)");
    return {};
}
