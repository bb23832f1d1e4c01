#include "overviewstrip.h"

#include "runlistmodel.h"
#include "statusicons.h"

#include <QAbstractItemModel>
#include <QLocale>
#include <QPainter>
#include <algorithm>

namespace {

bool isFailure(const RunRecord &r)
{
    return r.status == RunRecord::Status::Error || r.status == RunRecord::Status::TimedOut;
}
} // namespace

OverviewStrip::OverviewStrip(RunListModel *model, QWidget *parent) : QWidget(parent), m_model(model)
{
    setObjectName(QStringLiteral("overviewStrip"));
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_tick.setInterval(kRefreshMs);
    connect(&m_tick, &QTimer::timeout, this, &OverviewStrip::refresh);
    m_tick.start();
    m_pending.setSingleShot(true);
    m_pending.setInterval(200);
    connect(&m_pending, &QTimer::timeout, this, &OverviewStrip::refresh);
    if (m_model) {
        connect(m_model, &QAbstractItemModel::rowsInserted, this, &OverviewStrip::refreshSoon);
        connect(m_model, &QAbstractItemModel::rowsRemoved, this, &OverviewStrip::refreshSoon);
        connect(m_model, &QAbstractItemModel::modelReset, this, &OverviewStrip::refreshSoon);
        connect(m_model, &QAbstractItemModel::dataChanged, this, &OverviewStrip::refreshSoon);
    }
    refresh();
}

OverviewStrip::Figures OverviewStrip::compute(const RunListModel *model, const QDateTime &now)
{
    Figures f;
    f.perMinute.fill(0, kMinutes);
    f.failedPerMinute.fill(0, kMinutes);
    if (!model)
        return f;
    QList<qint64> durations;
    const qint64 nowMs = now.toMSecsSinceEpoch();
    for (int row = 0; row < model->rowCount(); ++row) {
        const RunRecord *r = model->runAt(row);
        if (!r || !r->createdAt.isValid())
            continue;
        const qint64 ago = nowMs - r->createdAt.toMSecsSinceEpoch();
        // A run from a clock a little ahead counts as now.
        const int minute = int(qMax<qint64>(0, ago) / 60000);
        if (minute >= kMinutes)
            continue;
        const int bar = kMinutes - 1 - minute;
        ++f.perMinute[bar];
        ++f.runs;
        if (isFailure(*r)) {
            ++f.failedPerMinute[bar];
            ++f.failed;
        }
        if (r->isFinished() && r->durationMs >= 0)
            durations.append(r->durationMs);
    }
    f.finished = int(durations.size());
    if (!durations.isEmpty()) {
        // The lower median: a duration that some run really had.
        const auto mid = durations.begin() + (durations.size() - 1) / 2;
        std::nth_element(durations.begin(), mid, durations.end());
        f.p50Ms = *mid;
    }
    return f;
}

void OverviewStrip::refreshSoon()
{
    if (!m_pending.isActive())
        m_pending.start();
}

void OverviewStrip::refresh()
{
    m_pending.stop();
    m_figures = compute(m_model, QDateTime::currentDateTimeUtc());
    const int busiest = *std::max_element(m_figures.perMinute.cbegin(), m_figures.perMinute.cend());
    setToolTip(QStringLiteral("Runs per minute over the last hour (the busiest minute: %1); the "
                              "failed part of each minute in red. Failed: ended with an error "
                              "or timed out. p50: the median duration of the runs that ended.")
                   .arg(busiest));
    update();
}

QString OverviewStrip::summaryText() const
{
    const Figures &f = m_figures;
    QStringList parts;
    parts << (f.runs == 1 ? QStringLiteral("1 run") : QStringLiteral("%1 runs").arg(f.runs));
    parts << QStringLiteral("%1 failed").arg(f.failed);
    parts << (f.p50Ms >= 0 ? QStringLiteral("p50 %1").arg(RunListModel::durationText(f.p50Ms))
                           : QStringLiteral("p50 —"));
    return parts.join(QStringLiteral(" · "));
}

QSize OverviewStrip::sizeHint() const
{
    return {420, minimumSizeHint().height()};
}

QSize OverviewStrip::minimumSizeHint() const
{
    return {240, qMax(30, fontMetrics().height() * 2)};
}

void OverviewStrip::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    const QPalette &pal = palette();
    const QColor text = pal.color(QPalette::WindowText);
    QColor dim = text;
    dim.setAlphaF(0.65);
    const bool dark = pal.color(QPalette::Base).lightness() < 128;
    const QColor runColor = dark ? QColor(0x6c, 0xb0, 0xf5) : QColor(0x1f, 0x6f, 0xc8);
    QColor failColor = StatusIcons::color(RunRecord::Status::Error);
    if (dark)
        failColor = failColor.lighter(130);
    QColor baseline = text;
    baseline.setAlphaF(0.18);

    const QRect r = rect().adjusted(2, 3, -2, -3);
    const QFontMetrics fm = fontMetrics();

    // Left: what it is; right: the figures; between: the bars.
    const QString caption = QStringLiteral("Last hour");
    const int captionW = fm.horizontalAdvance(caption) + 10;
    const QString summary = summaryText();
    const int summaryW = fm.horizontalAdvance(summary) + 12;
    p.setPen(dim);
    p.drawText(QRect(r.left(), r.top(), captionW, r.height()), Qt::AlignLeft | Qt::AlignVCenter,
               caption);
    const QRect bars(r.left() + captionW, r.top(), qMax(0, r.width() - captionW - summaryW),
                     r.height());
    p.setPen(text);
    p.drawText(QRect(bars.right() + 12, r.top(), summaryW, r.height()),
               Qt::AlignLeft | Qt::AlignVCenter, summary);

    if (bars.width() < kMinutes)
        return;
    const int busiest =
        qMax(1, *std::max_element(m_figures.perMinute.cbegin(), m_figures.perMinute.cend()));
    const double slot = double(bars.width()) / kMinutes;
    const double barW = qMax(1.0, slot - (slot >= 3 ? 1.0 : 0.0));
    p.setRenderHint(QPainter::Antialiasing, false);
    p.fillRect(QRectF(bars.left(), bars.bottom(), bars.width(), 1), baseline);
    for (int i = 0; i < kMinutes; ++i) {
        const int n = m_figures.perMinute.at(i);
        if (n == 0)
            continue;
        const double x = bars.left() + i * slot;
        // At least 2 px, so that a single run in a busy hour still shows.
        const double h = qMax(2.0, double(bars.height()) * n / busiest);
        const double failedH = h * m_figures.failedPerMinute.at(i) / n;
        p.fillRect(QRectF(x, bars.bottom() + 1 - h, barW, h - failedH), runColor);
        if (failedH > 0)
            p.fillRect(QRectF(x, bars.bottom() + 1 - failedH, barW, failedH), failColor);
    }
}
