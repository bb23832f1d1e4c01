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
    // A file of patterns, one per line; blank lines and lines starting with # are skipped.
    static QStringList readFile(const QString &path, QString *error);
};
