#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

struct Language;
struct SandboxConfig;

// The engine's create-container body for one execution: the hardened defaults of the design
// notes, the stdin-fed supervisor as the command, labels naming the owning instance.
class ContainerSpec
{
public:
    // The supervisor reads "<nonce> <size>\n" and then exactly <size> bytes of program from stdin,
    // runs it with stdin closed, and reports "<nonce> <status>\n" on stdout and stderr. It is
    // passed to `sh -c`, so any image with a POSIX shell and coreutils' head works — including
    // the user's own via CONTAINER_IMAGE.
    static const char *supervisorScript();

    // A run of `language`; with `librariesVolume`, that volume of installed packages is mounted
    // read-only at kLibrariesDir and the language's library environment is set.
    // `session`: the container serves many programs one after another (see SandboxSession).
    static QJsonObject build(const Language &language, const QString &image,
                             const SandboxConfig &config, const QString &librariesVolume = {},
                             bool session = false);
    // A container that runs the install script it receives as its program, with network, writing
    // into `volume` at kLibrariesDir. A non-empty `caBundleHostPath` is mounted as the trust store.
    static QJsonObject buildInstall(const Language &language, const QString &image,
                                    const SandboxConfig &config, const QString &volume,
                                    const QStringList &extraEnv, const QString &caBundleHostPath);

private:
    static QJsonObject base(const Language &language, const QString &image,
                            const SandboxConfig &config, const QString &fileName,
                            const QStringList &command, const QStringList &extraEnv);
};
