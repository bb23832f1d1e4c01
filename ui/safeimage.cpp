#include "safeimage.h"

#include "executionresult.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImageReader>

QByteArray SafeImage::formatFor(const QString &fileName)
{
    const QString suffix = QFileInfo(fileName).suffix().toLower();
    if (suffix == u"png")
        return QByteArrayLiteral("png");
    if (suffix == u"jpg" || suffix == u"jpeg")
        return QByteArrayLiteral("jpeg");
    if (suffix == u"gif")
        return QByteArrayLiteral("gif");
    return {};
}

QImage SafeImage::decode(const OutputFile &file, QString *why)
{
    if (!file.included) {
        if (why)
            *why = QStringLiteral("its content was not kept");
        return {};
    }
    return decode(file.name, file.data, why);
}

QImage SafeImage::decode(const QString &fileName, const QByteArray &data, QString *why)
{
    const auto refuse = [why](const QString &reason) {
        if (why)
            *why = reason;
        return QImage();
    };
    const QByteArray format = formatFor(fileName);
    if (format.isEmpty())
        return refuse(QStringLiteral("not a PNG, JPEG or GIF file"));

    QBuffer buffer;
    buffer.setData(data);
    buffer.open(QIODevice::ReadOnly);
    // The explicit format and no detection: bytes of another format fail here rather than reach
    // the plugin of what they really are.
    QImageReader reader(&buffer, format);
    reader.setAutoDetectImageFormat(false);
    reader.setDecideFormatFromContent(false);
    reader.setAllocationLimit(kAllocationLimitMiB);
    if (!reader.canRead())
        return refuse(QStringLiteral("not a valid %1 file").arg(QString::fromLatin1(format)));
    // The header's size, before anything is allocated: QImageReader would refuse it too (the
    // allocation limit), this says why.
    const QSize size = reader.size();
    if (size.isValid() &&
        qint64(size.width()) * size.height() * 4 > qint64(kAllocationLimitMiB) * 1024 * 1024)
        return refuse(
            QStringLiteral("too large to show (%1 × %2 px)").arg(size.width()).arg(size.height()));
    QImage image;
    if (!reader.read(&image))
        return refuse(QStringLiteral("cannot be decoded: %1").arg(reader.errorString()));
    return image;
}
