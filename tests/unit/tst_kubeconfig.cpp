#include "kubeconfig.h"
#include "kubecredentials.h"
#include "tst_kubepki.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

namespace {

void write(const QString &path, const QByteArray &content, bool executable = false)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY2(f.open(QIODevice::WriteOnly | QIODevice::Truncate), qPrintable(path));
    f.write(content);
    f.close();
    if (executable)
        f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
}

QByteArray read(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QProcessEnvironment environment(const QString &home, const QString &kubeconfig = {})
{
    QProcessEnvironment env;
    env.insert(QStringLiteral("HOME"), home);
    env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/bin:/bin"));
    if (!kubeconfig.isEmpty())
        env.insert(QStringLiteral("KUBECONFIG"), kubeconfig);
    return env;
}

KubeTarget target(const char *text)
{
    QString error;
    const KubeTarget t = KubeTarget::parse(QLatin1String(text), &error);
    if (!t.isValid())
        qWarning("%s", qPrintable(error));
    return t;
}

KubeConfig::Options options(const QString &serviceAccountDir = QStringLiteral("/nonexistent"))
{
    KubeConfig::Options o;
    o.serviceAccountDir = serviceAccountDir;
    return o;
}

// The credential as a request would get it (waits for a plugin).
KubeCredential fetched(KubeCredentials &c)
{
    auto out = std::make_shared<KubeCredential>();
    auto got = std::make_shared<bool>(false);
    c.fetch([out, got](const KubeCredential &k) {
        *out = k;
        *got = true;
    });
    if (!QTest::qWaitFor([got] { return *got; }, 20000))
        out->error = QStringLiteral("(test) no answer");
    return *out;
}

// A cluster and a user that only differ by name and server.
QByteArray cluster(const char *name, const char *server)
{
    return QByteArray("- name: ") + name + "\n  cluster:\n    server: " + server + "\n";
}

} // namespace

class tst_KubeConfig : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_pki = new KubePki(m_dir.filePath(QStringLiteral("pki")));
        const QString error = m_pki->make();
        QVERIFY2(error.isEmpty(), qPrintable(error));
    }
    void cleanupTestCase() { delete m_pki; }

    // KUBECONFIG=a:missing:b:c: the first file to define a name keeps it, current-context
    // comes from the first file that sets one, and a file that does not exist is skipped.
    void mergesAKubeconfigList()
    {
        QTemporaryDir dir;
        write(dir.filePath("a"), "apiVersion: v1\nkind: Config\nclusters:\n" +
                                     cluster("shared", "https://first.example:6443") +
                                     "users:\n- name: ua\n  user:\n    token: token-a\n"
                                     "contexts:\n- name: ctx-a\n  context:\n    cluster: shared\n"
                                     "    user: ua\n    namespace: from-a\n");
        write(dir.filePath("b"), "current-context: ctx-b\nclusters:\n" +
                                     cluster("shared", "https://second.example:6443") +
                                     cluster("own-b", "https://b.example") +
                                     "users:\n- name: ua\n  user:\n    token: token-b\n"
                                     "contexts:\n- name: ctx-a\n  context:\n    cluster: own-b\n"
                                     "- name: ctx-b\n  context:\n    cluster: shared\n"
                                     "    user: ua\n");
        write(dir.filePath("c"), "current-context: ctx-a\n");
        const QString list = dir.filePath("a") + ':' + dir.filePath("missing") + ':' +
                             dir.filePath("b") + "::" + dir.filePath("c");
        const QProcessEnvironment env = environment(dir.path(), list);
        QCOMPARE(KubeConfig::files(env).size(), 4);

        KubeConfig::Result r = KubeConfig::resolve(target("k8s://"), env, options());
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.access.context, QStringLiteral("ctx-b")); // b's, not c's
        QCOMPARE(r.access.server.toString(), QStringLiteral("https://first.example:6443"));
        QCOMPARE(fetched(*r.access.credentials).token, QByteArray("token-a"));
        QCOMPARE(r.access.namespaceName, QStringLiteral("default"));
        QCOMPARE(r.access.source,
                 dir.filePath("a") + ':' + dir.filePath("b") + ':' + dir.filePath("c"));
        QCOMPARE(r.access.description(),
                 QStringLiteral("context ctx-b (https://first.example:6443, namespace default)"));

        r = KubeConfig::resolve(target("k8s://ctx-a"), env, options());
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(r.access.cluster, QStringLiteral("shared")); // a's ctx-a, not b's
        QCOMPARE(r.access.namespaceName, QStringLiteral("from-a"));

        r = KubeConfig::resolve(target("k8s://nope"), env, options());
        QVERIFY(!r.ok());
        QVERIFY2(r.error.contains(QStringLiteral("no context \"nope\"")), qPrintable(r.error));
        QVERIFY2(r.error.contains(QStringLiteral("contexts: ctx-a, ctx-b")), qPrintable(r.error));
    }

    void defaultsToTheHomeKubeconfig()
    {
        QTemporaryDir dir;
        write(dir.filePath(".kube/config"), "current-context: home\nclusters:\n" +
                                                cluster("c", "kube.example:6443") +
                                                "contexts:\n- name: home\n  context:\n"
                                                "    cluster: c\n");
        const KubeConfig::Result r =
            KubeConfig::resolve(target("k8s://"), environment(dir.path()), options());
        QVERIFY2(r.ok(), qPrintable(r.error));
        // A server without a scheme is https.
        QCOMPARE(r.access.server.toString(), QStringLiteral("https://kube.example:6443"));
        QCOMPARE(r.access.credentials->kind(), KubeCredentials::Kind::None);

        QTemporaryDir empty;
        const KubeConfig::Result none =
            KubeConfig::resolve(target("k8s://"), environment(empty.path()), options());
        QVERIFY(!none.ok());
        QVERIFY2(none.error.contains(empty.filePath(".kube/config") + " does not exist"),
                 qPrintable(none.error));
    }

    void namespacePrecedence()
    {
        QTemporaryDir dir;
        write(dir.filePath("config"), "current-context: with\nclusters:\n" +
                                          cluster("c", "https://k.example") +
                                          "contexts:\n- name: with\n  context:\n    cluster: c\n"
                                          "    namespace: team\n- name: without\n  context:\n"
                                          "    cluster: c\n");
        const QProcessEnvironment env = environment(dir.path(), dir.filePath("config"));
        QCOMPARE(KubeConfig::resolve(target("k8s://"), env, options()).access.namespaceName,
                 QStringLiteral("team"));
        QCOMPARE(KubeConfig::resolve(target("k8s:///mine"), env, options()).access.namespaceName,
                 QStringLiteral("mine"));
        QCOMPARE(
            KubeConfig::resolve(target("k8s://with/mine"), env, options()).access.namespaceName,
            QStringLiteral("mine"));
        QCOMPARE(KubeConfig::resolve(target("k8s://without"), env, options()).access.namespaceName,
                 QStringLiteral("default"));
    }

    // certificate-authority-data, a relative certificate-authority (from the file's folder, not
    // the working directory), and both (the data wins, the file is not read).
    void certificateAuthority()
    {
        QTemporaryDir dir;
        const QByteArray caPem = m_pki->read("ca.crt");
        const QSslCertificate ca = QSslCertificate::fromData(caPem).value(0);
        QVERIFY(!ca.isNull());
        write(dir.filePath("conf/certs/ca.crt"), caPem);
        write(dir.filePath("conf/config"),
              "clusters:\n- name: data\n  cluster:\n    server: https://k.example\n"
              "    certificate-authority-data: " +
                  caPem.toBase64() +
                  "\n- name: file\n  cluster:\n    server: https://k.example\n"
                  "    certificate-authority: certs/ca.crt\n    tls-server-name: kube.test\n"
                  "- name: both\n  cluster:\n    server: https://k.example\n"
                  "    certificate-authority: certs/missing.crt\n"
                  "    certificate-authority-data: " +
                  caPem.toBase64() +
                  "\n- name: gone\n  cluster:\n    server: https://k.example\n"
                  "    certificate-authority: certs/missing.crt\n"
                  "- name: system\n  cluster:\n    server: https://k.example\n"
                  "contexts:\n"
                  "- {name: data, context: {cluster: data}}\n"
                  "- {name: file, context: {cluster: file}}\n"
                  "- {name: both, context: {cluster: both}}\n"
                  "- {name: gone, context: {cluster: gone}}\n"
                  "- {name: system, context: {cluster: system}}\n");
        const QProcessEnvironment env = environment(dir.path(), dir.filePath("conf/config"));
        for (const char *name : {"k8s://data", "k8s://file", "k8s://both"}) {
            const KubeConfig::Result r = KubeConfig::resolve(target(name), env, options());
            QVERIFY2(r.ok(), qPrintable(r.error));
            QCOMPARE(r.access.ssl.caCertificates(), QList<QSslCertificate>{ca});
            QCOMPARE(r.access.ssl.peerVerifyMode(), QSslSocket::VerifyPeer);
        }
        QCOMPARE(KubeConfig::resolve(target("k8s://file"), env, options()).access.peerVerifyName,
                 QStringLiteral("kube.test"));
        const KubeConfig::Result gone = KubeConfig::resolve(target("k8s://gone"), env, options());
        QVERIFY(!gone.ok());
        QVERIFY2(gone.error.contains(dir.filePath("conf/config") +
                                     ": clusters[\"gone\"].cluster.certificate-authority") &&
                     gone.error.contains(dir.filePath("conf/certs/missing.crt")),
                 qPrintable(gone.error));
        // No CA given: the system's roots, as kubectl.
        const KubeConfig::Result system =
            KubeConfig::resolve(target("k8s://system"), env, options());
        QVERIFY2(system.ok(), qPrintable(system.error));
        QVERIFY(!system.access.ssl.caCertificates().contains(ca));
    }

    void insecureIsRefusedUnlessAllowed()
    {
        QTemporaryDir dir;
        write(dir.filePath("config"),
              "current-context: x\nclusters:\n- name: loose\n  cluster:\n"
              "    server: https://k.example\n    insecure-skip-tls-verify: true\n"
              "- name: both\n  cluster:\n    server: https://k.example\n"
              "    insecure-skip-tls-verify: true\n    certificate-authority-data: " +
                  m_pki->read("ca.crt").toBase64() +
                  "\n- name: plain\n  cluster:\n    server: http://k.example:8080\n"
                  "- name: proxy\n  cluster:\n    server: http://127.0.0.1:8001\n"
                  "contexts:\n- {name: x, context: {cluster: loose}}\n"
                  "- {name: both, context: {cluster: both}}\n"
                  "- {name: plain, context: {cluster: plain}}\n"
                  "- {name: proxy, context: {cluster: proxy}}\n");
        const QProcessEnvironment env = environment(dir.path(), dir.filePath("config"));
        KubeConfig::Result r = KubeConfig::resolve(target("k8s://"), env, options());
        QVERIFY(!r.ok());
        QVERIFY2(r.error.startsWith(QStringLiteral("kubeconfig %1: clusters[\"loose\"].cluster."
                                                   "insecure-skip-tls-verify is true")
                                        .arg(dir.filePath("config"))),
                 qPrintable(r.error));

        KubeConfig::Options allowed = options();
        allowed.allowInsecure = true;
        r = KubeConfig::resolve(target("k8s://"), env, allowed);
        QVERIFY2(r.ok(), qPrintable(r.error));
        QVERIFY(r.access.insecure);
        QCOMPARE(r.access.ssl.peerVerifyMode(), QSslSocket::VerifyNone);

        r = KubeConfig::resolve(target("k8s://both"), env, allowed);
        QVERIFY2(r.error.contains(QStringLiteral("together with a certificate authority")),
                 qPrintable(r.error));
        // Plain http only to the loopback (kubectl proxy) unless allowed.
        r = KubeConfig::resolve(target("k8s://plain"), env, options());
        QVERIFY2(r.error.contains(QStringLiteral("plain http:// to another host")),
                 qPrintable(r.error));
        QVERIFY(KubeConfig::resolve(target("k8s://plain"), env, allowed).ok());
        QVERIFY(KubeConfig::resolve(target("k8s://proxy"), env, options()).ok());
    }

    // token, tokenFile relative to the kubeconfig (and re-read when it changes), both (the file
    // wins, as in client-go), and a tokenFile that is not there (the key is named).
    void tokenAndTokenFile()
    {
        QTemporaryDir dir;
        write(dir.filePath("k/tokens/t"), "file-token\n");
        write(dir.filePath("k/config"),
              "clusters:\n" + cluster("c", "https://k.example") +
                  "users:\n- {name: plain, user: {token: inline-token}}\n"
                  "- {name: file, user: {tokenFile: tokens/t}}\n"
                  "- {name: both, user: {token: inline-token, tokenFile: tokens/t}}\n"
                  "- {name: gone, user: {tokenFile: tokens/none}}\n"
                  "contexts:\n- {name: plain, context: {cluster: c, user: plain}}\n"
                  "- {name: file, context: {cluster: c, user: file}}\n"
                  "- {name: both, context: {cluster: c, user: both}}\n"
                  "- {name: gone, context: {cluster: c, user: gone}}\n");
        const QProcessEnvironment env = environment(dir.path(), dir.filePath("k/config"));
        KubeConfig::Result r = KubeConfig::resolve(target("k8s://plain"), env, options());
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(fetched(*r.access.credentials).token, QByteArray("inline-token"));
        QVERIFY(!r.access.credentials->canRefresh());

        r = KubeConfig::resolve(target("k8s://both"), env, options());
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(fetched(*r.access.credentials).token, QByteArray("file-token"));

        r = KubeConfig::resolve(target("k8s://file"), env, options());
        QVERIFY2(r.ok(), qPrintable(r.error));
        KubeCredentials &c = *r.access.credentials;
        QCOMPARE(fetched(c).token, QByteArray("file-token"));
        write(dir.filePath("k/tokens/t"), "rotated-token-longer\n");
        QCOMPARE(fetched(c).token, QByteArray("rotated-token-longer"));
        QVERIFY(!r.access.description().contains(QStringLiteral("token")));

        r = KubeConfig::resolve(target("k8s://gone"), env, options());
        QVERIFY(!r.ok());
        QVERIFY2(r.error.contains(QStringLiteral("users[\"gone\"].user.tokenFile in %1")
                                      .arg(dir.filePath("k/config"))) &&
                     r.error.contains(dir.filePath("k/tokens/none")),
                 qPrintable(r.error));
    }

    void clientCertificates()
    {
        QTemporaryDir dir;
        const QByteArray certPem = m_pki->read("alice.crt");
        const QByteArray keyPem = m_pki->read("alice.key");
        write(dir.filePath("alice.crt"), certPem);
        write(dir.filePath("alice.key"), keyPem);
        write(dir.filePath("config"),
              "clusters:\n" + cluster("c", "https://k.example") +
                  "users:\n- name: files\n  user:\n    client-certificate: alice.crt\n"
                  "    client-key: alice.key\n"
                  "- name: data\n  user:\n    client-certificate-data: " +
                  certPem.toBase64() + "\n    client-key-data: " + keyPem.toBase64() +
                  "\n- name: half\n  user:\n    client-certificate: alice.crt\n"
                  "- name: notakey\n  user:\n    client-certificate: alice.crt\n"
                  "    client-key: alice.crt\n"
                  "contexts:\n- {name: files, context: {cluster: c, user: files}}\n"
                  "- {name: data, context: {cluster: c, user: data}}\n"
                  "- {name: half, context: {cluster: c, user: half}}\n"
                  "- {name: notakey, context: {cluster: c, user: notakey}}\n");
        const QProcessEnvironment env = environment(dir.path(), dir.filePath("config"));
        const QSslCertificate alice = QSslCertificate::fromData(certPem).value(0);
        for (const char *name : {"k8s://files", "k8s://data"}) {
            const KubeConfig::Result r = KubeConfig::resolve(target(name), env, options());
            QVERIFY2(r.ok(), qPrintable(r.error));
            QCOMPARE(r.access.ssl.localCertificate(), alice);
            QVERIFY(!r.access.ssl.privateKey().isNull());
            QCOMPARE(r.access.credentials->kind(), KubeCredentials::Kind::None);
        }
        KubeConfig::Result r = KubeConfig::resolve(target("k8s://half"), env, options());
        QVERIFY2(r.error.contains(QStringLiteral("users[\"half\"].user has a client certificate "
                                                 "without its key")),
                 qPrintable(r.error));
        r = KubeConfig::resolve(target("k8s://notakey"), env, options());
        QVERIFY2(r.error.contains(QStringLiteral("users[\"notakey\"].user.client-key holds no "
                                                 "PEM private key")),
                 qPrintable(r.error));
    }

    // An exec plugin, a real shell script: its args, env and KUBERNETES_EXEC_INFO reach it; its
    // answer is cached until the expiry it gives; invalidate() runs it again.
    void execPlugin()
    {
        QTemporaryDir dir;
        const QString runs = dir.filePath("runs");
        write(dir.filePath("bin/cred.sh"),
              "#!/bin/sh\n"
              "echo run >> \"$RUNS\"\n"
              "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$RUNS.info\"\n"
              "printf '%s\\n' \"$@\" > \"$RUNS.args\"\n"
              "n=$(wc -l < \"$RUNS\")\n"
              "printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
              "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"exec-token-%s\","
              "\"expirationTimestamp\":\"%s\"}}' \"$n\" \"$EXPIRY\"\n",
              true);
        const QByteArray config =
            "current-context: x\nclusters:\n- name: c\n  cluster:\n"
            "    server: https://k.example:6443\n    tls-server-name: kube.test\n"
            "    certificate-authority-data: " +
            m_pki->read("ca.crt").toBase64() +
            "\nusers:\n- name: u\n  user:\n    exec:\n"
            "      apiVersion: client.authentication.k8s.io/v1\n"
            "      command: ./bin/cred.sh\n      args: [--cluster, one two]\n"
            "      interactiveMode: Never\n      provideClusterInfo: true\n"
            "      env:\n      - {name: RUNS, value: " +
            runs.toUtf8() + "}\n      - {name: EXPIRY, value: 'EXPIRY_AT'}\n" +
            "contexts:\n- {name: x, context: {cluster: c, user: u}}\n";

        // Valid for an hour: the second fetch is served from the cache.
        const QString later = QDateTime::currentDateTimeUtc().addSecs(3600).toString(Qt::ISODate);
        write(dir.filePath("config"), QByteArray(config).replace("EXPIRY_AT", later.toUtf8()));
        const QProcessEnvironment env = environment(dir.path(), dir.filePath("config"));
        KubeConfig::Result r = KubeConfig::resolve(target("k8s://"), env, options());
        QVERIFY2(r.ok(), qPrintable(r.error));
        KubeCredentials &c = *r.access.credentials;
        QCOMPARE(c.kind(), KubeCredentials::Kind::Exec);
        KubeCredential k = fetched(c);
        QVERIFY2(k.ok(), qPrintable(k.error));
        QCOMPARE(k.token, QByteArray("exec-token-1"));
        QCOMPARE(k.expiry.toString(Qt::ISODate), later);
        QCOMPARE(fetched(c).token, QByteArray("exec-token-1"));
        QCOMPARE(read(runs).count('\n'), 1);
        QCOMPARE(read(runs + ".args"), QByteArray("--cluster\none two\n"));
        const QJsonObject info = QJsonDocument::fromJson(read(runs + ".info")).object();
        QCOMPARE(info.value(u"apiVersion").toString(),
                 QStringLiteral("client.authentication.k8s.io/v1"));
        QCOMPARE(info.value(u"kind").toString(), QStringLiteral("ExecCredential"));
        const QJsonObject spec = info.value(u"spec").toObject();
        QCOMPARE(spec.value(u"interactive").toBool(true), false);
        QCOMPARE(spec.value(u"cluster").toObject().value(u"server").toString(),
                 QStringLiteral("https://k.example:6443"));
        QCOMPARE(spec.value(u"cluster").toObject().value(u"tls-server-name").toString(),
                 QStringLiteral("kube.test"));
        QCOMPARE(spec.value(u"cluster").toObject().value(u"certificate-authority-data").toString(),
                 QString::fromLatin1(m_pki->read("ca.crt").toBase64()));

        // After a 401 the caller invalidates: the plugin runs again.
        c.invalidate();
        QCOMPARE(fetched(c).token, QByteArray("exec-token-2"));
        QCOMPARE(read(runs).count('\n'), 2);

        // Already expired: every fetch runs the plugin.
        const QString past = QDateTime::currentDateTimeUtc().addSecs(-60).toString(Qt::ISODate);
        write(dir.filePath("config"), QByteArray(config).replace("EXPIRY_AT", past.toUtf8()));
        r = KubeConfig::resolve(target("k8s://"), env, options());
        QVERIFY2(r.ok(), qPrintable(r.error));
        QCOMPARE(fetched(*r.access.credentials).token, QByteArray("exec-token-3"));
        QCOMPARE(fetched(*r.access.credentials).token, QByteArray("exec-token-4"));
    }

    // A plugin that fails, hangs, answers garbage or is not there: a clear error, and a hung
    // one is stopped at the deadline.
    void execPluginFailures_data()
    {
        QTest::addColumn<QByteArray>("script");
        QTest::addColumn<QString>("expected");
        QTest::newRow("fails") << QByteArray("echo 'token expired, run: login' >&2\nexit 3\n")
                               << QStringLiteral("exited with 3: token expired, run: login");
        QTest::newRow("hangs") << QByteArray("exec sleep 30\n")
                               << QStringLiteral("gave no answer within 0.5 s; it was stopped");
        QTest::newRow("garbage") << QByteArray("echo not json\n")
                                 << QStringLiteral("did not write an ExecCredential as JSON");
        QTest::newRow("wrong version")
            << QByteArray("echo '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\","
                          "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"t\"}}'\n")
            << QStringLiteral("answered with apiVersion 'client.authentication.k8s.io/v1beta1', "
                              "but the kubeconfig asks for 'client.authentication.k8s.io/v1'");
        QTest::newRow("empty status")
            << QByteArray("echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
                          "\"kind\":\"ExecCredential\",\"status\":{}}'\n")
            << QStringLiteral("answered without a status");
        QTest::newRow("missing") << QByteArray()
                                 << QStringLiteral("the credential plugin 'no-such-plugin' "
                                                   "(users[\"u\"].user.exec in %1) was not found "
                                                   "on PATH. Install it from example.com");
    }

    void execPluginFailures()
    {
        QFETCH(QByteArray, script);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        write(dir.filePath("plugin.sh"), "#!/bin/sh\n" + script, true);
        const QByteArray command =
            script.isEmpty() ? QByteArray("no-such-plugin") : dir.filePath("plugin.sh").toUtf8();
        write(dir.filePath("config"),
              "current-context: x\nclusters:\n" + cluster("c", "https://k.example") +
                  "users:\n- name: u\n  user:\n    exec:\n"
                  "      apiVersion: client.authentication.k8s.io/v1\n      command: " +
                  command + "\n      installHint: Install it from example.com\n" +
                  "contexts:\n- {name: x, context: {cluster: c, user: u}}\n");
        KubeConfig::Options o = options();
        o.execTimeoutMs = 500;
        const KubeConfig::Result r = KubeConfig::resolve(
            target("k8s://"), environment(dir.path(), dir.filePath("config")), o);
        QVERIFY2(r.ok(), qPrintable(r.error));
        const KubeCredential k = fetched(*r.access.credentials);
        QVERIFY(!k.ok());
        if (expected.contains(QStringLiteral("%1")))
            expected = expected.arg(dir.filePath("config"));
        QVERIFY2(k.error.contains(expected), qPrintable(k.error));
        QVERIFY(k.token.isEmpty());
    }

    // Inside a pod: the service account's folder, the namespace from its file (or the
    // target's), and a token that rotates.
    void inCluster()
    {
        QTemporaryDir dir;
        const QString sa = dir.filePath("serviceaccount");
        write(sa + "/token", "sa-token-1");
        write(sa + "/ca.crt", m_pki->read("ca.crt"));
        write(sa + "/namespace", "sandboxes\n");
        QProcessEnvironment env = environment(dir.path(), dir.filePath("no-kubeconfig"));
        env.insert(QStringLiteral("KUBERNETES_SERVICE_HOST"), QStringLiteral("10.96.0.1"));
        env.insert(QStringLiteral("KUBERNETES_SERVICE_PORT"), QStringLiteral("443"));

        // Not in a cluster without the folder.
        KubeConfig::Result r = KubeConfig::resolve(target("k8s://"), env, options());
        QVERIFY(!r.ok());
        QVERIFY2(r.error.contains(QStringLiteral("not running inside a cluster")),
                 qPrintable(r.error));

        r = KubeConfig::resolve(target("k8s://"), env, options(sa));
        QVERIFY2(r.ok(), qPrintable(r.error));
        QVERIFY(r.access.inCluster);
        QCOMPARE(r.access.server.toString(), QStringLiteral("https://10.96.0.1:443"));
        QCOMPARE(r.access.namespaceName, QStringLiteral("sandboxes"));
        QCOMPARE(r.access.ssl.caCertificates(), QSslCertificate::fromData(m_pki->read("ca.crt")));
        QCOMPARE(r.access.description(),
                 QStringLiteral("the in-cluster service account (https://10.96.0.1:443, "
                                "namespace sandboxes)"));
        KubeCredentials &c = *r.access.credentials;
        QCOMPARE(fetched(c).token, QByteArray("sa-token-1"));
        write(sa + "/token", "sa-token-22");
        QCOMPARE(fetched(c).token, QByteArray("sa-token-22"));

        QCOMPARE(KubeConfig::resolve(target("k8s:///other"), env, options(sa)).access.namespaceName,
                 QStringLiteral("other"));
        // A named context wants a kubeconfig.
        r = KubeConfig::resolve(target("k8s://prod"), env, options(sa));
        QVERIFY(!r.ok());
    }

    void badFilesAreNamed_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("expected");
        QTest::newRow("yaml") << QByteArray("clusters: [\n  - name: a\n")
                              << QStringLiteral("kubeconfig %1: not valid YAML (line");
        QTest::newRow("not a map")
            << QByteArray("- a\n- b\n") << QStringLiteral("kubeconfig %1: not a kubeconfig");
        QTest::newRow("clusters not a list") << QByteArray("clusters: {a: b}\n")
                                             << QStringLiteral("kubeconfig %1: clusters must "
                                                               "be a list");
        QTest::newRow("duplicate")
            << QByteArray("clusters:\n- {name: a, cluster: {server: https://x}}\n"
                          "- {name: a, cluster: {server: https://y}}\n")
            << QStringLiteral("kubeconfig %1: clusters names \"a\" twice");
        QTest::newRow("no server")
            << QByteArray("current-context: x\nclusters:\n- {name: c, cluster: {}}\n"
                          "contexts:\n- {name: x, context: {cluster: c}}\n")
            << QStringLiteral("kubeconfig %1: clusters[\"c\"].cluster.server is missing");
        QTest::newRow("unknown user")
            << QByteArray("current-context: x\nclusters:\n- {name: c, cluster: {server: "
                          "https://k}}\ncontexts:\n- {name: x, context: {cluster: c, user: "
                          "bob}}\n")
            << QStringLiteral("kubeconfig %1: contexts[\"x\"].context.user names \"bob\", which "
                              "no kubeconfig file defines");
        QTest::newRow("bad ca data")
            << QByteArray("current-context: x\nclusters:\n- {name: c, cluster: {server: "
                          "https://k, certificate-authority-data: '!!notbase64'}}\ncontexts:\n- "
                          "{name: x, context: {cluster: c}}\n")
            << QStringLiteral("kubeconfig %1: clusters[\"c\"].cluster.certificate-authority-data "
                              "is not base64");
        QTest::newRow("auth provider")
            << QByteArray("current-context: x\nclusters:\n- {name: c, cluster: {server: "
                          "https://k}}\nusers:\n- {name: u, user: {auth-provider: {name: "
                          "gcp}}}\ncontexts:\n- {name: x, context: {cluster: c, user: u}}\n")
            << QStringLiteral("kubeconfig %1: users[\"u\"].user.auth-provider is set");
        QTest::newRow("exec v1alpha1")
            << QByteArray("current-context: x\nclusters:\n- {name: c, cluster: {server: "
                          "https://k}}\nusers:\n- {name: u, user: {exec: {apiVersion: "
                          "client.authentication.k8s.io/v1alpha1, command: x}}}\ncontexts:\n- "
                          "{name: x, context: {cluster: c, user: u}}\n")
            << QStringLiteral("kubeconfig %1: users[\"u\"].user.exec.apiVersion is "
                              "'client.authentication.k8s.io/v1alpha1'");
        QTest::newRow("no current context")
            << QByteArray("clusters:\n- {name: c, cluster: {server: https://k}}\n")
            << QStringLiteral("kubeconfig %1 sets no current-context");
    }

    void badFilesAreNamed()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        write(dir.filePath("config"), content);
        const KubeConfig::Result r = KubeConfig::resolve(
            target("k8s://"), environment(dir.path(), dir.filePath("config")), options());
        QVERIFY(!r.ok());
        QVERIFY2(r.error.startsWith(expected.arg(dir.filePath("config"))), qPrintable(r.error));
    }

private:
    QTemporaryDir m_dir;
    KubePki *m_pki = nullptr;
};

QTEST_GUILESS_MAIN(tst_KubeConfig)
#include "tst_kubeconfig.moc"
