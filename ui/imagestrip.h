#pragma once

#include "executionresult.h"

#include <QImage>
#include <QList>
#include <QWidget>

class QLabel;
class QListWidget;
class QListWidgetItem;
class QPushButton;

// The files a run returned: figures and other images as a row of thumbnails, everything else
// (and anything left out for size) in a compact list beside a Save button. Activating a
// thumbnail opens it at full size; activating a listed file saves it.
class ImageStrip : public QWidget
{
    Q_OBJECT
public:
    explicit ImageStrip(QWidget *parent = nullptr);

    void setFiles(const QList<OutputFile> &files);
    const QList<OutputFile> &files() const { return m_files; }
    int imageCount() const;
    int listedFileCount() const; // the files that are not thumbnails

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    QListWidget *createThumbnails();
    void connectLists();
    void openImage(int index);
    void showPreview(int index); // the image at `index` into m_files, large; -1 hides it
    void updatePreview();
    void saveCurrent();
    void showContextMenu(QListWidget *list, const QPoint &pos);
    void updateSaveButton();
    int currentIndex() const; // into m_files; -1 when nothing is selected
    static int indexOf(const QListWidgetItem *item);

    QList<OutputFile> m_files;
    QListWidget *m_thumbnails = nullptr;
    QListWidget *m_fileList = nullptr;
    QPushButton *m_saveButton = nullptr;
    // The selected image, as large as the tab allows (never enlarged).
    QLabel *m_preview = nullptr;
    QImage m_previewImage;
};
