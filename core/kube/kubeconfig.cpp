#include "kubeconfig.h"

#include "kubelog.h"
#include "kubepem.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHostAddress>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QSet>
#include <yaml-cpp/yaml.h>

namespace {

// Thrown inside this file only, caught by resolve: one message naming the file and the key.
struct Failure
{
    QString message;
};

[[noreturn]] void fail(const QString &message)
{
    throw Failure{message};
}

// One named entry of a file's clusters, users or contexts: its inner map and where it was.
struct Entry
{
    YAML::Node node;
    QString file;
    QString key; // users["alice"], for messages
};

struct Merged
{
    QMap<QString, Entry> clusters;
    QMap<QString, Entry> users;
    QMap<QString, Entry> contexts;
    QString currentContext;
    QString currentContextFile;
    QStringList read;
};

QString qs(const std::string &s)
{
    return QString::fromStdString(s);
}

QString where(const Entry &e, const QString &field)
{
    return QStringLiteral("kubeconfig %1: %2.%3").arg(e.file, e.key, field);
}

bool present(const YAML::Node &n)
{
    return n.IsDefined() && !n.IsNull();
}

// A string field of an entry: empty when absent; anything but a scalar is an error.
QString text(const Entry &e, const char *field)
{
    const YAML::Node n = e.node[field];
    if (!present(n))
        return {};
    if (!n.IsScalar())
        fail(where(e, QLatin1String(field)) + QStringLiteral(" must be a string"));
    return qs(n.Scalar());
}

bool flag(const Entry &e, const char *field)
{
    const YAML::Node n = e.node[field];
    if (!present(n))
        return false;
    bool value = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, value))
        fail(where(e, QLatin1String(field)) + QStringLiteral(" must be true or false"));
    return value;
}

// A relative path is taken from the folder of the file that wrote it, as kubectl does.
QString resolvedPath(const Entry &e, const QString &path)
{
    if (path.isEmpty() || QDir::isAbsolutePath(path))
        return path;
    return QDir::cleanPath(QFileInfo(e.file).absoluteDir().filePath(path));
}

QByteArray readFile(const QString &path, const QString &what)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        fail(QStringLiteral("%1: cannot read %2: %3").arg(what, path, f.errorString()));
    if (f.size() > KubeConfig::kMaxFileBytes)
        fail(QStringLiteral("%1: %2 is larger than %3 bytes")
                 .arg(what, path)
                 .arg(KubeConfig::kMaxFileBytes));
    return f.read(KubeConfig::kMaxFileBytes);
}

QByteArray base64Field(const Entry &e, const char *field)
{
    const QString value = text(e, field);
    if (value.isEmpty())
        return {};
    const auto decoded = QByteArray::fromBase64Encoding(value.toLatin1().trimmed(),
                                                        QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded)
        fail(where(e, QLatin1String(field)) + QStringLiteral(" is not base64"));
    return *decoded;
}

void readList(const QString &file, const YAML::Node &root, const char *list, const char *inner,
              QMap<QString, Entry> *into)
{
    const YAML::Node items = root[list];
    if (!present(items))
        return;
    const QString listName = QLatin1String(list);
    if (!items.IsSequence())
        fail(QStringLiteral("kubeconfig %1: %2 must be a list").arg(file, listName));
    QSet<QString> seen;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const YAML::Node item = items[i];
        const QString at = QStringLiteral("%1[%2]").arg(listName).arg(i);
        if (!item.IsMap())
            fail(QStringLiteral("kubeconfig %1: %2 must be a map with name and %3")
                     .arg(file, at, QLatin1String(inner)));
        const YAML::Node name = item["name"];
        if (!present(name) || !name.IsScalar() || name.Scalar().empty())
            fail(QStringLiteral("kubeconfig %1: %2.name is missing").arg(file, at));
        const QString n = qs(name.Scalar());
        if (seen.contains(n))
            fail(QStringLiteral("kubeconfig %1: %2 names \"%3\" twice").arg(file, listName, n));
        seen.insert(n);
        YAML::Node body = item[inner];
        if (!present(body))
            body = YAML::Node(YAML::NodeType::Map);
        const QString key = QStringLiteral("%1[\"%2\"].%3").arg(listName, n, QLatin1String(inner));
        if (!body.IsMap())
            fail(QStringLiteral("kubeconfig %1: %2 must be a map").arg(file, key));
        // The first file to define a name keeps it.
        if (!into->contains(n))
            into->insert(n, Entry{body, file, key});
    }
}

void readFileInto(const QString &file, Merged *m)
{
    const QByteArray bytes = readFile(file, QStringLiteral("kubeconfig"));
    YAML::Node root;
    try {
        root = YAML::Load(bytes.toStdString());
    } catch (const YAML::Exception &e) {
        fail(QStringLiteral("kubeconfig %1: not valid YAML (line %2, column %3: %4)")
                 .arg(file)
                 .arg(e.mark.line + 1)
                 .arg(e.mark.column + 1)
                 .arg(qs(e.msg)));
    }
    m->read.append(file);
    if (!present(root))
        return; // an empty file is an empty config, as for kubectl
    if (!root.IsMap())
        fail(QStringLiteral("kubeconfig %1: not a kubeconfig (the document is not a map)")
                 .arg(file));
    readList(file, root, "clusters", "cluster", &m->clusters);
    readList(file, root, "users", "user", &m->users);
    readList(file, root, "contexts", "context", &m->contexts);
    const YAML::Node current = root["current-context"];
    if (present(current)) {
        if (!current.IsScalar())
            fail(QStringLiteral("kubeconfig %1: current-context must be a string").arg(file));
        if (m->currentContext.isEmpty() && !current.Scalar().empty()) {
            m->currentContext = qs(current.Scalar());
            m->currentContextFile = file;
        }
    }
}

QString names(const QMap<QString, Entry> &map)
{
    if (map.isEmpty())
        return QStringLiteral("none");
    QStringList n = map.keys();
    constexpr int kShown = 10;
    if (n.size() > kShown) {
        const int more = int(n.size()) - kShown;
        n = n.mid(0, kShown);
        n.append(QStringLiteral("and %1 more").arg(more));
    }
    return n.join(QStringLiteral(", "));
}

QSslConfiguration baseSsl()
{
    QSslConfiguration c = QSslConfiguration::defaultConfiguration();
    c.setProtocol(QSsl::TlsV1_2OrLater);
    c.setPeerVerifyMode(QSslSocket::VerifyPeer);
    return c;
}

bool isLoopbackHost(const QString &host)
{
    if (host.compare(QStringLiteral("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    const QHostAddress a(host);
    return !a.isNull() && a.isLoopback();
}

QUrl serverUrl(const Entry &cluster, bool allowInsecure)
{
    QString server = text(cluster, "server");
    if (server.isEmpty())
        fail(where(cluster, QStringLiteral("server")) + QStringLiteral(" is missing"));
    // client-go takes a bare host:port as https when it has TLS settings; https always here.
    if (!server.contains(QStringLiteral("://")))
        server.prepend(QStringLiteral("https://"));
    const QUrl url(server, QUrl::StrictMode);
    const QString scheme = url.scheme().toLower();
    if (!url.isValid() || url.host().isEmpty() ||
        (scheme != QStringLiteral("https") && scheme != QStringLiteral("http")))
        fail(where(cluster, QStringLiteral("server")) +
             QStringLiteral(" is not an https:// URL: %1").arg(server));
    if (!url.userInfo().isEmpty())
        fail(where(cluster, QStringLiteral("server")) +
             QStringLiteral(" carries a user name or password; put credentials under users"));
    if (scheme == QStringLiteral("http") && !isLoopbackHost(url.host()) && !allowInsecure)
        fail(where(cluster, QStringLiteral("server")) +
             QStringLiteral(" is plain http:// to another host (%1): credentials would travel "
                            "in clear; use https, or allow insecure access explicitly")
                 .arg(url.host()));
    return url.adjusted(QUrl::StripTrailingSlash);
}

void applyCluster(const Entry &cluster, const KubeConfig::Options &options, KubeAccess *a,
                  QByteArray *caPem)
{
    for (const char *unsupported : {"proxy-url"}) {
        if (!text(cluster, unsupported).isEmpty())
            fail(where(cluster, QLatin1String(unsupported)) +
                 QStringLiteral(" is set: reaching the API server through a proxy is not "
                                "supported yet"));
    }
    a->server = serverUrl(cluster, options.allowInsecure);
    a->peerVerifyName = text(cluster, "tls-server-name");
    a->ssl = baseSsl();

    // The -data form wins over the file, as in client-go.
    QString caWhere;
    *caPem = base64Field(cluster, "certificate-authority-data");
    if (!caPem->isEmpty()) {
        caWhere = where(cluster, QStringLiteral("certificate-authority-data"));
    } else if (const QString file = text(cluster, "certificate-authority"); !file.isEmpty()) {
        caWhere = where(cluster, QStringLiteral("certificate-authority"));
        *caPem = readFile(resolvedPath(cluster, file), caWhere);
    }
    const bool insecure = flag(cluster, "insecure-skip-tls-verify");
    if (insecure && !caPem->isEmpty())
        fail(where(cluster, QStringLiteral("insecure-skip-tls-verify")) +
             QStringLiteral(" is true together with a certificate authority: kubectl refuses "
                            "that too; remove one of them"));
    if (insecure) {
        if (!options.allowInsecure)
            fail(where(cluster, QStringLiteral("insecure-skip-tls-verify")) +
                 QStringLiteral(" is true: the API server's certificate would not be checked, "
                                "so anyone between here and %1 could take the credentials and "
                                "the sandboxes; give the cluster's certificate-authority, or "
                                "allow insecure access explicitly")
                     .arg(a->server.host()));
        a->insecure = true;
        a->ssl.setPeerVerifyMode(QSslSocket::VerifyNone);
        qCWarning(lcKube).noquote()
            << QStringLiteral("%1: insecure-skip-tls-verify allowed: the server's certificate "
                              "is not checked")
                   .arg(cluster.key);
    }
    if (!caPem->isEmpty()) {
        const QList<QSslCertificate> ca = KubePem::certificates(*caPem);
        if (ca.isEmpty())
            fail(caWhere + QStringLiteral(" holds no PEM certificate"));
        // Replaces the system's roots (and turns off loading them on demand): the cluster's CA
        // is the only one trusted for it.
        a->ssl.setCaCertificates(ca);
    }
}

KubeCredentials::ExecSpec execSpec(const Entry &user, const KubeAccess &a, const QByteArray &caPem,
                                   const QProcessEnvironment &env,
                                   const KubeConfig::Options &options)
{
    const Entry exec{user.node["exec"], user.file, user.key + QStringLiteral(".exec")};
    if (!exec.node.IsMap())
        fail(where(user, QStringLiteral("exec")) + QStringLiteral(" must be a map"));
    KubeCredentials::ExecSpec s;
    s.origin = QStringLiteral("%1 in %2").arg(exec.key, user.file);
    s.apiVersion = text(exec, "apiVersion");
    if (s.apiVersion.isEmpty())
        fail(where(exec, QStringLiteral("apiVersion")) + QStringLiteral(" is missing"));
    if (s.apiVersion != QStringLiteral("client.authentication.k8s.io/v1") &&
        s.apiVersion != QStringLiteral("client.authentication.k8s.io/v1beta1"))
        fail(where(exec, QStringLiteral("apiVersion")) +
             QStringLiteral(" is '%1'; supported: client.authentication.k8s.io/v1 and /v1beta1")
                 .arg(s.apiVersion));
    s.command = text(exec, "command");
    if (s.command.isEmpty())
        fail(where(exec, QStringLiteral("command")) + QStringLiteral(" is missing"));
    // A command with a separator is a path (relative to the file); a bare name is found on PATH.
    if (s.command.contains(u'/'))
        s.command = resolvedPath(exec, s.command);
    const YAML::Node args = exec.node["args"];
    if (present(args)) {
        if (!args.IsSequence())
            fail(where(exec, QStringLiteral("args")) + QStringLiteral(" must be a list"));
        for (const YAML::Node &arg : args) {
            if (!arg.IsScalar())
                fail(where(exec, QStringLiteral("args")) +
                     QStringLiteral(" must be a list of strings"));
            s.args.append(qs(arg.Scalar()));
        }
    }
    const YAML::Node vars = exec.node["env"];
    if (present(vars)) {
        if (!vars.IsSequence())
            fail(where(exec, QStringLiteral("env")) + QStringLiteral(" must be a list"));
        int i = 0;
        for (const YAML::Node &var : vars) {
            const Entry v{var, exec.file, exec.key + QStringLiteral(".env[%1]").arg(i++)};
            if (!var.IsMap())
                fail(QStringLiteral("kubeconfig %1: %2 must be a map with name and value")
                         .arg(v.file, v.key));
            const QString name = text(v, "name");
            if (name.isEmpty())
                fail(where(v, QStringLiteral("name")) + QStringLiteral(" is missing"));
            s.env.append({name, text(v, "value")});
        }
    }
    s.installHint = text(exec, "installHint");
    const QString mode = text(exec, "interactiveMode");
    // kubectl defaults v1beta1 to IfAvailable; a v1 entry without it is taken the same way.
    if (!mode.isEmpty() && mode != QStringLiteral("Never") &&
        mode != QStringLiteral("IfAvailable") && mode != QStringLiteral("Always"))
        fail(where(exec, QStringLiteral("interactiveMode")) +
             QStringLiteral(" is '%1'; it is Never, IfAvailable or Always").arg(mode));
    s.interactiveAlways = mode == QStringLiteral("Always");
    if (flag(exec, "provideClusterInfo")) {
        QJsonObject cluster{{QStringLiteral("server"), a.server.toString()}};
        if (!a.peerVerifyName.isEmpty())
            cluster.insert(QStringLiteral("tls-server-name"), a.peerVerifyName);
        if (a.insecure)
            cluster.insert(QStringLiteral("insecure-skip-tls-verify"), true);
        if (!caPem.isEmpty())
            cluster.insert(QStringLiteral("certificate-authority-data"),
                           QString::fromLatin1(caPem.toBase64()));
        s.clusterJson = QJsonDocument(cluster).toJson(QJsonDocument::Compact);
    }
    s.baseEnvironment = env;
    s.timeoutMs = options.execTimeoutMs;
    return s;
}

void applyUser(const Entry &user, const QByteArray &caPem, const QProcessEnvironment &env,
               const KubeConfig::Options &options, KubeAccess *a)
{
    if (present(user.node["auth-provider"]))
        fail(where(user, QStringLiteral("auth-provider")) +
             QStringLiteral(" is set: auth providers are gone from kubectl; use the provider's "
                            "exec credential plugin (gke-gcloud-auth-plugin, kubelogin, …)"));
    if (!text(user, "username").isEmpty() || !text(user, "password").isEmpty())
        fail(where(user, QStringLiteral("username")) +
             QStringLiteral(": basic authentication is not supported; use a token, a client "
                            "certificate or an exec plugin"));
    for (const char *impersonation : {"as", "as-uid", "as-groups", "as-user-extra"}) {
        if (present(user.node[impersonation]))
            fail(where(user, QLatin1String(impersonation)) +
                 QStringLiteral(" is set: impersonation is not supported"));
    }

    // Client certificate: the -data forms win over the files, as in client-go.
    QByteArray certPem = base64Field(user, "client-certificate-data");
    QString certWhere = where(user, QStringLiteral("client-certificate-data"));
    if (certPem.isEmpty()) {
        if (const QString f = text(user, "client-certificate"); !f.isEmpty()) {
            certWhere = where(user, QStringLiteral("client-certificate"));
            certPem = readFile(resolvedPath(user, f), certWhere);
        }
    }
    QByteArray keyPem = base64Field(user, "client-key-data");
    QString keyWhere = where(user, QStringLiteral("client-key-data"));
    if (keyPem.isEmpty()) {
        if (const QString f = text(user, "client-key"); !f.isEmpty()) {
            keyWhere = where(user, QStringLiteral("client-key"));
            keyPem = readFile(resolvedPath(user, f), keyWhere);
        }
    }
    if (certPem.isEmpty() != keyPem.isEmpty())
        fail(QStringLiteral("kubeconfig %1: %2 has a client %3 without its %4")
                 .arg(user.file, user.key,
                      certPem.isEmpty() ? QStringLiteral("key") : QStringLiteral("certificate"),
                      certPem.isEmpty() ? QStringLiteral("certificate") : QStringLiteral("key")));
    const bool clientCert = !certPem.isEmpty();
    if (clientCert) {
        const QList<QSslCertificate> chain = KubePem::certificates(certPem);
        if (chain.isEmpty())
            fail(certWhere + QStringLiteral(" holds no PEM certificate"));
        const QSslKey key = KubePem::privateKey(keyPem);
        if (key.isNull())
            fail(keyWhere + QStringLiteral(" holds no PEM private key (an encrypted key is not "
                                           "supported)"));
        a->ssl.setLocalCertificateChain(chain);
        a->ssl.setPrivateKey(key);
    }

    const QString token = text(user, "token");
    const QString tokenFile = text(user, "tokenFile");
    if (!tokenFile.isEmpty()) {
        // client-go: the file's content takes precedence over token, and is re-read.
        a->credentials = KubeCredentials::tokenFile(
            resolvedPath(user, tokenFile),
            QStringLiteral("%1.tokenFile in %2").arg(user.key, user.file));
        QString error;
        a->credentials->fetch([&error](const KubeCredential &c) { error = c.error; });
        if (!error.isEmpty())
            fail(error);
    } else if (!token.isEmpty()) {
        a->credentials = KubeCredentials::token(token.toUtf8());
    } else if (present(user.node["exec"]) && !clientCert) {
        a->credentials = KubeCredentials::exec(execSpec(user, *a, caPem, env, options));
    } else {
        if (present(user.node["exec"]))
            // client-go skips the plugin when a token or certificate is configured.
            qCInfo(lcKube).noquote()
                << user.key << "has a client certificate: its exec plugin is not run";
        a->credentials = KubeCredentials::none();
    }
}

KubeConfig::Result inCluster(const KubeTarget &target, const QProcessEnvironment &env,
                             const KubeConfig::Options &options)
{
    KubeConfig::Result r;
    KubeAccess &a = r.access;
    const QDir dir(options.serviceAccountDir);
    a.inCluster = true;
    a.source = dir.path();
    QUrl server;
    server.setScheme(QStringLiteral("https"));
    server.setHost(env.value(QStringLiteral("KUBERNETES_SERVICE_HOST")));
    bool portOk = false;
    const int port = env.value(QStringLiteral("KUBERNETES_SERVICE_PORT")).toInt(&portOk);
    if (!portOk || port <= 0 || port > 65535 || !server.isValid() || server.host().isEmpty())
        fail(QStringLiteral("in-cluster: KUBERNETES_SERVICE_HOST/PORT (%1:%2) are not a host "
                            "and port")
                 .arg(env.value(QStringLiteral("KUBERNETES_SERVICE_HOST")),
                      env.value(QStringLiteral("KUBERNETES_SERVICE_PORT"))));
    server.setPort(port);
    a.server = server;
    a.ssl = baseSsl();
    const QString caPath = dir.filePath(QStringLiteral("ca.crt"));
    const QList<QSslCertificate> ca =
        KubePem::certificates(readFile(caPath, QStringLiteral("in-cluster")));
    if (ca.isEmpty())
        fail(QStringLiteral("in-cluster: %1 holds no PEM certificate").arg(caPath));
    a.ssl.setCaCertificates(ca);
    a.credentials = KubeCredentials::tokenFile(dir.filePath(QStringLiteral("token")),
                                               QStringLiteral("the pod's service account"));
    QString error;
    a.credentials->fetch([&error](const KubeCredential &c) { error = c.error; });
    if (!error.isEmpty())
        fail(QStringLiteral("in-cluster: ") + error);
    a.namespaceName = target.namespace_;
    if (a.namespaceName.isEmpty()) {
        QFile ns(dir.filePath(QStringLiteral("namespace")));
        if (ns.open(QIODevice::ReadOnly))
            a.namespaceName = QString::fromUtf8(ns.read(256)).trimmed();
    }
    if (a.namespaceName.isEmpty())
        a.namespaceName = QStringLiteral("default");
    return r;
}

KubeConfig::Result fromKubeconfig(const KubeTarget &target, const Merged &m,
                                  const QProcessEnvironment &env,
                                  const KubeConfig::Options &options)
{
    KubeConfig::Result r;
    KubeAccess &a = r.access;
    const QString files = m.read.join(u':');
    a.source = files;
    a.context = target.context.isEmpty() ? m.currentContext : target.context;
    if (a.context.isEmpty())
        fail(QStringLiteral("kubeconfig %1 sets no current-context; name one with "
                            "k8s://CONTEXT (contexts: %2)")
                 .arg(files, names(m.contexts)));
    const auto ctx = m.contexts.constFind(a.context);
    if (ctx == m.contexts.constEnd()) {
        const QString from =
            target.context.isEmpty()
                ? QStringLiteral(" (the current-context of %1)").arg(m.currentContextFile)
                : QString();
        fail(QStringLiteral("kubeconfig %1 has no context \"%2\"%3; contexts: %4")
                 .arg(files, a.context, from, names(m.contexts)));
    }
    a.cluster = text(*ctx, "cluster");
    if (a.cluster.isEmpty())
        fail(where(*ctx, QStringLiteral("cluster")) + QStringLiteral(" is missing"));
    const auto cluster = m.clusters.constFind(a.cluster);
    if (cluster == m.clusters.constEnd())
        fail(where(*ctx, QStringLiteral("cluster")) +
             QStringLiteral(" names \"%1\", which no kubeconfig file defines (clusters: %2)")
                 .arg(a.cluster, names(m.clusters)));
    QByteArray caPem;
    applyCluster(*cluster, options, &a, &caPem);

    a.user = text(*ctx, "user");
    if (a.user.isEmpty()) {
        a.credentials = KubeCredentials::none();
    } else {
        const auto user = m.users.constFind(a.user);
        if (user == m.users.constEnd())
            fail(where(*ctx, QStringLiteral("user")) +
                 QStringLiteral(" names \"%1\", which no kubeconfig file defines (users: %2)")
                     .arg(a.user, names(m.users)));
        applyUser(*user, caPem, env, options, &a);
    }

    a.namespaceName = target.namespace_;
    if (a.namespaceName.isEmpty()) {
        a.namespaceName = text(*ctx, "namespace");
        if (!a.namespaceName.isEmpty() && !KubeTarget::isValidNamespace(a.namespaceName))
            fail(where(*ctx, QStringLiteral("namespace")) +
                 QStringLiteral(" '%1' is not a namespace name").arg(a.namespaceName));
    }
    if (a.namespaceName.isEmpty())
        a.namespaceName = QStringLiteral("default");
    return r;
}

} // namespace

QStringList KubeConfig::files(const QProcessEnvironment &env)
{
    QStringList out;
    if (env.contains(QStringLiteral("KUBECONFIG")) &&
        !env.value(QStringLiteral("KUBECONFIG")).isEmpty()) {
        for (const QString &p :
             env.value(QStringLiteral("KUBECONFIG")).split(u':', Qt::SkipEmptyParts)) {
            const QString abs = QFileInfo(p).absoluteFilePath();
            if (!out.contains(abs))
                out.append(abs);
        }
        return out;
    }
    QString home = env.value(QStringLiteral("HOME"));
    if (home.isEmpty())
        home = QDir::homePath();
    out.append(QDir(home).filePath(QStringLiteral(".kube/config")));
    return out;
}

bool KubeConfig::inClusterAvailable(const QProcessEnvironment &env,
                                    const QString &serviceAccountDir)
{
    return !env.value(QStringLiteral("KUBERNETES_SERVICE_HOST")).isEmpty() &&
           !env.value(QStringLiteral("KUBERNETES_SERVICE_PORT")).isEmpty() &&
           QFileInfo::exists(QDir(serviceAccountDir).filePath(QStringLiteral("token")));
}

KubeConfig::Result KubeConfig::resolve(const KubeTarget &target, const QProcessEnvironment &env,
                                       const Options &options)
{
    Result r;
    if (!target.isValid()) {
        r.error = QStringLiteral("no cluster address given");
        return r;
    }
    try {
        Merged m;
        const QStringList candidates = files(env);
        for (const QString &f : candidates) {
            if (QFileInfo::exists(f))
                readFileInto(f, &m);
        }
        const bool useInCluster = target.context.isEmpty() && m.currentContext.isEmpty() &&
                                  inClusterAvailable(env, options.serviceAccountDir);
        if (useInCluster) {
            r = inCluster(target, env, options);
        } else if (m.read.isEmpty()) {
            const QString which =
                env.value(QStringLiteral("KUBECONFIG")).isEmpty()
                    ? QStringLiteral("%1 does not exist").arg(candidates.join(QStringLiteral(", ")))
                    : QStringLiteral("none of the files KUBECONFIG names "
                                     "exists (%1)")
                          .arg(candidates.join(QStringLiteral(", ")));
            fail(QStringLiteral("no kubeconfig: %1, and this is not running inside a cluster")
                     .arg(which));
        } else {
            r = fromKubeconfig(target, m, env, options);
        }
    } catch (const Failure &f) {
        return Result{{}, f.message};
    } catch (const YAML::Exception &e) {
        return Result{{}, QStringLiteral("kubeconfig: %1").arg(qs(e.what()))};
    }
    qCDebug(lcKube).noquote() << "cluster access:" << r.access.description() << "with"
                              << r.access.credentials->describe();
    return r;
}

KubeConfig::Result KubeConfig::resolve(const KubeTarget &target, const Options &options)
{
    return resolve(target, QProcessEnvironment::systemEnvironment(), options);
}

KubeConfig::Result KubeConfig::resolve(const KubeTarget &target)
{
    return resolve(target, Options());
}
