#pragma once

// Stand-ins for the container engine's socket, for the fault suites:
//  - EngineProxy forwards every connection to the real engine and can be "stopped" (every
//    connection dropped, nothing listening) and started again on the same path, like an engine
//    restart. Hijacked attach streams are plain bytes, so forwarding both ways is all it takes.
//  - FakeEngine speaks just enough of the Docker Engine API to run a sandbox (version, create,
//    attach with a fake supervisor, start, wait, delete) and lets a test replace the answer to one
//    request with a fault: a dropped connection, garbage, a broken chunked body, a stall.

#include <QElapsedTimer>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QLocalServer>
#include <QLocalSocket>
#include <QPointer>
#include <QSet>
#include <QTimer>
#include <functional>

class EngineProxy : public QObject
{
public:
    EngineProxy(const QString &listenPath, const QString &upstreamPath, QObject *parent = nullptr)
        : QObject(parent), m_path(listenPath), m_upstream(upstreamPath)
    {
        m_server.setSocketOptions(QLocalServer::WorldAccessOption);
        connect(&m_server, &QLocalServer::newConnection, this, [this] {
            while (QLocalSocket *down = m_server.nextPendingConnection())
                pair(down);
        });
    }
    ~EngineProxy() override { stop(); }

    QString path() const { return m_path; }
    bool isListening() const { return m_server.isListening(); }
    // The engine creates containers but its answers to create requests are lost, as when it
    // answers after the client gave up waiting.
    void setDropCreateAnswers(bool drop) { m_dropCreateAnswers = drop; }
    // Health questions (GET /_ping) reach the engine this much later, as on a busy machine;
    // -1: never (an engine that hangs, or a link cut without a reset). 0: at once.
    void setPingDelayMs(int ms) { m_pingDelayMs = ms; }
    int accepted() const { return m_accepted; }
    int open() const { return int(m_pairs.size()); }

    bool start()
    {
        QLocalServer::removeServer(m_path);
        return m_server.listen(m_path);
    }

    // The engine goes away: every connection is cut at once and the socket disappears (dockerd
    // removes its socket when it stops).
    void stop()
    {
        m_server.close();
        const auto pairs = std::exchange(m_pairs, {});
        for (const auto &p : pairs) {
            for (QLocalSocket *s : {p.first.data(), p.second.data()}) {
                if (!s)
                    continue;
                s->disconnect(this);
                s->abort();
                s->deleteLater();
            }
        }
    }

private:
    void pair(QLocalSocket *down)
    {
        ++m_accepted;
        down->setParent(this);
        auto *up = new QLocalSocket(this);
        up->connectToServer(m_upstream);
        if (!up->waitForConnected(2000)) {
            down->abort();
            down->deleteLater();
            up->deleteLater();
            return;
        }
        m_pairs.append(qMakePair(QPointer<QLocalSocket>(down), QPointer<QLocalSocket>(up)));
        const auto forward = [this, up](QLocalSocket *from, QLocalSocket *to) {
            const QByteArray bytes = from->readAll();
            if (from != up && bytes.startsWith("POST "))
                up->setProperty("create", bytes.left(200).contains("/containers/create"));
            if (from == up && m_dropCreateAnswers && up->property("create").toBool())
                return;
            if (from != up && m_pingDelayMs != 0 && bytes.startsWith("GET /_ping")) {
                if (m_pingDelayMs > 0)
                    QTimer::singleShot(m_pingDelayMs, up, [up, bytes] {
                        if (up->state() == QLocalSocket::ConnectedState)
                            up->write(bytes);
                    });
                return;
            }
            if (!bytes.isEmpty() && to->state() == QLocalSocket::ConnectedState)
                to->write(bytes);
        };
        // One side closing closes the other, after what was in flight.
        const auto closed = [this](QLocalSocket *from, QLocalSocket *to) {
            if (from->bytesAvailable() > 0 && to->state() == QLocalSocket::ConnectedState)
                to->write(from->readAll());
            m_pairs.removeIf([from](const auto &p) { return p.first == from || p.second == from; });
            from->disconnect(this);
            to->disconnect(this);
            to->disconnectFromServer();
            from->deleteLater();
            to->deleteLater();
        };
        connect(down, &QLocalSocket::readyRead, this, [=] { forward(down, up); });
        connect(up, &QLocalSocket::readyRead, this, [=] { forward(up, down); });
        connect(down, &QLocalSocket::disconnected, this, [=] { closed(down, up); });
        connect(up, &QLocalSocket::disconnected, this, [=] { closed(up, down); });
        if (down->bytesAvailable() > 0)
            forward(down, up);
    }

    QString m_path;
    QString m_upstream;
    QLocalServer m_server;
    QList<QPair<QPointer<QLocalSocket>, QPointer<QLocalSocket>>> m_pairs;
    int m_accepted = 0;
    bool m_dropCreateAnswers = false;
    int m_pingDelayMs = 0;
};

class FakeEngine : public QObject
{
public:
    struct Request
    {
        QByteArray method;
        QByteArray path;
        QByteArray body;
        bool upgrade = false;
    };
    // Answers (or deliberately does not answer) one request in place of the fake's normal answer.
    using Fault = std::function<void(QLocalSocket *socket, const Request &request)>;
    // What the fake supervisor does once a program arrived on an attach stream.
    using Program = std::function<void(QLocalSocket *socket, const QByteArray &nonce)>;

    explicit FakeEngine(QObject *parent = nullptr) : QObject(parent)
    {
        connect(&m_server, &QLocalServer::newConnection, this, [this] {
            while (QLocalSocket *s = m_server.nextPendingConnection())
                adopt(s);
        });
    }

    bool listen(const QString &path)
    {
        QLocalServer::removeServer(path);
        return m_server.listen(path);
    }
    QString path() const { return m_server.fullServerName(); }

    // The next request whose path contains `pathPart` (and, if given, has `method`) gets `fault`.
    void injectOnce(const QByteArray &pathPart, const Fault &fault, const QByteArray &method = {})
    {
        m_faults.append({pathPart, method, fault});
    }
    void setProgram(const Program &program) { m_program = program; }
    void setWaitStatus(int status) { m_waitStatus = status; }

    const QList<Request> &requests() const { return m_requests; }
    int connections() const { return m_connections; }
    int created() const { return m_created; }
    int removed() const { return m_removed; } // DELETE requests
    // Every container the fake created has been deleted at least once.
    bool allRemoved() const { return m_removedIds.size() == m_created; }

    // --- Building blocks for faults ---
    static QByteArray response(int status, const QByteArray &body,
                               const QByteArray &extraHeaders = {})
    {
        return "HTTP/1.1 " + QByteArray::number(status) + " " + reason(status) +
               "\r\nContent-Type: application/json\r\nContent-Length: " +
               QByteArray::number(body.size()) + "\r\n" + extraHeaders + "\r\n" + body;
    }
    static QByteArray json(const QJsonObject &o)
    {
        return QJsonDocument(o).toJson(QJsonDocument::Compact);
    }
    static QByteArray frame(int stream, const QByteArray &payload)
    {
        QByteArray h(8, '\0');
        h[0] = char(stream);
        const quint32 n = quint32(payload.size());
        h[4] = char(n >> 24);
        h[5] = char(n >> 16);
        h[6] = char(n >> 8);
        h[7] = char(n);
        return h + payload;
    }
    static QByteArray upgraded()
    {
        return "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
               "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n";
    }
    // Sends `bytes` and then closes the connection once they are out.
    static void sendAndClose(QLocalSocket *s, const QByteArray &bytes)
    {
        s->write(bytes);
        s->flush();
        s->disconnectFromServer();
    }

private:
    struct Connection
    {
        QByteArray buffer;
        bool raw = false;
        bool programSeen = false;
    };
    struct Injected
    {
        QByteArray pathPart;
        QByteArray method;
        Fault fault;
    };

    static QByteArray reason(int status)
    {
        switch (status) {
        case 101:
            return "Switching Protocols";
        case 200:
            return "OK";
        case 201:
            return "Created";
        case 204:
            return "No Content";
        case 404:
            return "Not Found";
        default:
            return "Status";
        }
    }

    void adopt(QLocalSocket *s)
    {
        ++m_connections;
        s->setParent(this);
        m_conns.insert(s, {});
        connect(s, &QLocalSocket::readyRead, this, [this, s] { onData(s); });
        connect(s, &QLocalSocket::disconnected, this, [this, s] {
            m_conns.remove(s);
            s->deleteLater();
        });
    }

    void onData(QLocalSocket *s)
    {
        QPointer<QLocalSocket> guard(s);
        auto it = m_conns.find(s);
        if (it == m_conns.end())
            return;
        it->buffer += s->readAll();
        while (guard && m_conns.contains(s)) {
            Connection &c = m_conns[s];
            if (c.raw) {
                onStdin(s, c);
                return;
            }
            const qsizetype end = c.buffer.indexOf("\r\n\r\n");
            if (end < 0)
                return;
            const QList<QByteArray> lines = c.buffer.left(end).split('\n');
            const QList<QByteArray> first = lines.value(0).trimmed().split(' ');
            Request r;
            r.method = first.value(0);
            r.path = first.value(1);
            qsizetype length = 0;
            for (const QByteArray &line : lines.mid(1)) {
                const qsizetype colon = line.indexOf(':');
                const QByteArray name = line.left(colon).trimmed().toLower();
                const QByteArray value = line.mid(colon + 1).trimmed();
                if (name == "content-length")
                    length = value.toLongLong();
                else if (name == "upgrade")
                    r.upgrade = true;
            }
            if (c.buffer.size() < end + 4 + length)
                return;
            r.body = c.buffer.mid(end + 4, length);
            c.buffer.remove(0, end + 4 + length);
            m_requests.append(r);
            answer(s, r);
        }
    }

    void answer(QLocalSocket *s, const Request &r)
    {
        for (int i = 0; i < m_faults.size(); ++i) {
            if (r.path.contains(m_faults[i].pathPart) &&
                (m_faults[i].method.isEmpty() || m_faults[i].method == r.method)) {
                const Fault fault = m_faults.takeAt(i).fault;
                fault(s, r);
                return;
            }
        }
        if (r.path.endsWith("/version") || r.path == "/_ping") {
            s->write(response(200, json({{QStringLiteral("ApiVersion"), QStringLiteral("1.41")},
                                         {QStringLiteral("Version"), QStringLiteral("fake")}})));
        } else if (r.path.contains("/containers/create")) {
            ++m_created;
            s->write(response(
                201, json({{QStringLiteral("Id"), QStringLiteral("fake%1").arg(m_created)}})));
        } else if (r.path.contains("/attach") && r.upgrade) {
            m_conns[s].raw = true;
            s->write(upgraded());
        } else if (r.path.contains("/start")) {
            s->write(response(204, {}));
        } else if (r.path.contains("/wait")) {
            s->write(response(200, json({{QStringLiteral("StatusCode"), m_waitStatus}})));
        } else if (r.method == "DELETE" && r.path.contains("/containers/")) {
            ++m_removed;
            m_removedIds.insert(r.path.split('/').value(3).split('?').value(0));
            s->write(response(204, {}));
        } else if (r.path.contains("/containers/json")) {
            s->write(response(200, "[]"));
        } else {
            s->write(response(404, json({{QStringLiteral("message"),
                                          QStringLiteral("fake engine: no route for ") +
                                              QString::fromLatin1(r.path)}})));
        }
    }

    // The fake supervisor: "<nonce> <size>\n<program>" arrives on stdin.
    void onStdin(QLocalSocket *s, Connection &c)
    {
        const qsizetype nl = c.buffer.indexOf('\n');
        if (c.programSeen || nl < 0)
            return;
        c.programSeen = true;
        const QByteArray nonce = c.buffer.left(nl).split(' ').value(0);
        if (m_program) {
            m_program(s, nonce);
            return;
        }
        sendAndClose(s, frame(1, "fake output\n") + frame(1, nonce + " 0\n") +
                            frame(2, nonce + " 0\n"));
    }

    QLocalServer m_server;
    QHash<QLocalSocket *, Connection> m_conns;
    QList<Injected> m_faults;
    QList<Request> m_requests;
    Program m_program;
    int m_waitStatus = 0;
    int m_connections = 0;
    int m_created = 0;
    int m_removed = 0;
    QSet<QByteArray> m_removedIds;
};
