#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <functional>

class KubeClient;

// Whether pods without network may be created in the client's namespace: its NetworkPolicies
// must deny their egress and their ingress (PodSpec::sandboxIsolationProblem). Found policies
// are trusted for kCacheMs; a missing one is asked about at every check, so that applying it
// takes effect at once. One per backend, shared by its pods.
class PodIsolation : public QObject
{
    Q_OBJECT
public:
    static constexpr qint64 kCacheMs = 30000;

    explicit PodIsolation(KubeClient *client, QObject *parent = nullptr);

    // `done` gets "" when isolated, else why not (or why the policies could not be read); it is
    // not called once `context` is gone.
    void check(QObject *context, const std::function<void(const QString &problem)> &done);

private:
    KubeClient *m_client;
    QElapsedTimer m_isolatedAt; // valid: the policies were found then
};
