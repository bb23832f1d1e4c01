#pragma once

#include "sandboxcontainer.h"

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <functional>

struct Language;
struct SandboxConfig;

// Where sandboxes run: the one door between the sandbox room (executions, pools, sessions,
// libraries, leftovers) and an engine. DockerBackend (core/backend, the Docker Engine API of
// Docker and Podman) is the first implementation.
//
// A Kubernetes cluster fits the same calls: a creation spec is a pod manifest (the same limits
// as requests/limits, a securityContext, emptyDir volumes with sizeLimit, labels); a sandbox is
// a pod whose supervisor's stdin, stdout and stderr are attached over WebSocket
// (v5.channel.k8s.io), so write()/output() and the result line work unchanged; files go in and
// out as tar over an exec of `tar` (the same archives, cut off at the same budget); interrupt()
// is an exec of `kill -INT 1`; exitStatus() the pod's container status; volumes for libraries
// are PersistentVolumeClaims; listing and removal by label are the API's label selectors.
class SandboxBackend : public QObject
{
    Q_OBJECT
public:
    // A sandbox as list() sees it.
    struct Listed
    {
        QString id;
        QString name;
        QJsonObject labels;
    };

    // What health() reports, for the window.
    struct Health
    {
        bool reachable = false;
        QString product; // "Docker Engine", "Podman"
        QString version;
        QString apiVersion;
        int cpus = 0;           // what the engine's machine has (0: not known)
        qint64 memoryBytes = 0; // likewise
        QString error;          // why it does not answer, and what to try
    };

    using QObject::QObject;

    // Where the backend is (a socket path, a URL), for messages.
    virtual QString endpoint() const = 0;
    // How many sandboxes it runs well at once: what the service lets run when not told, and what
    // placement weighs a backend's running sandboxes against. It may grow once health(false)
    // has learnt the engine's machine.
    virtual int capacity() const = 0;

    // The creation spec of a sandbox for one program of `language` (or a session's, serving
    // programs one after another), with `librariesVolume` mounted read-only when given. Opaque to
    // the caller, equal for equal sandboxes: the pool keeps sandboxes per spec.
    virtual QJsonObject runSpec(const Language &language, const QString &image,
                                const SandboxConfig &config, const QString &librariesVolume,
                                bool session) const = 0;
    // A sandbox with network that installs libraries into `volume` (never given the pass-through
    // variables).
    virtual QJsonObject installSpec(const Language &language, const QString &image,
                                    const SandboxConfig &config, const QString &volume) const = 0;
    // A sandbox for `spec`, not yet prepared. `name` is unique on the backend.
    virtual SandboxContainer *createSandbox(const QJsonObject &spec, const QString &image,
                                            const QString &name, QObject *parent) = 0;

    // Named storage that outlives sandboxes (installed libraries).
    virtual void createVolume(const QString &name, const QJsonObject &labels, QObject *context,
                              const SandboxContainer::Done &done) = 0;
    virtual void removeVolume(const QString &name) = 0;

    // Every sandbox (running or not) that has all of `labels` ("key=value").
    virtual void
    list(const QStringList &labels, QObject *context,
         const std::function<void(const QList<Listed> &, const QString &error)> &done) = 0;
    // Removes a sandbox by id (forced), whether or not a SandboxContainer stands for it.
    virtual void removeById(const QString &id, QObject *context,
                            const SandboxContainer::Done &done) = 0;

    // Whether it answers; `cheap`: only that (a full answer can cost the engine a second, and
    // includes the machine's CPUs and memory).
    virtual void health(bool cheap, QObject *context,
                        const std::function<void(const Health &)> &done) = 0;
};
