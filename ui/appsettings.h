#pragma once

#include "assistantpolicies.h"
#include "workspace.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <optional>

class QSettings;

// What the user can change in Settings, persisted with QSettings. Loading never fails: a missing,
// malformed or out-of-range value falls back to its default, so a hand-edited file cannot keep
// the app from starting.
struct AppSettings
{
    // A secret bound to hosts, as --secret NAME=HOSTVAR@HOST[,HOST…] takes it: the sandbox's NAME
    // holds a placeholder, and the egress gateway adds the value of the host variable HOSTVAR in
    // requests to `hosts` only. Never a value: that is read from the host's environment when the
    // server starts, as for the pass-through variables, so the settings file holds no key.
    struct SecretBinding
    {
        QString name;      // the variable inside the sandbox
        QString hostVar;   // the host variable whose value the gateway adds
        QStringList hosts; // host patterns, as EgressList::parse writes them back

        // "NAME=HOSTVAR@host1,host2", the form kept in the settings file and --secret takes.
        QString toString() const;
        // The binding `text` spells, names checked and hosts normalised; nothing, with `error`
        // set, when a name is not one or a host is not a pattern.
        static std::optional<SecretBinding> parse(const QString &text, QString *error = nullptr);
        // The same from its parts, as the settings dialog's fields hold them.
        static std::optional<SecretBinding> make(const QString &name, const QString &hostVar,
                                                 const QStringList &hosts,
                                                 QString *error = nullptr);

        bool operator==(const SecretBinding &other) const
        {
            return name == other.name && hostVar == other.hostVar && hosts == other.hosts;
        }
    };

    // Where the container engines are, as --engine takes them (unix:///path or /path, tcp://,
    // ssh://, context:NAME), the first one first; empty: auto-detect. Kept as "engine/socket"
    // (the first, the key of versions with one engine, which still read it) and "engine/more".
    QStringList engines;
    // The first of `engines`, for readers that know one engine only. load() sets it; save() uses
    // it when `engines` is empty (a caller that set only this).
    QString engineSocket;
    QMap<QString, QString> images; // language → image; a language not listed uses its built-in
    int defaultTimeoutSec = 30;
    int memoryMiB = 512;
    double cpus = 1.0;
    int pidsLimit = 256;
    QStringList passThroughEnv; // host variable names handed to every sandbox
    // Bound secrets, in order, each sandbox name once. Kept as "environment/secrets".
    QList<SecretBinding> secrets;
    // The folders runs may ask for by name (Settings → Workspaces), in order, each name once. Kept
    // as one JSON array, "workspaces/folders". The server the window starts uses them when
    // --workspace names none; headless instances do not (their command line says).
    QList<Workspace> workspaces;
    bool httpEnabled = true;
    quint16 httpPort = 8765;
    // The HTTP token, kept in its own 0600 file beside the settings file (TokenStore), never in
    // the settings file itself. Saving an empty one forgets it: a new one is generated when the
    // server next starts.
    QString httpToken;
    int historyRetentionDays = 30; // 0: keep forever
    bool keepRunningInBackground = true;
    // What each assistant may run, and whether a person approves it first (Settings →
    // Assistants). Kept as one JSON value, "assistants/policies"; headless instances read it too.
    AssistantPolicies policies;

    // The accepted ranges, shared with the settings dialog so it cannot offer what load() drops.
    static constexpr int kMinTimeoutSec = 1;
    static constexpr int kMaxTimeoutSec = 300; // SandboxConfig::maxTimeoutSec
    static constexpr int kMinMemoryMiB = 16;
    static constexpr int kMaxMemoryMiB = 1024 * 1024;
    static constexpr double kMinCpus = 0.1;
    static constexpr double kMaxCpus = 256.0;
    static constexpr int kMinPidsLimit = 16;
    static constexpr int kMaxPidsLimit = 1 << 22; // the kernel's pid_max ceiling
    static constexpr int kMinHttpPort = 1;
    static constexpr int kMaxHttpPort = 65535;
    static constexpr int kMaxRetentionDays = 36500;

    // The application's own store (organization and application "code-sandbox").
    static AppSettings load();
    void save() const;
    // Any store; the tests use an INI file in a temporary directory. A token an older version
    // kept in the settings file (server/token) is moved into the token file on load.
    static AppSettings load(QSettings &settings);
    void save(QSettings &settings) const;
    // The token file that goes with a settings file: "http-token" in the same folder (for the
    // application's own store, TokenStore::defaultPath()).
    static QString tokenPath(const QSettings &settings);
    // The application's settings file, and only its policies (what headless instances need,
    // read again whenever the file changes).
    static QString filePath();
    static AssistantPolicies loadPolicies();
    static AssistantPolicies loadPolicies(QSettings &settings);
    // Saves only the policies ("always allow" from an approval, which the rest of the settings
    // must not wait for).
    static void savePolicies(const AssistantPolicies &policies);
    static void savePolicies(QSettings &settings, const AssistantPolicies &policies);

    // A workspace as the settings file keeps it, and back: the name checked, the folder absolute
    // and not the root, mode and apply spelled as Workspace names them, patterns trimmed. Nothing,
    // with `error` set, for an entry that is not one. A folder that does not exist is one: it may
    // be on a drive not mounted today.
    static QJsonObject workspaceToJson(const Workspace &workspace);
    static std::optional<Workspace> workspaceFromJson(const QJsonValue &json,
                                                      QString *error = nullptr);
    // Whether two workspaces are the same setting (Workspace has no operator==).
    static bool sameWorkspace(const Workspace &a, const Workspace &b);

    // A name a POSIX shell would accept: [A-Za-z_][A-Za-z0-9_]*.
    static bool isValidEnvName(const QString &name);
    // `engines`, or engineSocket alone when only that was set.
    QStringList engineList() const;

    bool operator==(const AppSettings &other) const;
    bool operator!=(const AppSettings &other) const { return !(*this == other); }
};
