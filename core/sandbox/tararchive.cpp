#include "tararchive.h"

#include <algorithm>
#include <archive.h>
#include <archive_entry.h>
#include <climits>
#include <memory>

namespace {
// Modification times past this (some 34,000 years from now) are read as none: no file has one,
// and their milliseconds would come near qint64's limit.
constexpr qint64 kMaxSeconds = qint64(1) << 40;

struct WriteDeleter
{
    void operator()(archive *a) const { archive_write_free(a); }
};
struct ReadDeleter
{
    void operator()(archive *a) const { archive_read_free(a); }
};
struct EntryDeleter
{
    void operator()(archive_entry *e) const { archive_entry_free(e); }
};

int onOpen(archive *, void *)
{
    return ARCHIVE_OK;
}
la_ssize_t onWrite(archive *, void *client, const void *buffer, size_t length)
{
    static_cast<QByteArray *>(client)->append(static_cast<const char *>(buffer), qsizetype(length));
    return la_ssize_t(length);
}
int onClose(archive *, void *)
{
    return ARCHIVE_OK;
}

void setError(QString *error, archive *a, const char *what)
{
    if (error)
        *error = QStringLiteral("%1: %2").arg(QString::fromLatin1(what),
                                              QString::fromUtf8(archive_error_string(a)));
}
} // namespace

namespace {
unsigned fileTypeOf(TarArchive::Entry::Type type)
{
    using Type = TarArchive::Entry::Type;
    switch (type) {
    case Type::Directory:
        return AE_IFDIR;
    case Type::Symlink:
        return AE_IFLNK;
    case Type::CharDevice:
        return AE_IFCHR;
    case Type::BlockDevice:
        return AE_IFBLK;
    case Type::Fifo:
        return AE_IFIFO;
    case Type::Socket:
        return AE_IFSOCK;
    case Type::File:
    case Type::HardLink: // a hard link is a regular file's header naming another entry
        break;
    }
    return AE_IFREG;
}

TarArchive::Entry::Type typeOf(archive_entry *entry)
{
    using Type = TarArchive::Entry::Type;
    if (archive_entry_hardlink(entry))
        return Type::HardLink;
    switch (archive_entry_filetype(entry)) {
    case AE_IFREG:
        return Type::File;
    case AE_IFDIR:
        return Type::Directory;
    case AE_IFLNK:
        return Type::Symlink;
    case AE_IFCHR:
        return Type::CharDevice;
    case AE_IFBLK:
        return Type::BlockDevice;
    case AE_IFIFO:
        return Type::Fifo;
    default:
        return Type::Socket; // the tar formats have nothing else
    }
}

// The header of one entry; false with *error set when libarchive refuses it.
bool writeHeader(archive *a, const TarArchive::Entry &e, QString *error)
{
    using Type = TarArchive::Entry::Type;
    const Type type = e.isDirectory ? Type::Directory : e.type;
    std::unique_ptr<archive_entry, EntryDeleter> entry(archive_entry_new());
    // UTF-8 whatever the process's locale (a C locale would read the bytes as Latin-1, or
    // refuse them): the pax header carries the name as UTF-8.
    const QByteArray path = e.path.toUtf8();
    archive_entry_set_pathname_utf8(entry.get(), path.constData());
    archive_entry_set_filetype(entry.get(), fileTypeOf(type));
    archive_entry_set_perm(entry.get(), mode_t(e.mode));
    archive_entry_set_size(entry.get(), type == Type::File ? e.data.size() : 0);
    archive_entry_set_uid(entry.get(), e.uid);
    archive_entry_set_gid(entry.get(), e.gid);
    if (e.mtimeMs > 0)
        archive_entry_set_mtime(entry.get(), time_t(e.mtimeMs / 1000),
                                long(e.mtimeMs % 1000) * 1000000);
    const QByteArray target = e.linkTarget.toUtf8();
    if (type == Type::Symlink)
        archive_entry_set_symlink_utf8(entry.get(), target.constData());
    else if (type == Type::HardLink)
        archive_entry_set_hardlink_utf8(entry.get(), target.constData());
    if (archive_write_header(a, entry.get()) != ARCHIVE_OK) {
        setError(error, a, "tar header");
        return false;
    }
    if (type == Type::File && !e.data.isEmpty() &&
        archive_write_data(a, e.data.constData(), size_t(e.data.size())) < 0) {
        setError(error, a, "tar data");
        return false;
    }
    return true;
}

// The entry libarchive read, without its data.
TarArchive::Entry entryOf(archive_entry *entry)
{
    TarArchive::Entry e;
    // The name as UTF-8 where the archive says what it is (pax); else its raw bytes, read as
    // UTF-8 (what cs-run's GNU tar writes) — never through the process's locale.
    // In NFC, as libarchive writes names it converts (an NFD name would not read back the
    // same after a pack).
    const char *utf8 = archive_entry_pathname_utf8(entry);
    const char *raw = archive_entry_pathname(entry);
    e.path = QString::fromUtf8(utf8 ? utf8 : raw).normalized(QString::NormalizationForm_C);
    while (e.path.endsWith(u'/')) // tar marks directories with a trailing slash
        e.path.chop(1);
    e.mode = int(archive_entry_perm(entry));
    e.type = typeOf(entry);
    e.isDirectory = e.type == TarArchive::Entry::Type::Directory;
    if (e.type == TarArchive::Entry::Type::File)
        e.size = archive_entry_size(entry);
    const char *link = e.type == TarArchive::Entry::Type::HardLink ? archive_entry_hardlink(entry)
                                                                   : archive_entry_symlink(entry);
    if (link)
        e.linkTarget = QString::fromUtf8(link);
    // Owners and times as an archive may claim them (any 64-bit value) are kept only within
    // what pack writes back: an entry read packs again whatever the archive said.
    const auto owner = [](la_int64_t id) { return id >= 0 && id <= INT_MAX ? int(id) : 1000; };
    e.uid = owner(archive_entry_uid(entry));
    e.gid = owner(archive_entry_gid(entry));
    const qint64 seconds = archive_entry_mtime(entry);
    if (seconds > 0 && seconds < kMaxSeconds)
        e.mtimeMs = seconds * 1000 + archive_entry_mtime_nsec(entry) / 1000000;
    return e;
}

// The data of the file entry `e`: into e->data, or to `sink` in pieces. False with *error set
// when the archive ends or breaks before the entry's size.
bool readEntryData(archive *a, TarArchive::Entry *e, qint64 archiveSize,
                   const TarArchive::Sink &sink, QString *error)
{
    if (e->type != TarArchive::Entry::Type::File)
        return true;
    // No filter is enabled, so an entry's data is never larger than the archive: a header
    // claiming more is damage, not a reason to allocate it.
    if (e->size < 0 || e->size > archiveSize) {
        if (error)
            *error = QStringLiteral("tar data: an entry larger than the archive");
        return false;
    }
    if (!sink) {
        e->data.resize(qsizetype(e->size));
        if (e->size > 0 &&
            archive_read_data(a, e->data.data(), size_t(e->size)) != la_ssize_t(e->size)) {
            setError(error, a, "tar data");
            return false;
        }
        return true;
    }
    QByteArray piece(64 * 1024, Qt::Uninitialized);
    for (qint64 left = e->size; left > 0;) {
        const la_ssize_t n =
            archive_read_data(a, piece.data(), size_t(std::min<qint64>(left, piece.size())));
        if (n <= 0) {
            setError(error, a, "tar data");
            return false;
        }
        sink(QByteArrayView(piece.constData(), n));
        left -= n;
    }
    return true;
}
} // namespace

QByteArray TarArchive::pack(const QList<Entry> &entries, QString *error)
{
    qsizetype next = 0;
    return packFrom(
        [&](Entry *entry, QString *) {
            if (next == entries.size())
                return false;
            *entry = entries.at(next++);
            return true;
        },
        error);
}

QByteArray TarArchive::packFrom(const Source &next, QString *error)
{
    QByteArray out;
    std::unique_ptr<archive, WriteDeleter> a(archive_write_new());
    archive_write_set_format_pax_restricted(a.get());
    // Keep the default 10 KiB blocking; the engine accepts any, and a small padding is harmless.
    if (archive_write_open(a.get(), &out, onOpen, onWrite, onClose) != ARCHIVE_OK) {
        setError(error, a.get(), "tar open");
        return {};
    }
    QString why;
    Entry e;
    while (next(&e, &why)) {
        if (!writeHeader(a.get(), e, error))
            return {};
        e = Entry();
    }
    if (!why.isEmpty()) {
        if (error)
            *error = why;
        return {};
    }
    if (archive_write_close(a.get()) != ARCHIVE_OK) {
        setError(error, a.get(), "tar close");
        return {};
    }
    return out;
}

bool TarArchive::read(const QByteArray &tar, const Visitor &visit, QString *error)
{
    std::unique_ptr<archive, ReadDeleter> a(archive_read_new());
    archive_read_support_format_tar(a.get());
    if (archive_read_open_memory(a.get(), tar.constData(), size_t(tar.size())) != ARCHIVE_OK) {
        setError(error, a.get(), "tar open");
        return false;
    }
    archive_entry *header = nullptr;
    int rc;
    while ((rc = archive_read_next_header(a.get(), &header)) == ARCHIVE_OK) {
        Entry e = entryOf(header);
        bool damaged = false;
        const ReadData readData = [&](const Sink &sink) {
            damaged = !readEntryData(a.get(), &e, tar.size(), sink, error);
            return !damaged;
        };
        if (!visit(e, readData) || damaged)
            return false;
    }
    if (rc != ARCHIVE_EOF) {
        setError(error, a.get(), "tar read");
        return false;
    }
    return true;
}

QList<TarArchive::Entry> TarArchive::unpack(const QByteArray &tar, qint64 maxTotalBytes,
                                            QString *error, qint64 maxFileBytes,
                                            QList<Entry> *skipped)
{
    QList<Entry> entries;
    qint64 total = 0;
    read(
        tar,
        [&](Entry &e, const ReadData &readData) {
            if (e.type != Entry::Type::File && e.type != Entry::Type::Directory) {
                if (skipped)
                    skipped->append(std::move(e));
                return true;
            }
            if (!e.isDirectory) {
                if (maxFileBytes >= 0 && e.size > maxFileBytes) {
                    e.omitted = true;
                    entries.append(std::move(e));
                    return true;
                }
                if (e.size < 0 || e.size > maxTotalBytes - total) { // no overflow near the maximum
                    if (error)
                        *error =
                            QStringLiteral("archive content exceeds %1 bytes").arg(maxTotalBytes);
                    return false;
                }
                total += e.size;
                if (!readData(nullptr))
                    return false;
            }
            entries.append(std::move(e));
            return true;
        },
        error);
    return entries;
}
