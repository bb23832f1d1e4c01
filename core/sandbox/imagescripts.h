#pragma once

#include <QString>
#include <QStringList>

// The supervisor (containers/cs-run) and the interpreters' loaders as an image can carry them.
//
// A sandbox's command holds their text (about 40 KB for Python), so that any image with a POSIX
// shell works. The engine pays for that text several times per container: it stores the command
// in the container's configuration, hands it to the runtime in the OCI spec, and writes both out
// on every change of state; measured here, ~14 ms of machine CPU per container, a tenth of what a
// whole bare container costs. The images built by containers/build-images.sh carry the same files
// under kDir, named by the SHA-256 of their text (names()), and list them in the label kLabel; for
// such an image, compact() puts a line that runs the file in place of each text.
class ImageScripts
{
public:
    static constexpr const char *kLabel = "code-sandbox.scripts";
    static constexpr const char *kDir = "/usr/local/share/code-sandbox";

    // The file names of this build's scripts in an image: cs-run-<hash>, python-loader-<hash>.bin
    // (compiled by the image's Python) and node-loader-<hash>.js, where <hash> is the first 16
    // hex digits of the SHA-256 of the script's text, as `sha256sum | cut -c1-16` prints them.
    static QStringList names();
    // The first 16 hex digits of the SHA-256 of `text`.
    static QString hashOf(const QByteArray &text);
    // The names in a label's value (comma-separated; the label may be missing: none).
    static QStringList fromLabel(const QString &value);
    // `command` with each script text whose file `carried` names replaced by a line that runs
    // that file: the supervisor's `sh -c TEXT` by `. FILE` (the arguments after it stay its
    // own), node's `-e TEXT` by an evaluation of FILE's text in the same global scope, and
    // Python's loader by "" (python-boot.py runs the compiled file it names).
    static QStringList compact(const QStringList &command, const QStringList &carried);
};
