#include "engineaddress.h"

#include <QHostAddress>
#include <QRegularExpression>
#include <QUrl>

namespace {

QString hostForUrl(const QString &host)
{
    return host.contains(u':') ? u'[' + host + u']' : host;
}

bool fail(QString *error, const QString &message)
{
    if (error)
        *error = message;
    return false;
}

// What a tcp:// or ssh:// URL shares: a host, maybe a port, nothing after the path.
bool readNetworkUrl(const QString &text, const QUrl &url, EngineAddress &a, QString *error)
{
    if (!url.isValid())
        return fail(error,
                    QStringLiteral("'%1' is not a valid address: %2").arg(text, url.errorString()));
    if (url.host().isEmpty())
        return fail(error, QStringLiteral("'%1' names no host").arg(text));
    if (url.hasQuery() || url.hasFragment())
        return fail(
            error,
            QStringLiteral("'%1': an engine address takes no ?query or #fragment").arg(text));
    const int port = url.port(-1);
    if (port == 0)
        return fail(error, QStringLiteral("'%1': port 0 is not a port to connect to").arg(text));
    a.host = url.host();
    a.port = port < 0 ? 0 : port;
    return true;
}

bool parseTcp(const QString &text, EngineAddress &a, QString *error)
{
    const QUrl url(text, QUrl::StrictMode);
    if (!readNetworkUrl(text, url, a, error))
        return false;
    if (!url.userInfo().isEmpty())
        return fail(error, QStringLiteral("'%1': tcp:// takes no user").arg(text));
    if (!url.path().isEmpty() && url.path() != u"/")
        return fail(error,
                    QStringLiteral("'%1': tcp:// takes no path, only tcp://host:port").arg(text));
    a.scheme = EngineAddress::Scheme::Tcp;
    return true;
}

bool parseSsh(const QString &text, EngineAddress &a, QString *error)
{
    const QUrl url(text, QUrl::StrictMode);
    if (!readNetworkUrl(text, url, a, error))
        return false;
    if (!url.password().isEmpty())
        return fail(error, QStringLiteral("'%1': no password in an ssh:// address; ssh uses your "
                                          "keys and agent")
                               .arg(url.toString(QUrl::RemovePassword)));
    // The user and the path reach a command line (ssh's, and the remote shell's): only
    // characters that need no quoting there.
    static const QRegularExpression safeUser(QStringLiteral("^[A-Za-z0-9._][A-Za-z0-9._-]*$"));
    static const QRegularExpression safePath(QStringLiteral("^/[A-Za-z0-9._/+@%=,:-]*$"));
    if (!url.userName().isEmpty() && !safeUser.match(url.userName()).hasMatch())
        return fail(
            error,
            QStringLiteral("'%1': '%2' is not a user name ssh can take").arg(text, url.userName()));
    if (!url.host().isEmpty() && url.host().startsWith(u'-'))
        return fail(error, QStringLiteral("'%1': a host name cannot start with '-'").arg(text));
    const QString path = url.path();
    if (path.size() > 1 && !safePath.match(path).hasMatch())
        return fail(error, QStringLiteral("'%1': the socket path may hold only letters, digits "
                                          "and ._/+@%=,:-")
                               .arg(text));
    a.scheme = EngineAddress::Scheme::Ssh;
    a.user = url.userName();
    a.socketPath = path.size() > 1 ? path : QString();
    return true;
}

} // namespace

int EngineAddress::tcpPort() const
{
    if (port > 0)
        return port;
    return tls ? kDefaultTlsPort : kDefaultTcpPort;
}

bool EngineAddress::isLoopback() const
{
    if (scheme == Scheme::Unix)
        return true;
    if (host.compare(u"localhost", Qt::CaseInsensitive) == 0)
        return true;
    const QHostAddress address(host);
    return !address.isNull() && address.isLoopback();
}

QString EngineAddress::url() const
{
    switch (scheme) {
    case Scheme::None:
        return {};
    case Scheme::Unix:
        return QStringLiteral("unix://") + socketPath;
    case Scheme::Tcp:
        return QStringLiteral("tcp://%1:%2").arg(hostForUrl(host)).arg(tcpPort());
    case Scheme::Ssh: {
        QString u = QStringLiteral("ssh://");
        if (!user.isEmpty())
            u += user + u'@';
        u += hostForUrl(host);
        if (port > 0)
            u += u':' + QString::number(port);
        return u + socketPath;
    }
    }
    return {};
}

QString EngineAddress::display() const
{
    QString where;
    switch (scheme) {
    case Scheme::None:
        where = QStringLiteral("(no engine)");
        break;
    case Scheme::Unix:
        where = socketPath;
        break;
    case Scheme::Tcp:
        where = url() + (!tls       ? QString()
                         : systemCa ? QStringLiteral(" (TLS, system CAs)")
                                    : QStringLiteral(" (TLS)"));
        break;
    case Scheme::Ssh:
        where = url();
        break;
    }
    if (context.isEmpty())
        return where;
    return QStringLiteral("context %1 \u2192 %2").arg(context, where);
}

bool EngineAddress::operator==(const EngineAddress &o) const
{
    return scheme == o.scheme && socketPath == o.socketPath && host == o.host && port == o.port &&
           user == o.user && tls == o.tls && caFile == o.caFile && systemCa == o.systemCa &&
           certFile == o.certFile && keyFile == o.keyFile && context == o.context &&
           runtime == o.runtime;
}

bool EngineAddress::isRuntimeName(const QString &name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"));
    return re.match(name).hasMatch();
}

QString EngineAddress::takeRuntime(const QString &value, QString *runtime, QString *error)
{
    runtime->clear();
    const qsizetype mark = value.lastIndexOf(u'?');
    if (mark < 0)
        return value;
    const QString suffix = value.mid(mark + 1);
    static const QString key = QStringLiteral("runtime=");
    if (!suffix.startsWith(key) || !isRuntimeName(suffix.mid(key.size()))) {
        fail(error, QStringLiteral("'%1': after '?' an engine address takes only runtime=NAME "
                                   "(the container runtime of its sandboxes, e.g. "
                                   "?runtime=runsc)")
                        .arg(value));
        return value;
    }
    *runtime = suffix.mid(key.size());
    return value.left(mark);
}

EngineAddress EngineAddress::unixSocket(const QString &path)
{
    EngineAddress a;
    a.scheme = Scheme::Unix;
    a.socketPath = path;
    return a;
}

EngineAddress EngineAddress::parse(const QString &input, QString *error)
{
    const QString text = input.trimmed();
    EngineAddress a;
    if (text.isEmpty()) {
        fail(error, QStringLiteral("no engine address given"));
        return {};
    }
    if (text.startsWith(u'/'))
        return unixSocket(text);
    const qsizetype colon = text.indexOf(QStringLiteral("://"));
    const QString scheme = colon > 0 ? text.left(colon).toLower() : QString();
    bool ok = false;
    if (scheme == u"unix") {
        const QString path = text.mid(colon + 3);
        if (path.startsWith(u'/'))
            return unixSocket(path);
        ok = fail(error, QStringLiteral("'%1': unix:// needs an absolute path, like "
                                        "unix:///var/run/docker.sock")
                             .arg(text));
    } else if (scheme == u"tcp") {
        ok = parseTcp(text, a, error);
    } else if (scheme == u"ssh") {
        ok = parseSsh(text, a, error);
    } else if (scheme.isEmpty()) {
        ok = fail(error, QStringLiteral("'%1' is not an engine address: use unix:///path (or "
                                        "/path), tcp://host:port or ssh://[user@]host[:port]")
                             .arg(text));
    } else {
        ok = fail(error, QStringLiteral("'%1': %2:// is not supported; use unix://, tcp:// or "
                                        "ssh://")
                             .arg(text, scheme));
    }
    return ok ? a : EngineAddress();
}
