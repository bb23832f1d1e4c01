#include "statusicons.h"

#include <QHash>
#include <QPainter>
#include <QPainterPath>
#include <QPixmap>

namespace {
QPixmap draw(RunRecord::Status status, int size)
{
    QPixmap pixmap(size, size);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setRenderHint(QPainter::Antialiasing);
    const QColor c = StatusIcons::color(status);
    const qreal s = size;
    const QRectF circle(s * 0.08, s * 0.08, s * 0.84, s * 0.84);
    QPen mark(Qt::white, s * 0.12, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin);
    switch (status) {
    case RunRecord::Status::Queued:
        p.setPen(QPen(c, s * 0.1));
        p.setBrush(Qt::NoBrush);
        p.drawEllipse(circle.adjusted(s * 0.05, s * 0.05, -s * 0.05, -s * 0.05));
        break;
    case RunRecord::Status::Running: {
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawEllipse(circle);
        QPainterPath play;
        play.moveTo(s * 0.40, s * 0.30);
        play.lineTo(s * 0.72, s * 0.50);
        play.lineTo(s * 0.40, s * 0.70);
        play.closeSubpath();
        p.setBrush(Qt::white);
        p.drawPath(play);
        break;
    }
    case RunRecord::Status::Ok:
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawEllipse(circle);
        p.setPen(mark);
        p.drawPolyline(QPolygonF{{s * 0.30, s * 0.52}, {s * 0.45, s * 0.66}, {s * 0.71, s * 0.36}});
        break;
    case RunRecord::Status::Error:
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawEllipse(circle);
        p.setPen(mark);
        p.drawLine(QPointF(s * 0.34, s * 0.34), QPointF(s * 0.66, s * 0.66));
        p.drawLine(QPointF(s * 0.66, s * 0.34), QPointF(s * 0.34, s * 0.66));
        break;
    case RunRecord::Status::TimedOut:
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawEllipse(circle);
        p.setPen(mark);
        p.drawPolyline(QPolygonF{{s * 0.50, s * 0.26}, {s * 0.50, s * 0.52}, {s * 0.68, s * 0.62}});
        break;
    case RunRecord::Status::Cancelled:
        p.setPen(Qt::NoPen);
        p.setBrush(c);
        p.drawEllipse(circle);
        p.setPen(mark);
        p.drawLine(QPointF(s * 0.30, s * 0.50), QPointF(s * 0.70, s * 0.50));
        break;
    }
    return pixmap;
}
} // namespace

QIcon StatusIcons::icon(RunRecord::Status status)
{
    static QHash<int, QIcon> cache;
    auto it = cache.find(int(status));
    if (it != cache.end())
        return *it;
    QIcon icon;
    for (int size : {16, 24, 32, 48})
        icon.addPixmap(draw(status, size));
    cache.insert(int(status), icon);
    return icon;
}

QColor StatusIcons::color(RunRecord::Status status)
{
    switch (status) {
    case RunRecord::Status::Queued:
        return QColor(0x8a, 0x93, 0x9e);
    case RunRecord::Status::Running:
        return QColor(0x25, 0x7b, 0xd9);
    case RunRecord::Status::Ok:
        return QColor(0x2e, 0x9d, 0x57);
    case RunRecord::Status::Error:
        return QColor(0xd6, 0x3b, 0x3b);
    case RunRecord::Status::TimedOut:
        return QColor(0xe0, 0x8a, 0x1e);
    case RunRecord::Status::Cancelled:
        return QColor(0x6b, 0x72, 0x7c);
    }
    return Qt::gray;
}

QString StatusIcons::label(RunRecord::Status status)
{
    switch (status) {
    case RunRecord::Status::Queued:
        return QStringLiteral("Queued");
    case RunRecord::Status::Running:
        return QStringLiteral("Running");
    case RunRecord::Status::Ok:
        return QStringLiteral("OK");
    case RunRecord::Status::Error:
        return QStringLiteral("Error");
    case RunRecord::Status::TimedOut:
        return QStringLiteral("Timed out");
    case RunRecord::Status::Cancelled:
        return QStringLiteral("Cancelled");
    }
    return QString();
}

QIcon StatusIcons::dot(bool good)
{
    QPixmap pixmap(12, 12);
    pixmap.fill(Qt::transparent);
    QPainter p(&pixmap);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(Qt::NoPen);
    p.setBrush(color(good ? RunRecord::Status::Ok : RunRecord::Status::Error));
    p.drawEllipse(QRectF(1, 1, 10, 10));
    return QIcon(pixmap);
}
