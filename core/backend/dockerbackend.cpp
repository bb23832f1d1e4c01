#include "dockerbackend.h"

#include "backendlog.h"
#include "containersapi.h"
#include "containerspec.h"
#include "dockercontainer.h"
#include "engineclient.h"
#include "enginedialect.h"
#include "enginegateway.h"
#include "enginereply.h"
#include "imagesapi.h"
#include "imagescripts.h"
#include "networksapi.h"
#include "sandboxconfig.h"
#include "systemapi.h"
#include "volumesapi.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>
#include <QTimer>
#include <cerrno>
#include <signal.h>
#include <thread>

namespace {
QString errorOf(const EngineReply *reply)
{
    return reply->ok() ? QString() : reply->error().toString();
}

// The same engine, however each side wrote its address: /var/run/docker.sock is
// unix:///run/docker.sock through the /var/run link.
bool sameEngine(const EngineAddress &ours, const QString &theirs)
{
    const EngineAddress other = EngineAddress::parse(theirs);
    if (!other.isValid() || other.scheme != ours.scheme)
        return false;
    if (ours.scheme != EngineAddress::Scheme::Unix)
        return other.url() == ours.url();
    const auto canonical = [](const QString &path) {
        const QString c = QFileInfo(path).canonicalFilePath();
        return c.isEmpty() ? path : c;
    };
    return canonical(other.socketPath) == canonical(ours.socketPath);
}

// A build killed outright (SIGKILL, a reboot is handled by /run) leaves its "building" behind;
// its pid tells. EPERM: alive, only not ours to signal.
bool processAlive(qint64 pid)
{
    return pid > 0 && (::kill(pid_t(pid), 0) == 0 || errno == EPERM);
}
} // namespace

QString DockerBackend::imageStatusDir()
{
    const QString dir = qEnvironmentVariable("CODE_SANDBOX_IMAGE_STATUS");
    return dir.isEmpty() ? QStringLiteral("/run/code-sandbox-images") : dir;
}

DockerBackend::DockerBackend(EngineClient *engine, QObject *parent)
    : SandboxBackend(parent), m_engine(engine),
      m_gateways([this] { return new EngineGateway(m_engine, this); })
{}

QString DockerBackend::endpoint() const
{
    return m_engine->endpoint();
}

int DockerBackend::capacity() const
{
    const int cpus = m_cpus > 0 ? m_cpus : int(std::thread::hardware_concurrency());
    return qMax(4, 2 * cpus);
}

void DockerBackend::setRuntime(const QString &runtime)
{
    m_runtime = runtime;
    m_askingRuntimes = true;
    QTimer::singleShot(kRuntimesWaitMs, this, &DockerBackend::stopAskingRuntimes);
    EngineReply *info = SystemApi(m_engine).info();
    info->then(this, [this, info] {
        // (An engine that does not answer says so at the first call.) Known before the runs
        // that waited for it are placed.
        if (info->ok())
            readRuntimes(info->json());
        stopAskingRuntimes();
        if (!info->ok())
            return;
        QString error;
        SandboxSpec plain;
        if (m_runtime.isEmpty())
            return;
        runtimeFor(plain, &error);
        if (!error.isEmpty())
            qCWarning(lcBackend).noquote() << error;
    });
}

void DockerBackend::stopAskingRuntimes()
{
    if (!std::exchange(m_askingRuntimes, false))
        return;
    Q_EMIT settled();
}

bool DockerBackend::Runtime::isGvisor() const
{
    return QFileInfo(path).fileName().startsWith(u"runsc");
}

bool DockerBackend::Runtime::withoutNetwork() const
{
    return args.contains(u"--network=none");
}

void DockerBackend::readRuntimes(const QJsonObject &info)
{
    if (const QString fallback = info.value(u"DefaultRuntime").toString(); !fallback.isEmpty())
        m_defaultRuntime = fallback;
    const QJsonObject runtimes = info.value(u"Runtimes").toObject();
    // Podman answers without them: nothing is known then, and the create says what is wrong.
    if (runtimes.isEmpty())
        return;
    m_runtimes.clear();
    for (auto it = runtimes.constBegin(); it != runtimes.constEnd(); ++it) {
        const QJsonObject r = it.value().toObject();
        Runtime runtime;
        runtime.path = r.value(u"path").toString();
        for (const QJsonValue &arg : r.value(u"runtimeArgs").toArray())
            runtime.args.append(arg.toString());
        m_runtimes.insert(it.key(), runtime);
    }
    m_runtimesKnown = true;
}

QString DockerBackend::runtimesText() const
{
    QStringList names = m_runtimes.keys();
    names.sort();
    return names.join(QStringLiteral(", "));
}

QString DockerBackend::runtimeFor(const SandboxSpec &spec, QString *error) const
{
    const bool gvisor = spec.isolation.compare(QLatin1String(SandboxSpec::kIsolationGvisor),
                                               Qt::CaseInsensitive) == 0;
    const bool networked = spec.network != SandboxSpec::Network::None;
    const QString fix =
        QStringLiteral("register it in the engine's configuration (Docker: \"runtimes\" in "
                       "/etc/docker/daemon.json, then SIGHUP to dockerd; see docs/engines.md, "
                       "\"Stronger isolation\")");
    // What the engine's own choice (--runtime) or the run's requirement names.
    QString wanted = m_runtime;
    if (!spec.isolation.isEmpty() && !gvisor)
        wanted = spec.isolation;
    if (m_runtimesKnown && m_engine->dialect().kind() == EngineDialect::Kind::Podman)
        return podmanRuntime(wanted, gvisor, error);
    if (gvisor && !(m_runtimes.contains(m_runtime) && m_runtimes.value(m_runtime).isGvisor())) {
        wanted.clear();
        // Before the engine has said (the first moments after start): the names docs/engines.md
        // registers gVisor under. An engine without them refuses the create, so such a run
        // fails closed, never runs under another runtime.
        if (!m_runtimesKnown)
            return networked ? QStringLiteral("runsc-net") : QStringLiteral("runsc");
        for (auto it = m_runtimes.cbegin(); it != m_runtimes.cend(); ++it)
            if (it->isGvisor() && (wanted.isEmpty() || it.key() < wanted))
                wanted = it.key();
        if (wanted.isEmpty()) {
            *error = QStringLiteral("the engine %1 has no gVisor runtime (it has %2): %3")
                         .arg(endpoint(), runtimesText(), fix);
            return {};
        }
    }
    if (wanted.isEmpty() || !m_runtimesKnown)
        return wanted;
    if (!m_runtimes.contains(wanted)) {
        *error = QStringLiteral("the engine %1 has no container runtime \"%2\" (it has %3): %4")
                     .arg(endpoint(), wanted, runtimesText(), fix);
        return {};
    }
    // gVisor with --network=none cannot join a network, and Debian's runsc under Docker 20.10
    // runs a --network none container only with it: a run with network takes a gVisor entry of
    // the same runsc without it (e.g. "runsc-net" with --network=host, which uses the
    // container's own network namespace).
    const Runtime chosen = m_runtimes.value(wanted);
    if (networked && chosen.isGvisor() && chosen.withoutNetwork()) {
        QString sibling;
        for (auto it = m_runtimes.cbegin(); it != m_runtimes.cend(); ++it)
            if (it->isGvisor() && !it->withoutNetwork() && it->path == chosen.path &&
                (sibling.isEmpty() || it.key() < sibling))
                sibling = it.key();
        if (sibling.isEmpty()) {
            *error = QStringLiteral("the engine %1 runs gVisor as \"%2\", with --network=none, "
                                    "and this run needs network (an allow-list or --network): "
                                    "register a second entry of the same runsc for it, e.g. "
                                    "\"runsc-net\" with \"runtimeArgs\": [\"--network=host\"] "
                                    "(see docs/engines.md, \"Stronger isolation\")")
                         .arg(endpoint(), wanted);
            return {};
        }
        return sibling;
    }
    return wanted;
}

QString DockerBackend::podmanRuntime(const QString &wanted, bool gvisor, QString *error) const
{
    // Podman's Docker-compatible API (4.3, checked) ignores HostConfig.Runtime: a container
    // asked for runsc runs under Podman's default runtime. So the default is the only runtime
    // there is, and a run that needs another is refused rather than run without its wall.
    const bool has = gvisor ? m_runtimes.value(m_defaultRuntime).isGvisor()
                            : wanted.isEmpty() || wanted == m_defaultRuntime;
    if (!has)
        *error = QStringLiteral("the engine %1 is Podman, whose Docker-compatible API runs every "
                                "container under its default runtime (%2) whatever the request "
                                "names, so it cannot give this run %3: make it Podman's default "
                                "(containers.conf: [engine] runtime = \"NAME\", with NAME in "
                                "[engine.runtimes]; see docs/engines.md, \"Stronger isolation\"), "
                                "or use a Docker engine")
                     .arg(endpoint(),
                          m_defaultRuntime.isEmpty() ? QStringLiteral("unknown") : m_defaultRuntime,
                          gvisor ? QStringLiteral("gVisor") : QStringLiteral("\"%1\"").arg(wanted));
    return {}; // nothing to ask for: the default is what it gets
}

SandboxSpec::Result DockerBackend::accept(SandboxSpec spec) const
{
    QString error;
    spec.runtime = runtimeFor(spec, &error);
    if (!error.isEmpty())
        return SandboxSpec::Result::refused(error);
    return SandboxBackend::accept(spec);
}

void DockerBackend::setInterception(const QByteArray &certificatePem, const QByteArray &keyPem,
                                    const QByteArray &trustPem)
{
    m_gateways.setInterception(certificatePem, keyPem, trustPem);
}

void DockerBackend::setUpstreamProxy(const UpstreamProxy &proxy)
{
    m_gateways.setUpstream(proxy);
}

SandboxContainer *DockerBackend::createSandbox(const SandboxSpec &spec, const QString &name,
                                               QObject *parent)
{
    const auto known = m_images.constFind(spec.image);
    if (known == m_images.cend() ||
        QDateTime::currentMSecsSinceEpoch() - known->atMs >= kImageCacheMs)
        learnImage(spec.image);
    auto *container = new DockerContainer(m_engine, createBody(spec), spec.image, name, parent);
    if (known == m_images.cend()) {
        // The first sandboxes of an image (a pool filling at start) wait for the engine's answer
        // about it, a few ms, rather than carry the scripts' text in their command: besides the
        // CPU that compiling it costs each one, Podman's `top` (and its API's) hangs on a
        // container whose processes' arguments pass 64 KiB.
        container->waitForBody([this, spec](QObject *context, const auto &ready) {
            whenImageLearned(spec.image, context, [this, spec, ready] { ready(createBody(spec)); });
        });
    }
    container->useEgress(m_gateways.leaseFor(spec, container));
    return container;
}

QJsonObject DockerBackend::createBody(const SandboxSpec &spec) const
{
    // A used sandbox here waits, idle, for its removal at a quiet moment (cs-run's linger), so
    // the engine's teardown of it does not compete with the calls that wait; a pod ends after
    // its result instead (KubernetesBackend), as a pod is expected to.
    SandboxSpec lingering = spec;
    lingering.env.append({QStringLiteral("CS_LINGER"), QStringLiteral("1")});
    // An image that carries this build's scripts gets a command that runs them from its files
    // rather than one that holds their text (ImageScripts), and is named by its ID: the container
    // is made from the very image whose label said so, even if the tag moves meanwhile. Where the
    // engine has not said what the image carries, the text goes inline, as for any other image.
    const auto known = m_images.constFind(spec.image);
    if (known != m_images.cend() && known->present && !known->id.isEmpty()) {
        lingering.command = ImageScripts::compact(spec.command, known->scripts);
        if (lingering.command != spec.command)
            lingering.image = known->id;
    }
    return ContainerSpec::render(lingering);
}

void DockerBackend::shutdown(QObject *context, const std::function<void()> &done)
{
    m_gateways.shutdown(context, done);
}

void DockerBackend::createVolume(const QString &name, const QJsonObject &labels, QObject *context,
                                 const SandboxContainer::Done &done)
{
    EngineReply *reply = VolumesApi(m_engine).create(name, labels);
    reply->then(context, [reply, done] { done(errorOf(reply)); });
}

void DockerBackend::hasVolume(const QString &name, QObject *context,
                              const std::function<void(bool exists, const QString &error)> &done)
{
    EngineReply *reply = VolumesApi(m_engine).inspect(name);
    reply->then(context, [reply, done] {
        if (reply->error().isNotFound())
            done(false, QString());
        else
            done(reply->ok(), errorOf(reply));
    });
}

void DockerBackend::removeVolume(const QString &name)
{
    removeVolumeTrying(name, kVolumeRemoveTries);
}

// A failed install's volume is removed while the install's container may still be there (used
// containers wait for a quiet moment, at most SandboxSite::kMaxRemovalDelayMs): the engine
// refuses (409, in use) until it is gone, so try again for a while.
void DockerBackend::removeVolumeTrying(const QString &name, int triesLeft)
{
    EngineReply *reply = VolumesApi(m_engine).remove(name);
    reply->then(this, [this, reply, name, triesLeft] {
        const EngineError &e = reply->error();
        if (e.kind == EngineError::Kind::Http && e.status == 409 && triesLeft > 1)
            QTimer::singleShot(kVolumeRemoveRetryMs, this, [this, name, triesLeft] {
                removeVolumeTrying(name, triesLeft - 1);
            });
        else if (!reply->ok() && !e.isNotFound())
            qCWarning(lcBackend).noquote()
                << "could not remove the volume" << name << ":" << e.toString();
    });
}

void DockerBackend::list(
    const QStringList &labels, QObject *context,
    const std::function<void(const QList<Listed> &, const QString &error)> &done)
{
    EngineReply *reply = ContainersApi(m_engine).list(labels);
    reply->then(context, [reply, done] {
        QList<Listed> found;
        for (const QJsonValue &v : QJsonDocument::fromJson(reply->body()).array()) {
            const QJsonObject c = v.toObject();
            // Docker and Podman list names with a leading slash.
            QString name = c.value(u"Names").toArray().at(0).toString();
            if (name.startsWith(u'/'))
                name.remove(0, 1);
            found.append({c.value(u"Id").toString(), name, c.value(u"Labels").toObject()});
        }
        done(found, errorOf(reply));
    });
}

void DockerBackend::listLeftovers(
    const QStringList &labels, QObject *context,
    const std::function<void(const QList<Listed> &, const QString &error)> &done)
{
    EngineReply *reply = VolumesApi(m_engine).listUnused(labels);
    reply->then(context, [this, reply, labels, context, done] {
        QList<Listed> found;
        // (Podman answers null rather than [] when there is none.)
        const QJsonArray volumes = reply->json().value(u"Volumes").toArray();
        for (const QJsonValue &v : volumes) {
            const QJsonObject volume = v.toObject();
            const QString name = volume.value(u"Name").toString();
            found.append({name, name, volume.value(u"Labels").toObject()});
        }
        const QString volumesError = errorOf(reply);
        // And the allow-list mode's networks (an egress gateway's, whose server died before it
        // removed them): they carry the owner's labels too, and the pid that says it is gone.
        EngineReply *networks = NetworksApi(m_engine).list(labels);
        networks->then(context, [networks, found, volumesError, done]() mutable {
            for (const QJsonValue &v : QJsonDocument::fromJson(networks->body()).array()) {
                const QJsonObject network = v.toObject();
                const QJsonObject labels = network.value(u"Labels").toObject();
                if (!labels.contains(QLatin1String(EgressGateway::kLabelGatewayOf)))
                    continue;
                found.append(
                    {QString::fromLatin1(kNetworkLeftover) + network.value(u"Id").toString(),
                     network.value(u"Name").toString(), labels});
            }
            done(found, volumesError.isEmpty() ? errorOf(networks) : volumesError);
        });
    });
}

void DockerBackend::removeLeftover(const QString &id, QObject *context,
                                   const SandboxContainer::Done &done)
{
    if (id.startsWith(QLatin1String(kNetworkLeftover))) {
        removeNetworkLeftover(id.mid(int(qstrlen(kNetworkLeftover))), context, done,
                              kNetworkRemoveTries);
        return;
    }
    EngineReply *reply = VolumesApi(m_engine).remove(id);
    reply->then(context, [reply, done] { done(errorOf(reply)); });
}

// A network left by a dead server's egress gateway. The janitor removes that gateway container
// at the same time, and until it is gone the engine refuses (403, active endpoints): try again
// for a few seconds.
void DockerBackend::removeNetworkLeftover(const QString &id, QObject *context,
                                          const SandboxContainer::Done &done, int triesLeft)
{
    EngineReply *reply = NetworksApi(m_engine).remove(id);
    reply->then(context, [this, reply, id, context, done, triesLeft] {
        const EngineError &e = reply->error();
        if (!reply->ok() && !e.isNotFound() && triesLeft > 1) {
            QTimer::singleShot(kNetworkRemoveRetryMs, context,
                               [this, id, context, done, triesLeft] {
                                   removeNetworkLeftover(id, context, done, triesLeft - 1);
                               });
            return;
        }
        done(reply->ok() || e.isNotFound() ? QString() : errorOf(reply));
    });
}

void DockerBackend::removeById(const QString &id, QObject *context,
                               const SandboxContainer::Done &done)
{
    EngineReply *reply = ContainersApi(m_engine).remove(id);
    reply->then(context, [reply, done] { done(errorOf(reply)); });
}

void DockerBackend::health(bool cheap, QObject *context,
                           const std::function<void(const Health &)> &done)
{
    SystemApi system(m_engine);
    EngineReply *reply = cheap ? system.ping() : system.version();
    reply->then(context, [this, reply, cheap, context, done] {
        Health h;
        h.reachable = reply->ok();
        if (!reply->ok()) {
            h.error = reply->error().toString();
        } else if (!cheap) {
            const QJsonObject v = reply->json();
            h.version = v.value(u"Version").toString();
            h.apiVersion = v.value(u"ApiVersion").toString();
            h.product = EngineDialect::fromVersion(v).kind() == EngineDialect::Kind::Podman
                            ? QStringLiteral("Podman")
                            : QStringLiteral("Docker Engine");
            // The machine behind the engine (a remote one is not this one): its CPUs set the
            // capacity placement weighs it by.
            EngineReply *info = SystemApi(m_engine).info();
            info->then(context, [this, info, h, done]() mutable {
                h.runtime = m_runtime;
                if (info->ok()) {
                    const QJsonObject i = info->json();
                    h.cpus = i.value(u"NCPU").toInt();
                    h.memoryBytes = qint64(i.value(u"MemTotal").toDouble());
                    readRuntimes(i);
                    h.runtimes = m_runtimes.keys();
                    h.runtimes.sort();
                    if (h.cpus > 0)
                        m_cpus = h.cpus;
                }
                done(h);
            });
            return;
        }
        done(h);
    });
}

SandboxBackend::ImageStatus DockerBackend::imageBuild(const QString &image) const
{
    ImageStatus status;
    status.state = ImageStatus::State::Missing;
    // Only the builder's own images have a status: code-sandbox/NAME[:latest].
    static const QRegularExpression ours(QStringLiteral("^code-sandbox/([a-z0-9]+)(:latest)?$"));
    const QRegularExpressionMatch m = ours.match(image);
    if (!m.hasMatch())
        return status;
    QFile file(imageStatusDir() + u'/' + m.captured(1) + QStringLiteral(".status"));
    if (!file.open(QIODevice::ReadOnly))
        return status;
    QHash<QString, QString> fields;
    // A few short lines; anything longer is not a status file.
    const QByteArray text = file.read(4096);
    for (const QByteArray &line : text.split('\n')) {
        const int eq = line.indexOf('=');
        if (eq > 0)
            fields.insert(QString::fromUtf8(line.left(eq)), QString::fromUtf8(line.mid(eq + 1)));
    }
    if (fields.value(QStringLiteral("image")) != m.captured(1) ||
        !sameEngine(m_engine->address(), fields.value(QStringLiteral("engine"))))
        return status;
    const QString state = fields.value(QStringLiteral("state"));
    const bool waiting = state == u"queued" || state == u"building";
    if (waiting && !processAlive(fields.value(QStringLiteral("pid")).toLongLong()))
        return status;
    if (state == u"queued")
        status.state = ImageStatus::State::Queued;
    else if (state == u"building")
        status.state = ImageStatus::State::Building;
    else if (state == u"failed")
        status.state = ImageStatus::State::Failed;
    else
        return status;
    const auto epoch = [&fields](const char *key) {
        bool ok = false;
        const qint64 s = fields.value(QLatin1String(key)).toLongLong(&ok);
        return ok && s > 0 ? QDateTime::fromSecsSinceEpoch(s, Qt::UTC) : QDateTime();
    };
    status.started = epoch("started");
    status.expected = epoch("expected");
    status.log = fields.value(QStringLiteral("log"));
    return status;
}

void DockerBackend::imageStatus(const QString &image, QObject *context,
                                const std::function<void(const ImageStatus &)> &done)
{
    const auto answer = [this, image, done](bool present) {
        if (present) {
            ImageStatus ready;
            ready.state = ImageStatus::State::Ready;
            done(ready);
        } else {
            done(imageBuild(image));
        }
    };
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const auto cached = m_images.constFind(image);
    if (cached != m_images.cend() && now - cached->atMs < kImageCacheMs) {
        // Still from the event loop, as an engine's answer would come.
        QMetaObject::invokeMethod(
            context, [answer, present = cached->present] { answer(present); },
            Qt::QueuedConnection);
        return;
    }
    EngineReply *reply = ImagesApi(m_engine).inspect(image);
    reply->then(context, [this, reply, image, answer, done] {
        if (!reply->ok() && !reply->error().isNotFound()) {
            ImageStatus unknown;
            unknown.error = reply->error().toString();
            done(unknown);
            return;
        }
        remember(image, reply);
        answer(reply->ok());
    });
}

void DockerBackend::remember(const QString &image, const EngineReply *reply)
{
    Presence p;
    p.atMs = QDateTime::currentMSecsSinceEpoch();
    p.present = reply->ok();
    if (p.present) {
        const QJsonObject json = reply->json();
        p.id = json.value(u"Id").toString();
        p.scripts = ImageScripts::fromLabel(json.value(u"Config")
                                                .toObject()
                                                .value(u"Labels")
                                                .toObject()
                                                .value(QLatin1String(ImageScripts::kLabel))
                                                .toString());
    }
    m_images.insert(image, p);
}

void DockerBackend::learnImage(const QString &image)
{
    if (m_learning.contains(image))
        return;
    m_learning.insert(image);
    // imageStatus keeps the answer (an engine that is away leaves what was known: an image ID
    // stays valid).
    imageStatus(image, this, [this, image](const ImageStatus &) {
        m_learning.remove(image);
        const auto waiting = m_imageWaiters.take(image);
        for (const ImageWaiter &w : waiting)
            if (w.context)
                w.done();
    });
}

void DockerBackend::whenImageLearned(const QString &image, QObject *context,
                                     const std::function<void()> &done)
{
    // Whatever the answer (an engine that does not answer: the text goes inline, and the create
    // says what is wrong).
    if (!m_learning.contains(image)) {
        done();
        return;
    }
    m_imageWaiters[image].append({QPointer<QObject>(context), done});
}
