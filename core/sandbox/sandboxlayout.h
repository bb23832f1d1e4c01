#pragma once

#include <QByteArray>
#include <QString>
#include <QSysInfo>

// What every sandbox looks like, whatever backend runs it: where the program's files are, and
// the labels that say whose a sandbox is (so that leftovers can be found by any instance).
struct SandboxLayout
{
    static constexpr const char *kWorkdir = "/sandbox";
    // Where a run's workspaces are unpacked, one folder each, inside the workdir volume (the
    // engine's archive endpoint writes into volumes, not the read-only root); the images' own
    // /workspace is a link to it, so programs see /workspace/NAME.
    static constexpr const char *kWorkspaceDir = "/sandbox/.cs-workspace";
    static constexpr const char *kWorkspaceDirName = ".cs-workspace";
    // In the sandbox that fills a read-only workspace's cached volume (WorkspaceCache): the
    // volume being filled, and the one it starts from.
    static constexpr const char *kWorkspaceFillDir = "/sandbox/.cs-workspace/fill";
    static constexpr const char *kWorkspacePreviousDir = "/sandbox/.cs-workspace/previous";
    // In a run: where a copy-on-write workspace's cached volume is mounted, read-only, for the
    // supervisor to copy into kWorkspaceDir/NAME before the program starts (cs-run's
    // CS_WORKSPACE_COPY).
    static constexpr const char *kWorkspaceBaseDir = "/sandbox/.cs-workspace/.base";
    // OUTPUT_DIR: files left here come back with the result.
    static constexpr const char *kOutputDir = "/sandbox/outputs";
    // Matplotlib figures saved by the Python entry point.
    static constexpr const char *kPlotsDir = "/sandbox/.plots";
    static constexpr const char *kLibrariesDir = "/opt/cs-libs";

    static constexpr const char *kLabelApp = "code-sandbox";
    static constexpr const char *kLabelOwner = "code-sandbox.instance";
    static constexpr const char *kLabelPid = "code-sandbox.pid";
    static constexpr const char *kLabelHost = "code-sandbox.host";

    // Identifies this machine in labels, so a reaper never touches another host's sandboxes on
    // a shared backend.
    static QString hostId()
    {
        static const QString id =
            QString::fromLatin1(QSysInfo::machineUniqueId().toHex().left(16)) + u'-' +
            QSysInfo::machineHostName();
        return id;
    }
};
