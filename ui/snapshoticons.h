#pragma once

#include <QColor>
#include <QIcon>

// The session tree's marks for sessions' snapshots, drawn as StatusIcons are (they follow the
// screen's scale and need no image plugin): a step (a snapshot kept after a call), a step that
// kept only part of the interpreter's state, a step that branches from an older one (after a
// rewind), and a session forked from another's step. The step the live session is at now has a
// ring around it.
class SnapshotIcons
{
public:
    enum class Kind
    {
        Step,
        Partial,
        Branch,
        Fork
    };
    static QIcon icon(Kind kind, bool current = false);
    static QColor color(Kind kind);
};
