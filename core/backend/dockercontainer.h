#pragma once

#include "sandboxcontainer.h"

#include <QJsonObject>
#include <QPointer>
#include <QString>

class AttachStream;
class EngineClient;
struct EngineError;

// A sandbox on the Docker Engine API (Docker, Podman): a container created from a create body
// (ContainerSpec), attached before it starts (so nothing of its output is missed), started, then
// waiting for its program on stdin; removed with its anonymous volumes, retried until the engine
// confirms.
class DockerContainer : public SandboxContainer
{
    Q_OBJECT
public:
    DockerContainer(EngineClient *engine, const QJsonObject &spec, const QString &image,
                    const QString &name, QObject *parent = nullptr);
    ~DockerContainer() override;

    void prepare() override;
    void write(const QByteArray &bytes) override;
    void remove() override;

    State state() const override { return m_state; }
    QString id() const override { return m_id; }
    QString name() const override { return m_name; }
    QString image() const override { return m_image; }
    bool imageMissing() const override { return m_imageMissing; }
    QString streamError() const override { return m_streamError; }
    bool createOutcomeUnknown() const override { return m_createOutcomeUnknown; }
    bool backendLost() const override { return m_backendLost; }
    void setMissingImageHint(Hint hint) override { m_missingImageHint = std::move(hint); }

    void putFiles(const QString &dir, const QByteArray &tar, QObject *context,
                  const Done &done) override;
    void fetchFiles(const QString &path, qint64 maxBytes, QObject *context,
                    const Fetched &done) override;
    void exitStatus(QObject *context, const Exited &done) override;
    void interrupt() override;
    bool sampleUsage(QObject *context, const Sampled &done) override;

    // Stats requests under way at once on one engine, across its sandboxes: each can hold a
    // connection for up to a second (Docker answers at its next reading), and the requests that
    // run programs must always find one.
    static constexpr int kMaxSamplesInFlight = 4;

private:
    void fail(const EngineError &error, const QString &what);
    void attach();
    void start();
    void sendRemove();

    EngineClient *m_engine;
    QJsonObject m_spec;
    QString m_image;
    QString m_name;
    QString m_id;
    QPointer<AttachStream> m_stream;
    State m_state = State::New;
    bool m_removeWhenCreated = false;
    bool m_imageMissing = false;
    bool m_createOutcomeUnknown = false;
    bool m_backendLost = false;
    Hint m_missingImageHint;
    QString m_streamError;
    int m_removeAttempts = 0;
};
