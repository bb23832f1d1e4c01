#pragma once

// Certificates for the Kubernetes tests, made at test time with openssl: a cluster CA and a
// server certificate it signed (for 127.0.0.1 and kube.test), one for kube.test only, a client
// CA with a client certificate (CN alice, O sandbox-users), and a second CA with a server
// certificate of its own that the cluster's CA did not sign.

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QStringList>

class KubePki
{
public:
    explicit KubePki(const QString &dir) : m_dir(dir) {}

    QString path(const QString &name) const { return m_dir + u'/' + name; }
    QByteArray read(const QString &name) const
    {
        QFile f(path(name));
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

    // Empty on success, else what failed.
    QString make()
    {
        QDir().mkpath(m_dir);
        if (QStandardPaths::findExecutable(QStringLiteral("openssl")).isEmpty())
            return QStringLiteral("openssl is not installed");
        // One after the other: a leaf needs its CA.
        QString e;
        e += ca("ca");
        e += ca("client-ca");
        e += ca("other-ca");
        e += leaf("server", "ca", "/CN=kube-apiserver",
                  "subjectAltName=IP:127.0.0.1,DNS:kube.test\nextendedKeyUsage=serverAuth\n");
        e += leaf("named", "ca", "/CN=kube-apiserver",
                  "subjectAltName=DNS:kube.test\nextendedKeyUsage=serverAuth\n");
        e += leaf("alice", "client-ca", "/O=sandbox-users/CN=alice",
                  "extendedKeyUsage=clientAuth\n");
        e += leaf("other-server", "other-ca", "/CN=kube-apiserver",
                  "subjectAltName=IP:127.0.0.1,DNS:kube.test\nextendedKeyUsage=serverAuth\n");
        return e;
    }

private:
    QString run(const QStringList &args)
    {
        QProcess p;
        p.setWorkingDirectory(m_dir);
        p.start(QStringLiteral("openssl"), args);
        if (!p.waitForFinished(60000) || p.exitCode() != 0)
            return QStringLiteral("openssl %1: %2\n")
                .arg(args.join(u' '), QString::fromUtf8(p.readAllStandardError()));
        return {};
    }

    static QStringList ecKey()
    {
        return {QStringLiteral("-newkey"), QStringLiteral("ec"), QStringLiteral("-pkeyopt"),
                QStringLiteral("ec_paramgen_curve:prime256v1"), QStringLiteral("-nodes")};
    }

    QString ca(const char *name)
    {
        const QString n = QLatin1String(name);
        return run(QStringList{QStringLiteral("req"), QStringLiteral("-x509")} + ecKey() +
                   QStringList{QStringLiteral("-keyout"), n + ".key", QStringLiteral("-out"),
                               n + ".crt", QStringLiteral("-subj"), "/CN=" + n,
                               QStringLiteral("-days"), QStringLiteral("2")});
    }

    QString leaf(const char *name, const char *issuer, const char *subject, const char *ext)
    {
        const QString n = QLatin1String(name);
        const QString i = QLatin1String(issuer);
        QFile extFile(path(n + ".ext"));
        if (!extFile.open(QIODevice::WriteOnly) || extFile.write(ext) < 0)
            return QStringLiteral("cannot write %1\n").arg(extFile.fileName());
        extFile.close();
        // Two statements: the request must exist before it is signed.
        const QString request =
            run(QStringList{QStringLiteral("req")} + ecKey() +
                QStringList{QStringLiteral("-keyout"), n + ".key", QStringLiteral("-out"),
                            n + ".csr", QStringLiteral("-subj"), QLatin1String(subject)});
        if (!request.isEmpty())
            return request;
        return run({QStringLiteral("x509"), QStringLiteral("-req"), QStringLiteral("-in"),
                    n + ".csr", QStringLiteral("-CA"), i + ".crt", QStringLiteral("-CAkey"),
                    i + ".key", QStringLiteral("-CAcreateserial"), QStringLiteral("-out"),
                    n + ".crt", QStringLiteral("-days"), QStringLiteral("2"),
                    QStringLiteral("-extfile"), n + ".ext"});
    }

    QString m_dir;
};
