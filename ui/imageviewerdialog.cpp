#include "imageviewerdialog.h"

#include "plaintext.h"
#include "safeimage.h"

#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QMimeDatabase>
#include <QPixmap>
#include <QPushButton>
#include <QSaveFile>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QStandardPaths>
#include <QVBoxLayout>

ImageViewerDialog::ImageViewerDialog(const OutputFile &file, QWidget *parent)
    : QDialog(parent), m_file(file)
{
    setWindowTitle(file.name);
    setObjectName(QStringLiteral("imageViewerDialog"));

    QString whyNot;
    const QImage image = SafeImage::decode(file, &whyNot);

    auto *imageLabel = new QLabel;
    imageLabel->setObjectName(QStringLiteral("imageLabel"));
    imageLabel->setAlignment(Qt::AlignCenter);
    imageLabel->setTextFormat(Qt::PlainText);
    if (image.isNull())
        imageLabel->setText(tr("This image cannot be shown: %1.").arg(whyNot));
    else
        imageLabel->setPixmap(QPixmap::fromImage(image));

    auto *scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("imageScroll"));
    // A mid tone, not the window colour: a white figure's edges stay visible, and so does dark
    // text on a transparent one.
    scroll->setBackgroundRole(QPalette::Mid);
    scroll->setAlignment(Qt::AlignCenter);
    scroll->setWidget(imageLabel);

    QString details = QLocale().formattedDataSize(file.size > 0 ? file.size : file.data.size());
    if (!image.isNull())
        details = tr("%1 × %2 px · %3").arg(image.width()).arg(image.height()).arg(details);
    QLabel *info = PlainText::label(details, this);
    info->setObjectName(QStringLiteral("imageInfo"));
    info->setForegroundRole(QPalette::PlaceholderText);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    QPushButton *save = buttons->addButton(tr("Save…"), QDialogButtonBox::ActionRole);
    save->setObjectName(QStringLiteral("saveButton"));
    connect(save, &QPushButton::clicked, this, [this] { saveFile(m_file, this); });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *bottom = new QHBoxLayout;
    bottom->addWidget(info);
    bottom->addStretch(1);
    bottom->addWidget(buttons);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(scroll, 1);
    layout->addLayout(bottom);

    // Big enough for the whole image where the screen allows, never more than most of it.
    const QScreen *screen = parent ? parent->screen() : QGuiApplication::primaryScreen();
    const QSize available = screen ? screen->availableGeometry().size() * 0.85 : QSize(1024, 768);
    const QSize chrome(
        2 * scroll->frameWidth() + layout->contentsMargins().left() +
            layout->contentsMargins().right() + scroll->verticalScrollBar()->sizeHint().width(),
        2 * scroll->frameWidth() + layout->contentsMargins().top() +
            layout->contentsMargins().bottom() + layout->spacing() + bottom->sizeHint().height() +
            scroll->horizontalScrollBar()->sizeHint().height());
    const QSize wanted = (image.isNull() ? QSize(320, 160) : image.size()) + chrome;
    resize(wanted.expandedTo(QSize(360, 240)).boundedTo(available));
}

bool ImageViewerDialog::saveFile(const OutputFile &file, QWidget *parent)
{
    if (!file.included)
        return false;
    // The last folder used, for the next figure of the same session.
    static QString lastDir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
    const QString fileName = QFileInfo(file.name).fileName();

    QStringList filters;
    const QMimeType mime = QMimeDatabase().mimeTypeForName(file.mimeType);
    if (mime.isValid() && !mime.globPatterns().isEmpty())
        filters.append(mime.filterString());
    filters.append(QObject::tr("All files (*)"));

    const QString path = QFileDialog::getSaveFileName(parent, QObject::tr("Save %1").arg(fileName),
                                                      QDir(lastDir).filePath(fileName),
                                                      filters.join(QStringLiteral(";;")));
    if (path.isEmpty())
        return false;
    lastDir = QFileInfo(path).absolutePath();

    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly) || out.write(file.data) != file.data.size() ||
        !out.commit()) {
        // The path ends in the program's file name: plain text, not a message box's guess.
        QMessageBox box(QMessageBox::Warning, QObject::tr("Save"),
                        QObject::tr("Could not save %1:\n%2").arg(path, out.errorString()),
                        QMessageBox::Ok, parent);
        box.setTextFormat(Qt::PlainText);
        box.exec();
        return false;
    }
    return true;
}
