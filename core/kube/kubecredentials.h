#pragma once

#include "kubecredential.h"

#include <QDateTime>
#include <QList>
#include <QObject>
#include <QPair>
#include <QPointer>
#include <QProcessEnvironment>
#include <QStringList>
#include <QTimer>
#include <functional>
#include <memory>

class QProcess;

// Where a cluster's bearer token (or an exec plugin's client certificate) comes from, and when to
// ask again: nothing, a fixed token, a file that is re-read when it changes (service-account
// tokens rotate), or an exec credential plugin (client.authentication.k8s.io ExecCredential) run
// as kubectl runs it and cached until the expiry it gives. The plugin runs as an asynchronous
// QProcess with a deadline, so nothing here blocks the event loop.
class KubeCredentials : public QObject
{
    Q_OBJECT

public:
    static constexpr int kDefaultExecTimeoutMs = 30000;
    static constexpr qint64 kMaxPluginOutputBytes = 1024 * 1024; // stdout of an exec plugin
    static constexpr qint64 kMaxPluginErrorBytes = 16 * 1024;    // its stderr, kept for messages
    static constexpr qint64 kMaxTokenFileBytes = 1024 * 1024;

    enum class Kind
    {
        None,
        Token,
        TokenFile,
        Exec
    };

    // An exec plugin as the kubeconfig describes it (paths already resolved).
    struct ExecSpec
    {
        QString apiVersion; // client.authentication.k8s.io/v1 or /v1beta1
        QString command;    // a path, or a name looked up on the environment's PATH
        QStringList args;
        QList<QPair<QString, QString>> env;
        QString installHint;
        bool interactiveAlways = false; // interactiveMode: Always (refused: there is no terminal)
        QByteArray clusterJson;         // spec.cluster for provideClusterInfo, empty when not asked
        QProcessEnvironment baseEnvironment;
        QString origin; // "users[NAME].exec in FILE", for messages
        int timeoutMs = kDefaultExecTimeoutMs;
    };

    using Callback = std::function<void(const KubeCredential &)>;

    static std::shared_ptr<KubeCredentials> none();
    static std::shared_ptr<KubeCredentials> token(const QByteArray &token);
    // `origin` names where the file was configured, for messages.
    static std::shared_ptr<KubeCredentials> tokenFile(const QString &path, const QString &origin);
    static std::shared_ptr<KubeCredentials> exec(const ExecSpec &spec);

    Kind kind() const { return m_kind; }
    // Whether asking again after a 401 can bring another credential.
    bool canRefresh() const { return m_kind == Kind::TokenFile || m_kind == Kind::Exec; }
    // What this is, without secrets: "token", "token file /path", "exec plugin aws".
    QString describe() const;

    // Calls `done` with the current credential: before returning when one is at hand (a cached
    // plugin answer, a token file that has not changed), otherwise from the event loop once the
    // plugin has answered or failed (within its deadline).
    void fetch(const Callback &done);
    // The server refused the credential: the next fetch re-reads the file or runs the plugin.
    void invalidate();

private:
    explicit KubeCredentials(Kind kind);

    KubeCredential readTokenFile();
    void runPlugin();
    // Its answer is `message`, an error, from the event loop.
    void failPluginLater(const QString &message);
    // Where the command is: as given when it names a path, else found on the plugin's PATH.
    QString pluginProgram() const;
    QProcessEnvironment pluginEnvironment() const;
    void startPlugin(const QString &program);
    void pluginFinished(int exitCode, bool crashed);
    void finishPlugin(const KubeCredential &credential);
    KubeCredential parseExecCredential(const QByteArray &out) const;
    QString pluginName() const;
    QString stderrTail() const;

    Kind m_kind;
    QByteArray m_token;
    QString m_path;
    QString m_origin;
    ExecSpec m_exec;

    // The token file as last read: re-read when any of these changes.
    QDateTime m_fileModified;
    qint64 m_fileSize = -1;
    QString m_fileTarget;
    bool m_fileStale = true;

    // The plugin's answer while valid, and the callers waiting for the running plugin.
    KubeCredential m_cached;
    bool m_haveCached = false;
    QList<Callback> m_waiting;
    QProcess *m_process = nullptr;
    QByteArray m_stdout;
    QByteArray m_stderr;
    QTimer m_deadline;
};
