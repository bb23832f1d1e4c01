#pragma once

#include <QByteArray>
#include <QImage>
#include <QString>

struct OutputFile;

// Decodes the images a sandboxed program wrote, which are untrusted: only PNG, JPEG and GIF, by
// the format the file's name says (never detected from the bytes, so no other image plugin ever
// sees them), and with an allocation limit checked against the header before any pixel is
// decoded. Anything else is shown as a file, not decoded.
class SafeImage
{
public:
    // Decoded images may take this much memory (QImageReader::setAllocationLimit, in MiB): a
    // 4096 × 8192 RGBA image, over four times a 4K screen.
    static constexpr int kAllocationLimitMiB = 128;

    // "png", "jpeg" or "gif" for a name with that extension (any case); empty for anything else.
    static QByteArray formatFor(const QString &fileName);
    // The image, or a null one with the reason in `why` (not an allowed format, not that format,
    // too large, or left out of the run's files).
    static QImage decode(const OutputFile &file, QString *why = nullptr);
    static QImage decode(const QString &fileName, const QByteArray &data, QString *why = nullptr);
};
