#include "engineaddress.h"

#include <QTest>

using Scheme = EngineAddress::Scheme;
Q_DECLARE_METATYPE(EngineAddress::Scheme)

class tst_EngineAddress : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parse_data();
    void parse();
    void errors_data();
    void errors();
    void display();
    void loopback();
    void runtimeSuffix();
};

// "?runtime=NAME" after any --engine value: the engine's runtime, not part of its address.
void tst_EngineAddress::runtimeSuffix()
{
    QString runtime;
    QString error;
    QCOMPARE(
        EngineAddress::takeRuntime(QStringLiteral("ssh://me@box?runtime=runsc"), &runtime, &error),
        QStringLiteral("ssh://me@box"));
    QCOMPARE(runtime, QStringLiteral("runsc"));
    QVERIFY(error.isEmpty());
    QCOMPARE(EngineAddress::takeRuntime(QStringLiteral("context:ci"), &runtime, &error),
             QStringLiteral("context:ci"));
    QCOMPARE(runtime, QString());
    EngineAddress::takeRuntime(QStringLiteral("/d.sock?runtime=a b"), &runtime, &error);
    QVERIFY2(error.contains(u"only runtime=NAME"), qPrintable(error));
    QVERIFY(EngineAddress::isRuntimeName(QStringLiteral("runsc-net")));
    QVERIFY(!EngineAddress::isRuntimeName(QStringLiteral("-x")));
    QVERIFY(!EngineAddress::isRuntimeName(QStringLiteral("a/b")));
}

void tst_EngineAddress::parse_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<Scheme>("scheme");
    QTest::addColumn<QString>("socketPath");
    QTest::addColumn<QString>("host");
    QTest::addColumn<int>("port");
    QTest::addColumn<QString>("user");
    QTest::addColumn<QString>("url");

    QTest::newRow("unix") << "unix:///var/run/docker.sock" << Scheme::Unix << "/var/run/docker.sock"
                          << QString() << 0 << QString() << "unix:///var/run/docker.sock";
    QTest::newRow("bare path") << "/run/podman/podman.sock" << Scheme::Unix
                               << "/run/podman/podman.sock" << QString() << 0 << QString()
                               << "unix:///run/podman/podman.sock";
    QTest::newRow("unix with spaces")
        << "unix:///tmp/my dir/e.sock" << Scheme::Unix << "/tmp/my dir/e.sock" << QString() << 0
        << QString() << "unix:///tmp/my dir/e.sock";
    QTest::newRow("unix scheme in capitals") << "UNIX:///x.sock" << Scheme::Unix << "/x.sock"
                                             << QString() << 0 << QString() << "unix:///x.sock";
    QTest::newRow("surrounding blanks")
        << "  tcp://h:1  " << Scheme::Tcp << QString() << "h" << 1 << QString() << "tcp://h:1";
    QTest::newRow("tcp") << "tcp://127.0.0.1:2376" << Scheme::Tcp << QString() << "127.0.0.1"
                         << 2376 << QString() << "tcp://127.0.0.1:2376";
    QTest::newRow("tcp without port: Docker's plain default")
        << "tcp://build.lan" << Scheme::Tcp << QString() << "build.lan" << 0 << QString()
        << "tcp://build.lan:2375";
    QTest::newRow("tcp trailing slash")
        << "tcp://build.lan:1234/" << Scheme::Tcp << QString() << "build.lan" << 1234 << QString()
        << "tcp://build.lan:1234";
    QTest::newRow("tcp IPv6") << "tcp://[::1]:2376" << Scheme::Tcp << QString() << "::1" << 2376
                              << QString() << "tcp://[::1]:2376";
    QTest::newRow("ssh host") << "ssh://build.lan" << Scheme::Ssh << QString() << "build.lan" << 0
                              << QString() << "ssh://build.lan";
    QTest::newRow("ssh user, port, path") << "ssh://root@127.0.0.1:2222/srv/engines/docker.sock"
                                          << Scheme::Ssh << "/srv/engines/docker.sock"
                                          << "127.0.0.1" << 2222 << "root"
                                          << "ssh://root@127.0.0.1:2222/srv/engines/docker.sock";
    QTest::newRow("ssh user only")
        << "ssh://me@host" << Scheme::Ssh << QString() << "host" << 0 << "me"
        << "ssh://me@host";
    QTest::newRow("ssh trailing slash")
        << "ssh://me@host/" << Scheme::Ssh << QString() << "host" << 0 << "me"
        << "ssh://me@host";
    QTest::newRow("ssh IPv6 with port")
        << "ssh://u@[fd00::5]:22/run/d.sock" << Scheme::Ssh << "/run/d.sock"
        << "fd00::5" << 22 << "u"
        << "ssh://u@[fd00::5]:22/run/d.sock";
    QTest::newRow("ssh Podman's rootless socket")
        << "ssh://core@vm:2222/run/user/1000/podman/podman.sock" << Scheme::Ssh
        << "/run/user/1000/podman/podman.sock"
        << "vm" << 2222 << "core"
        << "ssh://core@vm:2222/run/user/1000/podman/podman.sock";
}

void tst_EngineAddress::parse()
{
    QFETCH(QString, text);
    QFETCH(Scheme, scheme);
    QFETCH(QString, socketPath);
    QFETCH(QString, host);
    QFETCH(int, port);
    QFETCH(QString, user);
    QFETCH(QString, url);

    QString error = QStringLiteral("untouched");
    const EngineAddress a = EngineAddress::parse(text, &error);
    QCOMPARE(error, QStringLiteral("untouched")); // only set on failure
    QVERIFY(a.isValid());
    QCOMPARE(int(a.scheme), int(scheme));
    QCOMPARE(a.socketPath, socketPath);
    QCOMPARE(a.host, host);
    QCOMPARE(a.port, port);
    QCOMPARE(a.user, user);
    QVERIFY(!a.tls); // TLS is the locator's decision, never the text's
    QCOMPARE(a.url(), url);
    // The canonical form reads back as the same address.
    QCOMPARE(EngineAddress::parse(a.url()).url(), url);
}

void tst_EngineAddress::errors_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("error");

    QTest::newRow("empty") << QString() << "no engine address given";
    QTest::newRow("blank") << "   "
                           << "no engine address given";
    QTest::newRow("relative path") << "docker.sock"
                                   << "'docker.sock' is not an engine address: use unix:///path";
    QTest::newRow("host:port without scheme") << "build:2376"
                                              << "'build:2376' is not an engine address";
    QTest::newRow("unix without path") << "unix://"
                                       << "'unix://': unix:// needs an absolute path";
    QTest::newRow("unix relative") << "unix://docker.sock"
                                   << "unix:// needs an absolute path";
    QTest::newRow("npipe") << "npipe:////./pipe/docker_engine"
                           << "npipe:// is not supported";
    QTest::newRow("http") << "http://h:2375"
                          << "http:// is not supported";
    QTest::newRow("fd") << "fd://"
                        << "fd:// is not supported";
    QTest::newRow("tcp without host") << "tcp://:2375"
                                      << "names no host";
    QTest::newRow("tcp bad port") << "tcp://h:99999"
                                  << "'tcp://h:99999' is not a valid address";
    QTest::newRow("tcp port 0") << "tcp://h:0"
                                << "port 0";
    QTest::newRow("tcp path") << "tcp://h:2375/v1.41"
                              << "tcp:// takes no path";
    QTest::newRow("tcp user") << "tcp://me@h:2375"
                              << "tcp:// takes no user";
    QTest::newRow("tcp query") << "tcp://h:2375?x=1"
                               << "takes no ?query";
    QTest::newRow("ssh without host") << "ssh://"
                                      << "names no host";
    QTest::newRow("ssh password") << "ssh://me:secret@h"
                                  << "no password in an ssh:// address";
    QTest::newRow("ssh user with a space") << "ssh://a%20b@h"
                                           << "is not a user name ssh can take";
    QTest::newRow("ssh user as an option") << "ssh://-oProxyCommand=x@h"
                                           << "is not a user name ssh can take";
    QTest::newRow("ssh path for a shell") << "ssh://h/run/d.sock;reboot"
                                          << "the socket path may hold only";
    QTest::newRow("ssh path with a space") << "ssh://h/run/my%20d.sock"
                                           << "the socket path may hold only";
    QTest::newRow("ssh fragment") << "ssh://h#x"
                                  << "takes no ?query or #fragment";
}

void tst_EngineAddress::errors()
{
    QFETCH(QString, text);
    QFETCH(QString, error);

    QString message;
    const EngineAddress a = EngineAddress::parse(text, &message);
    QVERIFY(!a.isValid());
    QCOMPARE(a.url(), QString());
    QVERIFY2(message.contains(error), qPrintable(message));
    // A password never reaches a message.
    QVERIFY(!message.contains(u"secret"));
}

void tst_EngineAddress::display()
{
    EngineAddress a = EngineAddress::parse(QStringLiteral("tcp://127.0.0.1:2376"));
    QCOMPARE(a.display(), QStringLiteral("tcp://127.0.0.1:2376"));
    a.tls = true;
    a.caFile = QStringLiteral("/secret/ca.pem"); // files are not shown
    QCOMPARE(a.display(), QStringLiteral("tcp://127.0.0.1:2376 (TLS)"));
    a.context = QStringLiteral("ci");
    QCOMPARE(a.display(), QStringLiteral("context ci \u2192 tcp://127.0.0.1:2376 (TLS)"));
    // This machine's store instead of a CA, when asked for, is said.
    EngineAddress system = a;
    system.caFile.clear();
    system.systemCa = true;
    QCOMPARE(system.display(),
             QStringLiteral("context ci \u2192 tcp://127.0.0.1:2376 (TLS, system CAs)"));
    QVERIFY(system != a);
    QCOMPARE(a.url(), QStringLiteral("tcp://127.0.0.1:2376"));

    // tcp:// with TLS and no port: Docker's TLS port.
    EngineAddress t = EngineAddress::parse(QStringLiteral("tcp://build"));
    t.tls = true;
    QCOMPARE(t.url(), QStringLiteral("tcp://build:2376"));

    QCOMPARE(EngineAddress::parse(QStringLiteral("ssh://root@host:2222")).display(),
             QStringLiteral("ssh://root@host:2222"));
    // A local engine is shown by its path, as it always was.
    QCOMPARE(EngineAddress::parse(QStringLiteral("unix:///var/run/docker.sock")).display(),
             QStringLiteral("/var/run/docker.sock"));
    QCOMPARE(EngineAddress().display(), QStringLiteral("(no engine)"));
}

void tst_EngineAddress::loopback()
{
    const auto loop = [](const char *text) {
        return EngineAddress::parse(QString::fromLatin1(text)).isLoopback();
    };
    QVERIFY(loop("tcp://127.0.0.1:2375"));
    QVERIFY(loop("tcp://127.1.2.3:2375"));
    QVERIFY(loop("tcp://localhost:2375"));
    QVERIFY(loop("tcp://LocalHost:2375"));
    QVERIFY(loop("tcp://[::1]:2375"));
    QVERIFY(loop("unix:///x.sock"));
    QVERIFY(!loop("tcp://10.0.0.1:2375"));
    QVERIFY(!loop("tcp://localhost.evil.example:2375"));
    QVERIFY(!loop("tcp://0.0.0.0:2375"));
    QVERIFY(!loop("tcp://[::]:2375"));
}

QTEST_GUILESS_MAIN(tst_EngineAddress)
#include "tst_engineaddress.moc"
