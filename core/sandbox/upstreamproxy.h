#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

// The host's own HTTP proxy, which the egress gateway goes out through when the machine reaches
// the outside only that way (a corporate proxy): read from HTTPS_PROXY, else HTTP_PROXY (either
// case), with NO_PROXY's hosts reached directly. Only http:// proxies can be chained (the
// gateway speaks CONNECT and absolute-form HTTP to it); anything else is reported in error()
// and not used.
class UpstreamProxy
{
public:
    // From NAME=value entries (SandboxConfig::installEnv: the host's variables).
    static UpstreamProxy fromEnv(const QStringList &entries);
    // One of the variables this class reads (the sandbox gets the gateway's instead).
    static bool isProxyVariable(const QString &name);

    bool isSet() const { return !m_host.isEmpty(); }
    // The proxy's host (an IPv6 address without brackets) and port.
    QString host() const { return m_host; }
    int port() const { return m_port; }
    // host:port as the gateway takes it ([v6]:port for an IPv6 address).
    QString hostPort() const;
    // base64 of user:password for Proxy-Authorization: Basic, or empty.
    QByteArray basicCredential() const { return m_basic; }
    QStringList noProxy() const { return m_noProxy; }
    // For logs and the window: the variable it came from and the proxy without credentials.
    QString describe() const;
    // Why the variable that was set could not be used; "" when it could (or none was set).
    QString error() const { return m_error; }

private:
    QString m_variable;
    QString m_host;
    int m_port = 0;
    QByteArray m_basic;
    QStringList m_noProxy;
    QString m_error;
};
