#include "dockercontainer.h"

#include "attachstream.h"
#include "backendlog.h"
#include "containersapi.h"
#include "containerspec.h"
#include "egresslease.h"
#include "engineclient.h"
#include "enginereply.h"

#include <QTimer>
#include <memory>
#include <utility>

DockerContainer::DockerContainer(EngineClient *engine, const QJsonObject &body,
                                 const QString &image, const QString &name, QObject *parent)
    : BackendContainer(name, image, parent), m_engine(engine), m_body(body)
{}

DockerContainer::~DockerContainer()
{
    endNetwork();
    if (m_stream)
        m_stream->deleteLater();
}

void DockerContainer::prepare()
{
    if (m_state != State::New || m_waitingForBody || (egress() && egress()->isWaiting()))
        return;
    if (m_bodyWait) {
        m_waitingForBody = true;
        std::exchange(m_bodyWait, {})(this, [this](const QJsonObject &body) {
            m_waitingForBody = false;
            m_body = body;
            prepare(); // (not if removed meanwhile: no longer New)
        });
        return;
    }
    if (!egress()) {
        create(m_body);
        return;
    }
    // Still New while the gateway starts: a removal meanwhile ends the sandbox at once, with
    // nothing created (a shutdown that waits for it never waits on the gateway).
    egress()->take(this, [this](const EgressEndpoint &endpoint, const QString &error) {
        if (m_state != State::New)
            return;
        if (!error.isEmpty()) {
            failWith(error);
            return;
        }
        create(ContainerSpec::joinEgress(m_body, endpoint));
    });
}

void DockerContainer::create(const QJsonObject &body)
{
    m_state = State::Creating;
    EngineReply *reply = ContainersApi(m_engine).create(body, m_name);
    connect(reply, &EngineReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (!reply->ok()) {
            m_createOutcomeUnknown = reply->error().kind != EngineError::Kind::Http &&
                                     reply->error().kind != EngineError::Kind::Unreachable;
            if (removeIfAsked()) // nothing was created, nothing to remove
                return;
            fail(reply->error(), QStringLiteral("create"));
            return;
        }
        m_id = reply->json().value(u"Id").toString();
        qCDebug(lcBackend) << "created" << m_id.left(12);
        if (removeIfAsked())
            return;
        attach();
    });
}

void DockerContainer::attach()
{
    m_state = State::Attaching;
    m_stream = ContainersApi(m_engine).attach(m_id);
    connect(m_stream, &AttachStream::output, this, &SandboxContainer::output);
    connect(m_stream, &AttachStream::ended, this, &SandboxContainer::streamEnded);
    connect(m_stream, &AttachStream::failed, this, [this](const EngineError &e) {
        if (m_state == State::Removing || m_state == State::Removed)
            return;
        if (m_state == State::Attaching) {
            fail(e, QStringLiteral("attach"));
        } else {
            // Output was lost (the engine went away, or a frame was cut): the caller must not
            // take the engine's exit status for the whole story.
            m_streamError = e.toString();
            Q_EMIT streamEnded();
        }
    });
    connect(m_stream, &AttachStream::established, this, &DockerContainer::start);
}

void DockerContainer::start()
{
    if (m_state != State::Attaching)
        return;
    m_state = State::Starting;
    EngineReply *reply = ContainersApi(m_engine).start(m_id);
    connect(reply, &EngineReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (m_state != State::Starting)
            return;
        if (!reply->ok()) {
            fail(reply->error(), QStringLiteral("start"));
            return;
        }
        if (egress()) {
            bindEgress();
            return;
        }
        m_state = State::Ready;
        Q_EMIT ready();
    });
}

void DockerContainer::bindEgress()
{
    // The engine gives the sandbox its address on the internal network when it starts: the
    // gateway is told to honour its credential from there alone, before it is ready for a
    // program.
    EngineReply *reply = ContainersApi(m_engine).inspect(m_id);
    connect(reply, &EngineReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (m_state != State::Starting)
            return;
        if (!reply->ok()) {
            fail(reply->error(), QStringLiteral("inspect"));
            return;
        }
        const QString address = reply->json()
                                    .value(u"NetworkSettings")
                                    .toObject()
                                    .value(u"Networks")
                                    .toObject()
                                    .value(egress()->network())
                                    .toObject()
                                    .value(u"IPAddress")
                                    .toString();
        egress()->bind(address, this, [this](const QString &error) {
            if (m_state != State::Starting)
                return;
            if (!error.isEmpty()) {
                failWith(error);
                return;
            }
            m_state = State::Ready;
            Q_EMIT ready();
        });
    });
}

void DockerContainer::write(const QByteArray &bytes)
{
    if (m_stream)
        m_stream->write(bytes);
}

void DockerContainer::fail(const EngineError &error, const QString &what)
{
    if (m_state == State::Removing || m_state == State::Removed)
        return; // already on its way out; nothing to report
    m_imageMissing = what == u"create" && error.isNotFound();
    m_backendLost = error.kind != EngineError::Kind::Http;
    QString message;
    if (m_imageMissing)
        message =
            QStringLiteral("the sandbox image %1 is not available to the container engine. %2")
                .arg(m_image, missingImageHint())
                .trimmed();
    else
        message =
            QStringLiteral("could not %1 the sandbox container: %2").arg(what, error.toString());
    // A runtime the engine does not have (Docker: "Unknown runtime specified runsc").
    const QString runtime = m_body.value(u"HostConfig").toObject().value(u"Runtime").toString();
    if (!runtime.isEmpty() && error.toString().contains(u"runtime", Qt::CaseInsensitive))
        message += QStringLiteral(" (the runtime %1 must be registered with the engine: Docker's "
                                  "\"runtimes\" in /etc/docker/daemon.json, then SIGHUP to "
                                  "dockerd; see docs/engines.md, \"Stronger isolation\")")
                       .arg(runtime);
    failWith(message);
}

void DockerContainer::failWith(const QString &message)
{
    endNetwork();
    m_state = State::Failed;
    qCWarning(lcBackend).noquote() << message;
    Q_EMIT failed(message);
}

void DockerContainer::closeStream()
{
    if (m_stream)
        m_stream->close();
}

void DockerContainer::removeOnceEnded()
{
    if (m_state != State::Ready || m_id.isEmpty()) {
        remove();
        return;
    }
    // The supervisor waits, idle, for the end of its stdin (cs-run's linger): closing the stream
    // ends it, and with it the container, by itself. The engine then removes a stopped container,
    // which costs it less than a forced removal's kill through the runtime (a runc process and
    // its events per sandbox). Bounded: a container still up after kEndWaitMs is removed by force.
    m_state = State::Removing;
    closeStream();
    auto sent = std::make_shared<bool>(false);
    const auto go = [this, sent] {
        if (!std::exchange(*sent, true))
            sendRemove();
    };
    EngineReply *wait = ContainersApi(m_engine).wait(m_id);
    wait->then(this, go);
    QTimer::singleShot(kEndWaitMs, this, go);
}

void DockerContainer::sendRemove()
{
    endNetwork();
    // force kills a running program; v drops anonymous volumes.
    EngineReply *reply = ContainersApi(m_engine).remove(m_id);
    connect(reply, &EngineReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (!reply->ok() && !reply->error().isNotFound()) {
            // The engine is away or busy: the container still exists, so keep trying rather
            // than forget it. removed() comes once it is really gone.
            if (retryRemove())
                qCWarning(lcBackend).noquote() << "could not remove container" << m_id.left(12)
                                               << ":" << reply->error().toString() << "- retrying";
            return;
        }
        qCDebug(lcBackend) << "removed" << m_id.left(12);
        confirmRemoved();
    });
}

void DockerContainer::putFiles(const QString &dir, const QByteArray &tar, QObject *context,
                               const Done &done)
{
    EngineReply *reply = ContainersApi(m_engine).putArchive(m_id, dir, tar);
    reply->then(context,
                [reply, done] { done(reply->ok() ? QString() : reply->error().toString()); });
}

void DockerContainer::fetchFiles(const QString &path, qint64 maxBytes, QObject *context,
                                 const Fetched &done)
{
    EngineReply *reply = ContainersApi(m_engine).getArchive(m_id, path, maxBytes);
    reply->then(context, [reply, done] {
        Archive a;
        if (reply->ok())
            a.tar = reply->body();
        else
            a.error = reply->error().toString();
        a.tooLarge = reply->error().kind == EngineError::Kind::TooLarge;
        done(a);
    });
}

void DockerContainer::exitStatus(QObject *context, const Exited &done)
{
    EngineReply *reply = ContainersApi(m_engine).wait(m_id);
    reply->then(context, [reply, done] {
        if (reply->ok())
            done(reply->json().value(u"StatusCode").toInt(-1), QString());
        else
            done(-1, reply->error().toString());
    });
}

void DockerContainer::interrupt()
{
    EngineReply *reply = ContainersApi(m_engine).kill(m_id, "SIGINT");
    connect(reply, &EngineReply::finished, reply, &QObject::deleteLater);
}

bool DockerContainer::sampleUsage(QObject *context, const Sampled &done)
{
    if (m_state != State::Ready || m_id.isEmpty())
        return false;
    // Before 1.41 the engine ignores one-shot and keeps the answer two seconds.
    const QString version = m_engine->apiVersion();
    if (!version.startsWith(QLatin1String("1.")) || version.mid(2).toInt() < 41)
        return false;
    // Counted on the engine client, so that every sandbox of one engine shares the budget.
    if (!m_engine->takeStatsSlot(kMaxSamplesInFlight))
        return false;
    EngineReply *reply = ContainersApi(m_engine).stats(m_id);
    // Given back whoever is still there: the sandbox may be gone by the answer.
    QPointer<EngineClient> engine(m_engine);
    connect(reply, &EngineReply::finished, reply, [engine] {
        if (engine)
            engine->returnStatsSlot();
    });
    reply->then(context, [reply, done] {
        if (!reply->ok()) {
            qCDebug(lcBackend).noquote() << "no usage sample:" << reply->error().toString();
            done(-1, -1);
            return;
        }
        const ContainersApi::Usage usage = ContainersApi::usage(reply->json());
        done(usage.memoryBytes, usage.cpuTimeNs >= 0 ? usage.cpuTimeNs / 1000000 : -1);
    });
    return true;
}
