#include "clientiddocuments.h"

#include "httplog.h"
#include "httpresponseparser.h"

#include <QDateTime>
#include <QHostInfo>
#include <QJsonDocument>
#include <QPointer>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTimer>

namespace {
constexpr int kMaxUrlLength = 2000;

using Subnets = QList<QPair<QHostAddress, int>>;

Subnets subnets(std::initializer_list<const char *> nets)
{
    Subnets out;
    for (const char *net : nets)
        out.append(QHostAddress::parseSubnet(QString::fromLatin1(net)));
    return out;
}

bool inAny(const QHostAddress &address, const Subnets &nets)
{
    for (const auto &net : nets)
        if (address.isInSubnet(net))
            return true;
    return false;
}

// Addresses that are not the public internet's. The IPv4 ones hold for IPv4-mapped IPv6
// addresses too (toIPv4Address reads those).
const Subnets &reservedIpv4()
{
    static const Subnets nets =
        subnets({"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
                 "172.16.0.0/12", "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4",
                 "240.0.0.0/4"});
    return nets;
}

// IPv6 prefixes that carry an IPv4 address (which may be a private one: IPv4-compatible, NAT64,
// 6to4, Teredo) or are not the internet's (unspecified, discard, documentation).
const Subnets &reservedIpv6()
{
    static const Subnets nets = subnets({"::/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64",
                                         "2001::/32", "2001:db8::/32", "2002::/16"});
    return nets;
}
} // namespace

struct ClientIdDocuments::Fetch
{
    QString clientId;
    QUrl url;
    QPointer<QObject> context;
    Done done;
    bool finished = false;
    int lookupId = -1;
    int cacheSec = 0;
    QList<QHostAddress> addresses; // the name's, still to try in turn
    bool encrypted = false;
    QTimer *timer = nullptr; // set once the fetch counts among m_fetching
    QSslSocket *socket = nullptr;
    HttpResponseParser parser;
};

ClientIdDocuments::ClientIdDocuments(const Config &config, QObject *parent)
    : QObject(parent), m_config(config)
{}

ClientIdDocuments::~ClientIdDocuments() = default;

bool ClientIdDocuments::isDocumentUrl(const QString &clientId)
{
    return clientId.contains(u"://");
}

QString ClientIdDocuments::checkUrl(const QString &clientId)
{
    if (clientId.size() > kMaxUrlLength)
        return QStringLiteral("the client_id is longer than %1 characters").arg(kMaxUrlLength);
    const QUrl url(clientId, QUrl::StrictMode);
    if (!url.isValid())
        return QStringLiteral("the client_id is not a URL");
    if (url.scheme() != u"https")
        return QStringLiteral("a client ID metadata document's URL must be https");
    if (url.host().isEmpty())
        return QStringLiteral("the client_id names no host");
    if (!url.userInfo().isEmpty())
        return QStringLiteral("the client_id holds a user name or password");
    if (url.hasFragment())
        return QStringLiteral("the client_id holds a fragment");
    const QString path = url.path(QUrl::FullyEncoded);
    if (path.isEmpty() || path == u"/")
        return QStringLiteral("the client_id has no path (a document is at a path, not at a "
                              "site's root)");
    for (const QString &segment : path.split(u'/')) {
        const QString decoded = QUrl::fromPercentEncoding(segment.toLatin1());
        if (decoded == u"." || decoded == u"..")
            return QStringLiteral("the client_id holds a \".\" or \"..\" segment");
    }
    return {};
}

std::optional<OAuthClient> ClientIdDocuments::parse(const QString &clientId, const QByteArray &body,
                                                    QString *why)
{
    QJsonParseError error;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &error);
    if (!doc.isObject()) {
        *why = QStringLiteral("the document is not a JSON object (%1)").arg(error.errorString());
        return std::nullopt;
    }
    const QJsonObject o = doc.object();
    // Compared as strings, never normalised: the document speaks for this exact URL only.
    if (o.value(u"client_id").toString() != clientId) {
        *why = QStringLiteral("the document's client_id is \"%1\", not the URL it was fetched "
                              "from")
                   .arg(o.value(u"client_id").toString().left(200));
        return std::nullopt;
    }
    if (o.contains(u"client_secret") || o.contains(u"client_secret_expires_at")) {
        *why = QStringLiteral("the document holds a client secret, which a published document "
                              "cannot keep");
        return std::nullopt;
    }
    OAuthClients::Refusal refusal;
    auto client = OAuthClients::fromMetadata(o, &refusal);
    if (!client) {
        *why = refusal.description;
        return std::nullopt;
    }
    client->id = clientId;
    client->registered = QDateTime::currentDateTimeUtc();
    return client;
}

bool ClientIdDocuments::isPublic(const QHostAddress &address)
{
    bool v4 = false;
    const quint32 ip4 = address.toIPv4Address(&v4);
    if (v4)
        return !inAny(QHostAddress(ip4), reservedIpv4());
    if (address.protocol() != QAbstractSocket::IPv6Protocol)
        return false;
    if (address.isLoopback() || address.isLinkLocal() || address.isSiteLocal() ||
        address.isUniqueLocalUnicast() || address.isMulticast())
        return false;
    return !inAny(address, reservedIpv6());
}

int ClientIdDocuments::cacheSeconds(const QByteArray &cacheControl)
{
    int seconds = kDefaultCacheSec;
    for (const QByteArray &part : cacheControl.split(',')) {
        const QByteArray directive = part.trimmed().toLower();
        if (directive == "no-store" || directive == "no-cache")
            return 0;
        if (directive.startsWith("max-age=")) {
            bool ok = false;
            const qint64 value = directive.mid(8).toLongLong(&ok);
            seconds = ok ? int(qBound(qint64(0), value, qint64(kMaxCacheSec))) : 0;
        }
    }
    return seconds;
}

void ClientIdDocuments::fetch(const QString &clientId, QObject *context, Done done)
{
    auto f = std::make_shared<Fetch>();
    f->clientId = clientId;
    f->context = context;
    f->done = std::move(done);
    // Answers are always later than the call, whether fetched, cached or refused at once.
    const auto answerLater = [this, f](const std::optional<OAuthClient> &client,
                                       const QString &why) {
        QTimer::singleShot(0, this, [this, f, client, why] { finish(f, client, why); });
    };
    if (const QString bad = checkUrl(clientId); !bad.isEmpty())
        return answerLater(std::nullopt, bad);
    const auto cached = m_cache.constFind(clientId);
    if (cached != m_cache.cend() && cached->until > QDateTime::currentMSecsSinceEpoch())
        return answerLater(cached->client, {});
    if (m_fetching >= kMaxFetches)
        return answerLater(std::nullopt, QStringLiteral("too many client documents are being "
                                                        "fetched at once; try again"));
    ++m_fetching;
    f->url = QUrl(clientId);
    f->timer = new QTimer(this);
    f->timer->setSingleShot(true);
    connect(f->timer, &QTimer::timeout, this, [this, f] {
        finish(f, std::nullopt,
               QStringLiteral("no document from %1 within %2 s")
                   .arg(f->url.host())
                   .arg(m_config.timeoutMs / 1000.0));
    });
    f->timer->start(m_config.timeoutMs);
    const QString host = f->url.host();
    if (const QHostAddress literal(host); !literal.isNull()) {
        QTimer::singleShot(0, this, [this, f, literal] { lookedUp(f, {literal}); });
        return;
    }
    f->lookupId = QHostInfo::lookupHost(host, this, [this, f](const QHostInfo &info) {
        f->lookupId = -1;
        if (info.error() != QHostInfo::NoError)
            return finish(
                f, std::nullopt,
                QStringLiteral("cannot find %1: %2").arg(f->url.host(), info.errorString()));
        lookedUp(f, info.addresses());
    });
}

void ClientIdDocuments::lookedUp(const std::shared_ptr<Fetch> &f,
                                 const QList<QHostAddress> &addresses)
{
    if (f->finished)
        return;
    if (addresses.isEmpty())
        return finish(f, std::nullopt, QStringLiteral("%1 has no address").arg(f->url.host()));
    if (!m_config.allowPrivate)
        for (const QHostAddress &address : addresses)
            if (!isPublic(address))
                return finish(f, std::nullopt,
                              QStringLiteral("%1 leads to %2, which is not a public address: "
                                             "documents are fetched from public addresses only "
                                             "(--client-metadata-private allows others)")
                                  .arg(f->url.host(), address.toString()));
    f->addresses = addresses;
    connectTo(f);
}

void ClientIdDocuments::connectTo(const std::shared_ptr<Fetch> &f)
{
    const QHostAddress address = f->addresses.takeFirst();
    f->socket = new QSslSocket(this);
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    // Spelled out: adding to the default's list would stop Qt from loading the system's on
    // demand, and the extra authorities would then be the only ones.
    tls.setCaCertificates(QSslConfiguration::systemCaCertificates() + m_config.extraCas);
    tls.setPeerVerifyMode(QSslSocket::VerifyPeer);
    f->socket->setSslConfiguration(tls);
    f->parser.setMaxBodySize(kMaxBytes);
    connect(f->socket, &QSslSocket::encrypted, this, [f] {
        f->encrypted = true;
        QByteArray target = f->url.path(QUrl::FullyEncoded).toLatin1();
        if (f->url.hasQuery())
            target += '?' + f->url.query(QUrl::FullyEncoded).toLatin1();
        f->socket->write("GET " + target +
                         " HTTP/1.1\r\nHost: " + f->url.authority(QUrl::FullyEncoded).toLatin1() +
                         "\r\nAccept: application/json\r\nUser-Agent: code-sandbox\r\n"
                         "Connection: close\r\n\r\n");
    });
    connect(f->socket, &QSslSocket::readyRead, this, [this, f] {
        f->parser.feed(f->socket->readAll());
        received(f);
    });
    connect(f->socket, &QSslSocket::disconnected, this, [this, f] { closed(f); });
    connect(f->socket, &QSslSocket::sslErrors, this, [this, f](const QList<QSslError> &errors) {
        QStringList what;
        for (const QSslError &e : errors)
            what.append(e.errorString());
        finish(f, std::nullopt,
               QStringLiteral("the TLS certificate of %1 is not trusted: %2")
                   .arg(f->url.host(), what.join(QStringLiteral("; "))));
    });
    connect(f->socket, &QSslSocket::errorOccurred, this, [this, f](QAbstractSocket::SocketError e) {
        // A name with several addresses (localhost: ::1, 127.0.0.1) is tried on each in turn.
        if (!f->finished && !f->encrypted && !f->addresses.isEmpty() &&
            (e == QAbstractSocket::ConnectionRefusedError || e == QAbstractSocket::NetworkError ||
             e == QAbstractSocket::HostNotFoundError)) {
            dropSocket(f);
            f->parser.reset();
            return connectTo(f);
        }
        // The end of a body that ends with the connection (no length, not chunked).
        if (e == QAbstractSocket::RemoteHostClosedError && f->encrypted)
            return closed(f);
        if (f->parser.state() == HttpResponseParser::State::Incomplete)
            finish(f, std::nullopt,
                   QStringLiteral("cannot fetch it from %1: %2")
                       .arg(f->url.host(), f->socket->errorString()));
    });
    // The address checked is the one connected to; the name is what the certificate must hold.
    f->socket->connectToHostEncrypted(address.toString(), quint16(f->url.port(443)), f->url.host());
}

void ClientIdDocuments::dropSocket(const std::shared_ptr<Fetch> &f)
{
    if (!f->socket)
        return;
    f->socket->disconnect(this);
    f->socket->abort();
    f->socket->deleteLater();
    f->socket = nullptr;
}

void ClientIdDocuments::closed(const std::shared_ptr<Fetch> &f)
{
    if (f->finished)
        return;
    f->parser.feed(f->socket->readAll());
    f->parser.finishOnEof();
    received(f);
    if (!f->finished)
        finish(f, std::nullopt,
               QStringLiteral("%1 closed the connection before the document").arg(f->url.host()));
}

void ClientIdDocuments::received(const std::shared_ptr<Fetch> &f)
{
    const HttpResponseParser &p = f->parser;
    if (f->finished || p.state() == HttpResponseParser::State::Incomplete)
        return;
    if (p.state() != HttpResponseParser::State::Complete)
        return finish(f, std::nullopt,
                      p.bodyTooLarge()
                          ? QStringLiteral("the document is larger than %1 bytes").arg(kMaxBytes)
                          : QStringLiteral("%1 did not answer in HTTP: %2")
                                .arg(f->url.host(), QString::fromLatin1(p.errorString())));
    if (p.status() >= 300 && p.status() < 400)
        return finish(f, std::nullopt,
                      QStringLiteral("%1 answered %2, a redirect, which is not followed: the "
                                     "document must be at its client_id itself")
                          .arg(f->url.host())
                          .arg(p.status()));
    if (p.status() != 200)
        return finish(f, std::nullopt,
                      QStringLiteral("%1 answered %2").arg(f->url.host()).arg(p.status()));
    QString why;
    const auto client = parse(f->clientId, p.body(), &why);
    f->cacheSec = cacheSeconds(p.header("Cache-Control"));
    finish(f, client, why);
}

void ClientIdDocuments::finish(const std::shared_ptr<Fetch> &f,
                               const std::optional<OAuthClient> &client, const QString &why)
{
    if (f->finished)
        return;
    f->finished = true;
    if (f->lookupId >= 0)
        QHostInfo::abortHostLookup(f->lookupId);
    if (f->timer) {
        --m_fetching;
        f->timer->deleteLater();
    }
    dropSocket(f);
    if (client && f->cacheSec > 0) {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        m_cache.removeIf([now](const auto &entry) { return entry.value().until <= now; });
        if (m_cache.size() >= kMaxCached)
            m_cache.erase(m_cache.begin());
        m_cache.insert(f->clientId, {*client, now + qint64(f->cacheSec) * 1000});
    }
    if (!client)
        qCInfo(lcHttp).noquote() << "OAuth: client document" << f->clientId.left(200)
                                 << "refused:" << why;
    if (f->context)
        f->done(client, why);
}
