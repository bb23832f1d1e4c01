#pragma once

#include "runnetwork.h"
#include "sandboxcontainer.h"
#include "sandboxspec.h"
#include "upstreamproxy.h"

#include <QDateTime>
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
// A Kubernetes cluster fits the same calls: a SandboxSpec is rendered as a pod manifest (the same
// limits as requests/limits, a securityContext, emptyDir volumes with sizeLimit, labels); a sandbox
// is a pod whose supervisor's stdin, stdout and stderr are attached over WebSocket
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
        QString runtime;        // the one its sandboxes get ("" the engine's default)
        QStringList runtimes;   // the ones it has, where it says
        QString error;          // why it does not answer, and what to try
    };

    // A sandbox image as imageStatus() sees it: the engine's answer first (it has the image or
    // not), then, while it has not, what an image builder on this machine (containers/
    // build-images.sh, through its status files) says of it.
    struct ImageStatus
    {
        enum class State
        {
            Unknown,  // the engine did not answer
            Ready,    // the engine has it
            Queued,   // a build will make it, after others
            Building, // a build is making it now
            Failed,   // the last build of it failed
            Missing   // the engine does not have it and nothing builds it
        };
        State state = State::Unknown;
        QDateTime started;  // Queued: when it was queued; Building: when its build began
        QDateTime expected; // Queued, Building: when the builder expects it done (may be null)
        QString log;        // Queued, Building, Failed: the builder's log
        QString error;      // Unknown: why

        // "ready", "queued", "building", "failed", "missing", "unknown": for JSON.
        QString stateName() const
        {
            switch (state) {
            case State::Ready:
                return QStringLiteral("ready");
            case State::Queued:
                return QStringLiteral("queued");
            case State::Building:
                return QStringLiteral("building");
            case State::Failed:
                return QStringLiteral("failed");
            case State::Missing:
                return QStringLiteral("missing");
            case State::Unknown:
                break;
            }
            return QStringLiteral("unknown");
        }
        // Whole seconds until `expected` (0 once it has passed), -1 when there is no estimate.
        qint64 secondsLeft(const QDateTime &now = QDateTime::currentDateTimeUtc()) const
        {
            if (!expected.isValid())
                return -1;
            return qMax<qint64>(0, now.secsTo(expected));
        }
    };

    using QObject::QObject;

    // Where the backend is (a socket path, a URL), for messages.
    virtual QString endpoint() const = 0;
    // How many sandboxes it runs well at once: what the service lets run when not told, and what
    // placement weighs a backend's running sandboxes against. It may grow once health(false)
    // has learnt the engine's machine.
    virtual int capacity() const = 0;
    // The container runtime its sandboxes get unless a run needs another ("" the engine's
    // default): Docker's runtime, Kubernetes' RuntimeClass.
    virtual QString runtime() const { return {}; }
    // The runtime a sandbox whose spec names none gets, where the engine says ("" otherwise).
    virtual QString defaultRuntime() const { return {}; }
    // Whether what it adds to a spec is still being learnt from the engine (the runtimes it
    // has): placement waits for settled() rather than decide on a guess. Bounded by the backend.
    virtual bool isSettling() const { return false; }

    // The spec of a sandbox for one program of `language` (or a session's, serving programs one
    // after another) with its network as decided (`network`), with `librariesVolume` mounted
    // read-only when given: SandboxSpec::forRun as this backend runs it (accept()), or why this
    // backend cannot run it. Equal for equal sandboxes: the pool keeps sandboxes per spec.
    SandboxSpec::Result runSpec(const Language &language, const QString &image,
                                const SandboxConfig &config, const RunNetwork &network,
                                const QString &librariesVolume, bool session) const
    {
        return accept(
            SandboxSpec::forRun(language, image, config, network, librariesVolume, session));
    }
    // A sandbox with network that installs libraries into `volume` (never given the pass-through
    // variables): SandboxSpec::forInstall as this backend runs it, or why it cannot.
    SandboxSpec::Result installSpec(const Language &language, const QString &image,
                                    const SandboxConfig &config, const QString &volume) const
    {
        return accept(SandboxSpec::forInstall(language, image, config, volume));
    }
    // The sandbox that fills a read-only workspace's volume: SandboxSpec::forWorkspaceFill as
    // this backend runs it, or why it cannot.
    SandboxSpec::Result fillSpec(const Language &language, const QString &image,
                                 const SandboxConfig &config, const QString &volume,
                                 const QString &previous) const
    {
        return accept(SandboxSpec::forWorkspaceFill(language, image, config, volume, previous));
    }
    // A sandbox for `spec` (one runSpec or installSpec of this backend gave), not yet prepared.
    // `name` is unique on the backend.
    virtual SandboxContainer *createSandbox(const SandboxSpec &spec, const QString &name,
                                            QObject *parent) = 0;

    // Named storage that outlives sandboxes (installed libraries).
    virtual void createVolume(const QString &name, const QJsonObject &labels, QObject *context,
                              const SandboxContainer::Done &done) = 0;
    virtual void removeVolume(const QString &name) = 0;
    // Whether createVolume() makes anything here (a Kubernetes cluster's backend: no).
    virtual bool keepsVolumes() const { return true; }
    // Whether the volume `name` is there; `error` when the engine could not say. (Backends
    // that keep none have none.)
    virtual void hasVolume(const QString &name, QObject *context,
                           const std::function<void(bool exists, const QString &error)> &done)
    {
        Q_UNUSED(name);
        QMetaObject::invokeMethod(
            context, [done] { done(false, QString()); }, Qt::QueuedConnection);
    }

    // Every sandbox (running or not) that has all of `labels` ("key=value").
    virtual void
    list(const QStringList &labels, QObject *context,
         const std::function<void(const QList<Listed> &, const QString &error)> &done) = 0;
    // Removes a sandbox by id (forced), whether or not a SandboxContainer stands for it.
    virtual void removeById(const QString &id, QObject *context,
                            const SandboxContainer::Done &done) = 0;

    // What sandboxes left behind that nothing uses any more, with all of `labels` (Docker: the
    // work volume of a sandbox that was removed from outside, without its volumes; `id` and
    // `name` are the volume's name). Backends whose sandboxes leave nothing of the kind (a pod's
    // emptyDir goes with the pod) find none.
    virtual void
    listLeftovers(const QStringList &labels, QObject *context,
                  const std::function<void(const QList<Listed> &, const QString &error)> &done)
    {
        Q_UNUSED(labels);
        Q_UNUSED(context);
        done({}, QString());
    }
    // Removes one of those.
    virtual void removeLeftover(const QString &id, QObject *context,
                                const SandboxContainer::Done &done)
    {
        Q_UNUSED(id);
        Q_UNUSED(context);
        done(QString());
    }

    // Whether it answers; `cheap`: only that (a full answer can cost the engine a second, and
    // includes the machine's CPUs and memory).
    virtual void health(bool cheap, QObject *context,
                        const std::function<void(const Health &)> &done) = 0;

    // Whether the backend has `image`, and if not, whether it is on its way: for
    // get_supported_languages and the window. Cheap enough to ask per language and per call
    // (answers may come from a cache a few seconds old). Backends that cannot tell say Unknown.
    virtual void imageStatus(const QString &image, QObject *context,
                             const std::function<void(const ImageStatus &)> &done)
    {
        Q_UNUSED(image);
        Q_UNUSED(context);
        done(ImageStatus{});
    }
    // Only what a builder on this machine reports of `image` for this backend (Queued, Building,
    // Failed, else Missing), without asking the engine: for the answer of a call whose sandbox
    // found the image missing.
    virtual ImageStatus imageBuild(const QString &image) const
    {
        Q_UNUSED(image);
        ImageStatus none;
        none.state = ImageStatus::State::Missing;
        return none;
    }

    // The host's proxy through which what the allow-list mode lets out leaves the machine, set
    // by the service before its first sandbox (UpstreamProxy::isSet() false: straight out). By
    // default the backend has no such way out to give it to.
    virtual void setUpstreamProxy(const UpstreamProxy &proxy) { Q_UNUSED(proxy); }
    // The installation's authority and the host's trust store, for the hosts of bound secrets
    // (EgressGateway::setInterception); set by the service before its first sandbox when it has
    // secrets. By default the backend has no gateway to give them to.
    virtual void setInterception(const QByteArray &certificatePem, const QByteArray &keyPem,
                                 const QByteArray &trustPem)
    {
        Q_UNUSED(certificatePem);
        Q_UNUSED(keyPem);
        Q_UNUSED(trustPem);
    }

    // At the service's shutdown, once its sandboxes are gone: removes what the backend made
    // beside them (the allow-list mode's gateway and networks), then calls `done` (while
    // `context` lives). By default there is nothing.
    virtual void shutdown(QObject *context, const std::function<void()> &done)
    {
        Q_UNUSED(context);
        done();
    }

Q_SIGNALS:
    // isSettling() became false.
    void settled();

protected:
    // A spec the sandbox room made, as this backend runs it (with what it adds, such as its
    // runtime), or why it cannot run it. By default: as it is, unless it has secrets outside
    // the allow-list mode (only its egress gateway can add them).
    virtual SandboxSpec::Result accept(SandboxSpec spec) const
    {
        if (!spec.secrets.isEmpty() && spec.network != SandboxSpec::Network::Allowlist)
            return SandboxSpec::Result::refused(
                QStringLiteral("secrets need the allow-list network mode (the egress gateway "
                               "adds them); the backend at %1 was given a run without it")
                    .arg(endpoint()));
        return SandboxSpec::Result::of(spec);
    }
};
