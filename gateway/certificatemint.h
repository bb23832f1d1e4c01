#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <openssl/ssl.h>
#include <string>

// The TLS the gateway speaks where it adds a secret: towards the sandbox, a certificate for the
// host it asked for, signed by the installation's authority (its key reaches the gateway over the
// control channel only; the sandboxes trust its certificate); towards the host, a client that
// verifies the real server against the host's trust store (also sent by the server: the gateway
// image has none of its own). Certificates are made once per host and kept, the last
// kMaxCertificates of them.
class CertificateMint
{
public:
    static constexpr size_t kMaxCertificates = 256;

    CertificateMint();
    ~CertificateMint();
    CertificateMint(const CertificateMint &) = delete;
    CertificateMint &operator=(const CertificateMint &) = delete;

    bool setAuthority(const std::string &certificatePem, const std::string &keyPem,
                      std::string *why);
    bool setTrust(const std::string &bundlePem, std::string *why);
    bool hasAuthority() const;

    // A new TLS session serving `host` to the sandbox (a name or an address), or nullptr and why.
    SSL *serve(const std::string &host, std::string *why);
    // A new TLS session to `host` that checks its certificate and its name (or address).
    SSL *reach(const std::string &host, std::string *why);

private:
    SSL_CTX *contextFor(const std::string &host, std::string *why);

    mutable std::mutex m_mutex;
    X509 *m_authority = nullptr;
    EVP_PKEY *m_authorityKey = nullptr;
    EVP_PKEY *m_leafKey = nullptr; // one key for every host's certificate
    SSL_CTX *m_client = nullptr;
    std::map<std::string, SSL_CTX *> m_servers;
    std::deque<std::string> m_made; // m_servers' hosts, oldest first
};
