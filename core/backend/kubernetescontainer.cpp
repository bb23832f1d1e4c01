#include "kubernetescontainer.h"

#include "backendlog.h"
#include "egresslease.h"
#include "kubeclient.h"
#include "kubestream.h"
#include "podisolation.h"
#include "podsapi.h"
#include "podspec.h"

#include <QFileInfo>
#include <QJsonArray>
#include <memory>

namespace {
// What a tar exec may say on stderr that is kept for the message.
constexpr qsizetype kMaxStderrBytes = 4096;
// stdin of an exec goes in messages of at most this.
constexpr qsizetype kStdinChunkBytes = 256 * 1024;

QJsonObject containerState(const QJsonObject &pod)
{
    return pod.value(u"status")
        .toObject()
        .value(u"containerStatuses")
        .toArray()
        .at(0)
        .toObject()
        .value(u"state")
        .toObject();
}

bool hasNetwork(const QJsonObject &pod)
{
    return pod.value(u"metadata")
        .toObject()
        .value(u"labels")
        .toObject()
        .contains(QLatin1String(PodSpec::kLabelNetwork));
}
} // namespace

KubernetesContainer::KubernetesContainer(KubeClient *client, PodIsolation *isolation,
                                         const QJsonObject &pod, const QString &image,
                                         const QString &name, QObject *parent)
    : BackendContainer(name, image, parent), m_client(client), m_isolation(isolation), m_pod(pod)
{
    // The image as the pod names it (with the configured registry prefix).
    const QString podImage =
        pod.value(u"spec").toObject().value(u"containers").toArray().at(0)[u"image"].toString();
    if (!podImage.isEmpty())
        m_image = podImage;
    m_pollTimer.setSingleShot(true);
    connect(&m_pollTimer, &QTimer::timeout, this, &KubernetesContainer::poll);
}

KubernetesContainer::~KubernetesContainer()
{
    if (m_stream)
        m_stream->close();
}

void KubernetesContainer::prepare()
{
    if (m_state != State::New)
        return;
    m_state = State::Creating;
    m_startClock.start();
    // The sandbox's name is the pod's (so a create whose answer was lost can still be deleted,
    // and the janitor recognises its own), kept whole in an annotation when it had to change.
    QJsonObject metadata = m_pod.value(u"metadata").toObject();
    metadata.remove(QStringLiteral("generateName"));
    metadata.insert(QStringLiteral("name"), PodSpec::podName(m_name));
    QJsonObject annotations = metadata.value(u"annotations").toObject();
    annotations.insert(QLatin1String(PodSpec::kAnnotationName), m_name);
    metadata.insert(QStringLiteral("annotations"), annotations);
    m_pod.insert(QStringLiteral("metadata"), metadata);

    const QStringList violations = PodSpec::hardeningViolations(m_pod);
    if (!violations.isEmpty()) {
        const QString message =
            QStringLiteral("refusing to create a sandbox pod without its hardening: %1")
                .arg(violations.join(QStringLiteral(", ")));
        QMetaObject::invokeMethod(
            this, [this, message] { fail(message); }, Qt::QueuedConnection);
        return;
    }
    if (egress()) {
        // Its way out first: the gateway (made on the first such pod) and a credential.
        egress()->take(this, [this](const EgressEndpoint &endpoint, const QString &error) {
            if (removeIfAsked()) // removed while waiting: nothing was created
                return;
            if (!error.isEmpty()) {
                fail(error);
                return;
            }
            m_pod = PodSpec::joinEgress(m_pod, endpoint);
            create();
        });
        return;
    }
    if (hasNetwork(m_pod)) {
        create();
        return;
    }
    m_isolation->check(this, [this](const QString &problem) {
        if (removeIfAsked()) // removed while asking: nothing was created
            return;
        if (!problem.isEmpty()) {
            fail(problem);
            return;
        }
        create();
    });
}

void KubernetesContainer::create()
{
    KubeReply *reply = PodsApi(m_client).create(m_pod);
    connect(reply, &KubeReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (!reply->ok()) {
            const KubeError::Kind kind = reply->error().kind;
            // No answer in time: the server may have made the pod. Its name is known, so a
            // removal deletes it by name all the same.
            m_createOutcomeUnknown =
                kind == KubeError::Kind::Timeout || kind == KubeError::Kind::TooLarge;
            if (m_createOutcomeUnknown)
                m_id = PodSpec::podName(m_name);
            if (removeIfAsked())
                return;
            failRequest(reply->error(), QStringLiteral("create"));
            return;
        }
        m_id = reply->json().value(u"metadata").toObject().value(u"name").toString();
        qCDebug(lcBackend) << "created pod" << m_id;
        if (removeIfAsked())
            return;
        m_state = State::Starting;
        m_pollTimer.start(KubernetesContainer::kFastPollMs);
    });
}

void KubernetesContainer::poll()
{
    if (m_state != State::Starting)
        return;
    KubeReply *reply = PodsApi(m_client).get(m_id);
    connect(reply, &KubeReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (m_state != State::Starting)
            return;
        if (!reply->ok()) {
            if (reply->error().isNotFound())
                fail(QStringLiteral("the sandbox pod %1 was deleted before it ran").arg(m_id));
            else
                failRequest(reply->error(), QStringLiteral("follow"));
            return;
        }
        const QJsonObject pod = reply->json();
        if (!onPodStatus(pod.value(u"status").toObject(), containerState(pod)))
            m_pollTimer.start(m_startClock.elapsed() < kFastPollForMs ? kFastPollMs : kSlowPollMs);
    });
}

// What the pod's status means while it starts: running (attach, after its egress binding),
// ended, or stuck (failIfStuck); true when it was acted on, false to poll again.
bool KubernetesContainer::onPodStatus(const QJsonObject &status, const QJsonObject &state)
{
    const QString phase = status.value(u"phase").toString();
    if (phase == u"Running" && state.contains(u"running")) {
        if (!egress()) {
            attach();
            return true;
        }
        // Its credential works from the pod's address alone, bound before the pod gets a
        // program (the gateway sees a pod's own address: a Service does not change the
        // source of traffic inside the cluster).
        m_state = State::Attaching;
        egress()->bind(status.value(u"podIP").toString(), this, [this](const QString &error) {
            if (m_state != State::Attaching)
                return;
            if (!error.isEmpty())
                fail(error);
            else
                attach();
        });
        return true;
    }
    if (phase == u"Succeeded" || phase == u"Failed") {
        const QJsonObject term = state.value(u"terminated").toObject();
        const QString why = status.value(u"reason").toString().isEmpty()
                                ? term.value(u"reason").toString()
                                : status.value(u"reason").toString();
        fail(QStringLiteral("the sandbox pod %1 ended before it was used (%2)")
                 .arg(m_id, why.isEmpty() ? phase : why));
        return true;
    }
    return failIfStuck(status, state, phase);
}

// A pod waiting for a reason that will not pass (no image, a bad configuration), or for too
// long, fails the sandbox; true if it did.
bool KubernetesContainer::failIfStuck(const QJsonObject &status, const QJsonObject &state,
                                      const QString &phase)
{
    const QJsonObject waiting = state.value(u"waiting").toObject();
    const QString reason = waiting.value(u"reason").toString();
    const QString message = waiting.value(u"message").toString();
    static const QStringList imageReasons = {
        QStringLiteral("ErrImagePull"), QStringLiteral("ImagePullBackOff"),
        QStringLiteral("InvalidImageName"), QStringLiteral("ErrImageNeverPull")};
    static const QStringList configReasons = {QStringLiteral("CreateContainerConfigError"),
                                              QStringLiteral("CreateContainerError"),
                                              QStringLiteral("RunContainerError")};
    if (imageReasons.contains(reason)) {
        m_imageMissing = true;
        fail(QStringLiteral("the sandbox image %1 is not available to the cluster (%2: %3). "
                            "%4")
                 .arg(m_image, reason, message, missingImageHint())
                 .trimmed());
        return true;
    }
    if (configReasons.contains(reason)) {
        fail(QStringLiteral("the cluster could not start the sandbox pod %1 (%2: %3)")
                 .arg(m_id, reason, message));
        return true;
    }
    if (m_startClock.elapsed() > kStartTimeoutMs) {
        QString last = reason;
        for (const QJsonValue &c : status.value(u"conditions").toArray())
            if (c[u"status"].toString() == u"False" && !c[u"message"].toString().isEmpty())
                last = c[u"message"].toString();
        fail(QStringLiteral("the sandbox pod %1 was not running within %2 s (%3)")
                 .arg(m_id)
                 .arg(kStartTimeoutMs / 1000)
                 .arg(last.isEmpty() ? phase : last));
        return true;
    }
    return false;
}

void KubernetesContainer::attach()
{
    m_state = State::Attaching;
    m_stream = PodsApi(m_client).attach(m_id, QString::fromLatin1(PodSpec::kContainerName), this);
    connect(m_stream, &KubeStream::output, this, &SandboxContainer::output);
    connect(m_stream, &KubeStream::finished, this, &SandboxContainer::streamEnded);
    connect(m_stream, &KubeStream::failed, this, [this](const QString &error) {
        if (m_state == State::Removing || m_state == State::Removed)
            return;
        if (m_state == State::Attaching) {
            fail(QStringLiteral("could not attach to the sandbox pod %1: %2").arg(m_id, error),
                 true);
        } else {
            // Output may be lost: the caller must not take the pod's exit code for the story.
            m_streamError = error;
            Q_EMIT streamEnded();
        }
    });
    connect(m_stream, &KubeStream::established, this, [this] {
        if (m_state != State::Attaching)
            return;
        qCDebug(lcBackend) << "pod" << m_id << "attached in" << m_startClock.elapsed() << "ms";
        m_state = State::Ready;
        Q_EMIT ready();
    });
}

void KubernetesContainer::write(const QByteArray &bytes)
{
    if (m_stream)
        m_stream->write(bytes);
}

void KubernetesContainer::fail(const QString &message, bool lost)
{
    if (m_state == State::Removing || m_state == State::Removed)
        return;
    m_backendLost = lost;
    m_state = State::Failed;
    m_pollTimer.stop();
    endNetwork();
    qCWarning(lcBackend).noquote() << message;
    Q_EMIT failed(message);
}

void KubernetesContainer::failRequest(const KubeError &error, const QString &what)
{
    fail(QStringLiteral("could not %1 the sandbox pod: %2").arg(what, error.toString()),
         error.kind != KubeError::Kind::Http && error.kind != KubeError::Kind::Credentials);
}

void KubernetesContainer::closeStream()
{
    m_pollTimer.stop();
    if (m_stream)
        m_stream->close();
}

void KubernetesContainer::sendRemove()
{
    endNetwork();
    // Grace 0: the program is killed at once, as a forced Docker removal does.
    KubeReply *reply = PodsApi(m_client).remove(m_id);
    connect(reply, &KubeReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (!reply->ok() && !reply->error().isNotFound()) {
            // The pod still exists: keep trying, as DockerContainer.
            if (retryRemove())
                qCWarning(lcBackend).noquote() << "could not delete pod" << m_id << ":"
                                               << reply->error().toString() << "- retrying";
            return;
        }
        qCDebug(lcBackend) << "deleted pod" << m_id;
        confirmRemoved();
    });
}

void KubernetesContainer::putFiles(const QString &dir, const QByteArray &tar, QObject *context,
                                   const Done &done)
{
    QPointer<QObject> ctx(context);
    auto *stream = PodsApi(m_client).exec(m_id, QString::fromLatin1(PodSpec::kContainerName),
                                          {QStringLiteral("tar"), QStringLiteral("-C"), dir,
                                           QStringLiteral("-xf"), QStringLiteral("-")},
                                          true, this);
    auto errors = std::make_shared<QByteArray>();
    const auto answer = [stream, ctx, done](const QString &error) {
        stream->deleteLater();
        if (ctx)
            done(error);
    };
    connect(stream, &KubeStream::established, stream, [stream, tar, answer] {
        // tar reads to the end of its stdin, which only v5 can end while the stream goes on.
        if (!stream->canCloseStdin()) {
            stream->close();
            answer(QStringLiteral("placing files needs the v5.channel.k8s.io stream protocol "
                                  "(Kubernetes 1.30 or later); the API server offered %1")
                       .arg(stream->protocol()));
            return;
        }
        for (qsizetype at = 0; at < tar.size(); at += kStdinChunkBytes)
            stream->write(tar.mid(at, kStdinChunkBytes));
        stream->closeStdin();
    });
    connect(stream, &KubeStream::output, stream, [errors](int channel, const QByteArray &bytes) {
        if (channel == KubeStream::Stderr && errors->size() < kMaxStderrBytes)
            errors->append(bytes.left(kMaxStderrBytes - errors->size()));
    });
    connect(stream, &KubeStream::finished, stream, [stream, errors, answer] {
        const int code = stream->exitCode();
        answer(code == 0 ? QString()
                         : QStringLiteral("tar in the sandbox pod failed (%1)%2")
                               .arg(code < 0 ? stream->message()
                                             : QStringLiteral("exit code %1").arg(code),
                                    errors->isEmpty() ? QString()
                                                      : QStringLiteral(": ") +
                                                            QString::fromUtf8(*errors).trimmed()));
    });
    connect(stream, &KubeStream::failed, stream, [answer](const QString &error) { answer(error); });
}

void KubernetesContainer::fetchFiles(const QString &path, qint64 maxBytes, QObject *context,
                                     const Fetched &done)
{
    // The same archive as Docker's GET /containers/ID/archive: the path's last part at the top.
    const QFileInfo info(path);
    QString parent = info.path();
    QString base = info.fileName();
    if (base.isEmpty()) { // (a path ending in '/')
        const QFileInfo dir(info.path());
        parent = dir.path();
        base = dir.fileName();
    }
    QPointer<QObject> ctx(context);
    auto *stream = PodsApi(m_client).exec(m_id, QString::fromLatin1(PodSpec::kContainerName),
                                          {QStringLiteral("tar"), QStringLiteral("-C"), parent,
                                           QStringLiteral("-cf"), QStringLiteral("-"), base},
                                          false, this);
    auto archive = std::make_shared<Archive>();
    auto errors = std::make_shared<QByteArray>();
    auto answered = std::make_shared<bool>(false);
    const auto answer = [stream, ctx, done, archive, answered] {
        if (*answered)
            return;
        *answered = true;
        stream->deleteLater();
        if (ctx)
            done(*archive);
    };
    connect(
        stream, &KubeStream::output, stream,
        [stream, archive, errors, maxBytes, path, answer](int channel, const QByteArray &bytes) {
            if (channel == KubeStream::Stderr) {
                if (errors->size() < kMaxStderrBytes)
                    errors->append(bytes.left(kMaxStderrBytes - errors->size()));
                return;
            }
            archive->tar += bytes;
            if (archive->tar.size() > maxBytes) {
                // Not held past the budget: the stream is dropped, the exec goes with it.
                archive->tar.clear();
                archive->tooLarge = true;
                archive->error =
                    QStringLiteral("%1 is larger than %2 bytes").arg(path).arg(maxBytes);
                stream->close();
                answer();
            }
        });
    connect(stream, &KubeStream::finished, stream, [stream, archive, errors, path, answer] {
        const int code = stream->exitCode();
        if (code != 0) {
            archive->tar.clear();
            archive->error = QStringLiteral("could not read %1 from the sandbox pod (%2)%3")
                                 .arg(path,
                                      code < 0 ? stream->message()
                                               : QStringLiteral("tar exit code %1").arg(code),
                                      errors->isEmpty() ? QString()
                                                        : QStringLiteral(": ") +
                                                              QString::fromUtf8(*errors).trimmed());
        }
        answer();
    });
    connect(stream, &KubeStream::failed, stream, [archive, answer](const QString &error) {
        archive->tar.clear();
        archive->error = error;
        answer();
    });
}

void KubernetesContainer::exitStatus(QObject *context, const Exited &done)
{
    auto since = std::make_shared<QElapsedTimer>();
    since->start();
    askExit(since, context, done);
}

void KubernetesContainer::askExit(const std::shared_ptr<QElapsedTimer> &since, QObject *context,
                                  const Exited &done)
{
    if (m_id.isEmpty()) {
        QMetaObject::invokeMethod(
            context, [done] { done(-1, QStringLiteral("the sandbox pod was never created")); },
            Qt::QueuedConnection);
        return;
    }
    QPointer<QObject> ctx(context);
    KubeReply *reply = PodsApi(m_client).get(m_id);
    connect(reply, &KubeReply::finished, this, [this, reply, since, ctx, done] {
        reply->deleteLater();
        if (!ctx)
            return;
        if (!reply->ok()) {
            done(-1, reply->error().toString());
            return;
        }
        const QJsonObject terminated =
            containerState(reply->json()).value(u"terminated").toObject();
        if (!terminated.isEmpty()) {
            done(terminated.value(u"exitCode").toInt(-1), QString());
            return;
        }
        // The stream can end a moment before the kubelet reports the container's end.
        if (since->elapsed() > kExitWaitMs) {
            done(-1, QStringLiteral("the sandbox pod %1 did not report its end within %2 s")
                         .arg(m_id)
                         .arg(kExitWaitMs / 1000));
            return;
        }
        QTimer::singleShot(kFastPollMs, this, [this, since, ctx, done] {
            if (ctx)
                askExit(since, ctx, done);
        });
    });
}

void KubernetesContainer::interrupt()
{
    if (m_id.isEmpty())
        return;
    // The supervisor is the container's first process; it passes SIGINT on to the program.
    auto *stream = PodsApi(m_client).exec(
        m_id, QString::fromLatin1(PodSpec::kContainerName),
        {QStringLiteral("kill"), QStringLiteral("-INT"), QStringLiteral("1")}, false, this);
    connect(stream, &KubeStream::finished, stream, &QObject::deleteLater);
    connect(stream, &KubeStream::failed, stream, &QObject::deleteLater);
}
