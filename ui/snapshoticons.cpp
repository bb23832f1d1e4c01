#include "snapshoticons.h"

#include <QHash>
#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

namespace {
// A filled dot at `at`, and around it, for the step a session is at, a ring.
void drawDot(QPainter &p, const QColor &c, QPointF at, qreal radius, bool current, qreal ring,
             qreal ringWidth)
{
    p.setPen(Qt::NoPen);
    p.setBrush(c);
    p.drawEllipse(at, radius, radius);
    if (!current)
        return;
    p.setPen(QPen(c, ringWidth));
    p.setBrush(Qt::NoBrush);
    p.drawEllipse(at, ring, ring);
}

QPixmap drawMark(SnapshotIcons::Kind kind, bool current, int size)
{
    QPixmap pixmap(size, size);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setRenderHint(QPainter::Antialiasing);
    const QColor c = SnapshotIcons::color(kind);
    const qreal s = size;
    if (kind == SnapshotIcons::Kind::Branch || kind == SnapshotIcons::Kind::Fork) {
        // A line with a second one leaving it for a dot of its own, as version control draws a
        // branch.
        p.setPen(QPen(c, s * 0.11, Qt::SolidLine, Qt::RoundCap));
        p.setBrush(Qt::NoBrush);
        p.drawLine(QPointF(s * 0.30, s * 0.08), QPointF(s * 0.30, s * 0.70));
        QPainterPath arm;
        arm.moveTo(s * 0.30, s * 0.62);
        arm.cubicTo(s * 0.30, s * 0.40, s * 0.68, s * 0.50, s * 0.68, s * 0.32);
        p.drawPath(arm);
        drawDot(p, c, QPointF(s * 0.30, s * 0.78), s * 0.14, false, 0, 0);
        drawDot(p, c, QPointF(s * 0.68, s * 0.24), s * 0.14, current, s * 0.22, s * 0.07);
        return pixmap;
    }
    drawDot(p, c, QPointF(s * 0.5, s * 0.5), s * 0.22, current, s * 0.38, s * 0.09);
    return pixmap;
}
} // namespace

QIcon SnapshotIcons::icon(Kind kind, bool current)
{
    static QHash<int, QIcon> cache;
    const int key = int(kind) * 2 + (current ? 1 : 0);
    auto it = cache.find(key);
    if (it != cache.end())
        return *it;
    QIcon icon;
    for (int size : {16, 24, 32, 48})
        icon.addPixmap(drawMark(kind, current, size));
    cache.insert(key, icon);
    return icon;
}

QColor SnapshotIcons::color(Kind kind)
{
    switch (kind) {
    case Kind::Step:
    case Kind::Branch:
        return QColor(0x25, 0x7b, 0xd9);
    case Kind::Partial:
        return QColor(0xe0, 0x8a, 0x1e);
    case Kind::Fork:
        return QColor(0x8a, 0x5c, 0xc7);
    }
    return Qt::gray;
}
