#pragma once

#include "sessionsnapshot.h"

#include <QAbstractItemModel>
#include <QDateTime>
#include <QHash>
#include <QIcon>
#include <QList>
#include <QPointer>
#include <QStringList>

class RunListModel;

// The runs list as a tree: the runs of one sandbox session under one row for the session (its id,
// language, state and number of runs), single runs as top-level rows. Newest first, as the flat
// list: a session sits where its newest run would, so one that runs again comes to the top. Run
// rows give the list's data and roles unchanged (filters and details read them as before); a
// session row answers RunIdRole with its newest run, so that selecting it shows that run.
//
// The grouping lives here and not in RunListModel, which stays a flat list of records. New runs
// (the list only ever adds one at the top) become inserted rows, so that views keep their
// selection and expanded sessions and follow new runs; anything else (the oldest trimmed, the
// history added) rebuilds the tree as a layout change that keeps selected and expanded rows.
//
// Sessions of this process also show their snapshots (setSnapshots, from SessionSnapshots): a run
// after which one was kept is a step of the session's history. A step whose snapshot does not
// continue the one before it (the session was rewound to an older step) says which step it
// branches from; a session forked from another's step says which, and is listed as soon as the
// window forks it (addFork), before its first run.
class SessionTreeModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum Role
    {
        // Beyond RunListModel's roles.
        SessionIdRole = Qt::UserRole + 100, // the session of a run or of a session row ("" if none)
        IsSessionRole,                      // true on session rows
        RunCountRole,                       // session rows: how many runs the list has of it
        SessionStateRole,                   // session rows: idle, busy, ended, expired or ""
        SnapshotIdRole,    // run rows: the snapshot kept after the run ("" when none is known)
        BranchFromRole,    // run rows: the snapshot its step continues from when that is not the
                           // step before it (a rewind went back there); "" otherwise
        IsCurrentStepRole, // run rows: the live session is at this run's snapshot now
        ForkedFromRole,    // session rows: the snapshot of another session it started from
    };

    explicit SessionTreeModel(RunListModel *source, QObject *parent = nullptr);

    QModelIndex index(int row, int column,
                      const QModelIndex &parent = QModelIndex()) const override;
    QModelIndex parent(const QModelIndex &child) const override;
    int rowCount(const QModelIndex &parent = QModelIndex()) const override;
    int columnCount(const QModelIndex &parent = QModelIndex()) const override;
    bool hasChildren(const QModelIndex &parent = QModelIndex()) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;

    RunListModel *runs() const { return m_source; }
    // The row of a run (top-level or in its session), invalid when the list does not have it.
    QModelIndex indexOfRun(const QString &runId, int column = 0) const;
    QModelIndex indexOfSession(const QString &sessionId, int column = 0) const;

    // A session's snapshots as they are kept now (oldest first), in place of those known.
    void setSnapshots(const QString &sessionId, const QList<SessionSnapshot> &snapshots);
    // The sessions it shows steps of (for a refresh of them all, after the caps dropped some).
    QStringList sessionsWithSteps() const { return m_snapshots.keys(); }
    // The snapshot a live session is at ("" when none, or it ended).
    void setCurrentSnapshot(const QString &sessionId, const QString &snapshotId);
    // A session the window forked from `origin` (another session's snapshot): listed now, at the
    // top, with no runs yet.
    void addFork(const QString &sessionId, const QString &language, const QString &origin);
    // "#2" for a snapshot of `sessionId` (its run's place in the session), "a34d5060 #2" for
    // another session's (with the first `idChars` of its id: the list's column is narrow).
    QString stepLabel(const QString &snapshotId, const QString &sessionId, int idChars = 8) const;

private:
    // A top-level row: a single run, or a session with its runs (newest first).
    struct Item
    {
        QString runId;     // single runs
        QString sessionId; // sessions
        QStringList runs;  // sessions: run ids, newest first
    };

    // A session listed before its first run (a fork made here).
    struct Pending
    {
        QString language;
        QDateTime createdAt;
    };

    QString sessionOf(const QString &runId) const;
    QModelIndex sourceIndex(const QString &runId, int column) const;
    QVariant sessionData(const Item &item, int column, int role) const;
    QVariant sessionDisplay(const Item &item, int column) const;
    QString sessionToolTip(const Item &item) const;
    // A run row of a session: `runs` are the session's, newest first.
    QVariant runData(const QString &sessionId, const QStringList &runs, int row, int column,
                     int role) const;
    QString runToolTip(const QString &sessionId, const QStringList &runs, int row) const;
    QIcon stepIcon(const QString &sessionId, const QString &runId) const;
    const SessionSnapshot *stepOf(const QString &runId) const;
    QString branchOf(const QString &runId) const;
    QString originOf(const QString &sessionId) const;
    QDateTime createdOf(const Item &item) const;
    // The session's row and its runs' rows changed.
    void changedSession(const QString &sessionId);
    void onRowsInserted(const QModelIndex &parent, int first, int last);
    void onDataChanged(const QModelIndex &topLeft, const QModelIndex &bottomRight);
    void rebuild();
    // The tree as the list is now: sessions where their newest run is.
    QList<Item> grouped() const;
    void reindex();
    quintptr keyOf(const QString &sessionId);
    void changedRow(const QModelIndex &index);

    QPointer<RunListModel> m_source;
    QList<Item> m_items;
    QHash<QString, int> m_topRow;     // run id (single) or session id → top-level row
    QHash<QString, quintptr> m_keys;  // session id → internal id of its children's indexes
    QHash<quintptr, QString> m_byKey; // and back
    quintptr m_nextKey = 1;           // 0 marks top-level indexes
    QHash<QString, QList<SessionSnapshot>> m_snapshots; // session → its snapshots, oldest first
    QHash<QString, SessionSnapshot> m_stepOfRun;        // run id → the snapshot kept after it
    QHash<QString, QString> m_runOfSnapshot;            // snapshot id → its run
    QHash<QString, QString> m_current;                  // session → the snapshot it is at
    QHash<QString, QString> m_origins;                  // session → the snapshot it forked from
    QHash<QString, Pending> m_pending;                  // forks without runs yet
};
