#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>
#include <functional>

// One single-use sandbox, as a backend provides it (the Docker API: a container; Kubernetes: a
// pod): created, attached and started, then waiting for its program on stdin. Preparing can
// happen ahead of time; whatever happens, remove() takes it away and removed() is emitted
// exactly once. Every call returns at once; answers come from the event loop, and a callback
// whose `context` is gone is not called.
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

    using QObject::QObject;

    virtual void prepare() = 0;
    // Bytes for the supervisor's stdin.
    virtual void write(const QByteArray &bytes) = 0;
    virtual void remove() = 0;

    virtual State state() const = 0;
    virtual QString id() const = 0;   // the backend's id; empty until created
    virtual QString name() const = 0; // unique on the backend, known before creation
    virtual QString image() const = 0;
    virtual bool imageMissing() const = 0;
    // Why the attached stream ended early (connection lost, frame cut); empty if it just ended.
    virtual QString streamError() const = 0;
    // The create request failed without an answer: the backend may still create the sandbox,
    // later, without anyone knowing its id (see Janitor).
    virtual bool createOutcomeUnknown() const = 0;
    // The last failure was the backend not answering (unreachable, connection lost, no answer in
    // time), not a refusal: placement stops sending sandboxes there until it answers again.
    virtual bool backendLost() const = 0;
    // Appended to the error when the image does not exist, to tell the user how to get it. Asked
    // only then: it may read the image builder's status, which no other sandbox needs.
    using Hint = std::function<QString()>;
    virtual void setMissingImageHint(Hint hint) = 0;

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

Q_SIGNALS:
    void ready();
    void failed(const QString &message);
    void output(int stream, const QByteArray &bytes);
    void streamEnded();
    void removed();
};
