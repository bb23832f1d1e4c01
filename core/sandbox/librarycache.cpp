#include "librarycache.h"

#include "execution.h"
#include "executionresult.h"
#include "language.h"
#include "sandboxlog.h"

#include <QCryptographicHash>

LibraryCache::LibraryCache(Installer installer, QObject *parent)
    : QObject(parent), m_installer(std::move(installer))
{}

QString LibraryCache::validate(const QStringList &libraries)
{
    if (libraries.size() > 50)
        return QStringLiteral("at most 50 libraries can be installed with one run");
    for (const QString &name : libraries) {
        const QString shown = name.left(80);
        if (name.trimmed().isEmpty())
            return QStringLiteral("a library name is empty");
        if (name.size() > 200)
            return QStringLiteral("library name '%1…' is longer than 200 characters").arg(shown);
        if (name.startsWith(u'-'))
            return QStringLiteral("library name '%1' starts with '-' (options are not accepted)")
                .arg(shown);
        for (const QChar c : name)
            if (c == u'\'' || c == u'\\' || c.category() == QChar::Other_Control)
                return QStringLiteral("library name '%1' contains a quote, backslash or "
                                      "control character")
                    .arg(shown);
    }
    return {};
}

QString LibraryCache::volumeName(const Language &language, const QStringList &libraries)
{
    QStringList sorted = libraries;
    for (QString &s : sorted)
        s = s.trimmed();
    sorted.sort();
    sorted.removeDuplicates();
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(language.image.toUtf8() + '\n' + language.installCommand.toUtf8() + '\n' +
                 sorted.join(u'\n').toUtf8());
    return QStringLiteral("code-sandbox-libs-%1-%2")
        .arg(language.name, QString::fromLatin1(hash.result().toHex().left(16)));
}

QString LibraryCache::installScript(const Language &language, const QStringList &libraries)
{
    QString names;
    for (const QString &name : libraries)
        names += QStringLiteral(" '") + name.trimmed() + u'\'';
    // The marker makes a second install of the same set (another server, a restart) a no-op.
    return QStringLiteral("set -e\n"
                          "if [ -f /opt/cs-libs/.complete ]; then\n"
                          "    echo 'libraries already installed'\n"
                          "    exit 0\n"
                          "fi\n"
                          "%1%2\n"
                          "touch /opt/cs-libs/.complete\n")
        .arg(language.installCommand, names);
}

void LibraryCache::ensure(const Language &language, const QStringList &libraries,
                          const Progress &progress, const Done &done)
{
    const QString volume = volumeName(language, libraries);
    if (m_ready.contains(volume)) {
        done(volume, QString());
        return;
    }
    const bool running = m_waiting.contains(volume);
    m_waiting[volume].append(done);
    if (running) {
        progress(QStringLiteral("waiting for another run's install of the same libraries"));
        return;
    }
    progress(QStringLiteral("installing %1 with %2 (cached for later runs)")
                 .arg(libraries.join(QStringLiteral(", ")), language.packageManager));
    Execution *install = m_installer.run(language, volume, installScript(language, libraries));
    connect(install, &Execution::output, this, [progress](int, const QByteArray &bytes) {
        const QString text = QString::fromUtf8(bytes).trimmed();
        if (!text.isEmpty())
            progress(QStringLiteral("install: ") + text.section(u'\n', -1).left(200));
    });
    connect(
        install, &Execution::finished, this, [this, volume, language](const ExecutionResult &r) {
            if (!r.error.isEmpty()) {
                finished(volume,
                         QStringLiteral("could not install the libraries: %1").arg(r.error));
            } else if (r.timedOut) {
                finished(volume, QStringLiteral("installing the libraries took longer than %1 s")
                                         .arg(r.timeoutSec) +
                                     refusedHosts(language, r));
            } else if (r.exitCode != 0) {
                const QByteArray log = (r.stdoutData + r.stderrData).right(3000);
                finished(volume,
                         QStringLiteral("installing the libraries failed (exit code %1):\n%2")
                                 .arg(r.exitCode)
                                 .arg(QString::fromUtf8(log).trimmed()) +
                             refusedHosts(language, r));
            } else {
                finished(volume, QString());
            }
        });
}

QString LibraryCache::refusedHosts(const Language &language, const ExecutionResult &r)
{
    // The package manager's own message names the failure, seldom the gateway's reason: a
    // package that pulls from elsewhere (a git URL, a tarball on another host) looks like a
    // network fault without this.
    const QStringList refused = r.connectionsWith(NetworkAttempt::Verdict::Refused);
    if (refused.isEmpty())
        return {};
    return QStringLiteral("\nThe install was refused a connection to %1: installs reach only "
                          "the package index of %2 (%3) and the server's --index-host mirrors.")
        .arg(refused.join(QStringLiteral(", ")), language.name,
             language.indexHosts.join(QStringLiteral(", ")));
}

void LibraryCache::finished(const QString &volume, const QString &error)
{
    if (error.isEmpty()) {
        m_ready.insert(volume);
    } else {
        // A half-written volume would be taken for a good one by a later install's marker check
        // only if the marker were there; removing it keeps the next attempt clean anyway.
        qCWarning(lcSandbox).noquote() << "library install into" << volume << "failed";
        m_installer.removeVolume(volume);
    }
    const QList<Done> waiting = m_waiting.take(volume);
    for (const Done &done : waiting)
        done(error.isEmpty() ? volume : QString(), error);
}
