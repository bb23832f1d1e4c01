#include "upstreamproxy.h"

#include <QUrl>

namespace {
QString valueOf(const QStringList &entries, const QString &name)
{
    const QString prefix = name + u'=';
    for (const QString &entry : entries)
        if (entry.startsWith(prefix))
            return entry.mid(prefix.size()).trimmed();
    return {};
}
} // namespace

bool UpstreamProxy::isProxyVariable(const QString &name)
{
    const QString n = name.toLower();
    return n == u"http_proxy" || n == u"https_proxy" || n == u"no_proxy" || n == u"all_proxy";
}

UpstreamProxy UpstreamProxy::fromEnv(const QStringList &entries)
{
    UpstreamProxy out;
    // Most of what installs fetch is HTTPS; one upstream serves both kinds.
    for (const char *name : {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"}) {
        const QString value = valueOf(entries, QString::fromLatin1(name));
        if (value.isEmpty())
            continue;
        out.m_variable = QString::fromLatin1(name);
        // "proxy.corp:3128" without a scheme is an http:// proxy, as curl and pip read it.
        const QUrl url(value.contains(QLatin1String("://")) ? value
                                                            : QStringLiteral("http://") + value,
                       QUrl::StrictMode);
        if (!url.isValid() || url.host().isEmpty()) {
            out.m_error = QStringLiteral("%1 is not a proxy URL").arg(out.m_variable);
            return out;
        }
        if (url.scheme() != u"http") {
            out.m_error = QStringLiteral("%1 is a %2:// proxy; the egress gateway chains only to "
                                         "http:// proxies")
                              .arg(out.m_variable, url.scheme());
            return out;
        }
        out.m_host = url.host();
        out.m_port = url.port(80);
        if (!url.userName().isEmpty())
            out.m_basic =
                (url.userName(QUrl::FullyDecoded) + u':' + url.password(QUrl::FullyDecoded))
                    .toUtf8()
                    .toBase64();
        break;
    }
    QString noProxy = valueOf(entries, QStringLiteral("NO_PROXY"));
    if (noProxy.isEmpty())
        noProxy = valueOf(entries, QStringLiteral("no_proxy"));
    for (const QString &entry : noProxy.split(u',', Qt::SkipEmptyParts)) {
        const QString host = entry.trimmed();
        if (!host.isEmpty())
            out.m_noProxy.append(host);
    }
    return out;
}

QString UpstreamProxy::hostPort() const
{
    const bool v6 = m_host.contains(u':');
    return (v6 ? u'[' + m_host + u']' : m_host) + u':' + QString::number(m_port);
}

QString UpstreamProxy::describe() const
{
    return QStringLiteral("%1 (http://%2)").arg(m_variable, hostPort());
}
