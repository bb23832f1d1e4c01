#pragma once

#include <QByteArray>
#include <QList>
#include <QMap>
#include <QPair>
#include <QString>
#include <QStringList>
#include <optional>

struct Language;
struct RunNetwork;
struct SandboxConfig;

// What one sandbox is, whatever runs it: the program it starts (the stdin-fed supervisor), its
// environment, user, labels, limits and extra mounts. The sandbox room makes it (forRun,
// forInstall); a backend takes it as it is or refuses it (SandboxBackend::runSpec) and renders
// it in its engine's terms: ContainerSpec as a Docker create body, PodSpec as a Kubernetes pod.
// What every sandbox has whatever the spec says (read-only root, no capabilities, no new
// privileges, scratch space for /tmp and the workdir, stdin attached) is the renderers' part,
// not a field: a spec cannot loosen it.
//
// Equal specs make equal sandboxes: the warm pool keeps sandboxes per key().
struct SandboxSpec
{
    // How the sandbox reaches the network. The renderers switch over it, so the compiler names
    // each place a new mode must be handled.
    enum class Network
    {
        None,     // no route out, no interface beyond loopback where the engine allows
        Open,     // the engine's default network (--network, installs)
        Allowlist // only the hosts `egress` names, through the backend's egress gateway (an
                  // HTTP proxy the sandbox is told of); no route out otherwise, no DNS
    };

    struct Limits
    {
        qint64 memoryBytes = 0; // swap equal: no swap beyond it
        double cpus = 0;
        int pidsLimit = 0;
        qint64 tmpfsBytes = 0; // each of /tmp and the workdir
        // The longest a program may run in it: a pod's deadline is counted from it.
        int maxTimeoutSec = 0;
    };

    // Storage beyond /tmp and the workdir.
    struct Mount
    {
        enum class Kind
        {
            Volume,   // named storage of the backend (installed libraries)
            HostFile, // a file of the engine's machine (the host's trust store: installs, and
                      // runs with network)
            Scratch   // memory-backed space of `sizeBytes` made with the sandbox and gone with
                      // it, owned by root (a run's workspaces, SandboxLayout::kWorkspaceDir)
        };
        Kind kind = Kind::Volume;
        QString source; // the volume's name, or the file's path
        QString target;
        bool readOnly = false;
        qint64 sizeBytes = 0; // Scratch
        // Scratch: the sandbox's user's rather than root's (a copy-on-write workspace's copy,
        // which the sandbox makes itself from its cached volume: WorkspaceCache).
        bool sandboxUsers = false;

        bool operator==(const Mount &other) const
        {
            return kind == other.kind && source == other.source && target == other.target &&
                   readOnly == other.readOnly && sizeBytes == other.sizeBytes &&
                   sandboxUsers == other.sandboxUsers;
        }
    };

    // A secret bound to hosts (--secret NAME=HOSTVAR@HOST,…): the sandbox's variable NAME holds
    // a placeholder made for it alone, and the backend's egress gateway puts the value in its
    // place in requests to those hosts only (and masks it in what they answer). The value never
    // enters the sandbox; it reaches the gateway over its control channel.
    struct Secret
    {
        QString name;      // the variable inside the sandbox
        QStringList hosts; // HostPattern entries
        QByteArray value;  // the host variable's, read once at start; never logged

        bool operator==(const Secret &other) const
        {
            return name == other.name && hosts == other.hosts && value == other.value;
        }
    };

    struct Result;

    QString language; // the language's name (also a label)
    QString image;
    // The whole command line: the shell running the supervisor script, then its arguments.
    QStringList command;
    QString workingDir;
    // In order. Docker lets a later NAME win over an earlier one; renderers that cannot list a
    // name twice keep the later in place of the last.
    QList<QPair<QString, QString>> env;
    qint64 uid = 1000;
    qint64 gid = 1000;
    // Who the sandbox belongs to (app, instance, pid, host, language): on the sandbox and on
    // whatever it makes (its work volume), so leftovers can be found by label.
    QMap<QString, QString> labels;
    // What the sandbox is for when not a run ("install"): a label on the sandbox itself only.
    QString role;
    Limits limits;
    QList<Mount> mounts;
    Network network = Network::None;
    // Allowlist: the host patterns the sandbox may reach (HostPattern's syntax: host, *.suffix,
    // each with an optional :port). Part of the key, so a warm sandbox serves only its own list.
    QStringList egress;
    // Allowlist: a connection to another host is held, and the backend reports it for a person
    // to decide (SandboxContainer::answerConnection); else it is refused at once. In the key.
    bool askOtherHosts = false;
    // The container runtime (Docker's --runtime such as gVisor's runsc, Kubernetes'
    // RuntimeClass); empty: the engine's default. Set by the backend's accept().
    QString runtime;
    // What the run requires of its runtime (an assistant policy's isolation): "" any,
    // kIsolationGvisor a gVisor one, else a runtime (RuntimeClass) of that name. The backend
    // turns it into `runtime`, or refuses a spec it has no runtime for; not in the key (the
    // runtime is).
    QString isolation;
    static constexpr const char *kIsolationGvisor = "gvisor";
    static constexpr const char *kIsolationContainer = "container"; // (= "": any runtime)
    // Allowlist only (the gateway adds them): in the key by name, hosts and a hash of the value.
    QList<Secret> secrets;
    // It serves many programs one after another (a session, see SandboxSession).
    bool session = false;

    // A run of `language` with the server's limits (`config`) and its network as decided
    // (`network`: mode, hosts, secrets, asking, isolation); with `librariesVolume`, that volume of
    // installed packages is mounted read-only at SandboxLayout::kLibrariesDir and the language's
    // library environment is set. A run with network (Open or Allowlist) gets the config's
    // installCaBundle (if any) at kHostTrustStore, to trust besides the image's store; one
    // without gets nothing of it.
    static SandboxSpec forRun(const Language &language, const QString &image,
                              const SandboxConfig &config, const RunNetwork &network,
                              const QString &librariesVolume = {}, bool session = false);
    // A sandbox that runs the install script it receives as its program, writing into `volume`
    // at kLibrariesDir; never given the pass-through variables. Its network is the allow-list
    // of the language's indexHosts and the config's indexHosts (the gateway chains to the
    // host's proxy, if any). The config's installEnv is added without its proxy variables, and
    // its installCaBundle (if any) is mounted as the trust store.
    static SandboxSpec forInstall(const Language &language, const QString &image,
                                  const SandboxConfig &config, const QString &volume);
    // A sandbox without network that runs the script it receives (WorkspaceCache::fillScript)
    // with sh, to fill `volume`, mounted at SandboxLayout::kWorkspaceFillDir, with a read-only
    // workspace's content: from `previous` (an earlier content of it, read-only at
    // kWorkspacePreviousDir; none when empty) and what the archive endpoint put in beside.
    // Never given the pass-through variables: nothing in it needs them.
    static SandboxSpec forWorkspaceFill(const Language &language, const QString &image,
                                        const SandboxConfig &config, const QString &volume,
                                        const QString &previous);

    // Where a sandbox with network finds the host's trust store (SandboxConfig::installCaBundle),
    // mounted read-only. A run's names it in kHostTrustStoreVar, and the supervisor adds it to the
    // image's own store (cs-run); an install's is its whole store.
    static constexpr const char *kHostTrustStore = "/etc/code-sandbox/host-ca.crt";
    static constexpr const char *kHostTrustStoreVar = "CS_HOST_CA";
    // Takes a run's host trust store out again (its mount and its variable), for a backend whose
    // sandboxes cannot mount a file of the engine's machine; whether it had one.
    bool dropHostTrustStore();

    // The supervisor: reads "<nonce> <size>\n" and then exactly <size> bytes of program from
    // stdin, runs it with stdin closed, and reports "<nonce> <status>\n" on stdout and stderr.
    // Passed to `sh -c`, so any image with a POSIX shell and coreutils' head works.
    static const char *supervisorScript();

    // The environment as NAME=value entries, in order.
    QStringList envEntries() const;
    // The labels the sandbox itself carries: `labels`, and `role` when it has one.
    QMap<QString, QString> sandboxLabels() const;
    // The labels that say whose a sandbox (or what it leaves, a volume) is: this application,
    // the server instance, its pid and host (the Janitor sweeps by them).
    static QMap<QString, QString> ownerLabels(const SandboxConfig &config);
    // Equal for equal specs, different for different ones.
    QString key() const;

    bool operator==(const SandboxSpec &other) const { return key() == other.key(); }
    bool operator!=(const SandboxSpec &other) const { return !(*this == other); }
};

// What a backend answers when asked for a spec: the spec, or why it cannot run such a sandbox
// (a Kubernetes backend and library volumes).
struct SandboxSpec::Result
{
    std::optional<SandboxSpec> spec;
    QString error;

    static Result of(const SandboxSpec &spec) { return {spec, QString()}; }
    static Result refused(const QString &error) { return {std::nullopt, error}; }
    bool ok() const { return spec.has_value(); }
};
