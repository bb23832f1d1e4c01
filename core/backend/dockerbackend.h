#pragma once

#include "gatewaykeeper.h"
#include "sandboxbackend.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QPointer>
#include <QSet>
#include <functional>

class EgressGateway;
class EngineClient;
class EngineReply;

// Sandboxes on the Docker Engine API: Docker, and Podman's compatible socket (the engine client
// adapts requests to the engine it finds). Containers are made from ContainerSpec's create
// bodies (a SandboxSpec rendered) and driven by DockerContainer.
class DockerBackend : public SandboxBackend
{
    Q_OBJECT
public:
    explicit DockerBackend(EngineClient *engine, QObject *parent = nullptr);

    EngineClient *engine() const { return m_engine; }

    QString endpoint() const override;
    // Two sandboxes per core of the engine's machine, at least four (programs mostly wait): this
    // machine's cores until health(false) has read the engine's own figure from /info.
    int capacity() const override;
    // A container made from ContainerSpec's rendering of `spec`.
    SandboxContainer *createSandbox(const SandboxSpec &spec, const QString &name,
                                    QObject *parent) override;
    void createVolume(const QString &name, const QJsonObject &labels, QObject *context,
                      const SandboxContainer::Done &done) override;
    void removeVolume(const QString &name) override;
    void hasVolume(const QString &name, QObject *context,
                   const std::function<void(bool exists, const QString &error)> &done) override;
    void
    list(const QStringList &labels, QObject *context,
         const std::function<void(const QList<Listed> &, const QString &error)> &done) override;
    void listLeftovers(
        const QStringList &labels, QObject *context,
        const std::function<void(const QList<Listed> &, const QString &error)> &done) override;
    void removeLeftover(const QString &id, QObject *context,
                        const SandboxContainer::Done &done) override;
    void removeById(const QString &id, QObject *context,
                    const SandboxContainer::Done &done) override;
    void health(bool cheap, QObject *context,
                const std::function<void(const Health &)> &done) override;
    // The engine's answer (ImagesApi::inspect, kept kImageCacheMs) and, while it lacks the
    // image, the status file containers/build-images.sh keeps for it in imageStatusDir().
    void imageStatus(const QString &image, QObject *context,
                     const std::function<void(const ImageStatus &)> &done) override;
    ImageStatus imageBuild(const QString &image) const override;
    // Removes the egress gateway and its networks, if this engine ever needed them.
    void shutdown(QObject *context, const std::function<void()> &done) override;

    // The runtime its sandboxes get ("" the engine's default, runc), e.g. runsc for gVisor. Asks
    // the engine which runtimes it has (/info); a missing one is logged now and refuses runs
    // with the fix. Runs that require gVisor (SandboxSpec::isolation) get one of its gVisor
    // runtimes even without it.
    void setRuntime(const QString &runtime);
    QString runtime() const override { return m_runtime; }
    // /info's DefaultRuntime (runc as Docker ships), once the engine has answered.
    QString defaultRuntime() const override { return m_defaultRuntime; }
    // Whether the engine has said which runtimes it has.
    bool knowsRuntimes() const { return m_runtimesKnown; }
    // From setRuntime() until the engine has answered which runtimes it has (or
    // kRuntimesWaitMs passed).
    bool isSettling() const override { return m_askingRuntimes; }
    static constexpr int kRuntimesWaitMs = 5000;

    // The allow-list mode's gateway on this engine; null until a sandbox needed it.
    EgressGateway *egressGateway() const { return m_gateways.gateway(); }
    // Its image, when not code-sandbox/gateway:latest; before the first allow-list sandbox.
    void setGatewayImage(const QString &image) { m_gateways.setImage(image); }
    // Given to the gateway, now or when it is made.
    void setUpstreamProxy(const UpstreamProxy &proxy) override;
    void setInterception(const QByteArray &certificatePem, const QByteArray &keyPem,
                         const QByteArray &trustPem) override;

    // Where build-images.sh writes IMAGE.status: $CODE_SANDBOX_IMAGE_STATUS, else
    // /run/code-sandbox-images (root's to write, so the files cannot be planted).
    static QString imageStatusDir();
    // How long the engine's answer about an image is reused: the window and
    // get_supported_languages ask for every language at once.
    static constexpr qint64 kImageCacheMs = 3000;

protected:
    // The runtime the engine can give the spec (runtimeFor), or the refusal why not.
    SandboxSpec::Result accept(SandboxSpec spec) const override;

private:
    // listLeftovers' ids of networks (volumes' ids are their names).
    static constexpr const char *kNetworkLeftover = "network:";
    static constexpr int kNetworkRemoveTries = 20;
    static constexpr int kNetworkRemoveRetryMs = 500;
    // 30 s in all: past the longest wait of a used container for its removal.
    static constexpr int kVolumeRemoveTries = 30;
    static constexpr int kVolumeRemoveRetryMs = 1000;
    void removeVolumeTrying(const QString &name, int triesLeft);
    // A registered runtime, as /info's Runtimes has it.
    struct Runtime
    {
        QString path;
        QStringList args;
        bool isGvisor() const;
        bool withoutNetwork() const; // gVisor's --network=none: no network at all
    };
    void readRuntimes(const QJsonObject &info);
    // The runtime for `spec` on this engine, or why there is none (`error`).
    QString runtimeFor(const SandboxSpec &spec, QString *error) const;
    // runtimeFor on Podman, where only the engine's default runtime can be had.
    QString podmanRuntime(const QString &wanted, bool gvisor, QString *error) const;
    QString runtimesText() const;
    void removeNetworkLeftover(const QString &id, QObject *context,
                               const SandboxContainer::Done &done, int triesLeft);
    struct Presence
    {
        qint64 atMs = 0;
        bool present = false;
        QString id;          // the image's ID, when present
        QStringList scripts; // the ImageScripts it carries (its label)
    };
    // Keeps the engine's answer about `image` (an ImagesApi::inspect reply).
    void remember(const QString &image, const EngineReply *reply);
    // Asks the engine about `image` in the background (imageStatus), once at a time, for
    // createSandbox.
    void learnImage(const QString &image);
    // Calls `done` once learnImage's question about `image` is answered (at once when none is
    // under way), unless `context` is gone by then.
    void whenImageLearned(const QString &image, QObject *context,
                          const std::function<void()> &done);
    // The create body of a sandbox of `spec` here (see createSandbox).
    QJsonObject createBody(const SandboxSpec &spec) const;
    struct ImageWaiter
    {
        QPointer<QObject> context;
        std::function<void()> done;
    };

    EngineClient *m_engine;
    int m_cpus = 0; // from /info, once read
    QHash<QString, Presence> m_images;
    QSet<QString> m_learning;                          // images learnImage asks about
    QHash<QString, QList<ImageWaiter>> m_imageWaiters; // whenImageLearned's, by image
    GatewayKeeper m_gateways;                          // an EngineGateway on this engine
    QString m_runtime;
    QString m_defaultRuntime;
    QHash<QString, Runtime> m_runtimes; // name → what it is, from /info
    bool m_runtimesKnown = false;
    bool m_askingRuntimes = false;
    void stopAskingRuntimes();
};
