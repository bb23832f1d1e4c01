#pragma once

#include <QAbstractItemModel>
#include <QHash>
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

private:
    // A top-level row: a single run, or a session with its runs (newest first).
    struct Item
    {
        QString runId;     // single runs
        QString sessionId; // sessions
        QStringList runs;  // sessions: run ids, newest first
    };

    QString sessionOf(const QString &runId) const;
    QModelIndex sourceIndex(const QString &runId, int column) const;
    QVariant sessionData(const Item &item, int column, int role) const;
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
};
