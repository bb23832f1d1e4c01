#include "enginelocator.h"

#include <QTest>

namespace {
const QString kXdg = QStringLiteral("/run/user/1000");
const QString kRootless = QStringLiteral("/run/user/1000/podman/podman.sock");
const QString kPodman = QStringLiteral("/run/podman/podman.sock");
const QString kDocker = QStringLiteral("/var/run/docker.sock");

QProcessEnvironment environment(const QStringList &assignments)
{
    QProcessEnvironment env;
    for (const QString &a : assignments) {
        const qsizetype eq = a.indexOf(u'=');
        env.insert(a.left(eq), a.mid(eq + 1));
    }
    return env;
}
} // namespace

class tst_EngineLocator : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void locate_data();
    void locate();
    void socketPathFromUrl_data();
    void socketPathFromUrl();
};

void tst_EngineLocator::locate_data()
{
    QTest::addColumn<QString>("engine"); // --engine
    QTest::addColumn<QStringList>("env");
    QTest::addColumn<QStringList>("existing"); // sockets the fake file system has
    QTest::addColumn<QString>("socketPath");
    QTest::addColumn<QString>("source");
    QTest::addColumn<QString>("error");
    QTest::addColumn<QStringList>("tried");

    const QStringList all = {kRootless, kPodman, kDocker};
    const QStringList everyVariable = {"DOCKER_HOST=unix:///docker-host.sock",
                                       "CONTAINER_HOST=unix:///container-host.sock",
                                       "XDG_RUNTIME_DIR=" + kXdg};

    // An address the user named is used as given: no probing, no fallback.
    QTest::newRow("--engine first")
        << "unix:///tmp/engine.sock" << everyVariable << all << "/tmp/engine.sock"
        << "--engine" << QString() << QStringList();
    QTest::newRow("--engine bare path")
        << "/tmp/engine.sock" << QStringList() << QStringList() << "/tmp/engine.sock"
        << "--engine" << QString() << QStringList();
    QTest::newRow("--engine tcp refused")
        << "tcp://127.0.0.1:2375" << everyVariable << all << QString() << "--engine"
        << "--engine is 'tcp://127.0.0.1:2375': only unix:// sockets are supported"
        << QStringList();
    QTest::newRow("--engine ssh refused")
        << "ssh://user@host" << QStringList() << all << QString() << "--engine"
        << "--engine is 'ssh://user@host': only unix:// sockets are supported" << QStringList();
    QTest::newRow("--engine relative path refused")
        << "docker.sock" << QStringList() << all << QString() << "--engine"
        << "--engine is 'docker.sock': only unix:// sockets are supported" << QStringList();

    QTest::newRow("DOCKER_HOST before CONTAINER_HOST")
        << QString() << everyVariable << all << "/docker-host.sock"
        << "DOCKER_HOST" << QString() << QStringList();
    QTest::newRow("DOCKER_HOST bare path")
        << QString() << QStringList{"DOCKER_HOST=/srv/docker.sock"} << QStringList()
        << "/srv/docker.sock"
        << "DOCKER_HOST" << QString() << QStringList();
    QTest::newRow("DOCKER_HOST tcp refused, no fallback")
        << QString() << QStringList{"DOCKER_HOST=tcp://build:2376", "XDG_RUNTIME_DIR=" + kXdg}
        << all << QString() << "DOCKER_HOST"
        << "DOCKER_HOST is 'tcp://build:2376': only unix:// sockets are supported" << QStringList();
    QTest::newRow("DOCKER_HOST unix:// without a path")
        << QString() << QStringList{"DOCKER_HOST=unix://"} << all << QString() << "DOCKER_HOST"
        << "DOCKER_HOST is 'unix://': only unix:// sockets are supported" << QStringList();
    QTest::newRow("empty DOCKER_HOST ignored")
        << QString() << QStringList{"DOCKER_HOST=", "CONTAINER_HOST=unix:///c.sock"} << all
        << "/c.sock"
        << "CONTAINER_HOST" << QString() << QStringList();
    QTest::newRow("CONTAINER_HOST before sockets")
        << QString() << QStringList{"CONTAINER_HOST=unix://" + kRootless, "XDG_RUNTIME_DIR=/x"}
        << all << kRootless << "CONTAINER_HOST" << QString() << QStringList();
    QTest::newRow("CONTAINER_HOST tcp refused")
        << QString() << QStringList{"CONTAINER_HOST=tcp://h:1"} << all << QString()
        << "CONTAINER_HOST"
        << "CONTAINER_HOST is 'tcp://h:1': only unix:// sockets are supported" << QStringList();

    QTest::newRow("rootless Podman first")
        << QString() << QStringList{"XDG_RUNTIME_DIR=" + kXdg} << all << kRootless
        << "rootless Podman" << QString() << QStringList{kRootless};
    QTest::newRow("then rootful Podman")
        << QString() << QStringList{"XDG_RUNTIME_DIR=" + kXdg} << QStringList{kPodman, kDocker}
        << kPodman << "Podman" << QString() << QStringList{kRootless, kPodman};
    QTest::newRow("then Docker") << QString() << QStringList{"XDG_RUNTIME_DIR=" + kXdg}
                                 << QStringList{kDocker} << kDocker << "Docker" << QString()
                                 << QStringList{kRootless, kPodman, kDocker};
    QTest::newRow("no XDG_RUNTIME_DIR") << QString() << QStringList() << all << kPodman << "Podman"
                                        << QString() << QStringList{kPodman};
    QTest::newRow("rootless socket of another user ignored")
        << QString() << QStringList() << QStringList{kRootless, kDocker} << kDocker << "Docker"
        << QString() << QStringList{kPodman, kDocker};
    QTest::newRow("nothing found")
        << QString() << QStringList{"XDG_RUNTIME_DIR=" + kXdg} << QStringList() << kDocker
        << "default" << QString() << QStringList{kRootless, kPodman, kDocker};
}

void tst_EngineLocator::locate()
{
    QFETCH(QString, engine);
    QFETCH(QStringList, env);
    QFETCH(QStringList, existing);
    QFETCH(QString, socketPath);
    QFETCH(QString, source);
    QFETCH(QString, error);
    QFETCH(QStringList, tried);

    QStringList probed;
    const auto exists = [&](const QString &path) {
        probed.append(path);
        return existing.contains(path);
    };
    const EngineLocator::Result r = EngineLocator::locate(engine, environment(env), exists);
    QCOMPARE(r.socketPath, socketPath);
    QCOMPARE(r.source, source);
    QCOMPARE(r.error, error);
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

QTEST_GUILESS_MAIN(tst_EngineLocator)
#include "tst_enginelocator.moc"
