#pragma once

#include <QByteArray>
#include <QString>
#include <optional>

// The per-installation certificate authority with which the egress gateway signs certificates
// for the hosts where it adds a secret to requests: a sandbox that trusts it lets the gateway
// read and amend those requests, and no one else's. Made once and kept in the user's config
// folder, like the HTTP token, so that sandboxes keep trusting the same authority across
// restarts. Its key goes to the gateway only; only the certificate ever enters a sandbox.
class InterceptionAuthority
{
public:
    static constexpr const char *kCertificateFile = "secrets-ca.pem";
    static constexpr const char *kKeyFile = "secrets-ca.key";

    // ~/.config/code-sandbox (QStandardPaths::AppConfigLocation), where the token store is too.
    static QString defaultFolder();

    // The authority kept in `folder`, made there first when neither file exists (EC P-256 key,
    // self-signed, valid 10 years from 1 day ago, CN "Code Sandbox secrets CA (<host name>)",
    // O "Code Sandbox", basicConstraints critical CA:TRUE pathlen:0, keyUsage critical
    // keyCertSign+cRLSign, subjectKeyIdentifier, a random 128-bit serial). The key file is
    // written 0600 before the key goes into it (QSaveFile), the certificate 0644. One file
    // without the other, an unreadable or unparsable file, or a key that does not match the
    // certificate: nullopt and a clear `error` naming the file; nothing is overwritten.
    static std::optional<InterceptionAuthority> loadOrCreate(const QString &folder, QString *error);

    QByteArray certificatePem() const { return m_certificate; }
    QByteArray keyPem() const { return m_key; } // PKCS#8 PEM, unencrypted

private:
    // The two halves of loadOrCreate(): a new pair in `folder`, or the pair its files hold.
    static std::optional<InterceptionAuthority> create(const QString &folder,
                                                       const QString &certificatePath,
                                                       const QString &keyPath, QString *error);
    static std::optional<InterceptionAuthority> load(const QString &folder,
                                                     const QString &certificatePath,
                                                     const QString &keyPath, QString *error);

    QByteArray m_certificate;
    QByteArray m_key;
};
