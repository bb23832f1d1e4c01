#pragma once

#include "journalevent.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QList>
#include <QSet>
#include <functional>
#include <optional>

// Every run the window knows, newest first: its own, those of headless instances (live, through
// the monitor socket) and those of the history. Fed with JournalEvents; views see rows, the
// details pane sees the records. Memory stays bounded: beyond a number of runs the oldest go,
// and the output and files of older finished runs are dropped once the history has them (they
// are loaded again when shown).
class RunListModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        TimeColumn,
        SourceColumn,
        SessionColumn, // the sandbox session a run belongs to (empty for single runs)
        LanguageColumn,
        StatusColumn,
        DurationColumn,
        ExitCodeColumn,
        ColumnCount
    };
    enum Role
    {
        RunIdRole = Qt::UserRole + 1,
        StatusRole,   // int(RunRecord::Status)
        LanguageRole, // the language name
        SearchRole,   // code, source, language, tool and output text, for the filter
        CreatedRole,  // QDateTime
    };

    explicit RunListModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    void apply(const JournalEvent &event);
    // Older runs (from the history): those not known yet are added in time order. The results
    // of a search (`searchResults`) stay in the list, however old, until the next search: the
    // limit on runs trims the oldest of the others.
    void addHistory(const QList<RunRecord> &runs, bool searchResults = false);
    // Runs of an instance that went away without saying how they ended.
    void markInstanceGone(const QString &instanceId);
    // What the window decided on a run's workspaces (WorkspaceDecisions): its record's
    // `workspaces` replaced. False for a run it does not know.
    bool setWorkspaces(const QString &id, const QJsonArray &workspaces);

    const RunRecord *run(const QString &id) const;
    const RunRecord *runAt(int row) const;
    int rowOf(const QString &id) const;
    // The whole record (output and files), loading it from the history when it was trimmed.
    const RunRecord *complete(const QString &id);
    // Where trimmed records come back from (the history), and whether a run is there: only runs
    // the history has are trimmed (an instance may run with --no-history, a save may fail).
    void setLoader(const std::function<std::optional<RunRecord>(const QString &)> &loader,
                   const std::function<bool(const QString &)> &isStored)
    {
        m_loader = loader;
        m_isStored = isStored;
    }
    // "850 ms", "1.25 s", "12.5 s", "3 min 5 s"; empty for a negative (unknown) duration. The
    // list, the details pane and the overview strip all say a duration this way.
    static QString durationText(qint64 ms);
    // The Source column: the assistant, and the name its client claimed when that is another.
    static QString sourceText(const RunRecord &run);
    // Output kept per run; what a peer sends beyond it is dropped and the run marked truncated.
    static constexpr qint64 kMaxRunOutput = 16 * 1024 * 1024;
    void setLimits(int maxRuns, int maxCompleteRuns);
    QStringList languages() const;
    // What a run's sandbox used while it ran (live samples, oldest first); empty for runs that
    // ended before the first sample, that ran elsewhere before this window, or that are too
    // old (kMaxSampledRuns).
    QList<UsageSample> samples(const QString &id) const { return m_samples.value(id); }
    // Past this many samples a run's are thinned to every other one (its chart keeps its whole
    // span at half the resolution): 600 is 5 minutes at 2 a second, a few pixels apart.
    static constexpr int kMaxSamplesPerRun = 600;
    // Samples are kept for the runs that got their first most recently.
    static constexpr int kMaxSampledRuns = 100;
    // The last state heard of a sandbox session ("" when none was).
    QString sessionState(const QString &sessionId) const
    {
        return m_sessionStates.value(sessionId);
    }

Q_SIGNALS:
    void runChanged(const QString &id);
    // A run's end arrived (its Finished event: this process's or a headless instance's), after
    // runChanged. Not for runs read from the history.
    void runFinished(const QString &id);
    void outputAppended(const QString &id, int stream, const QByteArray &data);
    // samples(id) has a new sample (or was thinned).
    void samplesChanged(const QString &id);

private:
    // The parts of apply(): a session's state for its runs' cells, a run first seen, output.
    void applySession(const JournalEvent &event);
    void addRun(const RunRecord &run);
    void appendOutput(RunRecord &run, const JournalEvent &event);
    int rowForIndex(int index) const { return int(m_runs.size()) - 1 - index; }
    int indexForRow(int row) const { return int(m_runs.size()) - 1 - row; }
    void reindex();
    void changed(int index);
    void trim();
    void addSample(const QString &id, const UsageSample &sample);

    QList<RunRecord> m_runs; // oldest first; row 0 is the newest
    QHash<QString, int> m_index;
    std::function<std::optional<RunRecord>(const QString &)> m_loader;
    std::function<bool(const QString &)> m_isStored;
    QHash<QString, qint64> m_outputBytes;    // live runs: output received so far
    QHash<QString, QString> m_sessionStates; // sandbox session → idle, busy, ended, expired
    int m_maxRuns = 2000;
    int m_maxComplete = 100;
    QSet<QString> m_searchResults;
    QHash<QString, QList<UsageSample>> m_samples;
    QList<QString> m_sampledRuns; // the runs in m_samples, by their first sample
};
