#include "interceptionauthority.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>
#include <QSysInfo>
#include <memory>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace {

template <auto Free> struct OpenSslFree
{
    template <typename T> void operator()(T *p) const { Free(p); }
};
using BioPtr = std::unique_ptr<BIO, OpenSslFree<BIO_free_all>>;
using BignumPtr = std::unique_ptr<BIGNUM, OpenSslFree<BN_free>>;
using ExtensionPtr = std::unique_ptr<X509_EXTENSION, OpenSslFree<X509_EXTENSION_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslFree<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, OpenSslFree<X509_free>>;

constexpr QFileDevice::Permissions kOwnerOnly = QFileDevice::ReadOwner | QFileDevice::WriteOwner;
constexpr QFileDevice::Permissions kReadableByAll =
    kOwnerOnly | QFileDevice::ReadGroup | QFileDevice::ReadOther;
// A key or certificate is a few hundred bytes; a file far larger is not one of ours.
constexpr qint64 kMaxPemFileSize = 1024 * 1024;
// RFC 5280's upper bound on a common name (ub-common-name), which OpenSSL enforces.
constexpr int kMaxCommonName = 64;

void setAuthorityError(QString *error, const QString &message)
{
    if (error)
        *error = message;
}

// The first error on OpenSSL's queue (the cause; later ones are its consequences), and the queue
// emptied so that it does not show up in a later, unrelated message.
QString takeOpenSslError()
{
    const unsigned long code = ERR_get_error();
    ERR_clear_error();
    if (code == 0)
        return QStringLiteral("no detail from OpenSSL");
    char text[256];
    ERR_error_string_n(code, text, sizeof text);
    return QString::fromLatin1(text);
}

QByteArray bioBytes(BIO *bio)
{
    char *data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    return size > 0 ? QByteArray(data, static_cast<qsizetype>(size)) : QByteArray();
}

std::optional<QByteArray> certificateToPem(X509 *certificate)
{
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio || PEM_write_bio_X509(bio.get(), certificate) != 1)
        return std::nullopt;
    return bioBytes(bio.get());
}

// PKCS#8, unencrypted: what the gateway reads. The secure-memory BIO wipes its copy when freed.
std::optional<QByteArray> keyToPem(EVP_PKEY *key)
{
    BioPtr bio(BIO_new(BIO_s_secmem()));
    if (!bio ||
        PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
        return std::nullopt;
    return bioBytes(bio.get());
}

QString authorityCommonName()
{
    const QString base = QStringLiteral("Code Sandbox secrets CA");
    // Tells the user's trust stores apart when they hold the authorities of several machines.
    QString host = QSysInfo::machineHostName();
    if (host.isEmpty())
        return base;
    const int room = kMaxCommonName - int(base.size()) - 3;
    if (host.size() > room)
        host.truncate(room);
    return QStringLiteral("%1 (%2)").arg(base, host);
}

bool addExtension(X509 *certificate, int nid, const char *value)
{
    X509V3_CTX context;
    X509V3_set_ctx(&context, certificate, certificate, nullptr, nullptr, 0);
    const ExtensionPtr extension(X509V3_EXT_nconf_nid(nullptr, &context, nid, value));
    return extension && X509_add_ext(certificate, extension.get(), -1) == 1;
}

// A new key and the self-signed certificate for it, as PEM.
bool makeAuthority(QByteArray *certificatePem, QByteArray *keyPem, QString *why)
{
    const KeyPtr key(EVP_EC_gen("P-256"));
    const X509Ptr certificate(X509_new());
    if (!key || !certificate) {
        *why = takeOpenSslError();
        return false;
    }
    X509 *const cert = certificate.get();

    // Random rather than counted: nothing records which serials were used, and a certificate
    // made again after the files were removed must not collide with the one it replaces.
    unsigned char serialBytes[16];
    if (RAND_bytes(serialBytes, sizeof serialBytes) != 1) {
        *why = takeOpenSslError();
        return false;
    }
    // All 128 bits in use, and so never zero, which RFC 5280 forbids.
    if (serialBytes[0] == 0)
        serialBytes[0] = 1;
    const BignumPtr serial(BN_bin2bn(serialBytes, sizeof serialBytes, nullptr));

    // A day back so that a sandbox whose clock runs behind the host's already accepts it.
    const QDateTime notBefore = QDateTime::currentDateTimeUtc().addDays(-1);
    const QDateTime notAfter = notBefore.addYears(10);

    X509_NAME *const name = X509_get_subject_name(cert);
    const QByteArray cn = authorityCommonName().toUtf8();
    const bool built =
        serial && X509_set_version(cert, X509_VERSION_3) == 1 &&
        BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert)) != nullptr &&
        ASN1_TIME_set(X509_getm_notBefore(cert), time_t(notBefore.toSecsSinceEpoch())) &&
        ASN1_TIME_set(X509_getm_notAfter(cert), time_t(notAfter.toSecsSinceEpoch())) &&
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char *>("Code Sandbox"), -1, -1,
                                   0) == 1 &&
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char *>(cn.constData()),
                                   int(cn.size()), -1, 0) == 1 &&
        X509_set_issuer_name(cert, name) == 1 && X509_set_pubkey(cert, key.get()) == 1 &&
        // pathlen:0: it signs the gateway's leaf certificates and never another authority.
        addExtension(cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") &&
        addExtension(cert, NID_key_usage, "critical,keyCertSign,cRLSign") &&
        addExtension(cert, NID_subject_key_identifier, "hash") &&
        X509_sign(cert, key.get(), EVP_sha256()) > 0;
    if (!built) {
        *why = takeOpenSslError();
        return false;
    }
    const std::optional<QByteArray> certificateText = certificateToPem(cert);
    const std::optional<QByteArray> keyText = keyToPem(key.get());
    if (!certificateText || !keyText) {
        *why = takeOpenSslError();
        return false;
    }
    *certificatePem = *certificateText;
    *keyPem = *keyText;
    return true;
}

// The permissions are set on QSaveFile's temporary file before anything is written into it, so
// the key is never in a file others can read, not even for a moment.
bool writePemFile(const QString &path, const QByteArray &data, QFileDevice::Permissions permissions,
                  QString *error)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || !file.setPermissions(permissions) ||
        file.write(data) != data.size() || !file.commit()) {
        setAuthorityError(error,
                          QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    return true;
}

std::optional<QByteArray> readPemFile(const QString &path, QString *error)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        setAuthorityError(error,
                          QStringLiteral("cannot read %1: %2").arg(path, file.errorString()));
        return std::nullopt;
    }
    const QByteArray data = file.read(kMaxPemFileSize + 1);
    if (data.size() > kMaxPemFileSize) {
        setAuthorityError(error,
                          QStringLiteral("%1 is too large for a certificate or key").arg(path));
        return std::nullopt;
    }
    return data;
}

// No prompt on the terminal for an encrypted key: the server runs unattended, so such a key
// fails to load instead.
int noPassphrase(char *, int, int, void *)
{
    return 0;
}

} // namespace

QString InterceptionAuthority::defaultFolder()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppConfigLocation);
}

std::optional<InterceptionAuthority> InterceptionAuthority::loadOrCreate(const QString &folder,
                                                                         QString *error)
{
    ERR_clear_error();
    const QDir dir(folder);
    const QString certificatePath = dir.filePath(QLatin1String(kCertificateFile));
    const QString keyPath = dir.filePath(QLatin1String(kKeyFile));
    const bool haveCertificate = QFileInfo::exists(certificatePath);
    const bool haveKey = QFileInfo::exists(keyPath);

    if (!haveCertificate && !haveKey)
        return create(folder, certificatePath, keyPath, error);

    // Making a new pair over the remaining file would silently end the trust that sandboxes and
    // the user placed in the old certificate; the user decides.
    if (!haveKey) {
        setAuthorityError(
            error, QStringLiteral("the secrets CA key %1 is missing beside its certificate %2; "
                                  "restore the key, or remove the certificate to have a new "
                                  "authority made")
                       .arg(keyPath, certificatePath));
        return std::nullopt;
    }
    if (!haveCertificate) {
        setAuthorityError(
            error, QStringLiteral("the secrets CA certificate %1 is missing beside its key %2; "
                                  "restore the certificate, or remove the key to have a new "
                                  "authority made")
                       .arg(certificatePath, keyPath));
        return std::nullopt;
    }

    return load(folder, certificatePath, keyPath, error);
}

std::optional<InterceptionAuthority> InterceptionAuthority::create(const QString &folder,
                                                                   const QString &certificatePath,
                                                                   const QString &keyPath,
                                                                   QString *error)
{
    // A folder made here is the user's alone, as the token store's is.
    if (!QFileInfo::exists(folder)) {
        if (!QDir().mkpath(folder)) {
            setAuthorityError(error, QStringLiteral("cannot make the folder %1").arg(folder));
            return std::nullopt;
        }
        QFile::setPermissions(folder, kOwnerOnly | QFileDevice::ExeOwner);
    }
    InterceptionAuthority made;
    QString why;
    if (!makeAuthority(&made.m_certificate, &made.m_key, &why)) {
        setAuthorityError(error, QStringLiteral("cannot make the secrets CA: %1").arg(why));
        return std::nullopt;
    }
    if (!writePemFile(keyPath, made.m_key, kOwnerOnly, error))
        return std::nullopt;
    if (!writePemFile(certificatePath, made.m_certificate, kReadableByAll, error)) {
        // A key alone would stop every later start; without it the next one starts over.
        QFile::remove(keyPath);
        return std::nullopt;
    }
    return made;
}

std::optional<InterceptionAuthority> InterceptionAuthority::load(const QString &folder,
                                                                 const QString &certificatePath,
                                                                 const QString &keyPath,
                                                                 QString *error)
{
    const std::optional<QByteArray> certificateText = readPemFile(certificatePath, error);
    if (!certificateText)
        return std::nullopt;
    const std::optional<QByteArray> keyText = readPemFile(keyPath, error);
    if (!keyText)
        return std::nullopt;

    const BioPtr certificateBio(
        BIO_new_mem_buf(certificateText->constData(), int(certificateText->size())));
    const X509Ptr certificate(
        certificateBio ? PEM_read_bio_X509(certificateBio.get(), nullptr, nullptr, nullptr)
                       : nullptr);
    if (!certificate) {
        setAuthorityError(error, QStringLiteral("%1 holds no readable PEM certificate: %2")
                                     .arg(certificatePath, takeOpenSslError()));
        return std::nullopt;
    }
    const BioPtr keyBio(BIO_new_mem_buf(keyText->constData(), int(keyText->size())));
    const KeyPtr key(keyBio ? PEM_read_bio_PrivateKey(keyBio.get(), nullptr, noPassphrase, nullptr)
                            : nullptr);
    if (!key) {
        setAuthorityError(error,
                          QStringLiteral("%1 holds no readable unencrypted PEM private key: %2")
                              .arg(keyPath, takeOpenSslError()));
        return std::nullopt;
    }
    if (X509_check_private_key(certificate.get(), key.get()) != 1) {
        ERR_clear_error();
        setAuthorityError(error,
                          QStringLiteral("the key in %1 does not match the certificate in %2")
                              .arg(keyPath, certificatePath));
        return std::nullopt;
    }

    // A key file others could read is made the user's own again, as the token store does.
    if ((QFile::permissions(keyPath) &
         ~(kOwnerOnly | QFileDevice::ReadUser | QFileDevice::WriteUser)) != 0)
        QFile::setPermissions(keyPath, kOwnerOnly);

    // Written out again rather than passed on as read, so that the gateway gets one certificate
    // and a PKCS#8 key whatever else the files hold; for files made here it is the same bytes.
    const std::optional<QByteArray> certificatePem = certificateToPem(certificate.get());
    const std::optional<QByteArray> keyPem = keyToPem(key.get());
    if (!certificatePem || !keyPem) {
        setAuthorityError(error, QStringLiteral("cannot encode the secrets CA from %1: %2")
                                     .arg(folder, takeOpenSslError()));
        return std::nullopt;
    }
    InterceptionAuthority loaded;
    loaded.m_certificate = *certificatePem;
    loaded.m_key = *keyPem;
    return loaded;
}
