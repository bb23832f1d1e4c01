#include "interceptionauthority.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSslCertificate>
#include <QSslCertificateExtension>
#include <QTemporaryDir>
#include <QTest>
#include <memory>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

template <auto Free> struct OpenSslFree
{
    template <typename T> void operator()(T *p) const { Free(p); }
};
using BioPtr = std::unique_ptr<BIO, OpenSslFree<BIO_free_all>>;
using BignumPtr = std::unique_ptr<BIGNUM, OpenSslFree<BN_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslFree<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, OpenSslFree<X509_free>>;

X509Ptr parseCertificate(const QByteArray &pem)
{
    const BioPtr bio(BIO_new_mem_buf(pem.constData(), int(pem.size())));
    return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

KeyPtr parseKey(const QByteArray &pem)
{
    const BioPtr bio(BIO_new_mem_buf(pem.constData(), int(pem.size())));
    return KeyPtr(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
}

QByteArray contents(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

bool overwrite(const QString &path, const QByteArray &data)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate) && file.write(data) == data.size();
}

// The mode bits themselves: QFile::permissions() adds the "user" bits of whoever runs the test.
int mode(const QString &path)
{
    struct stat st;
    if (::stat(QFile::encodeName(path).constData(), &st) != 0)
        return -1;
    return int(st.st_mode & 07777);
}

std::optional<QSslCertificateExtension> extension(const QSslCertificate &certificate,
                                                  const QString &name)
{
    for (const QSslCertificateExtension &e : certificate.extensions()) {
        if (e.name() == name)
            return e;
    }
    return std::nullopt;
}

} // namespace

class tst_InterceptionAuthority : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void makesAuthorityInNewFolder();
    void keySignsCertificate();
    void loadsSameAuthorityAgain();
    void eachFolderHasItsOwn();
    void missingKey();
    void missingCertificate();
    void garbageCertificate();
    void garbageKey();
    void keyOfAnotherAuthority();
    void unreadableKey();
    void folderInPlaceOfKey();
    void tightensKeyFileReadableByOthers();

private:
    QString certificatePath() const
    {
        return m_folder + u'/' + QLatin1String(InterceptionAuthority::kCertificateFile);
    }
    QString keyPath() const
    {
        return m_folder + u'/' + QLatin1String(InterceptionAuthority::kKeyFile);
    }

    std::unique_ptr<QTemporaryDir> m_dir;
    // Below the temporary folder and not yet there, as ~/.config/code-sandbox on a first start.
    QString m_folder;
};

void tst_InterceptionAuthority::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_folder = m_dir->filePath(QStringLiteral("config/code-sandbox"));
}

void tst_InterceptionAuthority::makesAuthorityInNewFolder()
{
    QString error;
    const std::optional<InterceptionAuthority> authority =
        InterceptionAuthority::loadOrCreate(m_folder, &error);
    QVERIFY2(authority, qPrintable(error));
    QVERIFY(error.isEmpty());

    QCOMPARE(contents(certificatePath()), authority->certificatePem());
    QCOMPARE(contents(keyPath()), authority->keyPem());
    QCOMPARE(mode(keyPath()), 0600);
    QCOMPARE(mode(certificatePath()), 0644);
    QCOMPARE(mode(m_folder), 0700);
    QVERIFY(authority->keyPem().startsWith("-----BEGIN PRIVATE KEY-----\n"));
    QVERIFY(authority->certificatePem().startsWith("-----BEGIN CERTIFICATE-----\n"));

    const QList<QSslCertificate> parsed =
        QSslCertificate::fromData(authority->certificatePem(), QSsl::Pem);
    QCOMPARE(parsed.size(), 1);
    const QSslCertificate &certificate = parsed.first();
    QVERIFY(!certificate.isNull());
    QVERIFY(certificate.isSelfSigned());
    QCOMPARE(certificate.issuerDisplayName(), certificate.subjectDisplayName());
    const QStringList cn = certificate.subjectInfo(QSslCertificate::CommonName);
    QCOMPARE(cn.size(), 1);
    QVERIFY2(cn.first().startsWith(QStringLiteral("Code Sandbox secrets CA")), qPrintable(cn[0]));
    QVERIFY(cn.first().size() <= 64);
    QCOMPARE(certificate.subjectInfo(QSslCertificate::Organization),
             QStringList{QStringLiteral("Code Sandbox")});
    QCOMPARE(certificate.version(), QByteArray("3"));

    // Valid from a day ago, for ten years.
    const QDateTime now = QDateTime::currentDateTimeUtc();
    QVERIFY2(qAbs(certificate.effectiveDate().secsTo(now.addDays(-1))) < 120,
             qPrintable(certificate.effectiveDate().toString(Qt::ISODate)));
    QVERIFY2(qAbs(certificate.expiryDate().secsTo(certificate.effectiveDate().addYears(10))) <= 1,
             qPrintable(certificate.expiryDate().toString(Qt::ISODate)));

    const std::optional<QSslCertificateExtension> basic =
        extension(certificate, QStringLiteral("basicConstraints"));
    QVERIFY(basic);
    QVERIFY(basic->isCritical());
    const QVariantMap constraints = basic->value().toMap();
    QCOMPARE(constraints.value(QStringLiteral("ca")), QVariant(true));
    QCOMPARE(constraints.value(QStringLiteral("pathLenConstraint")).toInt(), 0);
    QVERIFY(constraints.contains(QStringLiteral("pathLenConstraint")));
    const std::optional<QSslCertificateExtension> usage =
        extension(certificate, QStringLiteral("keyUsage"));
    QVERIFY(usage);
    QVERIFY(usage->isCritical());
    QVERIFY(extension(certificate, QStringLiteral("subjectKeyIdentifier")));

    // The same, as libcrypto reads it (which the gateway does).
    const X509Ptr x509 = parseCertificate(authority->certificatePem());
    QVERIFY(x509);
    QCOMPARE(X509_check_ca(x509.get()), 1);
    QCOMPARE(X509_get_key_usage(x509.get()), uint32_t(KU_KEY_CERT_SIGN | KU_CRL_SIGN));
    QCOMPARE(X509_get_pathlen(x509.get()), 0L);
    QVERIFY(X509_get0_subject_key_id(x509.get()) != nullptr);
    const BignumPtr serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(x509.get()), nullptr));
    QVERIFY(serial);
    QVERIFY(!BN_is_negative(serial.get()));
    QCOMPARE(BN_num_bytes(serial.get()), 16);
}

void tst_InterceptionAuthority::keySignsCertificate()
{
    QString error;
    const std::optional<InterceptionAuthority> authority =
        InterceptionAuthority::loadOrCreate(m_folder, &error);
    QVERIFY2(authority, qPrintable(error));
    const X509Ptr certificate = parseCertificate(authority->certificatePem());
    const KeyPtr key = parseKey(authority->keyPem());
    QVERIFY(certificate);
    QVERIFY(key);
    char group[64] = {};
    QVERIFY(EVP_PKEY_get_group_name(key.get(), group, sizeof group, nullptr) == 1);
    QCOMPARE(QByteArray(group), QByteArray("prime256v1"));
    QCOMPARE(X509_verify(certificate.get(), key.get()), 1);
    QCOMPARE(X509_check_private_key(certificate.get(), key.get()), 1);

    // And the check above can fail: another authority's key did not sign it.
    const std::optional<InterceptionAuthority> other =
        InterceptionAuthority::loadOrCreate(m_dir->filePath(QStringLiteral("other")), &error);
    QVERIFY2(other, qPrintable(error));
    const KeyPtr otherKey = parseKey(other->keyPem());
    QVERIFY(otherKey);
    QVERIFY(X509_verify(certificate.get(), otherKey.get()) != 1);
}

void tst_InterceptionAuthority::loadsSameAuthorityAgain()
{
    QString error;
    const std::optional<InterceptionAuthority> made =
        InterceptionAuthority::loadOrCreate(m_folder, &error);
    QVERIFY2(made, qPrintable(error));
    const QByteArray certificateFile = contents(certificatePath());
    const QByteArray keyFile = contents(keyPath());

    const std::optional<InterceptionAuthority> loaded =
        InterceptionAuthority::loadOrCreate(m_folder, &error);
    QVERIFY2(loaded, qPrintable(error));
    QCOMPARE(loaded->certificatePem(), made->certificatePem());
    QCOMPARE(loaded->keyPem(), made->keyPem());
    QCOMPARE(contents(certificatePath()), certificateFile);
    QCOMPARE(contents(keyPath()), keyFile);
}

void tst_InterceptionAuthority::eachFolderHasItsOwn()
{
    QString error;
    const std::optional<InterceptionAuthority> one =
        InterceptionAuthority::loadOrCreate(m_folder, &error);
    QVERIFY2(one, qPrintable(error));
    const std::optional<InterceptionAuthority> two =
        InterceptionAuthority::loadOrCreate(m_dir->filePath(QStringLiteral("two")), &error);
    QVERIFY2(two, qPrintable(error));
    QVERIFY(one->keyPem() != two->keyPem());
    QVERIFY(one->certificatePem() != two->certificatePem());
    const QSslCertificate a(one->certificatePem(), QSsl::Pem);
    const QSslCertificate b(two->certificatePem(), QSsl::Pem);
    QVERIFY(!a.isNull() && !b.isNull());
    QVERIFY(a.serialNumber() != b.serialNumber());
}

void tst_InterceptionAuthority::missingKey()
{
    QString error;
    QVERIFY(InterceptionAuthority::loadOrCreate(m_folder, &error));
    const QByteArray certificateFile = contents(certificatePath());
    QVERIFY(QFile::remove(keyPath()));

    QVERIFY(!InterceptionAuthority::loadOrCreate(m_folder, &error));
    QVERIFY2(error.contains(keyPath()), qPrintable(error));
    QVERIFY(!QFile::exists(keyPath()));
    QCOMPARE(contents(certificatePath()), certificateFile);
    // Without a place for the message as well.
    QVERIFY(!InterceptionAuthority::loadOrCreate(m_folder, nullptr));
}

void tst_InterceptionAuthority::missingCertificate()
{
    QString error;
    QVERIFY(InterceptionAuthority::loadOrCreate(m_folder, &error));
    const QByteArray keyFile = contents(keyPath());
    QVERIFY(QFile::remove(certificatePath()));

    QVERIFY(!InterceptionAuthority::loadOrCreate(m_folder, &error));
    QVERIFY2(error.contains(certificatePath()), qPrintable(error));
    QVERIFY(!QFile::exists(certificatePath()));
    QCOMPARE(contents(keyPath()), keyFile);
}

void tst_InterceptionAuthority::garbageCertificate()
{
    QString error;
    QVERIFY(InterceptionAuthority::loadOrCreate(m_folder, &error));
    const QByteArray keyFile = contents(keyPath());
    const QByteArray garbage = "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n"
                               "-----END CERTIFICATE-----\n";
    QVERIFY(overwrite(certificatePath(), garbage));

    error.clear();
    QVERIFY(!InterceptionAuthority::loadOrCreate(m_folder, &error));
    QVERIFY2(error.contains(certificatePath()), qPrintable(error));
    QCOMPARE(contents(certificatePath()), garbage);
    QCOMPARE(contents(keyPath()), keyFile);
}

void tst_InterceptionAuthority::garbageKey()
{
    QString error;
    QVERIFY(InterceptionAuthority::loadOrCreate(m_folder, &error));
    const QByteArray certificateFile = contents(certificatePath());
    QVERIFY(overwrite(keyPath(), "not a key\n"));

    error.clear();
    QVERIFY(!InterceptionAuthority::loadOrCreate(m_folder, &error));
    QVERIFY2(error.contains(keyPath()), qPrintable(error));
    QCOMPARE(contents(keyPath()), QByteArray("not a key\n"));
    QCOMPARE(contents(certificatePath()), certificateFile);
}

void tst_InterceptionAuthority::keyOfAnotherAuthority()
{
    QString error;
    QVERIFY(InterceptionAuthority::loadOrCreate(m_folder, &error));
    const QString otherFolder = m_dir->filePath(QStringLiteral("other"));
    QVERIFY(InterceptionAuthority::loadOrCreate(otherFolder, &error));
    const QByteArray certificateFile = contents(certificatePath());
    const QByteArray otherKey =
        contents(otherFolder + u'/' + QLatin1String(InterceptionAuthority::kKeyFile));
    QVERIFY(!otherKey.isEmpty());
    QVERIFY(overwrite(keyPath(), otherKey));

    error.clear();
    QVERIFY(!InterceptionAuthority::loadOrCreate(m_folder, &error));
    QVERIFY2(error.contains(QStringLiteral("does not match")), qPrintable(error));
    QVERIFY2(error.contains(keyPath()), qPrintable(error));
    QCOMPARE(contents(certificatePath()), certificateFile);
    QCOMPARE(contents(keyPath()), otherKey);
}

void tst_InterceptionAuthority::unreadableKey()
{
    if (::geteuid() == 0)
        QSKIP("root reads the file whatever its permissions");
    QString error;
    QVERIFY(InterceptionAuthority::loadOrCreate(m_folder, &error));
    QVERIFY(QFile::setPermissions(keyPath(), {}));

    error.clear();
    QVERIFY(!InterceptionAuthority::loadOrCreate(m_folder, &error));
    QVERIFY2(error.contains(keyPath()), qPrintable(error));
    QCOMPARE(mode(keyPath()), 0);
}

// Unreadable for root as well.
void tst_InterceptionAuthority::folderInPlaceOfKey()
{
    QString error;
    QVERIFY(InterceptionAuthority::loadOrCreate(m_folder, &error));
    const QByteArray certificateFile = contents(certificatePath());
    QVERIFY(QFile::remove(keyPath()));
    QVERIFY(QDir().mkdir(keyPath()));

    error.clear();
    QVERIFY(!InterceptionAuthority::loadOrCreate(m_folder, &error));
    QVERIFY2(error.contains(keyPath()), qPrintable(error));
    QVERIFY(QFileInfo(keyPath()).isDir());
    QCOMPARE(contents(certificatePath()), certificateFile);
}

void tst_InterceptionAuthority::tightensKeyFileReadableByOthers()
{
    QString error;
    const std::optional<InterceptionAuthority> made =
        InterceptionAuthority::loadOrCreate(m_folder, &error);
    QVERIFY2(made, qPrintable(error));
    QCOMPARE(::chmod(QFile::encodeName(keyPath()).constData(), 0644), 0);

    const std::optional<InterceptionAuthority> loaded =
        InterceptionAuthority::loadOrCreate(m_folder, &error);
    QVERIFY2(loaded, qPrintable(error));
    QCOMPARE(loaded->keyPem(), made->keyPem());
    QCOMPARE(mode(keyPath()), 0600);
}

QTEST_GUILESS_MAIN(tst_InterceptionAuthority)
#include "tst_interceptionauthority.moc"
