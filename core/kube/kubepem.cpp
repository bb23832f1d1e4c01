#include "kubepem.h"

QList<QSslCertificate> KubePem::certificates(const QByteArray &pem)
{
    return QSslCertificate::fromData(pem, QSsl::Pem);
}

QSslKey KubePem::privateKey(const QByteArray &pem)
{
    for (const QSsl::KeyAlgorithm algorithm : {QSsl::Rsa, QSsl::Ec, QSsl::Dsa}) {
        const QSslKey key(pem, algorithm, QSsl::Pem, QSsl::PrivateKey);
        if (!key.isNull())
            return key;
    }
    return {};
}
