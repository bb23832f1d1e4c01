#pragma once

#include <QJsonObject>
#include <QString>
#include <QStringList>

// One language the sandbox can run: everything needed to turn source text into a process inside
// an image. Kept as data so that adding a language is adding an entry, not a branch.
struct Language
{
    QString name;        // canonical, e.g. "python"
    QStringList aliases; // e.g. "py", "python3"
    QString title;       // e.g. "Python 3"
    QString image;       // default image, e.g. code-sandbox/python:latest
    QString buildName;   // argument of containers/build-images.sh that builds the image
    QString fileName;    // source file inside the workdir
    QStringList command; // run command, in the workdir
    // Optional: a command that starts the interpreter ahead of time and reads the header and
    // program from stdin itself (see containers/cs-run); used instead of `command` when set.
    QStringList preloadCommand;
    QStringList env; // NAME=value set for every run
    // Compiled languages: a shell command run in the workdir before `command`; when it fails the
    // result is a compile error carrying the compiler's message.
    QString compileCommand;
    // Installing libraries: a shell command to which the quoted package names are appended, run
    // with network in an install container that writes into /opt/cs-libs (empty: unsupported).
    QString installCommand;
    // The hosts an install may reach (the package index and where it serves files from): the
    // install container's allow-list, with the server's --index-host mirrors.
    QStringList indexHosts;
    // Set in runs that use installed libraries, so the language finds them under /opt/cs-libs.
    QStringList libraryEnv;
    QString packageManager;
    QStringList versionCommand;
    QStringList preinstalled;
    // The top-level modules of the image's own libraries that warm sandboxes may import ahead
    // when calls import them (PreloadPlanner): the names a program imports, not the packages'
    // ("sklearn", not "scikit-learn"). Empty: the language preloads nothing.
    QStringList preloadModules;
    QStringList useCases;
    QString example;       // a short program, for get_language_details
    QString editorExample; // a longer one for a first run in the window (RunEditor)
    QString printHint;     // what to call to produce output, for the empty-output message
    bool visualization = false;
    // In a session: variables, imports and functions persist between calls (a live interpreter);
    // otherwise a session keeps the workdir's files and installed packages. `interruptible`: a
    // call past its timeout gets SIGINT and the session goes on (every kernel in containers/ and
    // containers/loaders handles it); otherwise a timeout ends the session.
    bool liveSession = false;
    bool interruptible = true;

    QJsonObject toJson() const;
};
