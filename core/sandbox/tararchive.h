#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

// In-memory tar archives through libarchive, for the engine's archive endpoint (files into and
// out of a container).
class TarArchive
{
public:
    struct Entry
    {
        QString path; // relative, '/'-separated
        QByteArray data;
        int mode = 0644;
        bool isDirectory = false;
        qint64 size = 0;      // of the file in the archive (set by unpack)
        bool omitted = false; // unpack: larger than maxFileBytes, so `data` was not read
    };

    static QByteArray pack(const QList<Entry> &entries, QString *error = nullptr);
    // Reads regular files and directories; stops with an error past `maxTotalBytes` of content so a
    // hostile container cannot make the server hold unbounded data. Links and devices are skipped.
    // Files larger than `maxFileBytes` (when >= 0) are listed with their size but not read, and
    // do not count toward the total.
    static QList<Entry> unpack(const QByteArray &tar, qint64 maxTotalBytes,
                               QString *error = nullptr, qint64 maxFileBytes = -1);
};
