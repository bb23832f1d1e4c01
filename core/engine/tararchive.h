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
    };

    static QByteArray pack(const QList<Entry> &entries, QString *error = nullptr);
    // Reads regular files and directories; stops with an error past `maxTotalBytes` of content so a
    // hostile container cannot make the server hold unbounded data. Links and devices are skipped.
    static QList<Entry> unpack(const QByteArray &tar, qint64 maxTotalBytes,
                               QString *error = nullptr);
};
