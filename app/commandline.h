#pragma once

#include "enginelocator.h"
#include "sandboxconfig.h"

struct AppSettings;

#include <QMap>
#include <QProcessEnvironment>
#include <QSslCertificate>
#include <QString>
#include <QStringList>

// Everything the command line and the environment decide, parsed without side effects so it can
// be tested. Options win over environment variables.
struct CommandLine
{
    enum class Mode
    {
        Stdio,
        Http,
        PrintToken,
        Credentials, // --new-credential, --list-credentials, --revoke-credential
        Consent,     // --approve-client, --deny-client
        Help,
        Version,
        Error,
        NoMode
    };

    Mode mode = Mode::NoMode;
    QString message;     // help text, version line, or the error
    QString engine;      // the first --engine, for callers that use one engine
    QStringList engines; // every --engine, in order: an address or context:NAME
    // The Kubernetes clusters among --engine (k8s://[CONTEXT][/NAMESPACE]), in order; with only
    // these, no Docker engine is looked for.
    QStringList kubeEngines;
    QString runtime;      // --runtime: the container runtime on Docker/Podman engines (runsc)
    QString runtimeClass; // --runtime-class: the RuntimeClass of sandbox pods (e.g. gVisor's)
    QString imagePrefix;  // --image-prefix: where clusters pull the images (build-images.sh --push)
    int maxPods = 0;      // --max-pods: pods running at once per cluster (0: the backend's default)
    QString tlsCa;        // --tls-ca, --tls-cert, --tls-key: for the tcp:// engines of --engine
    QString tlsCert;
    QString tlsKey;
    bool insecureTcp = false; // --insecure-tcp: plain tcp:// to another host is allowed
    SandboxConfig config;
    QMap<QString, QString> images;  // language → image overrides
    QStringList missingPassThrough; // named in --pass-through-env but not set on the host
    // The window's bound secrets whose host variable is not set here, skipped: (name, host
    // variable). --secret refuses such a one instead.
    QList<QPair<QString, QString>> missingSecretVars;
    // HTTP mode
    QString httpHost = QStringLiteral("127.0.0.1");
    quint16 httpPort = 8765;
    QString token; // --token or CODE_SANDBOX_TOKEN; empty: the stored one (see HttpToken)
    bool tokenFromEnvironment = false; // the token is CODE_SANDBOX_TOKEN's
    QString tokenFile;                 // --token-file: the token is this file's first line
    bool noAuth = false;               // only allowed on loopback
    // Mode::Credentials: "new" (credentialName is the assistant's), "list" or "revoke"
    // (credentialName is a credential's id or an assistant's name).
    QString credentialAction;
    QString credentialName;
    // --approve-client / --deny-client: "approve" or "deny", the sign-in's id, and --as.
    QString consentAction;
    QString consentRequest;
    QString consentAs;
    int oauthTokenSec = 900; // --oauth-token-lifetime: an OAuth access token's life
    // --client-metadata-ca: certificate authorities trusted besides the system's, and
    // --client-metadata-private: addresses allowed, when fetching client ID metadata documents.
    QList<QSslCertificate> clientMetadataCas;
    bool clientMetadataPrivate = false;
    QStringList allowHosts; // --allow-host: further names accepted in Host and Origin
    int httpHeadTimeoutMs = 10 * 1000;
    int httpBodyTimeoutMs = 30 * 1000;
    // Runs are kept in the history (SQLite) unless --no-history; a headless instance sends its
    // runs to the desktop window unless --no-monitor.
    bool history = true;
    bool monitor = true;
    bool startHidden = false; // --hidden: the window starts in the tray
    int sessionIdleSec = 600; // a session without a call for this long ends
    int maxSessions = 8;
    // --snapshot-max: what a session's snapshots may hold, and all sessions' together (0: no
    // snapshots). The defaults are SnapshotStore::Limits's.
    qint64 snapshotSessionBytes = 256LL * 1024 * 1024;
    qint64 snapshotTotalBytes = 1024LL * 1024 * 1024;
    // What --timeout (or CODE_SANDBOX_TIMEOUT) and --max-timeout asked for, 0 when nothing:
    // config's two timeouts are resolved from them (CallTimeout).
    int askedTimeoutSec = 0;
    int askedMaxTimeoutSec = 0;
    QStringList given; // the long names of the options on the command line

    static CommandLine parse(const QStringList &arguments, const QProcessEnvironment &env);
    // What EngineLocator::locateAll needs from the command line.
    EngineLocator::Options engineOptions() const;
    // The window's launch: the command line wins, the window's settings fill in what it leaves
    // open.
    CommandLine withSettings(const AppSettings &settings, const QProcessEnvironment &env) const;
    // "512m", "1g", "256MiB", "1073741824" → bytes; -1 when unreadable.
    static qint64 parseSize(const QString &text);
};
