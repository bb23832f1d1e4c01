#pragma once

#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QString>

class AttachStream;
class EngineClient;
struct EngineError;

// One single-use container: created, attached and started, then waiting for its program on
// stdin. Preparing can happen ahead of time; whatever happens, remove() takes it away and
// removed() is emitted exactly once.
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

    // `name`: unique on the engine, so that a container the engine creates after its create
    // request was given up on can still be found and removed (see SandboxService::sweepStrays).
    SandboxContainer(EngineClient *engine, const QJsonObject &spec, const QString &image,
                     const QString &name, QObject *parent = nullptr);
    ~SandboxContainer() override;

    void prepare();
    void write(const QByteArray &bytes);
    void remove();

    State state() const { return m_state; }
    QString id() const { return m_id; }
    QString image() const { return m_image; }
    QString name() const { return m_name; }
    // The create request failed without an answer (timed out, connection lost): the engine may
    // still create the container, later, without anyone knowing its id.
    bool createOutcomeUnknown() const { return m_createOutcomeUnknown; }
    EngineClient *engine() const { return m_engine; }
    bool imageMissing() const { return m_imageMissing; }
    // Why the attached stream ended early (connection lost, frame cut); empty if it just ended.
    QString streamError() const { return m_streamError; }
    // Appended to the error when the image does not exist, to tell the user how to get it.
    void setMissingImageHint(const QString &hint) { m_missingImageHint = hint; }

Q_SIGNALS:
    void ready();
    void failed(const QString &message);
    void output(int stream, const QByteArray &bytes);
    void streamEnded();
    void removed();

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
    QString m_missingImageHint;
    QString m_streamError;
    int m_removeAttempts = 0;
};
