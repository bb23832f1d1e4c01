#pragma once

#include <QByteArray>
#include <QList>
#include <QSslCertificate>
#include <QSslKey>

// PEM certificates and keys as kubeconfig files and credential plugins hand them over.
class KubePem
{
public:
    static QList<QSslCertificate> certificates(const QByteArray &pem);
    // A PEM private key of whichever algorithm it is (Qt asks the caller to say); an encrypted
    // key is not supported (kubectl does not take one either).
    static QSslKey privateKey(const QByteArray &pem);
};
