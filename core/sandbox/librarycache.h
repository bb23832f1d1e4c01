#pragma once

#include <QHash>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <functional>

class Execution;
struct ExecutionResult;
struct Language;

// Libraries requested with a run are installed once per language, image and set of packages
// into a named volume, by an install container that reaches the language's package index (see
// SandboxSpec::forInstall); runs then mount that volume
// read-only and stay without network. The volumes outlive the server as a cache (label
// code-sandbox.libraries); one set is installed at most once at a time.
class LibraryCache : public QObject
{
    Q_OBJECT
public:
    using Done = std::function<void(const QString &volume, const QString &error)>;
    using Progress = std::function<void(const QString &message)>;
    // What the cache needs of whoever runs containers, and no more: run an install script in a
    // container that reaches the package index and writes into `volume`, and remove a volume.
    struct Installer
    {
        std::function<Execution *(const Language &language, const QString &volume,
                                  const QString &script)>
            run;
        std::function<void(const QString &volume)> removeVolume;
    };

    LibraryCache(Installer installer, QObject *parent = nullptr);

    // Empty when the names are acceptable; they are passed to a shell, single-quoted, so quotes,
    // control characters and leading dashes (options) are refused.
    static QString validate(const QStringList &libraries);
    static QString volumeName(const Language &language, const QStringList &libraries);
    static QString installScript(const Language &language, const QStringList &libraries);
    // For a failed install's error: the connections the egress gateway refused it, and where
    // installs may go; empty when it refused none.
    static QString refusedHosts(const Language &language, const ExecutionResult &r);

    // Calls `done` with the volume to mount once the libraries are installed, or with an error.
    void ensure(const Language &language, const QStringList &libraries, const Progress &progress,
                const Done &done);

private:
    void finished(const QString &volume, const QString &error);

    Installer m_installer;
    QSet<QString> m_ready;
    QHash<QString, QList<Done>> m_waiting;
};
