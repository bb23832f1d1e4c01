#pragma once

#include "runrecord.h"

#include <QColor>
#include <QIcon>

// Icons and colours for a run's status, drawn rather than shipped so they follow the palette's
// scale on any screen and need no image plugin.
class StatusIcons
{
public:
    static QIcon icon(RunRecord::Status status);
    static QColor color(RunRecord::Status status);
    // "Queued", "Running", "OK", "Error", "Timed out", "Cancelled".
    static QString label(RunRecord::Status status);
    // A dot for the engine and server indicators: green when fine, red when not.
    static QIcon dot(bool good);
};
