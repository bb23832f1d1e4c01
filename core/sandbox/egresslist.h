#pragma once

#include <QString>
#include <QStringList>

// An egress allow-list as the server takes it (--egress, --egress-file; later the assistants'
// policies and a call's `network` argument): each entry checked with the gateway's own
// HostPattern, so the server refuses at once what the gateway would refuse later.
class EgressList
{
public:
    // The entries as the gateway writes them back ("*.Example.COM." → "*.example.com"), without
    // repeats; or, with `error` set, an empty list and the first entry that is not a pattern.
    static QStringList parse(const QStringList &entries, QString *error);
    // For a list a person edits (a policy's): the entries that are patterns, normalised and
    // without repeats; those that are not go to `rejected`. A caller whose list had entries and
    // keeps none must fail closed (no network), not fall back to a wider list.
    static QStringList parseEach(const QStringList &entries, QStringList *rejected);
    // A file of patterns, one per line; blank lines and lines starting with # are skipped.
    static QStringList readFile(const QString &path, QString *error);
    // The first entry of `asked` (parsed entries) that `allowed` does not cover, or "" when each
    // is: a name through an equal name or a wildcard above it, a wildcard through an equal or
    // wider wildcard, an address through the same address, and each port through an entry with
    // that port. A call's list must lie within its policy's, and a policy's within the server's.
    static QString uncovered(const QStringList &asked, const QStringList &allowed);
    // The entries of `asked` that `allowed` covers, in order.
    static QStringList within(const QStringList &asked, const QStringList &allowed);
};
