#pragma once

#include <QString>

// Paths of input files: relative to the workdir (or absolute under it), never escaping it.
class WorkdirPath
{
public:
    // The path relative to the workdir, normalised ("a/./b" → "a/b"); empty with `error` set when
    // the path is empty, escapes the workdir, or names the workdir itself.
    static QString normalize(const QString &path, QString *error);
};
