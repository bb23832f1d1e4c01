#pragma once

#include "worldserver.h"

#include <QFile>
#include <QHostAddress>
#include <QProcess>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslServer>
#include <QStringList>

// The TLS test world of the egress tests, made with openssl in `dir`: ca.pem (a CA standing for
// the host's trust store) and server.pem/server.key for world.test and other.test signed by it;
// bad.pem/bad.key, a certificate for bad.test that nobody trusts.
inline bool makeTestCertificates(const QString &dir)
{
    const auto run = [&dir](const QStringList &args) {
        QProcess p;
        p.setWorkingDirectory(dir);
        p.start(QStringLiteral("openssl"), args);
        return p.waitForFinished(30000) && p.exitCode() == 0;
    };
    QFile ext(dir + QStringLiteral("/ext"));
    if (!ext.open(QIODevice::WriteOnly) ||
        ext.write("subjectAltName=DNS:world.test,DNS:other.test\n") < 0)
        return false;
    ext.close();
    return run({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
                "ca.pem", "-days", "2", "-subj", "/CN=egress test CA"}) &&
           run({"req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
                "server.csr", "-subj", "/CN=world.test"}) &&
           run({"x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext"}) &&
           run({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "bad.key", "-out",
                "bad.pem", "-days", "2", "-subj", "/CN=bad.test", "-addext",
                "subjectAltName=DNS:bad.test"});
}

// `server` serving TLS with the certificate and key of those files, on every IPv4 address.
inline bool listenWithTls(WorldServer<QSslServer> &server, const QString &certificate,
                          const QString &key)
{
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setLocalCertificate(QSslCertificate::fromPath(certificate).value(0));
    QFile file(key);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    tls.setPrivateKey(QSslKey(&file, QSsl::Rsa));
    server.setSslConfiguration(tls);
    return server.listen(QHostAddress::AnyIPv4);
}
