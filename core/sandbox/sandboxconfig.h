#pragma once

#include "calltimeout.h"
#include "sandboxspec.h"
#include "workspace.h"

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>
#include <optional>

// Limits and policy for every container. The defaults are the hardened ones; each loosening is
// an explicit option.
struct SandboxConfig
{
    qint64 memoryBytes = 512LL * 1024 * 1024; // swap is set equal: no swap beyond RAM
    double cpus = 1.0;
    int pidsLimit = 256;
    qint64 tmpfsBytes = 64LL * 1024 * 1024; // for each of /tmp and the workdir
    bool network = false;
    // The hosts every run may reach (--egress, --egress-file: HostPattern entries); when not
    // empty, runs are in the allow-list mode, through the engine's egress gateway. A run's own
    // network is RunNetwork::decide's, from these, its caller's policy and its call: this struct
    // holds the server's settings only.
    QStringList egress;
    // Libraries may be installed (with network, in a separate install container); runs still
    // have no network unless `network` is set.
    bool allowInstall = false;
    int installTimeoutSec = 300;
    // The host's trust store (--install-ca-file), for networks that inspect TLS: an install's
    // trust store, added to the image's own in runs with network (SandboxSpec::forRun), and what
    // the gateway checks the hosts of bound secrets against; empty: the image's own (the system's
    // for the gateway).
    QString installCaBundle;
    // NAME=value pairs given to install containers: the host's proxy settings and its package
    // index settings (PIP_INDEX_URL, npm_config_registry, ...).
    QStringList installEnv;
    // Hosts installs may reach besides their language's package index (--index-host, and the
    // hosts of the index settings in installEnv): HostPattern entries.
    QStringList indexHosts;
    int defaultTimeoutSec = 30;
    int maxTimeoutSec = 300;
    // The two above as the one rule every call's timeout goes through.
    CallTimeout callTimeout() const { return {defaultTimeoutSec, maxTimeoutSec}; }
    qint64 outputCapBytes = 1024 * 1024; // per stream
    // Output files and figures returned with a result: each, and all of a run together.
    qint64 fileCapBytes = 5LL * 1024 * 1024;
    qint64 filesTotalCapBytes = 20LL * 1024 * 1024;
    // Files returned with content per run (empty ones count too); more are listed, not returned.
    int maxFilesPerRun = 100;
    // Host variables that enter the sandbox: name and value, read once at start. Values are never
    // logged.
    QList<QPair<QString, QString>> passThroughEnv;
    // Secrets bound to hosts (--secret): runs hold placeholders, the egress gateway adds the
    // values for those hosts only. Runs with some are in the allow-list mode, their hosts added.
    QList<SandboxSpec::Secret> secrets;
    // Where the authority the gateway signs those hosts' certificates with is kept (made there
    // on first use; InterceptionAuthority); empty: the user's config folder.
    QString secretsAuthorityFolder;
    QString instanceId; // labels our containers so leftovers can be found
    // Containers kept started ahead of time per language (0: create one per call): the base the
    // pool starts from and returns to.
    int poolSize = 2;
    // The most a language's pool grows to when calls come in bursts (0: from the engine's
    // memory, one per 512 MiB, at most 32; never below poolSize).
    int poolMax = 0;
    // Languages warmed at start; the others are warmed at their first call.
    QStringList warmLanguages = {QStringLiteral("python"), QStringLiteral("javascript")};
    // What warm sandboxes import while they wait (--preload): std::nullopt learns it from the
    // calls (PreloadPlanner), an empty list preloads nothing, else these modules (Python's, npm
    // packages: each language takes its own, PreloadPlanner::setFixed).
    std::optional<QStringList> preload;
    // Executions running at once; more wait in a queue. 0: twice the cores, at least 4.
    int maxConcurrent = 0;
    // Runs waiting for a free slot beyond maxConcurrent; one more is refused at once with a
    // clear error (each waiting run holds its request, so the queue must not grow for ever).
    int maxQueued = 256;
    // The user's folders runs may ask for by name (--workspace NAME=PATH[:rw], Settings →
    // Workspaces): copied into the sandbox at /workspace/NAME, read-only or copy-on-write.
    QList<Workspace> workspaces;
    // The most one workspace may hold (--workspace-max): a bigger folder is refused before
    // anything runs.
    qint64 workspaceMaxBytes = 2LL * 1024 * 1024 * 1024;
    const Workspace *workspace(const QString &name) const
    {
        for (const Workspace &w : workspaces)
            if (w.name == name)
                return &w;
        return nullptr;
    }
};
