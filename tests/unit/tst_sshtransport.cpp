#include "engineaddress.h"
#include "engineclient.h"
#include "enginereply.h"
#include "enginetransport.h"
#include "sshtransport.h"

#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

// The ssh command line for each form of ssh:// address, what becomes of ssh's stderr, and the
// transport driven through a stand-in for ssh (a script first on PATH), so that no sshd is needed.
class tst_SshTransport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void arguments_data();
    void arguments();
    void summarize();
    void failsWithWhatSshSaid();
    void speaksHttpThroughTheProcess();

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

    QByteArray m_path;
};

void tst_SshTransport::arguments_data()
{
    QTest::addColumn<QString>("address");
    QTest::addColumn<QString>("config");
    QTest::addColumn<QString>("command"); // the arguments, joined by spaces

    const QString common = QStringLiteral("-T -o BatchMode=yes -o ConnectTimeout=10");
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
    EngineClient engine(EngineAddress::parse(QStringLiteral("ssh://me@build.lan")));
    EngineReply *r = engine.ping();
    QSignalSpy spy(r, &EngineReply::finished);
    QVERIFY(spy.wait(3 * EngineTransport::kConnectTimeoutMs));
    restorePath();
    QCOMPARE(int(r->error().kind), int(EngineError::Kind::Unreachable));
    QCOMPARE(r->error().message,
             QStringLiteral("cannot reach the container engine at ssh://me@build.lan: "
                            "me@build.lan: Permission denied (publickey)."));
}

void tst_SshTransport::speaksHttpThroughTheProcess()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // A stand-in for `ssh … docker system dial-stdio` to an engine that answers every request
    // of a kept-alive connection with the same version document: it records its arguments and
    // answers each request head (blank line) it reads.
    const QByteArray body = R"({"ApiVersion":"1.41","Version":"99.0-fake"})";
    fakeSsh(dir, "echo \"$@\" >> " + dir.filePath("calls").toLocal8Bit() +
                     "\nwhile IFS= read -r line; do\n"
                     "  case \"$line\" in\n"
                     "    $(printf '\\r')) printf 'HTTP/1.1 200 OK\\r\\nContent-Type: "
                     "application/json\\r\\nContent-Length: " +
                     QByteArray::number(body.size()) + "\\r\\n\\r\\n%s' '" + body +
                     "' ;;\n"
                     "  esac\n"
                     "done\n");
    {
        EngineClient engine(EngineAddress::parse(QStringLiteral("ssh://me@build.lan:2222/e.sock")));
        for (int i = 0; i < 3; ++i) {
            EngineReply *r = engine.get("/version");
            QSignalSpy spy(r, &EngineReply::finished);
            QVERIFY(spy.wait(3 * EngineTransport::kConnectTimeoutMs));
            QVERIFY2(r->ok(), qPrintable(r->error().toString()));
            QCOMPARE(r->json().value(u"Version").toString(), QStringLiteral("99.0-fake"));
        }
        QCOMPARE(engine.versionInfo().value(u"Version").toString(), QStringLiteral("99.0-fake"));
    }
    restorePath();
    QFile calls(dir.filePath("calls"));
    QVERIFY(calls.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = calls.readAll().trimmed().split('\n');
    // One ssh process carried all the requests (the connection was reused), with the command
    // line the Docker CLI uses.
    QCOMPARE(lines.size(), 1);
    QVERIFY2(lines.first().endsWith("-l me -p 2222 -- build.lan docker --host unix:///e.sock "
                                    "system dial-stdio"),
             lines.first().constData());
}

QTEST_GUILESS_MAIN(tst_SshTransport)
#include "tst_sshtransport.moc"
