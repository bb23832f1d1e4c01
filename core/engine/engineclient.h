#pragma once

#include "engineaddress.h"
#include "enginedialect.h"
#include "engineerror.h"
#include "enginerequest.h"

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QQueue>
#include <QSet>
#include <QString>

class AttachStream;
class EngineConnection;
class EngineReply;

// Docker Engine API client (also Podman's compatible socket) over a local socket, TCP (plain or
// TLS) or ssh, as its EngineAddress says. Fully
// asynchronous: every call returns a reply object at once. The API version is negotiated on first
// use (GET /version, capped at what this code speaks), idle connections are reused, and when the
// engine is unreachable the next call tries again, so a restarted engine is picked up.
class EngineClient : public QObject
{
    Q_OBJECT
public:
    static constexpr int kMaxApiMinor = 41; // 1.41: Docker 20.10, Podman 4

    explicit EngineClient(const EngineAddress &address, QObject *parent = nullptr);
    // A local socket (unix:///path, or the path).
    explicit EngineClient(const QString &socketPath, QObject *parent = nullptr);
    ~EngineClient() override;

    const EngineAddress &address() const { return m_address; }
    // Where the engine is, for messages and the window (EngineAddress::display).
    QString endpoint() const { return m_address.display(); }
    // The local socket's path; empty for an engine reached over TCP or ssh.
    QString socketPath() const
    {
        return m_address.scheme == EngineAddress::Scheme::Unix ? m_address.socketPath : QString();
    }
    QString apiVersion() const { return m_apiVersion; }
    QJsonObject versionInfo() const { return m_versionInfo; }
    // Docker or Podman, known once negotiated; requests are adapted to it as they are sent.
    EngineDialect dialect() const { return m_dialect; }
    // A request whose answer does not start, or stops coming, for `ms` fails with
    // EngineError::Kind::Timeout and its connection is dropped (an engine that accepts but hangs).
    // 0, the default, waits for ever: callers that need a bound set one (POST .../wait blocks
    // until the container exits, so any bound must exceed that).
    void setRequestTimeout(int ms) { m_requestTimeoutMs = ms; }
    int requestTimeout() const { return m_requestTimeoutMs; }

    // The engine's resources are asked through ContainersApi, VolumesApi, ImagesApi and SystemApi
    // (made on the spot: ContainersApi(engine).start(id)), as the well-known Docker clients
    // organise them; no REST path is written outside this folder. Raw requests, for those
    // classes (and tests):
    EngineReply *get(const QByteArray &path);
    EngineReply *post(const QByteArray &path, const QJsonObject &body = {});
    EngineReply *del(const QByteArray &path);
    // Any request as it is (a body cap of its own, say).
    EngineReply *send(const EngineRequest &request);
    EngineReply *request(const QByteArray &method, const QByteArray &path,
                         const QByteArray &body = {}, const QByteArray &contentType = {});
    // GET /_ping (also negotiates the version, as the first request of any kind does).
    EngineReply *ping();
    // POST /containers/create; the body is adapted to the engine's dialect once it is known.
    EngineReply *createContainer(const QJsonObject &spec, const QString &name);

    // Attaches to stdin/stdout/stderr of a created container on a dedicated connection.
    AttachStream *attach(const QString &containerId, bool tty = false);

    static QByteArray encode(const QString &pathSegment);

    // A budget for optional stats requests (the usage samples of running programs), shared by
    // every sandbox on this engine and going with it: at most `limit` out at once, so that the
    // requests that run programs always find a connection. A slot taken is given back when its
    // request has ended.
    bool takeStatsSlot(int limit)
    {
        if (m_statsInFlight >= limit)
            return false;
        ++m_statsInFlight;
        return true;
    }
    void returnStatsSlot() { m_statsInFlight = qMax(0, m_statsInFlight - 1); }

private:
    struct Pending
    {
        EngineRequest request;
        EngineReply *reply;
        AttachStream *attach;
        QJsonObject createSpec; // a create request's body, serialised once the dialect is known
    };

    void enqueue(Pending p);
    void negotiate();
    void dispatch();
    void startOn(EngineConnection *c, const Pending &p);
    EngineConnection *takeConnection();
    void release(EngineConnection *c);

    EngineAddress m_address;
    QString m_apiVersion; // "1.41"; empty until negotiated
    QJsonObject m_versionInfo;
    EngineDialect m_dialect;
    bool m_negotiating = false;
    int m_requestTimeoutMs = 0;
    QQueue<Pending> m_waiting;
    QList<EngineConnection *> m_idle;
    // Connections lent to a request, each counted out once ("gone" can follow "idle", or repeat).
    QSet<EngineConnection *> m_busy;
    int m_statsInFlight = 0;
    static constexpr int kMaxConnections = 32;
};
