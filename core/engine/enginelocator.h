#pragma once

#include "engineaddress.h"

#include <QList>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>
#include <functional>

// Finds the engines, in one place and in the Docker CLI's order: every --engine (an address or
// context:NAME), else DOCKER_HOST (with DOCKER_TLS_VERIFY / DOCKER_CERT_PATH), DOCKER_CONTEXT,
// the currentContext of $DOCKER_CONFIG/config.json, CONTAINER_HOST (Podman), then the local
// sockets: rootless Podman, rootful Podman, Docker. A context is read where the Docker CLI keeps
// it ($DOCKER_CONFIG/contexts/meta/<sha256 of the name>/meta.json, its TLS files under
// contexts/tls/<sha256>/docker/); the context "default" is this same order without contexts.
//
// Rules on what may be used: plain tcp:// only to a loopback host unless insecureTcp (anyone
// who reaches an engine's port owns its host), TLS that skips verifying the engine is refused,
// and so is TLS without a CA named for the engine (its ca.pem, --tls-ca): that CA is the only
// trust root, and this machine's store is used only when asked for (--tls-ca system).
class EngineLocator
{
public:
    struct Result
    {
        EngineAddress address; // invalid when nothing usable was found
        QString socketPath;    // the local socket's path when the address is one
        QString source;        // which rule chose it, for messages
        QString error;         // why an explicit choice is unusable
        QStringList tried;

        bool ok() const { return error.isEmpty() && address.isValid(); }
    };

    struct Options
    {
        QStringList engines; // --engine values, in order: addresses or context:NAME
        // --tls-ca/--tls-cert/--tls-key: for the tcp:// engines of `engines` (otherwise
        // DOCKER_TLS_VERIFY and DOCKER_CERT_PATH decide, as for the Docker CLI's -H).
        QString tlsCa; // a file, or kSystemCa
        QString tlsCert;
        QString tlsKey;
        bool insecureTcp = false; // --insecure-tcp: plain tcp:// to another host is allowed
    };

    // --tls-ca's value that asks for this machine's trust store instead of a CA file.
    static constexpr const char *kSystemCa = "system";

    using Exists = std::function<bool(const QString &)>;

    // One result per --engine, in order; without any, the one engine the environment chooses.
    // `exists` decides whether a candidate local socket is present; tests pass their own.
    static QList<Result> locateAll(const Options &options, const QProcessEnvironment &env,
                                   const Exists &exists);
    static QList<Result> locateAll(const Options &options);
    // The first engine only, for callers that use one.
    static Result locate(const Options &options, const QProcessEnvironment &env,
                         const Exists &exists);
    static Result locate(const QString &explicitEngine, const QProcessEnvironment &env,
                         const Exists &exists);
    static Result locate(const QString &explicitEngine);

    // unix:///path or a bare absolute path → /path; anything else → empty.
    static QString socketPathFromUrl(const QString &url);
    // $DOCKER_CONFIG, else ~/.docker.
    static QString dockerConfigDir(const QProcessEnvironment &env);
    // The folder name the Docker CLI gives a context: the sha256 of its name, in hex.
    static QString contextDirName(const QString &name);
    // The Docker CLI's rule for a context's name.
    static bool isValidContextName(const QString &name);
};
