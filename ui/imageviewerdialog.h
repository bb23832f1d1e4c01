#pragma once

#include "executionresult.h"

#include <QDialog>

// One image a run returned, at full size in a scrolling view, with a way to save it.
class ImageViewerDialog : public QDialog
{
    Q_OBJECT
public:
    explicit ImageViewerDialog(const OutputFile &file, QWidget *parent = nullptr);

private:
    OutputFile m_file;
};
