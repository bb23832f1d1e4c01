#include "egressendpoint.h"

QStringList EgressEndpoint::proxyEnv() const
{
    const QString url =
        QStringLiteral("http://sandbox:%1@%2:%3").arg(credential, proxyHost).arg(proxyPort);
    QStringList out;
    for (const char *name : {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                             "all_proxy", "npm_config_proxy", "npm_config_https_proxy"})
        out.append(QString::fromLatin1(name) + u'=' + url);
    // A program's own local servers are not behind the gateway.
    for (const char *name : {"NO_PROXY", "no_proxy"})
        out.append(QString::fromLatin1(name) + QStringLiteral("=localhost,127.0.0.1,::1"));
    return out + env;
}
