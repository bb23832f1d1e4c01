#pragma once

#include <QJsonObject>
#include <QString>

struct Language;
struct SandboxConfig;

// The engine's create-container body for one execution: the hardened defaults of the design
// notes, the stdin-fed supervisor as the command, labels naming the owning instance.
class ContainerSpec
{
public:
    static constexpr const char *kWorkdir = "/sandbox";
    static constexpr const char *kLabelOwner = "code-sandbox.instance";
    static constexpr const char *kLabelPid = "code-sandbox.pid";
    static constexpr const char *kLabelHost = "code-sandbox.host";
    // Identifies this machine in labels, so a reaper never touches another host's containers
    // on a shared engine.
    static QString hostId();
    static constexpr const char *kLabelApp = "code-sandbox";

    // The supervisor reads "<nonce> <size>\n" and then exactly <size> bytes of program from stdin,
    // runs it with stdin closed, and reports "<nonce> <status>\n" on stdout and stderr. It is
    // passed to `sh -c`, so any image with a POSIX shell and coreutils' head works — including
    // the user's own via CONTAINER_IMAGE.
    static const char *supervisorScript();

    static QJsonObject build(const Language &language, const QString &image,
                             const SandboxConfig &config);
};
