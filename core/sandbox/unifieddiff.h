#pragma once

#include <QByteArray>
#include <QString>

// Line diffs in the unified format (diff -u, patch, git apply read them): "--- a/path",
// "+++ b/path", then "@@ -l,n +l,n @@" hunks with `context` lines around each change. Minimal
// (Myers) up to a bounded number of differences; past that, still correct but coarser (the
// differing middle removed and added whole), so that two unrelated files cost no more than a few
// megabytes to compare.
class UnifiedDiff
{
public:
    // Empty when the contents are equal. Over `maxLines` lines on either side: a one-line note
    // instead of the diff.
    static QString of(const QByteArray &before, const QByteArray &after, const QString &path,
                      int context = 3, int maxLines = 5000);
    // The diff of a new file: from "--- /dev/null", every line added.
    static QString ofAdded(const QByteArray &after, const QString &path, int maxLines = 5000);
    // Text: valid UTF-8 without a NUL in the first 8 KiB (a multi-byte character cut at the 8 KiB
    // mark is not an error).
    static bool isText(const QByteArray &data);
    // The lines a diff of `of` adds and removes (its headers not counted).
    static void countLines(const QString &diff, int *added, int *removed);
};
