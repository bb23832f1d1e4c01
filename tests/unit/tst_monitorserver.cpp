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
#include <sys/un.h>
#include <unistd.h>

class tst_MonitorServer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void isServed();
    void aLiveWindowKeepsItsSocket();
    void aStaleSocketIsReplaced();

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

QTEST_GUILESS_MAIN(tst_MonitorServer)
#include "tst_monitorserver.moc"
