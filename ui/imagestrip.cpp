#include "imagestrip.h"

#include "imageviewerdialog.h"
#include "plaintext.h"
#include "safeimage.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QListWidget>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QMimeDatabase>
#include <QPainter>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollBar>
#include <QStandardPaths>
#include <QStyle>
#include <QVBoxLayout>

namespace {

constexpr int kThumbnailSize = 88;
constexpr int kIndexRole = Qt::UserRole;

// Every thumbnail on a canvas of the same size, so the row lines up whatever the aspect
// ratios, with a hairline frame that keeps a white figure apart from a white view.
QPixmap thumbnailFor(const QImage &image, const QColor &frame)
{
    QPixmap canvas(kThumbnailSize, kThumbnailSize);
    canvas.fill(Qt::transparent);
    QImage scaled = image;
    if (image.width() > kThumbnailSize || image.height() > kThumbnailSize)
        scaled = image.scaled(kThumbnailSize - 2, kThumbnailSize - 2, Qt::KeepAspectRatio,
                              Qt::SmoothTransformation);
    const QRect target(
        QPoint((kThumbnailSize - scaled.width()) / 2, (kThumbnailSize - scaled.height()) / 2),
        scaled.size());
    QPainter painter(&canvas);
    painter.drawImage(target, scaled);
    painter.setPen(frame);
    painter.drawRect(target.adjusted(-1, -1, 0, 0));
    return canvas;
}

QString sizeText(const OutputFile &file)
{
    return QLocale().formattedDataSize(file.size > 0 ? file.size : file.data.size());
}

} // namespace

ImageStrip::ImageStrip(QWidget *parent) : QWidget(parent)
{
    m_thumbnails = createThumbnails();

    m_fileList = new QListWidget(this);
    m_fileList->setObjectName(QStringLiteral("fileList"));
    m_fileList->setUniformItemSizes(true);
    m_fileList->setTextElideMode(Qt::ElideMiddle);

    m_saveButton = new QPushButton(tr("Save…"), this);
    m_saveButton->setObjectName(QStringLiteral("saveButton"));
    m_saveButton->setToolTip(tr("Save the selected file"));

    connectLists();

    m_preview = new QLabel(this);
    m_preview->setObjectName(QStringLiteral("preview"));
    m_preview->setAlignment(Qt::AlignCenter);
    m_preview->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
    m_preview->setMinimumHeight(120);
    connect(m_thumbnails, &QListWidget::currentItemChanged, this, [this](QListWidgetItem *current) {
        if (current)
            showPreview(indexOf(current));
    });

    auto *lists = new QVBoxLayout;
    lists->setContentsMargins(0, 0, 0, 0);
    lists->addWidget(m_thumbnails);
    lists->addWidget(m_preview, 1);
    lists->addWidget(m_fileList);
    lists->addStretch(0);

    auto *side = new QVBoxLayout;
    side->setContentsMargins(0, 0, 0, 0);
    side->addWidget(m_saveButton);
    side->addStretch(1);

    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(lists, 1);
    layout->addLayout(side);

    setFiles({});
}

// One row of image thumbnails, scrolled sideways; the other files go to the list below it.
QListWidget *ImageStrip::createThumbnails()
{
    auto *thumbnails = new QListWidget(this);
    thumbnails->setObjectName(QStringLiteral("thumbnails"));
    thumbnails->setViewMode(QListView::IconMode);
    thumbnails->setFlow(QListView::LeftToRight);
    thumbnails->setWrapping(false);
    thumbnails->setMovement(QListView::Static);
    thumbnails->setResizeMode(QListView::Adjust);
    thumbnails->setDragEnabled(false);
    thumbnails->setUniformItemSizes(true);
    thumbnails->setIconSize(QSize(kThumbnailSize, kThumbnailSize));
    thumbnails->setTextElideMode(Qt::ElideMiddle);
    thumbnails->setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    thumbnails->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    const int textHeight = thumbnails->fontMetrics().height();
    thumbnails->setGridSize(QSize(kThumbnailSize + 24, kThumbnailSize + textHeight + 16));
    // One row of thumbnails and room for the horizontal scroll bar, no more.
    thumbnails->setFixedHeight(thumbnails->gridSize().height() + 2 * thumbnails->frameWidth() +
                               thumbnails->horizontalScrollBar()->sizeHint().height() + 4);
    return thumbnails;
}

// Selecting, activating and the context menu in both lists, and Save….
void ImageStrip::connectLists()
{
    for (QListWidget *list : {m_thumbnails, m_fileList}) {
        list->setSelectionMode(QAbstractItemView::SingleSelection);
        list->setContextMenuPolicy(Qt::CustomContextMenu);
        connect(list, &QWidget::customContextMenuRequested, this,
                [this, list](const QPoint &pos) { showContextMenu(list, pos); });
        // One selection across both lists, so Save… means one file.
        connect(list, &QListWidget::currentItemChanged, this,
                [this, list](QListWidgetItem *current) {
                    if (current) {
                        QListWidget *other = list == m_thumbnails ? m_fileList : m_thumbnails;
                        const QSignalBlocker blocker(other);
                        other->clearSelection();
                        other->setCurrentItem(nullptr);
                    }
                    updateSaveButton();
                });
    }
    connect(m_thumbnails, &QListWidget::itemActivated, this,
            [this](QListWidgetItem *item) { openImage(indexOf(item)); });
    connect(m_fileList, &QListWidget::itemActivated, this, [this](QListWidgetItem *item) {
        const int index = indexOf(item);
        // A copy: the dialog runs an event loop in which the strip may be given other files.
        if (index >= 0 && m_files.at(index).included)
            ImageViewerDialog::saveFile(OutputFile(m_files.at(index)), this);
    });
    connect(m_saveButton, &QPushButton::clicked, this, &ImageStrip::saveCurrent);
}

void ImageStrip::setFiles(const QList<OutputFile> &files)
{
    m_files = files;
    m_thumbnails->clear();
    m_fileList->clear();

    const QColor frame = palette().color(QPalette::Mid);
    const QIcon fileIcon = style()->standardIcon(QStyle::SP_FileIcon);
    for (int i = 0; i < m_files.size(); ++i) {
        const OutputFile &file = m_files.at(i);
        // Untrusted bytes: only the formats SafeImage allows, by the file's name.
        QString whyNot;
        const QImage image = SafeImage::decode(file, &whyNot);
        if (!image.isNull()) {
            auto *item = new QListWidgetItem(QIcon(thumbnailFor(image, frame)), file.name);
            item->setData(kIndexRole, i);
            item->setToolTip(PlainText::toolTip(tr("%1\n%2 × %3 px, %4")
                                                    .arg(file.name)
                                                    .arg(image.width())
                                                    .arg(image.height())
                                                    .arg(sizeText(file))));
            m_thumbnails->addItem(item);
            continue;
        }
        // Not an image, left out for size, or not one the window decodes.
        QString text = tr("%1 — %2").arg(file.name, sizeText(file));
        QString tip =
            file.mimeType.isEmpty() ? file.name : tr("%1 (%2)").arg(file.name, file.mimeType);
        if (file.included && file.mimeType.startsWith(u"image/"))
            tip += u'\n' + tr("Not shown as an image: %1.").arg(whyNot);
        if (!file.included) {
            text += tr(" — not included: too large");
            tip += u'\n' + tr("Over the size limit for returned files, so its content was not "
                              "kept.");
        }
        auto *item = new QListWidgetItem(fileIcon, text);
        item->setData(kIndexRole, i);
        item->setToolTip(PlainText::toolTip(tip));
        if (!file.included)
            item->setForeground(palette().brush(QPalette::Disabled, QPalette::Text));
        m_fileList->addItem(item);
    }

    m_thumbnails->setVisible(m_thumbnails->count() > 0);
    m_fileList->setVisible(m_fileList->count() > 0);
    // The first figure is shown large at once: that is what a person opens this tab for.
    showPreview(m_thumbnails->count() > 0 ? indexOf(m_thumbnails->item(0)) : -1);
    // Sized to its rows (up to five), so a single CSV does not take a tall empty box.
    const int rows = qBound(1, m_fileList->count(), 5);
    const int rowHeight = qMax(m_fileList->sizeHintForRow(0), fontMetrics().height() + 4);
    m_fileList->setFixedHeight(rows * rowHeight + 2 * m_fileList->frameWidth() + 2);
    m_saveButton->setVisible(!m_files.isEmpty());
    updateSaveButton();
}

int ImageStrip::imageCount() const
{
    return m_thumbnails->count();
}

int ImageStrip::listedFileCount() const
{
    return m_fileList->count();
}

void ImageStrip::openImage(int index)
{
    if (index < 0 || index >= m_files.size())
        return;
    // Not modal: several figures can be open side by side while runs go on.
    auto *viewer = new ImageViewerDialog(m_files.at(index), this);
    viewer->setAttribute(Qt::WA_DeleteOnClose);
    viewer->show();
}

void ImageStrip::saveCurrent()
{
    const int index = currentIndex();
    if (index >= 0)
        ImageViewerDialog::saveFile(OutputFile(m_files.at(index)), this);
}

void ImageStrip::showContextMenu(QListWidget *list, const QPoint &pos)
{
    QListWidgetItem *item = list->itemAt(pos);
    if (!item)
        return;
    list->setCurrentItem(item);
    const int index = indexOf(item);
    if (index < 0)
        return;

    // The menu runs an event loop in which the strip may be given other files: the actions work
    // on a copy of this one.
    const OutputFile file = m_files.at(index);
    QMenu menu(this);
    if (list == m_thumbnails)
        menu.addAction(tr("Open"), this, [this, file] {
            auto *viewer = new ImageViewerDialog(file, this);
            viewer->setAttribute(Qt::WA_DeleteOnClose);
            viewer->show();
        });
    QAction *save = menu.addAction(tr("Save…"), this,
                                   [this, file] { ImageViewerDialog::saveFile(file, this); });
    save->setEnabled(file.included);
    menu.exec(list->viewport()->mapToGlobal(pos));
}

void ImageStrip::updateSaveButton()
{
    const int index = currentIndex();
    m_saveButton->setEnabled(index >= 0 && m_files.at(index).included);
}

int ImageStrip::currentIndex() const
{
    for (const QListWidget *list : {m_thumbnails, m_fileList}) {
        if (const QListWidgetItem *item = list->currentItem(); item && item->isSelected())
            return indexOf(item);
    }
    return -1;
}

int ImageStrip::indexOf(const QListWidgetItem *item)
{
    return item ? item->data(kIndexRole).toInt() : -1;
}

void ImageStrip::showPreview(int index)
{
    m_previewImage = QImage();
    if (index >= 0 && index < m_files.size())
        m_previewImage = SafeImage::decode(m_files.at(index));
    m_preview->setVisible(!m_previewImage.isNull());
    m_preview->setToolTip(
        index >= 0 && !m_previewImage.isNull()
            ? PlainText::toolTip(tr("%1 — double-click the thumbnail to open it at full size")
                                     .arg(m_files.at(index).name))
            : QString());
    updatePreview();
}

void ImageStrip::updatePreview()
{
    if (m_previewImage.isNull()) {
        m_preview->clear();
        return;
    }
    const QSize room = m_preview->size() - QSize(8, 8);
    QImage shown = m_previewImage;
    if (shown.width() > room.width() || shown.height() > room.height())
        shown = shown.scaled(room.expandedTo(QSize(16, 16)), Qt::KeepAspectRatio,
                             Qt::SmoothTransformation);
    m_preview->setPixmap(QPixmap::fromImage(shown));
}

void ImageStrip::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    updatePreview();
}
