#pragma once

#include "sandboxcontainer.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QPointer>
#include <QString>
#include <QTimer>

class KubeClient;
class KubeStream;
class KubernetesBackend;
struct KubeError;

// A sandbox as a pod (PodSpec's body): created (after the namespace's egress policy was found,
// for a pod without network, and the body's hardening checked), polled until Running, then its
// supervisor attached over WebSocket (KubeStream) and waiting for its program on stdin; deleted
// with grace 0 on every path, retried until the API server confirms.
//
// The pod's state is polled, not watched: KubeClient holds no streaming answers (each request
// has a deadline and a body cap), and the wait is short: every kFastPollMs for the first
// kFastPollForMs (a warm or cached image starts within that), then every kSlowPollMs, until
// kStartTimeoutMs. Files go in and out as tar over an exec of `tar`, cut off at the asked-for
// size; interrupt() is an exec of `kill -INT 1`; exitStatus() the container's terminated state.
class KubernetesContainer : public SandboxContainer
{
    Q_OBJECT
public:
    static constexpr int kFastPollMs = 100;
    static constexpr int kFastPollForMs = 3000;
    static constexpr int kSlowPollMs = 500;
    // A pod not Running by then (unschedulable, a pull that never ends) fails.
    static constexpr int kStartTimeoutMs = 180000;
    // exitStatus(): how long the terminated state is waited for after the stream ended.
    static constexpr int kExitWaitMs = 15000;

    KubernetesContainer(KubernetesBackend *backend, const QJsonObject &spec, const QString &image,
                        const QString &name, QObject *parent = nullptr);
    ~KubernetesContainer() override;

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

private:
    void create();
    void poll();
    void attach();
    void fail(const QString &message, bool lost = false);
    void failRequest(const KubeError &error, const QString &what);
    void sendDelete();
    void askExit(const std::shared_ptr<QElapsedTimer> &since, QObject *context, const Exited &done);
    QString podPath() const;

    KubernetesBackend *m_backend;
    KubeClient *m_client;
    QJsonObject m_spec;
    QString m_image;
    QString m_name;
    QString m_id;
    QPointer<KubeStream> m_stream;
    QTimer m_pollTimer;
    QElapsedTimer m_startClock;
    State m_state = State::New;
    bool m_removeWhenCreated = false;
    bool m_imageMissing = false;
    bool m_createOutcomeUnknown = false;
    bool m_backendLost = false;
    Hint m_missingImageHint;
    QString m_streamError;
    int m_removeAttempts = 0;
};
