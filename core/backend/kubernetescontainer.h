#pragma once

#include "backendcontainer.h"

#include <QElapsedTimer>
#include <QJsonObject>
#include <QPointer>
#include <QString>
#include <QTimer>

class KubeClient;
class KubeStream;
class PodIsolation;
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
class KubernetesContainer : public BackendContainer
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

    // `pod`: the manifest (PodSpec), sent through `client`'s PodsApi once `isolation` (the
    // backend's, shared by its pods) allows a pod without network.
    KubernetesContainer(KubeClient *client, PodIsolation *isolation, const QJsonObject &pod,
                        const QString &image, const QString &name, QObject *parent = nullptr);
    ~KubernetesContainer() override;

    void prepare() override;
    void write(const QByteArray &bytes) override;

    void putFiles(const QString &dir, const QByteArray &tar, QObject *context,
                  const Done &done) override;
    void fetchFiles(const QString &path, qint64 maxBytes, QObject *context,
                    const Fetched &done) override;
    void exitStatus(QObject *context, const Exited &done) override;
    void interrupt() override;

protected:
    void closeStream() override;
    // DELETE with grace 0.
    void sendRemove() override;

private:
    void create();
    void poll();
    bool onPodStatus(const QJsonObject &status, const QJsonObject &state);
    bool failIfStuck(const QJsonObject &status, const QJsonObject &state, const QString &phase);
    void attach();
    void fail(const QString &message, bool lost = false);
    void failRequest(const KubeError &error, const QString &what);
    void askExit(const std::shared_ptr<QElapsedTimer> &since, QObject *context, const Exited &done);

    KubeClient *m_client;
    PodIsolation *m_isolation;
    QJsonObject m_pod;
    QPointer<KubeStream> m_stream;
    QTimer m_pollTimer;
    QElapsedTimer m_startClock;
};
