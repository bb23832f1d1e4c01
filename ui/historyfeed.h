#pragma once

#include "journalevent.h"

#include <QObject>

class HistoryStore;
class Journal;
class MonitorServer;
class RunListModel;

// Feeds the runs model: this process's runs from its journal, headless instances' from the
// monitor socket, and older runs from the history (read on the history's thread).
class HistoryFeed : public QObject
{
    Q_OBJECT
public:
    // `model` is fed (not owned). `history` and `monitor` may be null. `instanceId`: this
    // process's, so that other instances' runs are logged as theirs.
    HistoryFeed(RunListModel *model, Journal *journal, HistoryStore *history,
                MonitorServer *monitor, const QString &instanceId, QObject *parent = nullptr);

    bool hasHistory() const { return m_history != nullptr; }
    // Loads the newest runs of the history into the model (loaded once they are in).
    void load(int limit);
    // Adds the history's runs that match `text` (searched once they are in); a newer search
    // drops older answers.
    void search(const QString &text, int limit);
    // The retention setting (0: no age limit; the size cap stays), applied at once and from
    // then on by the history's worker.
    void prune(int retentionDays);

Q_SIGNALS:
    void loaded(int runs);
    void searched(const QString &text, int runs);

private:
    void apply(const JournalEvent &event);

    RunListModel *m_model;
    HistoryStore *m_history;
    QString m_instanceId;
    quint64 m_search = 0; // the latest search: answers to older ones are dropped
};
