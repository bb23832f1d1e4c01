#include "enginelocator.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace {
const QString kXdg = QStringLiteral("/run/user/1000");
const QString kRootless = QStringLiteral("/run/user/1000/podman/podman.sock");
const QString kPodman = QStringLiteral("/run/podman/podman.sock");
const QString kDocker = QStringLiteral("/var/run/docker.sock");

QProcessEnvironment environment(const QStringList &assignments)
{
    QProcessEnvironment env;
    // Never the Docker config of the user running the tests.
    env.insert(QStringLiteral("DOCKER_CONFIG"), QStringLiteral("/nonexistent"));
    for (const QString &a : assignments) {
        const qsizetype eq = a.indexOf(u'=');
        env.insert(a.left(eq), a.mid(eq + 1));
    }
    return env;
}

bool noSocket(const QString &)
{
    return false;
}

void writeFile(const QString &path, const QByteArray &bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

// A Docker config folder with contexts in it, made by the Docker CLI itself when it is installed
// (so that the layout read is the CLI's, not this test's idea of it), else written the same way.
class DockerConfig
{
public:
    explicit DockerConfig(const QString &dir) : m_dir(dir) {}

    bool usesCli() const { return !docker().isEmpty() && !openssl().isEmpty(); }

    // A CA, certificate and key the CLI accepts (it checks that they are PEM).
    void makeTlsFiles(const QString &dir)
    {
        QDir().mkpath(dir);
        if (openssl().isEmpty()) {
            for (const char *name : {"ca.pem", "cert.pem", "key.pem"})
                writeFile(dir + u'/' + QLatin1String(name), "-----BEGIN X-----\n");
            return;
        }
        QProcess p;
        p.start(openssl(),
                {QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"),
                 QStringLiteral("rsa:2048"), QStringLiteral("-nodes"), QStringLiteral("-keyout"),
                 dir + QStringLiteral("/key.pem"), QStringLiteral("-out"),
                 dir + QStringLiteral("/cert.pem"), QStringLiteral("-subj"),
                 QStringLiteral("/CN=test"), QStringLiteral("-days"), QStringLiteral("1")});
        QVERIFY(p.waitForFinished(60000));
        QCOMPARE(p.exitCode(), 0);
        QVERIFY(QFile::copy(dir + QStringLiteral("/cert.pem"), dir + QStringLiteral("/ca.pem")));
    }

    // `docker context create NAME --docker host=HOST[,ca=..,cert=..,key=..][,skip-tls-verify]`
    void create(const QString &name, const QString &host, const QString &tlsDir = {},
                bool skipVerify = false)
    {
        if (usesCli()) {
            QString endpoint = QStringLiteral("host=") + host;
            if (!tlsDir.isEmpty())
                endpoint +=
                    QStringLiteral(",ca=%1/ca.pem,cert=%1/cert.pem,key=%1/key.pem").arg(tlsDir);
            if (skipVerify)
                endpoint += QStringLiteral(",skip-tls-verify=true");
            run({QStringLiteral("context"), QStringLiteral("create"), name,
                 QStringLiteral("--docker"), endpoint});
            return;
        }
        const QString hash = EngineLocator::contextDirName(name);
        const QJsonObject meta{
            {QStringLiteral("Name"), name},
            {QStringLiteral("Metadata"), QJsonObject()},
            {QStringLiteral("Endpoints"),
             QJsonObject{{QStringLiteral("docker"),
                          QJsonObject{{QStringLiteral("Host"), host},
                                      {QStringLiteral("SkipTLSVerify"), skipVerify}}}}}};
        writeFile(m_dir + QStringLiteral("/contexts/meta/") + hash + QStringLiteral("/meta.json"),
                  QJsonDocument(meta).toJson());
        if (!tlsDir.isEmpty())
            for (const char *file : {"ca.pem", "cert.pem", "key.pem"})
                QVERIFY(QFile::copy(tlsDir + u'/' + QLatin1String(file),
                                    m_dir + QStringLiteral("/contexts/tls/") + hash +
                                        QStringLiteral("/docker/") + QLatin1String(file)));
    }

    // `docker context use NAME`: the currentContext of config.json.
    void use(const QString &name)
    {
        if (usesCli()) {
            run({QStringLiteral("context"), QStringLiteral("use"), name});
            return;
        }
        writeFile(m_dir + QStringLiteral("/config.json"),
                  QJsonDocument(QJsonObject{{QStringLiteral("currentContext"), name}}).toJson());
    }

private:
    static QString docker() { return QStandardPaths::findExecutable(QStringLiteral("docker")); }
    static QString openssl() { return QStandardPaths::findExecutable(QStringLiteral("openssl")); }

    void run(const QStringList &args)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("DOCKER_CONFIG"), m_dir);
        p.setProcessEnvironment(env);
        p.start(docker(), args);
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    }

    QString m_dir;
};
} // namespace

class tst_EngineLocator : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void locate_data();
    void locate();
    void socketPathFromUrl_data();
    void socketPathFromUrl();
    void tlsFromTheEnvironment();
    void tlsFromTheCommandLine();
    void insecureTcp();
    void tlsNeedsTheEnginesCa();
    void severalEngines();
    void contextsAsTheDockerCliWritesThem();
    void contextPrecedence();
};

void tst_EngineLocator::locate_data()
{
    QTest::addColumn<QString>("engine"); // --engine
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<QStringList>("existing"); // sockets the fake file system has
    QTest::addColumn<QString>("url");          // the address chosen (url())
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("error"); // a part of the error
    QTest::addColumn<QStringList>("tried");

    const QStringList all = {kRootless, kPodman, kDocker};
    const QStringList everyVariable = {"DOCKER_HOST=unix:///docker-host.sock",
                                       "CONTAINER_HOST=unix:///container-host.sock",
                                       "XDG_RUNTIME_DIR=" + kXdg, "DOCKER_CONFIG=/nonexistent"};

    // An address the user named is used as given: no probing, no fallback.
    QTest::newRow("--engine first")
        << "unix:///tmp/engine.sock" << everyVariable << all << "unix:///tmp/engine.sock"
        << "--engine" << QString() << QStringList();
    QTest::newRow("--engine bare path")
        << "/tmp/engine.sock" << QStringList() << QStringList() << "unix:///tmp/engine.sock"
        << "--engine" << QString() << QStringList();
    QTest::newRow("--engine plain tcp to loopback")
        << "tcp://127.0.0.1:2375" << everyVariable << all << "tcp://127.0.0.1:2375"
        << "--engine" << QString() << QStringList();
    QTest::newRow("--engine plain tcp elsewhere refused")
        << "tcp://build:2375" << everyVariable << all << "tcp://build:2375"
        << "--engine"
        << "plain TCP to another host is refused" << QStringList();
    QTest::newRow("--engine ssh") << "ssh://user@host" << QStringList() << all << "ssh://user@host"
                                  << "--engine" << QString() << QStringList();
    QTest::newRow("--engine relative path refused")
        << "docker.sock" << QStringList() << all << QString() << "--engine"
        << "--engine: 'docker.sock' is not an engine address" << QStringList();
    QTest::newRow("--engine npipe refused")
        << "npipe:////./pipe/docker_engine" << QStringList() << all << QString() << "--engine"
        << "npipe:// is not supported" << QStringList();

    QTest::newRow("DOCKER_HOST before CONTAINER_HOST")
        << QString() << everyVariable << all << "unix:///docker-host.sock"
        << "DOCKER_HOST" << QString() << QStringList();
    QTest::newRow("DOCKER_HOST bare path")
        << QString() << QStringList{"DOCKER_HOST=/srv/docker.sock"} << QStringList()
        << "unix:///srv/docker.sock"
        << "DOCKER_HOST" << QString() << QStringList();
    QTest::newRow("DOCKER_HOST plain tcp elsewhere refused, no fallback")
        << QString() << QStringList{"DOCKER_HOST=tcp://build:2376", "XDG_RUNTIME_DIR=" + kXdg}
        << all << "tcp://build:2376"
        << "DOCKER_HOST"
        << "DOCKER_HOST is tcp://build:2376: plain TCP to another host is refused" << QStringList();
    QTest::newRow("DOCKER_HOST with DOCKER_TLS only refused")
        << QString() << QStringList{"DOCKER_HOST=tcp://build:2376", "DOCKER_TLS=1"} << all
        << QString() << "DOCKER_HOST"
        << "DOCKER_TLS without DOCKER_TLS_VERIFY" << QStringList();
    QTest::newRow("DOCKER_HOST ssh")
        << QString() << QStringList{"DOCKER_HOST=ssh://me@build:2222/run/d.sock"} << all
        << "ssh://me@build:2222/run/d.sock"
        << "DOCKER_HOST" << QString() << QStringList();
    QTest::newRow("DOCKER_HOST unix:// without a path")
        << QString() << QStringList{"DOCKER_HOST=unix://"} << all << QString() << "DOCKER_HOST"
        << "unix:// needs an absolute path" << QStringList();
    QTest::newRow("empty DOCKER_HOST ignored")
        << QString()
        << QStringList{"DOCKER_HOST=", "CONTAINER_HOST=unix:///c.sock",
                       "DOCKER_CONFIG=/nonexistent"}
        << all << "unix:///c.sock"
        << "CONTAINER_HOST" << QString() << QStringList();
    QTest::newRow("CONTAINER_HOST before sockets")
        << QString()
        << QStringList{"CONTAINER_HOST=unix://" + kRootless, "XDG_RUNTIME_DIR=/x",
                       "DOCKER_CONFIG=/nonexistent"}
        << all << "unix://" + kRootless << "CONTAINER_HOST" << QString() << QStringList();
    QTest::newRow("CONTAINER_HOST ssh (Podman)")
        << QString()
        << QStringList{"CONTAINER_HOST=ssh://core@vm:2222/run/user/1000/podman/podman.sock",
                       "DOCKER_CONFIG=/nonexistent"}
        << all << "ssh://core@vm:2222/run/user/1000/podman/podman.sock"
        << "CONTAINER_HOST" << QString() << QStringList();
    QTest::newRow("CONTAINER_HOST plain tcp elsewhere refused")
        << QString() << QStringList{"CONTAINER_HOST=tcp://h:1", "DOCKER_CONFIG=/nonexistent"} << all
        << "tcp://h:1"
        << "CONTAINER_HOST"
        << "CONTAINER_HOST is tcp://h:1: plain TCP to another host is refused" << QStringList();
    QTest::newRow("DOCKER_CONTEXT default is the usual order")
        << QString()
        << QStringList{"DOCKER_CONTEXT=default", "CONTAINER_HOST=unix:///c.sock",
                       "DOCKER_CONFIG=/nonexistent"}
        << all << "unix:///c.sock"
        << "DOCKER_CONTEXT (context default), CONTAINER_HOST" << QString() << QStringList();
    QTest::newRow("DOCKER_CONTEXT missing is an error, no fallback")
        << QString() << QStringList{"DOCKER_CONTEXT=nope", "DOCKER_CONFIG=/nonexistent"} << all
        << QString() << "DOCKER_CONTEXT (context nope)"
        << "no Docker context 'nope' (/nonexistent/contexts/meta/" << QStringList();

    const QStringList local = {"XDG_RUNTIME_DIR=" + kXdg, "DOCKER_CONFIG=/nonexistent"};
    QTest::newRow("rootless Podman first")
        << QString() << local << all << "unix://" + kRootless << "rootless Podman" << QString()
        << QStringList{kRootless};
    QTest::newRow("then rootful Podman")
        << QString() << local << QStringList{kPodman, kDocker} << "unix://" + kPodman << "Podman"
        << QString() << QStringList{kRootless, kPodman};
    QTest::newRow("then Docker") << QString() << local << QStringList{kDocker}
                                 << "unix://" + kDocker << "Docker" << QString()
                                 << QStringList{kRootless, kPodman, kDocker};
    QTest::newRow("no XDG_RUNTIME_DIR")
        << QString() << QStringList{"DOCKER_CONFIG=/nonexistent"} << all << "unix://" + kPodman
        << "Podman" << QString() << QStringList{kPodman};
    QTest::newRow("rootless socket of another user ignored")
        << QString() << QStringList{"DOCKER_CONFIG=/nonexistent"} << QStringList{kRootless, kDocker}
        << "unix://" + kDocker << "Docker" << QString() << QStringList{kPodman, kDocker};
    QTest::newRow("nothing found")
        << QString() << local << QStringList() << "unix://" + kDocker << "default" << QString()
        << QStringList{kRootless, kPodman, kDocker};
}

void tst_EngineLocator::locate()
{
    QFETCH(QString, engine);
    QFETCH(QStringList, env);
    QFETCH(QStringList, existing);
    QFETCH(QString, url);
    QFETCH(QString, source);
    QFETCH(QString, error);
    QFETCH(QStringList, tried);

    QStringList probed;
    const auto exists = [&](const QString &path) {
        probed.append(path);
        return existing.contains(path);
    };
    const EngineLocator::Result r = EngineLocator::locate(engine, environment(env), exists);
    QCOMPARE(r.address.url(), url);
    QCOMPARE(r.socketPath,
             r.address.scheme == EngineAddress::Scheme::Unix ? r.address.socketPath : QString());
    QCOMPARE(r.source, source);
    if (error.isEmpty())
        QCOMPARE(r.error, QString());
    else
        QVERIFY2(r.error.contains(error), qPrintable(r.error));
    QCOMPARE(r.ok(), error.isEmpty());
    QCOMPARE(r.tried, tried);
    QCOMPARE(probed, tried); // each candidate probed once, in order, and nothing else
}

void tst_EngineLocator::socketPathFromUrl_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("path");

    QTest::newRow("unix url") << "unix:///var/run/docker.sock"
                              << "/var/run/docker.sock";
    QTest::newRow("bare path") << "/run/podman/podman.sock"
                               << "/run/podman/podman.sock";
    QTest::newRow("unix url with spaces") << "unix:///tmp/my dir/e.sock"
                                          << "/tmp/my dir/e.sock";
    QTest::newRow("tcp") << "tcp://localhost:2375" << QString();
    QTest::newRow("http") << "http://localhost:2375" << QString();
    QTest::newRow("npipe") << "npipe:////./pipe/docker_engine" << QString();
    QTest::newRow("relative path") << "docker.sock" << QString();
    QTest::newRow("unix without path") << "unix://" << QString();
    QTest::newRow("empty") << QString() << QString();
}

void tst_EngineLocator::socketPathFromUrl()
{
    QFETCH(QString, url);
    QFETCH(QString, path);

    QCOMPARE(EngineLocator::socketPathFromUrl(url), path);
}

void tst_EngineLocator::tlsFromTheEnvironment()
{
    QTemporaryDir certs;
    QVERIFY(certs.isValid());
    for (const char *name : {"ca.pem", "cert.pem", "key.pem"})
        writeFile(certs.filePath(QLatin1String(name)), "pem");

    // DOCKER_TLS_VERIFY with DOCKER_CERT_PATH: TLS, with that folder's files.
    EngineLocator::Result r = EngineLocator::locate(
        QString(),
        environment({"DOCKER_HOST=tcp://build.lan:2376", "DOCKER_TLS_VERIFY=1",
                     "DOCKER_CERT_PATH=" + certs.path()}),
        noSocket);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.address.tls);
    QCOMPARE(r.address.caFile, certs.filePath("ca.pem"));
    QCOMPARE(r.address.certFile, certs.filePath("cert.pem"));
    QCOMPARE(r.address.keyFile, certs.filePath("key.pem"));
    QCOMPARE(r.address.display(), QStringLiteral("tcp://build.lan:2376 (TLS)"));

    // Without DOCKER_CERT_PATH: the Docker config folder (DOCKER_CONFIG), as for the CLI.
    r = EngineLocator::locate(QString(),
                              environment({"DOCKER_HOST=tcp://build.lan", "DOCKER_TLS_VERIFY=1",
                                           "DOCKER_CONFIG=" + certs.path()}),
                              noSocket);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.address.caFile, certs.filePath("ca.pem"));
    QCOMPARE(r.address.url(), QStringLiteral("tcp://build.lan:2376")); // TLS's default port

    // Files that are not there are left out (no client certificate).
    QVERIFY(QFile::remove(certs.filePath("cert.pem")));
    QVERIFY(QFile::remove(certs.filePath("key.pem")));
    r = EngineLocator::locate(
        QString(),
        environment({"DOCKER_HOST=tcp://build.lan:2376", "DOCKER_TLS_VERIFY=1",
                     "DOCKER_CERT_PATH=" + certs.path()}),
        noSocket);
    QVERIFY(r.ok());
    QCOMPARE(r.address.caFile, certs.filePath("ca.pem"));
    QCOMPARE(r.address.certFile, QString());

    // --engine tcp:// without --tls-* follows DOCKER_TLS_VERIFY too, like docker -H.
    r = EngineLocator::locate(
        QStringLiteral("tcp://other:2376"),
        environment({"DOCKER_TLS_VERIFY=1", "DOCKER_CERT_PATH=" + certs.path()}), noSocket);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.address.tls);
    QCOMPARE(r.source, QStringLiteral("--engine"));
}

void tst_EngineLocator::tlsFromTheCommandLine()
{
    EngineLocator::Options o;
    o.engines = {QStringLiteral("tcp://build.lan:2376"), QStringLiteral("unix:///x.sock")};
    o.tlsCa = QStringLiteral("/certs/ca.pem");
    o.tlsCert = QStringLiteral("/certs/cert.pem");
    o.tlsKey = QStringLiteral("/certs/key.pem");
    // The options win over the environment's TLS settings.
    const QList<EngineLocator::Result> all = EngineLocator::locateAll(
        o, environment({"DOCKER_TLS_VERIFY=1", "DOCKER_CERT_PATH=/elsewhere"}), noSocket);
    QCOMPARE(all.size(), 2);
    QVERIFY2(all[0].ok(), qPrintable(all[0].error));
    QVERIFY(all[0].address.tls);
    QCOMPARE(all[0].address.caFile, o.tlsCa);
    QCOMPARE(all[0].address.certFile, o.tlsCert);
    QCOMPARE(all[0].address.keyFile, o.tlsKey);
    // Only tcp:// takes them.
    QVERIFY(all[1].ok());
    QVERIFY(!all[1].address.tls);
    QCOMPARE(all[1].address.caFile, QString());
}

void tst_EngineLocator::insecureTcp()
{
    EngineLocator::Options o;
    o.engines = {QStringLiteral("tcp://10.0.0.5:2375"), QStringLiteral("tcp://localhost:2375"),
                 QStringLiteral("tcp://[::1]:2375")};
    QList<EngineLocator::Result> all = EngineLocator::locateAll(o, environment({}), noSocket);
    QVERIFY(all[0].error.contains(u"plain TCP to another host is refused"));
    QVERIFY(all[0].error.contains(u"--insecure-tcp"));
    QVERIFY2(all[1].ok(), qPrintable(all[1].error)); // loopback
    QVERIFY2(all[2].ok(), qPrintable(all[2].error));
    o.insecureTcp = true;
    all = EngineLocator::locateAll(o, environment({}), noSocket);
    QVERIFY2(all[0].ok(), qPrintable(all[0].error));
    QVERIFY(!all[0].address.tls);
}

void tst_EngineLocator::tlsNeedsTheEnginesCa()
{
    // A TLS folder with the client's certificate and key but no ca.pem: no trust root named, so
    // the engine is refused rather than checked against every CA this machine trusts.
    QTemporaryDir certs;
    QVERIFY(certs.isValid());
    for (const char *name : {"cert.pem", "key.pem"})
        writeFile(certs.filePath(QLatin1String(name)), "pem");
    EngineLocator::Result r = EngineLocator::locate(
        QString(),
        environment({"DOCKER_HOST=tcp://build.lan:2376", "DOCKER_TLS_VERIFY=1",
                     "DOCKER_CERT_PATH=" + certs.path()}),
        noSocket);
    QVERIFY(!r.ok());
    QVERIFY2(r.error.startsWith(QStringLiteral("DOCKER_HOST: tcp://build.lan:2376 (TLS) uses TLS "
                                               "but names no CA (no ca.pem in %1).")
                                    .arg(certs.path())),
             qPrintable(r.error));
    QVERIFY2(r.error.contains(u"the only trust root Code Sandbox accepts, so it will not connect"),
             qPrintable(r.error));
    QVERIFY2(r.error.contains(u"--tls-ca system"), qPrintable(r.error));

    // The same from the command line: a client certificate without --tls-ca.
    EngineLocator::Options o;
    o.engines = {QStringLiteral("tcp://build.lan:2376")};
    o.tlsCert = certs.filePath("cert.pem");
    o.tlsKey = certs.filePath("key.pem");
    r = EngineLocator::locate(o, environment({}), noSocket);
    QVERIFY2(r.error.contains(u"uses TLS but names no CA (--tls-ca was not given)"),
             qPrintable(r.error));

    // A context whose TLS folder has no ca.pem.
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString hash = EngineLocator::contextDirName(QStringLiteral("noca"));
    writeFile(dir.filePath("contexts/meta/" + hash + "/meta.json"),
              R"({"Name":"noca","Endpoints":{"docker":{"Host":"tcp://build.lan:2376"}}})");
    const QString tls = dir.filePath("contexts/tls/" + hash + "/docker");
    for (const char *name : {"cert.pem", "key.pem"})
        writeFile(tls + u'/' + QLatin1String(name), "pem");
    r = EngineLocator::locate(QStringLiteral("context:noca"),
                              environment({"DOCKER_CONFIG=" + dir.path()}), noSocket);
    QVERIFY2(r.error.contains(QStringLiteral("uses TLS but names no CA (the context has no ca.pem "
                                             "in %1)")
                                  .arg(tls)),
             qPrintable(r.error));

    // Asked for by name, this machine's store stands in for the CA.
    o.tlsCa = QLatin1String(EngineLocator::kSystemCa);
    r = EngineLocator::locate(o, environment({}), noSocket);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QVERIFY(r.address.tls);
    QVERIFY(r.address.systemCa);
    QCOMPARE(r.address.caFile, QString());
    QCOMPARE(r.address.display(), QStringLiteral("tcp://build.lan:2376 (TLS, system CAs)"));
}

void tst_EngineLocator::severalEngines()
{
    EngineLocator::Options o;
    o.engines = {QStringLiteral("/var/run/docker.sock"), QStringLiteral("ssh://a@b"),
                 QStringLiteral("context:nope"), QStringLiteral("unix:///var/run/docker.sock"),
                 QStringLiteral("tcp://127.0.0.1:1")};
    const QList<EngineLocator::Result> all =
        EngineLocator::locateAll(o, environment({"DOCKER_HOST=unix:///ignored.sock"}), noSocket);
    QCOMPARE(all.size(), 5); // one each, in order, the environment not asked
    QCOMPARE(all[0].address.url(), QStringLiteral("unix:///var/run/docker.sock"));
    QCOMPARE(all[1].address.url(), QStringLiteral("ssh://a@b"));
    QVERIFY(all[2].error.contains(u"no Docker context 'nope'"));
    QVERIFY2(all[3].error.contains(u"the same engine as --engine /var/run/docker.sock"),
             qPrintable(all[3].error));
    QVERIFY(all[4].ok());
    // The single-engine caller gets the first.
    QCOMPARE(EngineLocator::locate(o, environment({}), noSocket).address, all[0].address);
}

void tst_EngineLocator::contextsAsTheDockerCliWritesThem()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString config = dir.filePath("docker");
    DockerConfig docker(config);
    if (!docker.usesCli())
        qInfo("docker or openssl not installed: the contexts are written by the test");
    docker.makeTlsFiles(dir.filePath("certs"));
    docker.create(QStringLiteral("ci"), QStringLiteral("tcp://127.0.0.1:2376"),
                  dir.filePath("certs"));
    docker.create(QStringLiteral("loose"), QStringLiteral("tcp://build.lan:2376"),
                  dir.filePath("certs"), true);
    docker.create(QStringLiteral("remote"), QStringLiteral("ssh://root@build.lan:2222"));
    docker.create(QStringLiteral("plain"), QStringLiteral("tcp://build.lan:2375"));
    docker.create(QStringLiteral("local"), QStringLiteral("unix:///run/other.sock"));
    if (QTest::currentTestFailed())
        return;
    const QProcessEnvironment env = environment({"DOCKER_CONFIG=" + config});

    // The folder is named by the sha256 of the name (what the CLI wrote is where it is read).
    const QString hash = EngineLocator::contextDirName(QStringLiteral("ci"));
    QCOMPARE(hash,
             QStringLiteral("1b158839f8aa339e89bb50b1603e90ec68e0fd5565fe10a7cb32729fddf7070a"));
    QVERIFY(QFileInfo::exists(config + "/contexts/meta/" + hash + "/meta.json"));

    EngineLocator::Result r = EngineLocator::locate(QStringLiteral("context:ci"), env, noSocket);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.source, QStringLiteral("--engine context:ci"));
    QCOMPARE(r.address.url(), QStringLiteral("tcp://127.0.0.1:2376"));
    QVERIFY(r.address.tls);
    const QString tls = config + "/contexts/tls/" + hash + "/docker/";
    QCOMPARE(r.address.caFile, tls + "ca.pem");
    QCOMPARE(r.address.certFile, tls + "cert.pem");
    QCOMPARE(r.address.keyFile, tls + "key.pem");
    QCOMPARE(r.address.context, QStringLiteral("ci"));
    QCOMPARE(r.address.display(), QStringLiteral("context ci → tcp://127.0.0.1:2376 (TLS)"));

    r = EngineLocator::locate(QStringLiteral("context:loose"), env, noSocket);
    QVERIFY2(r.error.contains(u"SkipTLSVerify"), qPrintable(r.error));

    r = EngineLocator::locate(QStringLiteral("context:remote"), env, noSocket);
    QVERIFY2(r.ok(), qPrintable(r.error));
    QCOMPARE(r.address.url(), QStringLiteral("ssh://root@build.lan:2222"));

    r = EngineLocator::locate(QStringLiteral("context:plain"), env, noSocket);
    QVERIFY2(r.error.contains(u"plain TCP to another host is refused"), qPrintable(r.error));
    EngineLocator::Options insecure;
    insecure.engines = {QStringLiteral("context:plain")};
    insecure.insecureTcp = true;
    QVERIFY(EngineLocator::locate(insecure, env, noSocket).ok());

    r = EngineLocator::locate(QStringLiteral("context:local"), env, noSocket);
    QCOMPARE(r.socketPath, QStringLiteral("/run/other.sock"));

    r = EngineLocator::locate(QStringLiteral("context:bad name"), env, noSocket);
    QVERIFY2(r.error.contains(u"not a Docker context name"), qPrintable(r.error));
}

void tst_EngineLocator::contextPrecedence()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString config = dir.filePath("docker");
    DockerConfig docker(config);
    docker.create(QStringLiteral("current"), QStringLiteral("unix:///current.sock"));
    docker.create(QStringLiteral("chosen"), QStringLiteral("unix:///chosen.sock"));
    docker.use(QStringLiteral("current"));
    if (QTest::currentTestFailed())
        return;
    const auto where = [&](const QString &engine, const QStringList &vars) {
        const EngineLocator::Result r = EngineLocator::locate(
            engine, environment(QStringList{"DOCKER_CONFIG=" + config} + vars),
            [](const QString &p) { return p == kDocker; });
        return r.address.url() + u' ' + r.source;
    };
    const QString configFile = config + "/config.json";
    // The Docker CLI's order: --engine, DOCKER_HOST, DOCKER_CONTEXT, currentContext, then
    // CONTAINER_HOST and the local sockets.
    QCOMPARE(where("unix:///given.sock", {"DOCKER_HOST=/h.sock", "DOCKER_CONTEXT=chosen"}),
             QStringLiteral("unix:///given.sock --engine"));
    QCOMPARE(where({}, {"DOCKER_HOST=/h.sock", "DOCKER_CONTEXT=chosen"}),
             QStringLiteral("unix:///h.sock DOCKER_HOST"));
    QCOMPARE(where({}, {"DOCKER_CONTEXT=chosen", "CONTAINER_HOST=/c.sock"}),
             QStringLiteral("unix:///chosen.sock DOCKER_CONTEXT (context chosen)"));
    QCOMPARE(where({}, {"CONTAINER_HOST=/c.sock"}),
             "unix:///current.sock currentContext in " + configFile + " (context current)");
    // "default" is the usual order without contexts.
    QCOMPARE(where({}, {"DOCKER_CONTEXT=default", "CONTAINER_HOST=/c.sock"}),
             QStringLiteral("unix:///c.sock DOCKER_CONTEXT (context default), CONTAINER_HOST"));
    QCOMPARE(where("context:default", {"DOCKER_CONTEXT=chosen"}),
             QStringLiteral("unix:///var/run/docker.sock --engine context:default, Docker"));
    docker.use(QStringLiteral("default"));
    QCOMPARE(where({}, {}), QStringLiteral("unix:///var/run/docker.sock Docker"));
}

QTEST_GUILESS_MAIN(tst_EngineLocator)
#include "tst_enginelocator.moc"
