#include "foreignpeer.h"
#include "monitorserver.h"
#include "monitorsocket.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalSocket>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

class tst_MonitorServer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void isServed();
    void aLiveWindowKeepsItsSocket();
    void aStaleSocketIsReplaced();
    void checkFolder();
    void peerUid();
    void anotherUsersInstanceIsRefused();

private:
    static void askToShow(const QString &path)
    {
        QLocalSocket socket;
        socket.connectToServer(path);
        QVERIFY(socket.waitForConnected(2000));
        socket.write(QJsonDocument(QJsonObject{{QStringLiteral("type"), QStringLiteral("show")}})
                         .toJson(QJsonDocument::Compact) +
                     '\n');
        QVERIFY(socket.waitForBytesWritten(2000));
        socket.disconnectFromServer();
    }

    // What a crashed window leaves: the socket file, bound but with nobody listening.
    static QString staleSocket(const QString &path)
    {
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        const QByteArray name = QFile::encodeName(path);
        memcpy(addr.sun_path, name.constData(), size_t(name.size()));
        const bool bound = ::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0;
        ::close(fd);
        return bound ? path : QString();
    }
};

void tst_MonitorServer::isServed()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("monitor.sock"));
    QVERIFY(!MonitorSocket::isServed(path)); // no file
    QCOMPARE(staleSocket(path), path);
    QVERIFY(QFile::exists(path));
    QVERIFY(!MonitorSocket::isServed(path)); // a file, nobody listening
    QVERIFY(!MonitorSocket::isServed(QString()));
    QVERIFY(!MonitorSocket::isServed(QString(200, u'x'))); // longer than sun_path
    MonitorServer server;
    QString error;
    QVERIFY2(server.listen(path, &error), qPrintable(error));
    QVERIFY(MonitorSocket::isServed(path));
}

void tst_MonitorServer::aLiveWindowKeepsItsSocket()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("monitor.sock"));
    MonitorServer first;
    QString error;
    QVERIFY2(first.listen(path, &error), qPrintable(error));

    // A second window must not take the socket of one that is still there.
    MonitorServer second;
    QVERIFY(!second.listen(path, &error));
    QCOMPARE(error, QStringLiteral("another Code Sandbox window listens on ") + path);

    // The first still gets what is sent to that path.
    QSignalSpy shown(&first, &MonitorServer::showRequested);
    askToShow(path);
    QVERIFY(shown.wait(5000));
}

void tst_MonitorServer::aStaleSocketIsReplaced()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("monitor.sock"));
    QCOMPARE(staleSocket(path), path);
    MonitorServer server;
    QString error;
    QVERIFY2(server.listen(path, &error), qPrintable(error));
    QSignalSpy shown(&server, &MonitorServer::showRequested);
    askToShow(path);
    QVERIFY(shown.wait(5000));
}

void tst_MonitorServer::checkFolder()
{
    QTemporaryDir dir;
    const QByteArray folder = QFile::encodeName(dir.path());
    const QString path = dir.filePath(QStringLiteral("monitor.sock"));
    QString why;
    QCOMPARE(MonitorSocket::checkFolder(path, &why), MonitorSocket::Folder::Private);
    QCOMPARE(MonitorSocket::checkFolder(dir.filePath(QStringLiteral("none/monitor.sock"))),
             MonitorSocket::Folder::Missing);
    QVERIFY(::chmod(folder.constData(), 0710) == 0);
    QCOMPARE(MonitorSocket::checkFolder(path, &why), MonitorSocket::Folder::Unsafe);
    QVERIFY2(why.contains(QStringLiteral("0710")), qPrintable(why));
    QVERIFY(::chmod(folder.constData(), 0700) == 0);
    // A link to a private folder is not the folder.
    QVERIFY(QFile::link(dir.path(), dir.path() + QStringLiteral(".link")));
    QCOMPARE(MonitorSocket::checkFolder(dir.path() + QStringLiteral(".link/monitor.sock"), &why),
             MonitorSocket::Folder::Unsafe);
    QFile::remove(dir.path() + QStringLiteral(".link"));
    if (::geteuid() == 0) {
        QVERIFY(::chown(folder.constData(), 65534, 65534) == 0);
        QCOMPARE(MonitorSocket::checkFolder(path, &why), MonitorSocket::Folder::Unsafe);
        QVERIFY2(why.contains(QStringLiteral("65534")), qPrintable(why));
        QVERIFY(::chown(folder.constData(), 0, 0) == 0);
    }
}

void tst_MonitorServer::peerUid()
{
    QCOMPARE(MonitorSocket::peerUid(-1), qint64(-1));
    int pair[2];
    QVERIFY(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    QCOMPARE(MonitorSocket::peerUid(pair[0]), qint64(::geteuid()));
    ::close(pair[0]);
    ::close(pair[1]);
}

// The window, too, listens only to this user: another user that reaches the socket (a folder
// opened by mistake) is dropped before anything it says counts.
void tst_MonitorServer::anotherUsersInstanceIsRefused()
{
    if (::geteuid() != 0)
        QSKIP("needs root, to connect as another user");
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("monitor.sock"));
    MonitorServer server;
    QString error;
    QVERIFY2(server.listen(path, &error), qPrintable(error));
    QVERIFY(::chmod(QFile::encodeName(dir.path()).constData(), 0711) == 0);
    QVERIFY(::chmod(QFile::encodeName(path).constData(), 0777) == 0);
    QSignalSpy connected(&server, &MonitorServer::instanceConnected);
    QSignalSpy shown(&server, &MonitorServer::showRequested);
    const QByteArray said = R"({"type":"hello","instance":"intruder"})"
                            "\n"
                            R"({"type":"show"})"
                            "\n";
    ForeignPeer intruder(ForeignPeer::Role::Client, path, said);
    QVERIFY(intruder.started());
    // Its connection is ended by the window, not left open.
    QTRY_VERIFY2_WITH_TIMEOUT(intruder.count(QStringLiteral("closed")) == 1,
                              qPrintable(intruder.reports().join(u'|')), 15000);
    QCOMPARE(intruder.count(QStringLiteral("connected")), 1);
    QCOMPARE(connected.size(), 0);
    QCOMPARE(shown.size(), 0);
    QCOMPARE(server.instanceCount(), 0);
    // This user still gets in.
    askToShow(path);
    QVERIFY(shown.wait(5000));
    QCOMPARE(shown.size(), 1);
}

QTEST_GUILESS_MAIN(tst_MonitorServer)
#include "tst_monitorserver.moc"
