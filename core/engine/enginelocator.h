#pragma once

#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <functional>

// Finds the engine's socket, in one place and in a fixed order: an explicit --engine, DOCKER_HOST,
// CONTAINER_HOST, rootless Podman, rootful Podman, Docker.
class EngineLocator
{
public:
    struct Result
    {
        QString socketPath; // empty when nothing usable was found
        QString source;     // which rule chose it, for messages
        QString error;      // why an explicit choice is unusable
        QStringList tried;
    };

    // `exists` decides whether a candidate socket is present; tests pass their own.
    static Result locate(const QString &explicitEngine, const QProcessEnvironment &env,
                         const std::function<bool(const QString &)> &exists);
    static Result locate(const QString &explicitEngine);

    // unix:///path or a bare absolute path → /path; anything else → empty.
    static QString socketPathFromUrl(const QString &url);
};
