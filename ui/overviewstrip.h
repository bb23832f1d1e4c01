#pragma once

#include <QDateTime>
#include <QList>
#include <QPointer>
#include <QTimer>
#include <QWidget>

class RunListModel;

// The last hour at a glance, above the runs: runs per minute as small bars (the failed part of
// each in red), how many failed, and the median duration. Computed from the model's runs (live
// and from the history) when they change, and every 30 s as the hour moves on.
class OverviewStrip : public QWidget
{
    Q_OBJECT
public:
    explicit OverviewStrip(RunListModel *model, QWidget *parent = nullptr);

    static constexpr int kMinutes = 60;
    static constexpr int kRefreshMs = 30000;

    struct Figures
    {
        QList<int> perMinute; // kMinutes counts, oldest first: runs created in each minute
        QList<int> failedPerMinute;
        int runs = 0;      // created in the last hour
        int failed = 0;    // of those: ended with an error or timed out
        int finished = 0;  // of those: ended, with a duration
        qint64 p50Ms = -1; // median duration of those that ended; -1 without any
    };
    // The figures of `model` for the hour before `now`.
    static Figures compute(const RunListModel *model, const QDateTime &now);
    const Figures &figures() const { return m_figures; }
    // The words beside the bars, as shown.
    QString summaryText() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

public Q_SLOTS:
    void refresh();

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    void refreshSoon();

    QPointer<RunListModel> m_model;
    Figures m_figures;
    QTimer m_tick;    // the hour moves on without any run
    QTimer m_pending; // many changes at once (a burst of runs, the history) count once
};
