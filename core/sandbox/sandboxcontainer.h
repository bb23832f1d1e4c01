#pragma once

#include "gatewayprotocol.h"

#include <QByteArray>
#include <QObject>
#include <QString>
#include <functional>

// One single-use sandbox, as a backend provides it (the Docker API: a container; Kubernetes: a
// pod): created, attached and started, then waiting for its program on stdin. Preparing can
// happen ahead of time; whatever happens, remove() takes it away and removed() is emitted
// exactly once. Every call returns at once; answers come from the event loop, and a callback
// whose `context` is gone is not called.
//
// The state every sandbox has (its state, id, name, image and what its last failure was) and
// the course of a removal are kept here, once for every backend; a backend's class does the
// engine's part: prepare(), closeStream() and sendRemove(), files, exit status, interrupt.
class SandboxContainer : public QObject
{
    Q_OBJECT
public:
    enum class State
    {
        New,
        Creating,
        Attaching,
        Starting,
        Ready,
        Failed,
        Removing,
        Removed
    };

    // A tar archive fetched out of the sandbox.
    struct Archive
    {
        QByteArray tar;
        QString error;         // empty when it came
        bool tooLarge = false; // cut off at the asked-for size (error says so too)
    };

    using Done = std::function<void(const QString &error)>;
    using Fetched = std::function<void(const Archive &archive)>;
    using Exited = std::function<void(int status, const QString &error)>;

    virtual void prepare() = 0;
    // Bytes for the supervisor's stdin.
    virtual void write(const QByteArray &bytes) = 0;
    // Takes the sandbox away: at once when nothing was created, once the create has answered
    // while it is under way, else through the backend (sendRemove()) until it confirms.
    void remove();
    // The same for a used sandbox waiting, idle, for its removal (SandboxSite): the default is
    // remove(); a backend whose used sandboxes wait up lets it end by itself first, which costs
    // its engine less than killing it.
    virtual void removeOnceEnded() { remove(); }

    State state() const { return m_state; }
    QString id() const { return m_id; }     // the backend's id; empty until created
    QString name() const { return m_name; } // unique on the backend, known before creation
    QString image() const { return m_image; }
    // The container runtime it is created with, by name (runc, runsc, a RuntimeClass; "" where
    // the backend did not say): what the run's record shows.
    QString runtime() const { return m_runtime; }
    void setRuntime(const QString &runtime) { m_runtime = runtime; }
    bool imageMissing() const { return m_imageMissing; }
    // Why the attached stream ended early (connection lost, frame cut); empty if it just ended.
    QString streamError() const { return m_streamError; }
    // The create request failed without an answer: the backend may still create the sandbox,
    // later, without anyone knowing its id (see Janitor).
    bool createOutcomeUnknown() const { return m_createOutcomeUnknown; }
    // The last failure was the backend not answering (unreachable, connection lost, no answer in
    // time), not a refusal: placement stops sending sandboxes there until it answers again.
    bool backendLost() const { return m_backendLost; }
    // Appended to the error when the image does not exist, to tell the user how to get it. Asked
    // only then: it may read the image builder's status, which no other sandbox needs.
    using Hint = std::function<QString()>;
    void setMissingImageHint(Hint hint) { m_missingImageHint = std::move(hint); }

    // Unpacks `tar` into the folder `dir` of the running sandbox.
    virtual void putFiles(const QString &dir, const QByteArray &tar, QObject *context,
                          const Done &done) = 0;
    // A tar of `path`, cut off (tooLarge) past `maxBytes` without being held.
    virtual void fetchFiles(const QString &path, qint64 maxBytes, QObject *context,
                            const Fetched &done) = 0;
    // How the sandbox ended (its init's exit status), once it has.
    virtual void exitStatus(QObject *context, const Exited &done) = 0;
    // SIGINT to the supervisor, which passes it on to the running program.
    virtual void interrupt() = 0;

    // One reading of what the sandbox uses now, from its cgroup: memory in bytes and CPU time
    // in ms since it started. Returns false, and never calls `done`, when there is no reading
    // to be had now (a backend that cannot sample — this default —, or one too busy to ask);
    // the caller may ask again later. `done` gets -1 for a value the backend could not read.
    using Sampled = std::function<void(qint64 memoryBytes, qint64 cpuTimeMs)>;
    virtual bool sampleUsage(QObject *context, const Sampled &done)
    {
        Q_UNUSED(context);
        Q_UNUSED(done);
        return false;
    }
    // Allow-list mode with asking: the verdict on a connection the gateway holds (its id from
    // the "ask" networkEvent). With `widenTo`, the sandbox may reach that pattern from now on.
    // The default (a backend without a gateway) has nothing held.
    virtual void answerConnection(quint64 connection, bool allow, const QString &widenTo)
    {
        Q_UNUSED(connection);
        Q_UNUSED(allow);
        Q_UNUSED(widenTo);
    }
    // Allow-list mode: calls `done` once the gateway's events about connections made so far
    // have come (networkEvent), which can lag behind the program's end on another stream;
    // bounded. The default (no gateway) has nothing to wait for and calls `done` at once.
    virtual void settleNetwork(QObject *context, const std::function<void()> &done)
    {
        Q_UNUSED(context);
        done();
    }
    // Allow-list mode: the sandbox's run is over, so it has no way out from now on (its
    // gateway credential is revoked), though the container may wait a while for its removal.
    // The default (no gateway) has nothing to revoke.
    virtual void endNetwork() {}

Q_SIGNALS:
    void ready();
    void failed(const QString &message);
    void output(int stream, const QByteArray &bytes);
    void streamEnded();
    void removed();
    // Allow-list mode: what the egress gateway reported of this sandbox's connections (an Ask,
    // a Connection, an End, the SecretsUsed of one: gateway/shared/gatewayprotocol.h).
    void networkEvent(const GatewayProtocol::NetworkEvent &event);

protected:
    SandboxContainer(const QString &name, const QString &image, QObject *parent);

    // Ends the attached stream (if any) and whatever waits for the sandbox to start.
    virtual void closeStream() = 0;
    // Asks the backend to remove the created sandbox (m_id); on its answer, confirmRemoved(),
    // or retryRemove() while it does not confirm.
    virtual void sendRemove() = 0;
    void confirmRemoved();
    // sendRemove() again later, backing off to a minute: the sandbox still exists, so it is not
    // forgotten. Returns whether this was the first retry (for a warning).
    bool retryRemove();
    // The create has answered (or was never sent): when remove() was called meanwhile, the
    // sandbox goes now (at once without an id, else through sendRemove()) and true is returned.
    bool removeIfAsked();
    // The image hint, or "" without one.
    QString missingImageHint() const
    {
        return m_missingImageHint ? m_missingImageHint() : QString();
    }

    State m_state = State::New;
    QString m_id;
    QString m_name;
    QString m_image;
    QString m_runtime;
    bool m_imageMissing = false;
    bool m_createOutcomeUnknown = false;
    bool m_backendLost = false;
    QString m_streamError;

private:
    bool m_removeWhenCreated = false;
    int m_removeAttempts = 0;
    Hint m_missingImageHint;
};
