#pragma once

#include "executionresult.h"

#include <QDialog>

// One image a run returned, at full size in a scrolling view, with a way to save it.
class ImageViewerDialog : public QDialog
{
    Q_OBJECT
public:
    explicit ImageViewerDialog(const OutputFile &file, QWidget *parent = nullptr);

    // Asks where to put `file` (its own name proposed) and writes it; false when the user
    // cancelled, or the write failed and the user was told.
    static bool saveFile(const OutputFile &file, QWidget *parent);

private:
    OutputFile m_file;
};
