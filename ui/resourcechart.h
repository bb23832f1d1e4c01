#pragma once

#include "journalevent.h"

#include <QList>
#include <QPointF>
#include <QWidget>

class QPainter;

// The selected run's memory and CPU over time, side by side: memory in MiB against the run's
// memory limit, CPU in % of one core from the differences of CPU time between samples. Painted
// here (no chart library): two small panels, readable in light and dark palettes.
class ResourceChart : public QWidget
{
    Q_OBJECT
public:
    explicit ResourceChart(QWidget *parent = nullptr);

    // The run's limits (0: not known).
    void setLimits(qint64 memoryBytes, double cpus);
    void setSamples(const QList<UsageSample> &samples);
    // The run ended after `durationMs`: the time axis ends there. -1 while it runs.
    void setEnd(qint64 durationMs);
    void clear();

    const QList<UsageSample> &samples() const { return m_samples; }
    qint64 memoryLimit() const { return m_memoryLimit; }
    // CPU use between consecutive samples: x the elapsed ms at the end of each span, y the %
    // of one core over it.
    QList<QPointF> cpuPercent() const;
    // The top of each panel's scale, as drawn.
    qint64 memoryScaleBytes() const;
    double cpuScalePercent() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;
    void changeEvent(QEvent *event) override;

private:
    struct Series;
    struct PanelStyle;
    // One panel: its title line, scale, time axis and series. The parts are static, drawn only
    // from what they are given, so each can be read on its own.
    void paintPanel(QPainter &p, const QRectF &area, const Series &series) const;
    PanelStyle panelStyle() const;
    // Returns the title line's height.
    static double paintTitle(QPainter &p, const QRectF &area, const Series &series,
                             const PanelStyle &style);
    static void paintScale(QPainter &p, const QRectF &area, const QRectF &plot, double labelW,
                           const Series &series, const PanelStyle &style);
    static void paintTimeAxis(QPainter &p, const QRectF &area, const QRectF &plot, double span,
                              const PanelStyle &style);
    static void paintSeries(QPainter &p, const QRectF &plot, double span, const Series &series,
                            const PanelStyle &style);
    qint64 spanMs() const;
    void updateToolTip();

    QList<UsageSample> m_samples;
    qint64 m_memoryLimit = 0;
    double m_cpus = 0;
    qint64 m_durationMs = -1;
};
