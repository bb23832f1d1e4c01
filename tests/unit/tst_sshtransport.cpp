#include "engineaddress.h"
#include "engineclient.h"
#include "enginereply.h"
#include "enginetransport.h"
#include "sshmaster.h"
#include "sshtransport.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocalServer>
#include <QLocalSocket>
#include <QPointer>
#include <QProcess>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <memory>
#include <pwd.h>
#include <unistd.h>

namespace {

// A stand-in engine on a local socket (the "remote" socket ssh forwards to): answers every
// request head with a small version document on a kept-alive connection. Requests whose path
// holds "hold" are answered only once `holdUntil` of them wait, so that many connections are
// open at the same time.
class FakeEngine : public QObject
{
public:
    int connections = 0;
    int holdUntil = 0;

    int held() const { return int(m_held.size()); }

    bool listen(const QString &path)
    {
        m_server = std::make_unique<QLocalServer>();
        connect(m_server.get(), &QLocalServer::newConnection, this, [this] {
            while (QLocalSocket *s = m_server->nextPendingConnection()) {
                ++connections;
                m_sockets.append(s);
                connect(s, &QLocalSocket::readyRead, this, [this, s] { read(s); });
            }
        });
        return m_server->listen(path);
    }
    // Gone: the listener and every connection (an engine that died).
    void stop()
    {
        for (QLocalSocket *s : std::as_const(m_sockets))
            s->abort();
        m_sockets.clear();
        m_held.clear();
        m_server.reset(); // and the sockets, its children
    }

private:
    void read(QLocalSocket *s)
    {
        QByteArray &buffer = m_buffers[s];
        buffer += s->readAll();
        while (buffer.contains("\r\n\r\n")) {
            const QByteArray head = buffer.left(buffer.indexOf("\r\n\r\n"));
            buffer.remove(0, head.size() + 4);
            if (head.left(head.indexOf('\n')).contains("hold")) {
                m_held.append(s);
                if (m_held.size() >= holdUntil) {
                    for (QLocalSocket *h : std::as_const(m_held))
                        answer(h);
                    m_held.clear();
                }
                continue;
            }
            answer(s);
        }
    }
    static void answer(QLocalSocket *s)
    {
        const QByteArray body = R"({"ApiVersion":"1.41","Version":"99.0-fake"})";
        s->write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
                 QByteArray::number(body.size()) + "\r\n\r\n" + body);
    }

    std::unique_ptr<QLocalServer> m_server;
    QList<QLocalSocket *> m_sockets;
    QList<QLocalSocket *> m_held;
    QHash<QLocalSocket *, QByteArray> m_buffers;
};

// A private sshd on a loopback port, for this user, with three client keys: "plain", "nodocker"
// (authorized_keys forces a command that is not docker: a session cannot run dial-stdio) and
// "noforward" (no-port-forwarding: the server refuses the socket forward). Its log (-e, VERBOSE)
// says how many connections authenticated.
class PrivateSshd
{
public:
    ~PrivateSshd()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished();
        }
    }
    QString dir() const { return m_dir.path(); }
    int port() const { return m_port; }
    QString user() const { return QString::fromLocal8Bit(::getpwuid(::getuid())->pw_name); }
    QString config(const QString &key) const { return m_dir.filePath(key + ".ssh_config"); }
    int accepted()
    {
        m_log += m_process.readAll();
        return m_log.count("Accepted publickey");
    }
    QByteArray log() const { return m_log; }

    bool start()
    {
        if (!m_dir.isValid() || !keygen("host") || !keygen("plain") || !keygen("nodocker") ||
            !keygen("noforward"))
            return false;
        QTcpServer probe; // a free port, given back to sshd at once
        if (!probe.listen(QHostAddress::LocalHost))
            return false;
        m_port = probe.serverPort();
        probe.close();
        write("authorized_keys", pub("plain") + "command=\"echo no docker here >&2; exit 127\" " +
                                     pub("nodocker") + "no-port-forwarding " + pub("noforward"));
        write("known_hosts", QStringLiteral("[127.0.0.1]:%1 ").arg(m_port).toUtf8() + pub("host"));
        write("sshd_config", QStringLiteral("ListenAddress 127.0.0.1:%1\nHostKey %2\nPidFile none\n"
                                            "AuthorizedKeysFile %3\nPermitRootLogin "
                                            "prohibit-password\nPasswordAuthentication no\n"
                                            "KbdInteractiveAuthentication no\nUsePAM no\n"
                                            "StrictModes no\nMaxStartups 100\nMaxSessions 100\n"
                                            "LogLevel VERBOSE\n")
                                 .arg(m_port)
                                 .arg(m_dir.filePath("host"), m_dir.filePath("authorized_keys"))
                                 .toUtf8());
        for (const char *key : {"plain", "nodocker", "noforward"})
            write(
                QString::fromLatin1(key) + ".ssh_config",
                QStringLiteral("Host 127.0.0.1\n  Port %1\n  User %2\n  IdentityFile %3\n"
                               "  IdentitiesOnly yes\n  UserKnownHostsFile %4\n"
                               "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n"
                               "  BatchMode yes\n  LogLevel ERROR\n")
                    .arg(m_port)
                    .arg(user(), m_dir.filePath(QLatin1String(key)), m_dir.filePath("known_hosts"))
                    .toUtf8());
        QDir().mkpath(QStringLiteral("/run/sshd")); // privilege separation (root only)
        m_process.setProcessChannelMode(QProcess::MergedChannels);
        m_process.start(QStringLiteral("/usr/sbin/sshd"),
                        {"-D", "-e", "-f", m_dir.filePath("sshd_config")});
        if (!m_process.waitForStarted())
            return false;
        // Listening is the state to wait for, and sshd says so.
        while (!m_log.contains("Server listening on")) {
            if (!m_process.waitForReadyRead(20000))
                return false;
            m_log += m_process.readAll();
        }
        return true;
    }

private:
    bool keygen(const QString &name)
    {
        return QProcess::execute(
                   QStringLiteral("ssh-keygen"),
                   {"-q", "-t", "ed25519", "-N", "", "-C", name, "-f", m_dir.filePath(name)}) == 0;
    }
    QByteArray pub(const QString &name) const
    {
        QFile f(m_dir.filePath(name + ".pub"));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }
    void write(const QString &name, const QByteArray &bytes)
    {
        QFile f(m_dir.filePath(name));
        if (f.open(QIODevice::WriteOnly))
            f.write(bytes);
    }

    QTemporaryDir m_dir;
    int m_port = 0;
    QProcess m_process;
    QByteArray m_log;
};

EngineReply *waited(EngineReply *r)
{
    QSignalSpy spy(r, &EngineReply::finished);
    if (!r->isFinished())
        spy.wait(3 * SshMaster::kStartTimeoutMs);
    return r;
}

bool processGone(qint64 pid)
{
    // Gone, or a zombie nobody has reaped yet (it runs no more).
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return true;
    const QByteArray s = stat.readAll();
    return s.mid(s.lastIndexOf(')') + 2, 1) == "Z";
}

} // namespace

// The ssh command lines, what becomes of ssh's stderr, and engines reached through a private
// sshd (a stand-in engine behind it): one ssh connection and one key exchange for many engine
// connections, no docker command needed there, the fallback to dial-stdio when the server
// refuses the forward, and the connection's life (restarted after it died, ended with its owner).
class tst_SshTransport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void arguments_data();
    void arguments();
    void masterArguments();
    void summarize();
    void failsWithWhatSshSaid();
    void manyConnectionsOneKeyExchange();
    void noDockerCommandNeededThere();
    void refusedForwardFallsBackToDialStdio();
    void engineDownFailsClearly();
    void restartsTheConnectionAfterItDied();
    void connectionEndsWithItsOwner();
    void removesWhatAKilledInstanceLeft();
    void sweepLeavesWhatIsNotCertainlyOurs();
    void waitingConnectionFollowsARefusalMadeMeanwhile();
    void connectionEndedMidRequestIsNoRefusal();
    void killedProcessesGoWithTheMaster();

private:
    // Puts an executable `ssh` with this body first on PATH for the rest of the test.
    void fakeSsh(QTemporaryDir &dir, const QByteArray &body)
    {
        QFile script(dir.filePath("ssh"));
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("#!/bin/sh\n" + body);
        script.close();
        QVERIFY(script.setPermissions(script.permissions() | QFileDevice::ExeOwner));
        m_path = qgetenv("PATH");
        qputenv("PATH", dir.path().toLocal8Bit() + ':' + m_path);
    }
    void restorePath() { qputenv("PATH", m_path); }
    // A private sshd and an engine behind it at `socketName` in its folder; the address.
    EngineAddress startSshd(PrivateSshd &sshd, FakeEngine &engine, const QString &key,
                            const QString &socketName = QStringLiteral("engine.sock"))
    {
        if (!QFileInfo::exists(QStringLiteral("/usr/sbin/sshd")))
            qFatal("/usr/sbin/sshd is missing (apt-get install openssh-server)");
        if (!sshd.start())
            qFatal("the private sshd did not start: %s", sshd.log().constData());
        const QString socket = sshd.dir() + QLatin1Char('/') + socketName;
        if (!engine.listen(socket))
            qFatal("cannot listen on %s", qPrintable(socket));
        qputenv("CODE_SANDBOX_SSH_CONFIG", sshd.config(key).toLocal8Bit());
        return EngineAddress::parse(QStringLiteral("ssh://%1@127.0.0.1:%2%3")
                                        .arg(sshd.user())
                                        .arg(sshd.port())
                                        .arg(socket));
    }

    QByteArray m_path;
};

void tst_SshTransport::arguments_data()
{
    QTest::addColumn<QString>("address");
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("command"); // the arguments, joined by spaces

    const QString common = QStringLiteral("-T -o BatchMode=yes -o ConnectTimeout=20");
    QTest::newRow("host") << "ssh://build.lan" << QString()
                          << common + " -- build.lan docker system dial-stdio";
    QTest::newRow("user") << "ssh://me@build.lan" << QString()
                          << common + " -l me -- build.lan docker system dial-stdio";
    QTest::newRow("port") << "ssh://build.lan:2222" << QString()
                          << common + " -p 2222 -- build.lan docker system dial-stdio";
    QTest::newRow("path") << "ssh://build.lan/run/user/1000/docker.sock" << QString()
                          << common + " -- build.lan docker --host "
                                      "unix:///run/user/1000/docker.sock system dial-stdio";
    QTest::newRow("everything, with a config file")
        << "ssh://root@127.0.0.1:2222/srv/e/docker.sock"
        << "/etc/cs/ssh_config"
        << common + " -F /etc/cs/ssh_config -l root -p 2222 -- 127.0.0.1 docker --host "
                    "unix:///srv/e/docker.sock system dial-stdio";
    QTest::newRow("IPv6") << "ssh://u@[fd00::5]:22" << QString()
                          << common + " -l u -p 22 -- fd00::5 docker system dial-stdio";
}

void tst_SshTransport::arguments()
{
    QFETCH(QString, address);
    QFETCH(QString, config);
    QFETCH(QString, command);

    QString error;
    const EngineAddress a = EngineAddress::parse(address, &error);
    QVERIFY2(a.isValid(), qPrintable(error));
    QCOMPARE(SshTransport::arguments(a, config).join(u' '), command);
}

void tst_SshTransport::masterArguments()
{
    const QString common = QStringLiteral(
        "-M -N -T -o BatchMode=yes -o ConnectTimeout=20 -o ControlPath=/f/ctl -o "
        "ControlPersist=no -o ExitOnForwardFailure=yes -o StreamLocalBindUnlink=yes -o "
        "ServerAliveInterval=15 -o ServerAliveCountMax=4 -L ");
    // Without a path, Docker's socket; with one (Podman's, say), that; a ':' in it is bracketed.
    QCOMPARE(SshMaster::arguments(EngineAddress::parse("ssh://build.lan"), {}, "/f").join(u' '),
             common + "/f/engine.sock:/var/run/docker.sock -- build.lan");
    QCOMPARE(SshMaster::arguments(EngineAddress::parse("ssh://me@build.lan:2222/run/podman/"
                                                       "podman.sock"),
                                  "/etc/cs/ssh_config", "/f")
                 .join(u' '),
             common + "/f/engine.sock:/run/podman/podman.sock -F /etc/cs/ssh_config -l me -p "
                      "2222 -- build.lan");
    QCOMPARE(
        SshMaster::arguments(EngineAddress::parse("ssh://[fd00::5]/a:b.sock"), {}, "/f").join(u' '),
        common + "/f/engine.sock:[/a:b.sock] -- fd00::5");
    // ssh expands %-tokens there: a '%' in a path reaches it as "%%".
    QCOMPARE(
        SshMaster::arguments(EngineAddress::parse("ssh://h/run/a%25h.sock"), {}, "/f%d").join(u' '),
        QString(common)
            .replace("ControlPath=/f/ctl", "ControlPath=/f%%d/ctl")
            .append("/f%%d/engine.sock:/run/a%%h.sock -- h"));
}

void tst_SshTransport::summarize()
{
    QCOMPARE(SshTransport::summarize("Warning: Permanently added '[127.0.0.1]:2222' (ED25519) to "
                                     "the list of known hosts.\r\nroot@127.0.0.1: Permission "
                                     "denied (publickey).\r\n"),
             QStringLiteral("root@127.0.0.1: Permission denied (publickey)."));
    QCOMPARE(SshTransport::summarize("No ED25519 host key is known for x.\nHost key verification "
                                     "failed.\n"),
             QStringLiteral("No ED25519 host key is known for x. / Host key verification failed."));
    QCOMPARE(SshTransport::summarize(""), QString());
}

void tst_SshTransport::failsWithWhatSshSaid()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // As ssh does when the key is refused: a line on stderr, exit 255, nothing on stdout.
    fakeSsh(dir, "cat > /dev/null &\necho 'me@build.lan: Permission denied (publickey).' >&2\n"
                 "exit 255\n");
    qunsetenv("CODE_SANDBOX_SSH_CONFIG");
    EngineClient engine(EngineAddress::parse(QStringLiteral("ssh://me@build.lan")));
    EngineReply *r = waited(engine.ping());
    restorePath();
    QVERIFY(r->isFinished());
    QCOMPARE(int(r->error().kind), int(EngineError::Kind::Unreachable));
    QCOMPARE(r->error().message,
             QStringLiteral("cannot reach the container engine at ssh://me@build.lan: "
                            "me@build.lan: Permission denied (publickey)."));
}

void tst_SshTransport::manyConnectionsOneKeyExchange()
{
    PrivateSshd sshd;
    FakeEngine engine;
    const EngineAddress address = startSshd(sshd, engine, QStringLiteral("plain"));
    EngineClient client(address);
    QVERIFY2(waited(client.get("/version"))->ok(), qPrintable(client.endpoint()));
    // Eight requests the engine answers only once all eight are there: eight connections open
    // at once, each a channel of the one ssh connection.
    engine.holdUntil = 8;
    QList<EngineReply *> replies;
    for (int i = 0; i < 8; ++i)
        replies.append(client.get("/hold"));
    for (EngineReply *r : std::as_const(replies))
        QVERIFY2(waited(r)->ok(), qPrintable(r->error().toString()));
    QVERIFY2(engine.connections >= 8, QByteArray::number(engine.connections).constData());
    QCOMPARE(sshd.accepted(), 1);
}

void tst_SshTransport::noDockerCommandNeededThere()
{
    PrivateSshd sshd;
    FakeEngine engine;
    // Podman's form: the socket's path in the URL; the key's sessions can run no docker.
    const EngineAddress address =
        startSshd(sshd, engine, QStringLiteral("nodocker"), QStringLiteral("podman.sock"));
    EngineClient client(address);
    EngineReply *r = waited(client.get("/version"));
    QVERIFY2(r->ok(), qPrintable(r->error().toString()));
    QCOMPARE(r->json().value(u"Version").toString(), QStringLiteral("99.0-fake"));
    QCOMPARE(sshd.accepted(), 1);
}

void tst_SshTransport::refusedForwardFallsBackToDialStdio()
{
    if (QStandardPaths::findExecutable(QStringLiteral("docker")).isEmpty())
        qFatal("the fallback runs `docker system dial-stdio` on the far side: docker is missing");
    PrivateSshd sshd;
    FakeEngine engine;
    const EngineAddress address = startSshd(sshd, engine, QStringLiteral("noforward"));
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression("refuses to forward the engine's socket"));
    EngineClient client(address);
    EngineReply *r = waited(client.get("/version"));
    QVERIFY2(r->ok(), qPrintable(r->error().toString()));
    QVERIFY(SshMaster::forAddress(address, sshd.config("noforward"))->forwardRefused());
    // Later connections go straight to dial-stdio: one ssh connection each.
    engine.holdUntil = 2;
    EngineReply *a = client.get("/hold");
    EngineReply *b = client.get("/hold");
    QVERIFY2(waited(a)->ok(), qPrintable(a->error().toString()));
    QVERIFY2(waited(b)->ok(), qPrintable(b->error().toString()));
    // The master's, the first fallback's, and one for the second connection of the two.
    QCOMPARE(sshd.accepted(), 3);
}

void tst_SshTransport::engineDownFailsClearly()
{
    PrivateSshd sshd;
    FakeEngine engine;
    const EngineAddress address = startSshd(sshd, engine, QStringLiteral("plain"));
    {
        EngineClient client(address);
        QVERIFY(waited(client.get("/version"))->ok());
    }
    engine.stop();
    // A new connection (channel) of the same ssh connection, to a socket nobody listens on.
    EngineClient client(address);
    EngineReply *r = waited(client.get("/version"));
    QVERIFY(r->isFinished());
    QVERIFY(!r->ok());
    QVERIFY2(r->error().message.contains(
                 QStringLiteral("no answer from the engine's socket %1").arg(address.socketPath)),
             qPrintable(r->error().message));
    // No dial-stdio was tried: the forward had worked there.
    QCOMPARE(sshd.accepted(), 1);
}

void tst_SshTransport::restartsTheConnectionAfterItDied()
{
    PrivateSshd sshd;
    FakeEngine engine;
    const EngineAddress address = startSshd(sshd, engine, QStringLiteral("plain"));
    EngineClient client(address);
    QVERIFY(waited(client.get("/version"))->ok());
    SshMaster *master = SshMaster::forAddress(address, sshd.config("plain"));
    const qint64 pid = master->processId();
    QVERIFY(pid > 0);
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("the ssh connection to .* ended"));
    ::kill(pid_t(pid), SIGKILL);
    QTRY_COMPARE_WITH_TIMEOUT(master->state(), SshMaster::State::Idle, 20000);
    EngineReply *r = waited(client.get("/version"));
    QVERIFY2(r->ok(), qPrintable(r->error().toString()));
    QVERIFY(master->processId() > 0);
    QVERIFY(master->processId() != pid);
    QCOMPARE(sshd.accepted(), 2);
}

void tst_SshTransport::connectionEndsWithItsOwner()
{
    PrivateSshd sshd;
    FakeEngine engine;
    const EngineAddress address = startSshd(sshd, engine, QStringLiteral("plain"));
    {
        EngineClient client(address);
        QVERIFY(waited(client.get("/version"))->ok());
    }
    SshMaster *master = SshMaster::forAddress(address, sshd.config("plain"));
    const qint64 pid = master->processId();
    const QString folder = master->folder();
    QVERIFY(pid > 0);
    QVERIFY(QFileInfo(folder).isDir());
    QCOMPARE(QFileInfo(folder).permissions() & 0x0077, QFileDevice::Permissions());
    delete master; // as the application's end deletes it
    QVERIFY(!QFileInfo::exists(folder));
    QTRY_VERIFY_WITH_TIMEOUT(processGone(pid), 20000);
}

void tst_SshTransport::removesWhatAKilledInstanceLeft()
{
    QTemporaryDir runtime; // as $XDG_RUNTIME_DIR
    QVERIFY(runtime.isValid());
    QProcess gone; // a process id that was and is no more
    gone.start(QStringLiteral("true"));
    QVERIFY(gone.waitForFinished());
    const QString stale =
        runtime.filePath(QStringLiteral("code-sandbox-ssh-%1-AbCdEf").arg(gone.processId()));
    const QString live =
        runtime.filePath(QStringLiteral("code-sandbox-ssh-%1-GhIjKl").arg(::getpid()));
    QVERIFY(QDir().mkpath(stale + "/sub"));
    QVERIFY(QFile::setPermissions(stale, QFileDevice::ReadOwner | QFileDevice::WriteOwner |
                                             QFileDevice::ExeOwner)); // 0700, as ours are
    QVERIFY(QDir().mkpath(live));
    QTemporaryDir bin;
    fakeSsh(bin, "echo 'ssh: Could not resolve hostname sweep.invalid' >&2\nexit 255\n");
    const QByteArray runtimeWas = qgetenv("XDG_RUNTIME_DIR");
    qputenv("XDG_RUNTIME_DIR", runtime.path().toLocal8Bit());
    SshMaster *master = SshMaster::forAddress(EngineAddress::parse("ssh://sweep.invalid"), {});
    QSignalSpy failed(master, &SshMaster::startFailed);
    master->start(); // its folder is made beside them, and what a dead instance left goes
    if (runtimeWas.isNull())
        qunsetenv("XDG_RUNTIME_DIR");
    else
        qputenv("XDG_RUNTIME_DIR", runtimeWas);
    QVERIFY(master->folder().startsWith(runtime.path() + "/code-sandbox-ssh-"));
    QVERIFY(!QFileInfo::exists(stale));
    QVERIFY(QFileInfo::exists(live));
    QVERIFY(failed.wait(3 * SshMaster::kStartTimeoutMs));
    restorePath();
    QVERIFY2(failed.first().first().toString().contains("Could not resolve hostname"),
             qPrintable(failed.first().first().toString()));
}

void tst_SshTransport::sweepLeavesWhatIsNotCertainlyOurs()
{
    QTemporaryDir runtime; // as $XDG_RUNTIME_DIR (the shared temporary folder, say)
    QTemporaryDir victim;  // one of our folders, with what we keep there
    QVERIFY(runtime.isValid() && victim.isValid());
    QFile kept(victim.filePath("kept"));
    QVERIFY(kept.open(QIODevice::WriteOnly) && kept.write("mine") == 4);
    kept.close();
    QProcess gone; // a process id that was and is no more
    gone.start(QStringLiteral("true"));
    QVERIFY(gone.waitForFinished());
    const auto stale = [&](const char *tail) {
        return runtime.filePath(QStringLiteral("code-sandbox-ssh-%1-%2")
                                    .arg(gone.processId())
                                    .arg(QLatin1String(tail)));
    };
    const QFileDevice::Permissions owner =
        QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner;
    // Planted by another user: a link named as a dead instance's folder, to one of ours.
    QVERIFY(QFile::link(victim.path(), stale("Link")));
    // Not as we make ours (0755): not certainly ours, so it stays.
    QVERIFY(QDir().mkpath(stale("Open") + "/sub"));
    QVERIFY(QFile::setPermissions(stale("Open"),
                                  owner | QFileDevice::ReadGroup | QFileDevice::ExeGroup |
                                      QFileDevice::ReadOther | QFileDevice::ExeOther));
    // A dead instance's own (0700): the sweep runs, and this goes.
    QVERIFY(QDir().mkpath(stale("Mine") + "/sub"));
    QVERIFY(QFile::setPermissions(stale("Mine"), owner));
    QTemporaryDir bin;
    fakeSsh(bin, "echo 'ssh: Could not resolve hostname sweep2.invalid' >&2\nexit 255\n");
    const QByteArray runtimeWas = qgetenv("XDG_RUNTIME_DIR");
    qputenv("XDG_RUNTIME_DIR", runtime.path().toLocal8Bit());
    SshMaster *master = SshMaster::forAddress(EngineAddress::parse("ssh://sweep2.invalid"), {});
    QSignalSpy failed(master, &SshMaster::startFailed);
    master->start();
    if (runtimeWas.isNull())
        qunsetenv("XDG_RUNTIME_DIR");
    else
        qputenv("XDG_RUNTIME_DIR", runtimeWas);
    QVERIFY(master->folder().startsWith(runtime.path() + "/code-sandbox-ssh-"));
    QVERIFY(!QFileInfo::exists(stale("Mine")));
    QVERIFY(QFileInfo::exists(victim.filePath("kept")));
    QVERIFY(QFileInfo(stale("Link")).isSymLink());
    QVERIFY(QFileInfo::exists(stale("Open") + "/sub"));
    QVERIFY(failed.wait(3 * SshMaster::kStartTimeoutMs));
    restorePath();
}

void tst_SshTransport::waitingConnectionFollowsARefusalMadeMeanwhile()
{
    QTemporaryDir bin;
    // The engine's ssh connection never gets ready (a slow key exchange); dial-stdio says so
    // and ends.
    fakeSsh(bin, "case \"$*\" in\n*dial-stdio*) echo 'dial-stdio ran' >&2; exit 3;;\nesac\n"
                 "exec sleep 600\n");
    qunsetenv("CODE_SANDBOX_SSH_CONFIG");
    const EngineAddress address = EngineAddress::parse(QStringLiteral("ssh://starting.invalid"));
    std::unique_ptr<EngineTransport> t(EngineTransport::create(address));
    QSignalSpy failed(t.get(), &EngineTransport::failed);
    t->open();
    SshMaster *master = SshMaster::forAddress(address, {});
    QCOMPARE(master->state(), SshMaster::State::Starting);
    // Another connection's fallback proves the server refuses the forward while this one waits
    // for the start: it goes through dial-stdio too, rather than waiting for ever.
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression("refuses to forward the engine's socket"));
    master->markForwardRefused();
    QVERIFY(failed.wait(3 * SshMaster::kStartTimeoutMs));
    restorePath();
    QVERIFY2(failed.first().first().toString().contains("dial-stdio ran"),
             qPrintable(failed.first().first().toString()));
}

void tst_SshTransport::connectionEndedMidRequestIsNoRefusal()
{
    PrivateSshd sshd;
    FakeEngine engine;
    const EngineAddress address = startSshd(sshd, engine, QStringLiteral("plain"));
    // The first request of a new ssh connection (forwarding not proven yet) waits there; a
    // replay of it through dial-stdio would be answered.
    engine.holdUntil = 2;
    std::unique_ptr<EngineTransport> t(EngineTransport::create(address));
    QSignalSpy opened(t.get(), &EngineTransport::opened);
    QSignalSpy failed(t.get(), &EngineTransport::failed);
    t->open();
    QVERIFY(opened.wait(3 * SshMaster::kStartTimeoutMs));
    t->write("GET /hold HTTP/1.1\r\nHost: docker\r\n\r\n");
    QTRY_COMPARE_WITH_TIMEOUT(engine.held(), 1, 20000);
    SshMaster *master = SshMaster::forAddress(address, sshd.config("plain"));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression("the ssh connection to .* ended"));
    // The ssh connection dies mid-request: that says nothing about forwarding.
    ::kill(pid_t(master->processId()), SIGKILL);
    QTRY_VERIFY_WITH_TIMEOUT(!failed.isEmpty() || t->bytesAvailable() > 0,
                             3 * SshMaster::kStartTimeoutMs);
    QVERIFY(!master->forwardRefused());
    QCOMPARE(failed.size(), 1);
    QVERIFY2(failed.first().first().toString().contains("ended before the engine answered"),
             qPrintable(failed.first().first().toString()));
    QTRY_COMPARE_WITH_TIMEOUT(master->state(), SshMaster::State::Idle, 20000);
    QCOMPARE(sshd.accepted(), 1); // no dial-stdio was tried
}

void tst_SshTransport::killedProcessesGoWithTheMaster()
{
    QTemporaryDir bin;
    fakeSsh(bin, "exec sleep 600\n"); // neither the connection nor dial-stdio ever answers
    qunsetenv("CODE_SANDBOX_SSH_CONFIG");
    const EngineAddress address = EngineAddress::parse(QStringLiteral("ssh://reap.invalid"));
    SshMaster *master = SshMaster::forAddress(address, {});
    master->start();
    QTRY_VERIFY(master->processId() > 0);
    const QPointer<QProcess> own = master->findChild<QProcess *>();
    QVERIFY(own);
    std::unique_ptr<EngineTransport> t(EngineTransport::create(address));
    t->open(); // waits for the start
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression("refuses to forward the engine's socket"));
    master->markForwardRefused(); // kills ours; the connection starts its dial-stdio
    restorePath();
    const QPointer<QProcess> dial = t->findChild<QProcess *>();
    const bool dialStarted = dial;
    t->abort(); // kills it
    // The application ends before either killed process was reaped: both go with the master.
    delete master;
    QVERIFY(!own);
    QVERIFY(dialStarted);
    QVERIFY(!dial);
}

QTEST_GUILESS_MAIN(tst_SshTransport)
#include "tst_sshtransport.moc"
