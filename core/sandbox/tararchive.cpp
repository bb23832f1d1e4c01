#include "tararchive.h"

#include <archive.h>
#include <archive_entry.h>
#include <memory>

namespace {
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

QByteArray TarArchive::pack(const QList<Entry> &entries, QString *error)
{
    QByteArray out;
    std::unique_ptr<archive, WriteDeleter> a(archive_write_new());
    archive_write_set_format_pax_restricted(a.get());
    // Keep the default 10 KiB blocking; the engine accepts any, and a small padding is harmless.
    if (archive_write_open(a.get(), &out, onOpen, onWrite, onClose) != ARCHIVE_OK) {
        setError(error, a.get(), "tar open");
        return {};
    }
    for (const Entry &e : entries) {
        std::unique_ptr<archive_entry, EntryDeleter> entry(archive_entry_new());
        // UTF-8 whatever the process's locale (a C locale would read the bytes as Latin-1, or
        // refuse them): the pax header carries the name as UTF-8.
        const QByteArray path = e.path.toUtf8();
        archive_entry_set_pathname_utf8(entry.get(), path.constData());
        archive_entry_set_filetype(entry.get(), e.isDirectory ? AE_IFDIR : AE_IFREG);
        archive_entry_set_perm(entry.get(), mode_t(e.mode));
        archive_entry_set_size(entry.get(), e.isDirectory ? 0 : e.data.size());
        archive_entry_set_uid(entry.get(), 1000);
        archive_entry_set_gid(entry.get(), 1000);
        if (archive_write_header(a.get(), entry.get()) != ARCHIVE_OK) {
            setError(error, a.get(), "tar header");
            return {};
        }
        if (!e.isDirectory && !e.data.isEmpty() &&
            archive_write_data(a.get(), e.data.constData(), size_t(e.data.size())) < 0) {
            setError(error, a.get(), "tar data");
            return {};
        }
    }
    if (archive_write_close(a.get()) != ARCHIVE_OK) {
        setError(error, a.get(), "tar close");
        return {};
    }
    return out;
}

QList<TarArchive::Entry> TarArchive::unpack(const QByteArray &tar, qint64 maxTotalBytes,
                                            QString *error, qint64 maxFileBytes)
{
    QList<Entry> entries;
    std::unique_ptr<archive, ReadDeleter> a(archive_read_new());
    archive_read_support_format_tar(a.get());
    if (archive_read_open_memory(a.get(), tar.constData(), size_t(tar.size())) != ARCHIVE_OK) {
        setError(error, a.get(), "tar open");
        return {};
    }
    qint64 total = 0;
    archive_entry *entry = nullptr;
    int rc;
    while ((rc = archive_read_next_header(a.get(), &entry)) == ARCHIVE_OK) {
        const auto type = archive_entry_filetype(entry);
        if (type != AE_IFREG && type != AE_IFDIR)
            continue;
        Entry e;
        // The name as UTF-8 where the archive says what it is (pax); else its raw bytes, read as
        // UTF-8 (what cs-run's GNU tar writes) — never through the process's locale.
        // In NFC, as libarchive writes names it converts (an NFD name would not read back the
        // same after a pack).
        const char *utf8 = archive_entry_pathname_utf8(entry);
        e.path = QString::fromUtf8(utf8 ? utf8 : archive_entry_pathname(entry))
                     .normalized(QString::NormalizationForm_C);
        while (e.path.endsWith(u'/')) // tar marks directories with a trailing slash
            e.path.chop(1);
        e.mode = int(archive_entry_perm(entry));
        e.isDirectory = type == AE_IFDIR;
        if (!e.isDirectory) {
            const la_int64_t size = archive_entry_size(entry);
            e.size = size;
            if (maxFileBytes >= 0 && size > maxFileBytes) {
                e.omitted = true;
                entries.append(std::move(e));
                continue;
            }
            if (size < 0 || size > maxTotalBytes - total) { // no overflow near the maximum
                if (error)
                    *error = QStringLiteral("archive content exceeds %1 bytes").arg(maxTotalBytes);
                return entries;
            }
            total += size;
            e.data.resize(qsizetype(size));
            if (size > 0 && archive_read_data(a.get(), e.data.data(), size_t(size)) != size) {
                setError(error, a.get(), "tar data");
                return entries;
            }
        }
        entries.append(std::move(e));
    }
    if (rc != ARCHIVE_EOF)
        setError(error, a.get(), "tar read");
    return entries;
}
