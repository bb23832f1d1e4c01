#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QString>
#include <functional>

// In-memory tar archives through libarchive, for the engine's archive endpoint (files into and
// out of a container).
class TarArchive
{
public:
    struct Entry
    {
        // What an entry is. Regular files and directories are what unpack returns; the others are
        // what it reports through `skipped`, and what pack writes when asked (symbolic links for
        // a workspace; the rest so that tests can build the archives a hostile container would).
        enum class Type
        {
            File,
            Directory,
            Symlink,
            HardLink,
            CharDevice,
            BlockDevice,
            Fifo,
            Socket
        };

        QString path; // relative, '/'-separated
        QByteArray data;
        int mode = 0644;
        bool isDirectory = false;
        qint64 size = 0;      // of the file in the archive (set by unpack)
        bool omitted = false; // unpack: larger than maxFileBytes, so `data` was not read
        // pack writes a directory when either isDirectory or type says so; unpack sets both.
        Type type = Type::File;
        // Symlink and HardLink: what the link names (initialised: callers list the fields before)
        QString linkTarget = QString();
        int uid = 1000; // the sandbox's user, as every archive had before these fields
        int gid = 1000;
        qint64 mtimeMs = 0; // 0: the epoch, as before
    };

    static QByteArray pack(const QList<Entry> &entries, QString *error = nullptr);
    // The same, one entry at a time, for archives too large to hold twice (the entries and the
    // archive): `next` fills `entry` and returns true, or returns false at the end, having set
    // *error (non-null) to stop with that error instead.
    // (Not an overload of pack: pack({}) would be ambiguous.)
    using Source = std::function<bool(Entry *entry, QString *error)>;
    static QByteArray packFrom(const Source &next, QString *error = nullptr);

    // Reads regular files and directories; stops with an error past `maxTotalBytes` of content so a
    // hostile container cannot make the server hold unbounded data. Links and devices are skipped,
    // and listed in `skipped` when given (path, type and link target; no data).
    // Files larger than `maxFileBytes` (when >= 0) are listed with their size but not read, and
    // do not count toward the total.
    static QList<Entry> unpack(const QByteArray &tar, qint64 maxTotalBytes,
                               QString *error = nullptr, qint64 maxFileBytes = -1,
                               QList<Entry> *skipped = nullptr);

    // Every entry in order, of every type, for whoever decides per entry what to keep: `visit`
    // gets the entry without its data and a function that reads the data (false when the archive
    // is damaged there): into entry.data, or with a sink in pieces to the sink, so that a large
    // entry can be hashed without being held. Data not read is passed over. `visit` returns false
    // to stop. True when the archive was read to its end; false when it is damaged (*error) or
    // `visit` stopped.
    using Sink = std::function<void(QByteArrayView piece)>;
    using ReadData = std::function<bool(const Sink &sink)>;
    using Visitor = std::function<bool(Entry &entry, const ReadData &readData)>;
    static bool read(const QByteArray &tar, const Visitor &visit, QString *error = nullptr);
};
