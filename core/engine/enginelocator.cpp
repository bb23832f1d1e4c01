#include "enginelocator.h"

#include <QFileInfo>
#include <functional>

QString EngineLocator::socketPathFromUrl(const QString &url)
{
    if (url.startsWith(u"unix://"))
        return url.mid(7);
    if (url.startsWith(u'/'))
        return url;
    return {};
}

EngineLocator::Result EngineLocator::locate(const QString &explicitEngine,
                                            const QProcessEnvironment &env,
                                            const std::function<bool(const QString &)> &exists)
{
    Result r;
    // An address the user named is taken as given (no fallback), so a typo is reported rather
    // than silently replaced by another engine.
    const auto named = [&](const QString &value, const QString &source) {
        r.source = source;
        const QString path = socketPathFromUrl(value);
        if (path.isEmpty())
            r.error =
                QStringLiteral("%1 is '%2': only unix:// sockets are supported").arg(source, value);
        else
            r.socketPath = path;
        return r;
    };
    if (!explicitEngine.isEmpty())
        return named(explicitEngine, QStringLiteral("--engine"));
    for (const char *var : {"DOCKER_HOST", "CONTAINER_HOST"}) {
        const QString v = env.value(QString::fromLatin1(var));
        if (!v.isEmpty())
            return named(v, QString::fromLatin1(var));
    }
    QList<QPair<QString, QString>> candidates;
    const QString xdg = env.value(QStringLiteral("XDG_RUNTIME_DIR"));
    if (!xdg.isEmpty())
        candidates.append(
            {xdg + QStringLiteral("/podman/podman.sock"), QStringLiteral("rootless Podman")});
    candidates.append({QStringLiteral("/run/podman/podman.sock"), QStringLiteral("Podman")});
    candidates.append({QStringLiteral("/var/run/docker.sock"), QStringLiteral("Docker")});
    for (const auto &c : candidates) {
        r.tried.append(c.first);
        if (exists(c.first)) {
            r.socketPath = c.first;
            r.source = c.second;
            return r;
        }
    }
    // Nothing there yet: aim at Docker's default so the error names the usual place.
    r.socketPath = QStringLiteral("/var/run/docker.sock");
    r.source = QStringLiteral("default");
    return r;
}

EngineLocator::Result EngineLocator::locate(const QString &explicitEngine)
{
    return locate(explicitEngine, QProcessEnvironment::systemEnvironment(),
                  [](const QString &p) { return QFileInfo::exists(p); });
}
