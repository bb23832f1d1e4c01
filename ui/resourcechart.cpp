#include "resourcechart.h"

#include <QEvent>
#include <QLocale>
#include <QPainter>
#include <QPainterPath>
#include <QPolygonF>
#include <cmath>
#include <functional>

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
// The shortest time axis: a run seen at its first samples does not fill the panel at once.
constexpr qint64 kMinSpanMs = 5000;
// The lowest memory scale, so that a few MiB do not look like a full sandbox.
constexpr qint64 kMinMemoryScale = 16 * 1024 * 1024;

QString mibText(double bytes)
{
    const double mib = bytes / kMiB;
    return QLocale().toString(mib, 'f', mib < 100 ? 1 : 0) + QStringLiteral(" MiB");
}

QString secondsText(qint64 ms)
{
    const qint64 s = ms / 1000;
    if (s < 60)
        return QStringLiteral("%1 s").arg(s);
    if (s % 60 == 0)
        return QStringLiteral("%1 min").arg(s / 60);
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

// Seconds between time labels: at most four spans on the axis.
qint64 tickMs(qint64 spanMs)
{
    static const int steps[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200};
    for (int s : steps) {
        if (spanMs / (s * 1000) <= 4)
            return s * 1000;
    }
    return 14400 * 1000;
}

bool isDark(const QPalette &palette)
{
    return palette.color(QPalette::Base).lightness() < 128;
}
} // namespace

struct ResourceChart::Series
{
    QString title;
    QString summary;
    QColor color;
    QPolygonF line; // x in ms, y in the scale's unit
    double top = 1;
    std::function<QString(double)> label;
    bool limitAtTop = false; // the scale's top is the run's limit: drawn as such
    QString empty;           // shown while there is too little to draw
};

ResourceChart::ResourceChart(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("resourceChart"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setAttribute(Qt::WA_OpaquePaintEvent, false);
}

void ResourceChart::setLimits(qint64 memoryBytes, double cpus)
{
    m_memoryLimit = qMax<qint64>(0, memoryBytes);
    m_cpus = qMax(0.0, cpus);
    updateToolTip();
    update();
}

void ResourceChart::setSamples(const QList<UsageSample> &samples)
{
    m_samples = samples;
    updateToolTip();
    update();
}

void ResourceChart::setEnd(qint64 durationMs)
{
    m_durationMs = durationMs;
    update();
}

void ResourceChart::clear()
{
    m_samples.clear();
    m_memoryLimit = 0;
    m_cpus = 0;
    m_durationMs = -1;
    updateToolTip();
    update();
}

QList<QPointF> ResourceChart::cpuPercent() const
{
    QList<QPointF> out;
    for (int i = 1; i < m_samples.size(); ++i) {
        const UsageSample &a = m_samples.at(i - 1);
        const UsageSample &b = m_samples.at(i);
        const qint64 dt = b.elapsedMs - a.elapsedMs;
        if (dt <= 0)
            continue;
        // CPU time never goes back; a sandbox that did (a restarted container) counts as idle.
        const qint64 dc = qMax<qint64>(0, b.cpuTimeMs - a.cpuTimeMs);
        out.append(QPointF(double(b.elapsedMs), 100.0 * double(dc) / double(dt)));
    }
    return out;
}

qint64 ResourceChart::memoryScaleBytes() const
{
    qint64 highest = 0;
    for (const UsageSample &s : m_samples)
        highest = qMax(highest, s.memoryBytes);
    // Powers of two MiB, with room above the highest reading, never past the limit: a run near
    // its limit is drawn against it.
    qint64 top = kMinMemoryScale;
    while (top < highest + highest / 4 && top < (qint64(1) << 50))
        top *= 2;
    if (m_memoryLimit > 0 && (top > m_memoryLimit || highest > m_memoryLimit / 2))
        top = qMax(m_memoryLimit, highest);
    return top;
}

double ResourceChart::cpuScalePercent() const
{
    // The run's CPUs, in % of one core; more only if the readings went past it (a reading's
    // span is measured here, the CPU time there, so it can overshoot a little).
    double top = m_cpus > 0 ? 100.0 * m_cpus : 100.0;
    double highest = 0;
    for (const QPointF &p : cpuPercent())
        highest = qMax(highest, p.y());
    while (highest > top * 1.05)
        top += 100.0;
    return top;
}

qint64 ResourceChart::spanMs() const
{
    qint64 last = m_samples.isEmpty() ? 0 : m_samples.last().elapsedMs;
    if (m_durationMs >= 0)
        last = qMax(last, m_durationMs);
    return qMax(kMinSpanMs, last);
}

QSize ResourceChart::sizeHint() const
{
    return {560, minimumSizeHint().height()};
}

QSize ResourceChart::minimumSizeHint() const
{
    const int line = fontMetrics().height();
    return {320, line * 2 + 84};
}

void ResourceChart::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::FontChange)
        update();
    QWidget::changeEvent(event);
}

void ResourceChart::updateToolTip()
{
    if (m_samples.isEmpty()) {
        setToolTip(QString());
        return;
    }
    const UsageSample &last = m_samples.last();
    setToolTip(QStringLiteral("%1 samples of the sandbox's cgroup over %2; last: %3 in use")
                   .arg(m_samples.size())
                   .arg(secondsText(last.elapsedMs))
                   .arg(mibText(double(last.memoryBytes))));
}

void ResourceChart::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const bool dark = isDark(palette());

    Series memory;
    memory.title = QStringLiteral("Memory");
    memory.color = dark ? QColor(0x6c, 0xb0, 0xf5) : QColor(0x1f, 0x6f, 0xc8);
    memory.top = double(memoryScaleBytes());
    memory.limitAtTop = m_memoryLimit > 0 && qint64(memory.top) == m_memoryLimit;
    memory.label = [](double v) { return mibText(v); };
    memory.empty = QStringLiteral("waiting for the first reading");
    qint64 highest = -1;
    for (const UsageSample &s : m_samples) {
        memory.line.append(QPointF(double(s.elapsedMs), double(s.memoryBytes)));
        highest = qMax(highest, s.memoryBytes);
    }
    if (!m_samples.isEmpty()) {
        QStringList parts;
        if (m_durationMs < 0)
            parts << QStringLiteral("now %1").arg(mibText(double(m_samples.last().memoryBytes)));
        parts << QStringLiteral("highest %1").arg(mibText(double(highest)));
        if (m_memoryLimit > 0)
            parts << QStringLiteral("limit %1").arg(mibText(double(m_memoryLimit)));
        memory.summary = parts.join(QStringLiteral(" · "));
    }

    Series cpu;
    cpu.title = QStringLiteral("CPU");
    cpu.color = dark ? QColor(0xf5, 0xa6, 0x4a) : QColor(0xc2, 0x6a, 0x00);
    cpu.top = cpuScalePercent();
    cpu.limitAtTop = m_cpus > 0 && qFuzzyCompare(cpu.top, 100.0 * m_cpus);
    cpu.label = [](double v) { return QStringLiteral("%1 %").arg(qRound(v)); };
    cpu.empty = m_samples.isEmpty() ? memory.empty : QStringLiteral("measuring (two readings)");
    // Each rate holds over the span it was measured on: steps, not a slope.
    const QList<QPointF> rates = cpuPercent();
    for (int i = 0; i < rates.size(); ++i) {
        const double from = i == 0 ? double(m_samples.first().elapsedMs) : rates.at(i - 1).x();
        cpu.line.append(QPointF(from, rates.at(i).y()));
        cpu.line.append(rates.at(i));
    }
    if (!rates.isEmpty()) {
        const UsageSample &first = m_samples.first();
        const UsageSample &last = m_samples.last();
        const double mean = 100.0 * double(qMax<qint64>(0, last.cpuTimeMs - first.cpuTimeMs)) /
                            double(qMax<qint64>(1, last.elapsedMs - first.elapsedMs));
        QStringList parts;
        if (m_durationMs < 0)
            parts << QStringLiteral("now %1 %").arg(qRound(rates.last().y()));
        parts << QStringLiteral("mean %1 % of one core").arg(qRound(mean));
        if (m_cpus > 0)
            parts << QStringLiteral("limit %1 CPU").arg(QLocale().toString(m_cpus));
        cpu.summary = parts.join(QStringLiteral(" · "));
    }

    const QRectF all = QRectF(rect()).adjusted(1, 1, -1, -1);
    const double gap = 16;
    const double half = (all.width() - gap) / 2;
    paintPanel(p, QRectF(all.left(), all.top(), half, all.height()), memory);
    paintPanel(p, QRectF(all.left() + half + gap, all.top(), half, all.height()), cpu);
}

// What every part of a panel is drawn with, taken from the widget once per panel so that the
// parts below agree (and follow a palette or font change).
struct ResourceChart::PanelStyle
{
    QPalette palette;
    QColor dim;  // figures and labels: softer than the text
    QColor grid; // scale and time lines: faint, the series stays what stands out
    QFont small;
    QFont bold;
};

ResourceChart::PanelStyle ResourceChart::panelStyle() const
{
    PanelStyle style;
    style.palette = palette();
    const QColor text = style.palette.color(QPalette::WindowText);
    style.dim = style.palette.color(QPalette::PlaceholderText);
    // Some styles give no usable placeholder colour: the text, faded, then.
    if (style.dim.alpha() < 255 || style.dim == text)
        style.dim = QColor::fromRgbF(text.redF(), text.greenF(), text.blueF(), 0.65);
    style.grid = text;
    style.grid.setAlphaF(0.14);
    style.small = font();
    style.small.setPointSizeF(style.small.pointSizeF() * 0.85);
    style.bold = font();
    style.bold.setBold(true);
    return style;
}

void ResourceChart::paintPanel(QPainter &p, const QRectF &area, const Series &series) const
{
    const PanelStyle style = panelStyle();
    const QFontMetricsF fm(style.small);
    const double titleH = paintTitle(p, area, series, style);

    // Plot: labels of the scale on the left, of time below.
    const double labelW = qMax(fm.horizontalAdvance(series.label(series.top)),
                               fm.horizontalAdvance(QLatin1Char('0'))) +
                          6;
    const QRectF plot(area.left() + labelW, area.top() + titleH + 6, area.width() - labelW - 4,
                      area.height() - titleH - 6 - fm.height() - 4);
    if (plot.width() < 20 || plot.height() < 20)
        return;
    const double span = double(spanMs());

    p.setPen(Qt::NoPen);
    p.setBrush(style.palette.color(QPalette::Base));
    p.drawRect(plot);
    p.setBrush(Qt::NoBrush);

    paintScale(p, area, plot, labelW, series, style);
    paintTimeAxis(p, area, plot, span, style);
    p.setPen(QPen(style.grid, 1));
    p.drawRect(plot);
    paintSeries(p, plot, span, series, style);
}

double ResourceChart::paintTitle(QPainter &p, const QRectF &area, const Series &series,
                                 const PanelStyle &style)
{
    // Title line: the name in bold, then the figures (elided: the name matters more).
    const QFontMetricsF fm(style.small);
    const QFontMetricsF bfm(style.bold);
    p.setFont(style.bold);
    p.setPen(series.color);
    const double titleH = bfm.height();
    p.drawText(QPointF(area.left(), area.top() + bfm.ascent()), series.title);
    p.setFont(style.small);
    p.setPen(style.dim);
    const double titleW = bfm.horizontalAdvance(series.title) + 8;
    p.drawText(QRectF(area.left() + titleW, area.top(), area.width() - titleW, titleH),
               Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(series.summary, Qt::ElideRight, area.width() - titleW));
    return titleH;
}

void ResourceChart::paintScale(QPainter &p, const QRectF &area, const QRectF &plot, double labelW,
                               const Series &series, const PanelStyle &style)
{
    // Scale: 0, half and top, each with its label.
    const QFontMetricsF fm(style.small);
    p.setFont(style.small);
    for (const double f : {0.0, 0.5, 1.0}) {
        const double y = plot.bottom() - f * plot.height();
        p.setPen(QPen(style.grid, 1));
        p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y));
        p.setPen(style.dim);
        const QString label = f == 0.0 ? QStringLiteral("0") : series.label(series.top * f);
        // The ends inside the plot's height, so that the 0 stays clear of the time labels.
        const double top = f == 0.0 ? y - fm.height() : f == 1.0 ? y : y - fm.height() / 2;
        p.drawText(QRectF(area.left(), top, labelW - 4, fm.height()),
                   Qt::AlignRight | Qt::AlignVCenter, label);
    }
    if (series.limitAtTop) {
        const QColor limit =
            isDark(style.palette) ? QColor(0xf0, 0x70, 0x70) : QColor(0xc6, 0x28, 0x28);
        p.setPen(QPen(limit, 1.2, Qt::DashLine));
        p.drawLine(QPointF(plot.left(), plot.top()), QPointF(plot.right(), plot.top()));
        p.drawText(QRectF(plot.left(), plot.top() + 1, plot.width() - 4, fm.height()),
                   Qt::AlignRight | Qt::AlignTop, QStringLiteral("limit"));
    }
}

void ResourceChart::paintTimeAxis(QPainter &p, const QRectF &area, const QRectF &plot, double span,
                                  const PanelStyle &style)
{
    // Time: from the program's start to now (or its end).
    const QFontMetricsF fm(style.small);
    const qint64 tick = tickMs(qint64(span));
    for (qint64 t = 0; t <= qint64(span); t += tick) {
        const double x = plot.left() + double(t) / span * plot.width();
        p.setPen(QPen(style.grid, 1));
        if (t > 0)
            p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
        p.setPen(style.dim);
        const QString label = secondsText(t);
        const double w = fm.horizontalAdvance(label);
        const double left = qBound(area.left(), x - w / 2, plot.right() - w);
        p.drawText(QPointF(left, plot.bottom() + 2 + fm.ascent()), label);
    }
}

void ResourceChart::paintSeries(QPainter &p, const QRectF &plot, double span, const Series &series,
                                const PanelStyle &style)
{
    if (series.line.isEmpty()) {
        p.setPen(style.dim);
        p.drawText(plot, Qt::AlignCenter, series.empty);
        return;
    }
    QPolygonF line;
    for (const QPointF &v : series.line)
        line.append(QPointF(plot.left() + v.x() / span * plot.width(),
                            plot.bottom() - qBound(0.0, v.y() / series.top, 1.0) * plot.height()));
    // One reading is a point, not a line.
    if (line.size() == 1) {
        p.setPen(Qt::NoPen);
        p.setBrush(series.color);
        p.drawEllipse(line.first(), 3, 3);
        return;
    }
    // The area under the line, lightly, then the line.
    QPainterPath fill;
    fill.moveTo(line.first().x(), plot.bottom());
    for (const QPointF &pt : line)
        fill.lineTo(pt);
    fill.lineTo(line.last().x(), plot.bottom());
    fill.closeSubpath();
    QColor under = series.color;
    under.setAlphaF(0.22);
    p.setPen(Qt::NoPen);
    p.setBrush(under);
    p.drawPath(fill);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(series.color, 2, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    p.drawPolyline(line);
}
