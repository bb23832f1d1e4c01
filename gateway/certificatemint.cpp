#include "certificatemint.h"

#include "hostpattern.h"

#include <ctime>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

namespace {

std::string sslError()
{
    const unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (e == 0)
        return "unknown TLS error";
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    return text;
}

struct BioFree
{
    void operator()(BIO *b) const { BIO_free(b); }
};
using Bio = std::unique_ptr<BIO, BioFree>;

Bio memory(const std::string &text)
{
    return Bio(BIO_new_mem_buf(text.data(), int(text.size())));
}

bool addExtension(X509 *cert, X509 *issuer, int nid, const std::string &value)
{
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (!ext)
        return false;
    const bool ok = X509_add_ext(cert, ext, -1) == 1;
    X509_EXTENSION_free(ext);
    return ok;
}

// HTTP/1.1 only: the gateway reads and rewrites requests as HTTP/1.1.
int selectHttp11(SSL *, const unsigned char **out, unsigned char *outLength,
                 const unsigned char *in, unsigned int inLength, void *)
{
    static const unsigned char http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    unsigned char *selected = nullptr;
    if (SSL_select_next_proto(&selected, outLength, http11, sizeof http11, in, inLength) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = selected;
    return SSL_TLSEXT_ERR_OK;
}

} // namespace

CertificateMint::CertificateMint()
{
    m_leafKey = EVP_EC_gen("P-256");
}

CertificateMint::~CertificateMint()
{
    for (auto &[host, ctx] : m_servers)
        SSL_CTX_free(ctx);
    SSL_CTX_free(m_client);
    EVP_PKEY_free(m_leafKey);
    EVP_PKEY_free(m_authorityKey);
    X509_free(m_authority);
}

bool CertificateMint::setAuthority(const std::string &certificatePem, const std::string &keyPem,
                                   std::string *why)
{
    X509 *cert = PEM_read_bio_X509(memory(certificatePem).get(), nullptr, nullptr, nullptr);
    EVP_PKEY *key = PEM_read_bio_PrivateKey(memory(keyPem).get(), nullptr, nullptr, nullptr);
    if (!cert || !key || X509_check_private_key(cert, key) != 1) {
        *why = "the authority's certificate and key do not load, or do not match: " + sslError();
        X509_free(cert);
        EVP_PKEY_free(key);
        return false;
    }
    std::lock_guard<std::mutex> lock(m_mutex);
    X509_free(m_authority);
    EVP_PKEY_free(m_authorityKey);
    m_authority = cert;
    m_authorityKey = key;
    for (auto &[host, ctx] : m_servers)
        SSL_CTX_free(ctx);
    m_servers.clear();
    m_made.clear();
    return true;
}

bool CertificateMint::setTrust(const std::string &bundlePem, std::string *why)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        *why = sslError();
        return false;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    X509_STORE *store = SSL_CTX_get_cert_store(ctx);
    Bio bio = memory(bundlePem);
    int count = 0;
    while (X509 *cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
        if (X509_STORE_add_cert(store, cert) == 1)
            ++count;
        X509_free(cert);
    }
    ERR_clear_error(); // the end of the bundle reads as an error
    if (count == 0) {
        SSL_CTX_free(ctx);
        *why = "the trust store holds no certificate";
        return false;
    }
    static const unsigned char http11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_CTX_set_alpn_protos(ctx, http11, sizeof http11);
    std::lock_guard<std::mutex> lock(m_mutex);
    SSL_CTX_free(m_client);
    m_client = ctx;
    return true;
}

bool CertificateMint::hasAuthority() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_authority != nullptr && m_leafKey != nullptr;
}

SSL_CTX *CertificateMint::contextFor(const std::string &host, std::string *why)
{
    // Under m_mutex.
    const auto known = m_servers.find(host);
    if (known != m_servers.end())
        return known->second;
    if (!m_authority || !m_leafKey) {
        *why = "the gateway has no authority to sign with";
        return nullptr;
    }
    X509 *cert = X509_new();
    SSL_CTX *ctx = nullptr;
    const bool address = HostPattern::isAddressLiteral(host);
    unsigned char serial[16];
    BIGNUM *number = nullptr;
    const bool made =
        cert && RAND_bytes(serial, sizeof serial) == 1 && (serial[0] &= 0x7f, true) &&
        (number = BN_bin2bn(serial, sizeof serial, nullptr)) != nullptr &&
        BN_to_ASN1_INTEGER(number, X509_get_serialNumber(cert)) != nullptr &&
        X509_set_version(cert, 2) == 1 &&
        // Valid from an hour ago (clocks differ a little), for 30 days: a gateway lives shorter.
        X509_gmtime_adj(X509_getm_notBefore(cert), -3600) != nullptr &&
        X509_gmtime_adj(X509_getm_notAfter(cert), 30L * 24 * 3600) != nullptr &&
        X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                                   reinterpret_cast<const unsigned char *>(host.c_str()), -1, -1,
                                   0) == 1 &&
        X509_set_issuer_name(cert, X509_get_subject_name(m_authority)) == 1 &&
        X509_set_pubkey(cert, m_leafKey) == 1 &&
        addExtension(cert, m_authority, NID_basic_constraints, "critical,CA:FALSE") &&
        addExtension(cert, m_authority, NID_key_usage, "critical,digitalSignature") &&
        addExtension(cert, m_authority, NID_ext_key_usage, "serverAuth") &&
        addExtension(cert, m_authority, NID_subject_alt_name, (address ? "IP:" : "DNS:") + host) &&
        addExtension(cert, m_authority, NID_authority_key_identifier, "keyid:always") &&
        X509_sign(cert, m_authorityKey, EVP_sha256()) > 0 &&
        (ctx = SSL_CTX_new(TLS_server_method())) != nullptr &&
        SSL_CTX_use_certificate(ctx, cert) == 1 && SSL_CTX_use_PrivateKey(ctx, m_leafKey) == 1;
    BN_free(number);
    X509_free(cert);
    if (!made) {
        *why = "cannot make a certificate for " + host + ": " + sslError();
        SSL_CTX_free(ctx);
        return nullptr;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_alpn_select_cb(ctx, selectHttp11, nullptr);
    // Bounded: a wildcard-bound secret would otherwise keep a certificate for every name a
    // sandbox cares to ask for. The oldest goes first; sessions on it keep their own reference
    // (SSL_new takes one), so one in use is not cut.
    if (m_servers.size() >= kMaxCertificates) {
        SSL_CTX_free(m_servers[m_made.front()]);
        m_servers.erase(m_made.front());
        m_made.pop_front();
    }
    m_servers[host] = ctx;
    m_made.push_back(host);
    return ctx;
}

SSL *CertificateMint::serve(const std::string &host, std::string *why)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    SSL_CTX *ctx = contextFor(host, why);
    SSL *ssl = ctx ? SSL_new(ctx) : nullptr;
    if (ctx && !ssl)
        *why = sslError();
    return ssl;
}

SSL *CertificateMint::reach(const std::string &host, std::string *why)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!m_client) {
        *why = "the gateway has no trust store to check " + host + " with";
        return nullptr;
    }
    SSL *ssl = SSL_new(m_client);
    if (!ssl) {
        *why = sslError();
        return nullptr;
    }
    const bool address = HostPattern::isAddressLiteral(host);
    const bool named = address
                           ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) == 1
                           : SSL_set_tlsext_host_name(ssl, host.c_str()) == 1 &&
                                 SSL_set1_host(ssl, host.c_str()) == 1;
    if (!named) {
        *why = "cannot check a certificate for " + host + ": " + sslError();
        SSL_free(ssl);
        return nullptr;
    }
    return ssl;
}
