#pragma once

#include "backendcontainer.h"

#include <QJsonObject>
#include <QPointer>
#include <QString>
#include <functional>

class AttachStream;
class EngineClient;
struct EngineError;

// A sandbox on the Docker Engine API (Docker, Podman): a container created from a create body
// (ContainerSpec), attached before it starts (so nothing of its output is missed), started, then
// waiting for its program on stdin; removed with its anonymous volumes, retried until the engine
// confirms.
class DockerContainer : public BackendContainer
{
    Q_OBJECT
public:
    // `body`: the create body (ContainerSpec).
    DockerContainer(EngineClient *engine, const QJsonObject &body, const QString &image,
                    const QString &name, QObject *parent = nullptr);
    ~DockerContainer() override;

    // Gives the create's body, before the create, to `ready` (DockerBackend: once the engine has
    // said what the image carries); the body given at construction is the one used until then.
    using BodyWait = std::function<void(QObject *context,
                                        const std::function<void(const QJsonObject &)> &ready)>;
    void waitForBody(BodyWait wait) { m_bodyWait = std::move(wait); }

    void prepare() override;
    void write(const QByteArray &bytes) override;

    void putFiles(const QString &dir, const QByteArray &tar, QObject *context,
                  const Done &done) override;
    void fetchFiles(const QString &path, qint64 maxBytes, QObject *context,
                    const Fetched &done) override;
    void exitStatus(QObject *context, const Exited &done) override;
    void interrupt() override;
    void removeOnceEnded() override;
    bool sampleUsage(QObject *context, const Sampled &done) override;

    // Stats requests under way at once on one engine, across its sandboxes: each can hold a
    // connection for up to a second (Docker answers at its next reading), and the requests that
    // run programs must always find one.
    static constexpr int kMaxSamplesInFlight = 4;
    // How long a used sandbox may take to end by itself once its stdin is closed.
    static constexpr int kEndWaitMs = 3000;

protected:
    void closeStream() override;
    // Forced (a running program is killed), with the anonymous volumes.
    void sendRemove() override;

private:
    void create(const QJsonObject &body);
    void fail(const EngineError &error, const QString &what);
    void failWith(const QString &message);
    void attach();
    void start();
    // An allow-list sandbox, started: its credential bound to its address, then ready.
    void bindEgress();

    EngineClient *m_engine;
    QJsonObject m_body;
    BodyWait m_bodyWait;
    bool m_waitingForBody = false;
    QPointer<AttachStream> m_stream;
};
