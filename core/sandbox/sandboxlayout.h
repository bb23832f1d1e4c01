#pragma once

#include <QByteArray>
#include <QString>
#include <QSysInfo>

// What every sandbox looks like, whatever backend runs it: where the program's files are, and
// the labels that say whose a sandbox is (so that leftovers can be found by any instance).
struct SandboxLayout
{
    static constexpr const char *kWorkdir = "/sandbox";
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
