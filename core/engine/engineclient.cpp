#include "engineclient.h"

#include "attachstream.h"
#include "engineconnection.h"
#include "enginelog.h"
#include "enginereply.h"

#include <QJsonDocument>
#include <QUrl>

EngineClient::EngineClient(const EngineAddress &address, QObject *parent)
    : QObject(parent), m_address(address)
{}

EngineClient::EngineClient(const QString &socketPath, QObject *parent)
    : EngineClient(EngineAddress::unixSocket(socketPath.startsWith(u"unix://") ? socketPath.mid(7)
                                                                               : socketPath),
                   parent)
{}

EngineClient::~EngineClient()
{
    for (auto &p : m_waiting)
        if (p.reply)
            p.reply->fail(EngineError::of(EngineError::Kind::Closed,
                                          QStringLiteral("engine client shut down")));
}

QByteArray EngineClient::encode(const QString &pathSegment)
{
    return QUrl::toPercentEncoding(pathSegment);
}

EngineReply *EngineClient::createContainer(const QJsonObject &spec, const QString &name)
{
    auto *reply = new EngineReply(this);
    const QByteArray path = name.isEmpty() ? QByteArray("/containers/create")
                                           : "/containers/create?name=" + encode(name);
    enqueue({EngineRequest{"POST", path, {}, "application/json", false}, reply, nullptr, spec});
    return reply;
}

EngineReply *EngineClient::get(const QByteArray &path)
{
    return request("GET", path);
}

EngineReply *EngineClient::post(const QByteArray &path, const QJsonObject &body)
{
    return request("POST", path,
                   body.isEmpty() ? QByteArray()
                                  : QJsonDocument(body).toJson(QJsonDocument::Compact),
                   body.isEmpty() ? QByteArray() : QByteArray("application/json"));
}

EngineReply *EngineClient::del(const QByteArray &path)
{
    return request("DELETE", path);
}

EngineReply *EngineClient::send(const EngineRequest &request)
{
    auto *reply = new EngineReply(this);
    enqueue({request, reply, nullptr, {}});
    return reply;
}

EngineReply *EngineClient::request(const QByteArray &method, const QByteArray &path,
                                   const QByteArray &body, const QByteArray &contentType)
{
    return send(EngineRequest{method, path, body, contentType, false});
}

EngineReply *EngineClient::ping()
{
    auto *reply = new EngineReply(this);
    enqueue({EngineRequest{"GET", "/_ping", {}, {}, false}, reply, nullptr, {}});
    return reply;
}

AttachStream *EngineClient::attach(const QString &containerId, bool tty)
{
    auto *conn = new EngineConnection(m_address);
    auto *stream = new AttachStream(conn, tty, this);
    auto *reply = new EngineReply(stream);
    stream->watch(reply);
    enqueue({EngineRequest{"POST",
                           "/containers/" + encode(containerId) +
                               "/attach?stream=1&stdin=1&stdout=1&stderr=1",
                           {},
                           {},
                           true},
             reply,
             stream,
             {}});
    return stream;
}

void EngineClient::enqueue(Pending p)
{
    m_waiting.enqueue(std::move(p));
    if (m_apiVersion.isEmpty())
        negotiate();
    else
        dispatch();
}

void EngineClient::negotiate()
{
    if (m_negotiating)
        return;
    m_negotiating = true;
    auto *reply = new EngineReply(this);
    connect(reply, &EngineReply::finished, this, [this, reply] {
        reply->deleteLater();
        m_negotiating = false;
        if (!reply->ok()) {
            // Fail everything that waited; the next request negotiates again, so an engine
            // that comes back later is used without a restart.
            const EngineError err = reply->error();
            qCWarning(lcEngine).noquote() << err.toString();
            const auto waiting = std::exchange(m_waiting, {});
            for (const auto &p : waiting)
                if (p.reply)
                    p.reply->fail(err);
            return;
        }
        m_versionInfo = reply->json();
        const QString offered = m_versionInfo.value(u"ApiVersion").toString();
        const QStringList parts = offered.split(u'.');
        int minor = parts.size() == 2 ? parts[1].toInt() : kMaxApiMinor;
        if (parts.value(0) != u"1" || minor <= 0 || minor > kMaxApiMinor)
            minor = kMaxApiMinor;
        m_apiVersion = QStringLiteral("1.%1").arg(minor);
        m_dialect = EngineDialect::fromVersion(m_versionInfo);
        qCInfo(lcEngine).noquote()
            << m_dialect.name() << m_versionInfo.value(u"Version").toString() << "API" << offered
            << "at" << m_address.display() << "— using" << m_apiVersion;
        dispatch();
    });
    auto *conn = takeConnection();
    conn->setAnswerTimeout(m_requestTimeoutMs);
    conn->send(EngineRequest{"GET", "/version", {}, {}, false}, reply);
}

void EngineClient::dispatch()
{
    if (m_apiVersion.isEmpty())
        return; // negotiation still under way; it dispatches when done
    while (!m_waiting.isEmpty()) {
        // Attach streams always get their own connection: it is hijacked for good.
        const bool needsFresh = m_waiting.head().attach != nullptr;
        if (!needsFresh && m_idle.isEmpty() && m_busy.size() >= kMaxConnections)
            return;
        Pending p = m_waiting.dequeue();
        if (p.attach) {
            auto *conn = p.attach->findChild<EngineConnection *>();
            startOn(conn, p);
            continue;
        }
        startOn(takeConnection(), p);
    }
}

void EngineClient::startOn(EngineConnection *c, const Pending &p)
{
    EngineRequest req = p.request;
    if (!p.createSpec.isEmpty())
        req.body =
            QJsonDocument(m_dialect.adaptCreate(p.createSpec)).toJson(QJsonDocument::Compact);
    if (req.path != "/_ping")
        req.path = "/v" + m_apiVersion.toLatin1() + req.path;
    c->setAnswerTimeout(m_requestTimeoutMs);
    c->send(req, p.reply);
}

EngineConnection *EngineClient::takeConnection()
{
    EngineConnection *c = nullptr;
    while (!c && !m_idle.isEmpty()) {
        c = m_idle.takeLast();
        if (!c->isReusable()) {
            // Closed by the engine while idle: a request sent on it would fail for nothing.
            c->disconnect(this);
            c->deleteLater();
            c = nullptr;
        }
    }
    if (!c) {
        c = new EngineConnection(m_address, this);
        connect(c, &EngineConnection::idle, this, [this](EngineConnection *conn) {
            release(conn);
            m_idle.append(conn);
            dispatch();
        });
        connect(c, &EngineConnection::gone, this, [this](EngineConnection *conn) {
            m_idle.removeOne(conn);
            release(conn);
            conn->deleteLater();
            dispatch();
        });
    }
    m_busy.insert(c);
    return c;
}

void EngineClient::release(EngineConnection *c)
{
    m_busy.remove(c);
}
