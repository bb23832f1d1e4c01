// TarArchive::unpack on arbitrary bytes under byte budgets: whatever the archive claims, no more
// content than the budget is read, files over the per-file cap are listed but not read, and
// what is read back packs and unpacks to the same entries.

#include "fuzzinput.h"
#include "tararchive.h"

#include <clocale>
#include <limits>

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
    // As under QCoreApplication on a UTF-8 system: libarchive converts path names through the
    // locale's character set.
    std::setlocale(LC_ALL, "C.UTF-8");
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    fuzz::Rng rng(fuzz::hash(data, size));
    // A budget the input can reach with an optional per-file cap, or the way Execution calls it:
    // no total budget but a per-file cap. Never neither, which would let a header that claims
    // terabytes allocate them.
    qint64 maxTotal = qint64(rng.below(64 * 1024));
    qint64 maxFile = rng.below(2) == 0 ? -1 : qint64(rng.below(16 * 1024));
    if (rng.below(4) == 0) {
        maxTotal = std::numeric_limits<qint64>::max();
        maxFile = qint64(rng.below(64 * 1024));
    }

    const QByteArray tar(reinterpret_cast<const char *>(data), qsizetype(size));
    QString error;
    const QList<TarArchive::Entry> entries = TarArchive::unpack(tar, maxTotal, &error, maxFile);

    qint64 total = 0;
    QList<TarArchive::Entry> files;
    for (const TarArchive::Entry &e : entries) {
        FUZZ_CHECK(!e.path.endsWith(u'/'));
        if (e.isDirectory) {
            FUZZ_CHECK(e.data.isEmpty());
            continue;
        }
        FUZZ_CHECK(e.size >= 0);
        if (e.omitted) {
            FUZZ_CHECK(maxFile >= 0 && e.size > maxFile);
            FUZZ_CHECK(e.data.isEmpty());
            continue;
        }
        FUZZ_CHECK(e.data.size() == e.size);
        total += e.size;
        if (!e.path.isEmpty())
            files.append(e);
    }
    FUZZ_CHECK(total <= maxTotal);

    // What was read packs and reads back unchanged.
    if (!files.isEmpty()) {
        QString packError;
        const QByteArray again = TarArchive::pack(files, &packError);
        FUZZ_CHECK(!again.isEmpty());
        QString unpackError;
        const QList<TarArchive::Entry> back =
            TarArchive::unpack(again, std::numeric_limits<qint64>::max(), &unpackError);
        FUZZ_CHECK(unpackError.isEmpty());
        FUZZ_CHECK(back.size() == files.size());
        for (qsizetype i = 0; i < back.size(); ++i) {
            FUZZ_CHECK(back[i].path == files[i].path);
            FUZZ_CHECK(back[i].data == files[i].data);
        }
    }
    return 0;
}
