#include "dockerbackend.h"

#include "containersapi.h"
#include "containerspec.h"
#include "dockercontainer.h"
#include "engineclient.h"
#include "enginedialect.h"
#include "enginereply.h"
#include "sandboxconfig.h"
#include "systemapi.h"
#include "volumesapi.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <thread>

namespace {
QString errorOf(const EngineReply *reply)
{
    return reply->ok() ? QString() : reply->error().toString();
}
} // namespace

DockerBackend::DockerBackend(EngineClient *engine, QObject *parent)
    : SandboxBackend(parent), m_engine(engine)
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

QJsonObject DockerBackend::runSpec(const Language &language, const QString &image,
                                   const SandboxConfig &config, const QString &librariesVolume,
                                   bool session) const
{
    return ContainerSpec::build(language, image, config, librariesVolume, session);
}

QJsonObject DockerBackend::installSpec(const Language &language, const QString &image,
                                       const SandboxConfig &config, const QString &volume) const
{
    return ContainerSpec::buildInstall(language, image, config, volume, config.installEnv,
                                       config.installCaBundle);
}

SandboxContainer *DockerBackend::createSandbox(const QJsonObject &spec, const QString &image,
                                               const QString &name, QObject *parent)
{
    return new DockerContainer(m_engine, spec, image, name, parent);
}

void DockerBackend::createVolume(const QString &name, const QJsonObject &labels, QObject *context,
                                 const SandboxContainer::Done &done)
{
    EngineReply *reply = VolumesApi(m_engine).create(name, labels);
    reply->then(context, [reply, done] { done(errorOf(reply)); });
}

void DockerBackend::removeVolume(const QString &name)
{
    EngineReply *reply = VolumesApi(m_engine).remove(name);
    QObject::connect(reply, &EngineReply::finished, reply, &QObject::deleteLater);
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
                if (info->ok()) {
                    const QJsonObject i = info->json();
                    h.cpus = i.value(u"NCPU").toInt();
                    h.memoryBytes = qint64(i.value(u"MemTotal").toDouble());
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
