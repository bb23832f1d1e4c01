#pragma once

#include <QString>
#include <QStringList>
#include <optional>

// One of the server's named folders (--workspace NAME=PATH[:rw]): a host folder that runs see at
// /workspace/NAME, read-only or copy-on-write. Its rules keep credentials out of the sandbox.
//
// Patterns are a subset of gitignore's: a pattern without '/' matches a name at any depth, one
// with a '/' inside (or a leading one) matches from the folder's root, component by component; a
// trailing '/' matches directories only; '*' and '?' match within a name, never across '/'.
// Matching ignores case, so that a credential cannot slip through as ".ENV" (the same file on a
// case-insensitive file system). A path is kept out when it, or any directory above it, is
// matched by a default or an `exclude` pattern and not by an `include` one: `include` re-admits
// a name but, as in git, cannot reach inside a directory that stays out.
struct Workspace
{
    enum class Mode
    {
        ReadOnly,
        CopyOnWrite
    };
    enum class Apply
    {
        Never,
        Ask,
        Always
    }; // what happens to a :rw run's change set

    QString name; // [A-Za-z0-9][A-Za-z0-9_.-]{0,63}
    QString path; // absolute, canonical host folder
    Mode mode = Mode::ReadOnly;
    Apply apply = Apply::Never;
    QStringList exclude; // extra patterns, beyond the defaults
    QStringList include; // patterns that re-admit what a default excludes (".env.example")

    static bool isValidName(const QString &name);
    // "NAME=PATH", "NAME=PATH:rw" or "NAME=PATH:ro": the folder must exist and be a directory
    // (not the file system's root); the path is made absolute and canonical. nullopt with *error
    // (one sentence) otherwise.
    static std::optional<Workspace> parse(const QString &argument, QString *error);
    // The credentials kept out of every workspace, as patterns: the names of files (.env*, *.pem,
    // *.key, id_*, .netrc, .npmrc, .pypirc: these match anything but a directory, so that a
    // folder named "id_tools" stays in) and directories (.aws/, .ssh/, .gnupg/), at any depth.
    static QStringList defaultExclusions();
    // "~" and "~/…" as the user's home, as a shell would (parse() and the window's dialog).
    static QString expandHome(const QString &path);
    // Whether `relativePath` ('/'-separated, relative to the folder; isDir for a directory) is
    // kept out of the sandbox by this workspace's rules. Also what the applier asks before it
    // writes, so that a change set cannot plant a `.ssh/authorized_keys` or a `.env`.
    bool excludes(const QString &relativePath, bool isDir) const;

    static QString modeName(Mode mode);    // "read-only", "copy-on-write"
    static QString applyName(Apply apply); // "never", "ask", "always"
    static std::optional<Apply> parseApply(const QString &text);
};
