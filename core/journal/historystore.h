#pragma once

#include "runrecord.h"

#include <QList>
#include <QString>
#include <optional>

// Every execution, kept in SQLite (Qt Sql) in the user's data dir. WAL mode and a busy timeout
// make several writers safe: the window and each headless instance write their own runs into the
// same file. Values of pass-through variables are never stored.
class HistoryStore
{
public:
    HistoryStore() = default;
    ~HistoryStore();
    HistoryStore(const HistoryStore &) = delete;
    HistoryStore &operator=(const HistoryStore &) = delete;

    // $CODE_SANDBOX_HISTORY, else <XDG data dir>/code-sandbox/history.sqlite.
    static QString defaultPath();

    // Opens (creating the folder, the file and the schema as needed). False with a message.
    bool open(const QString &path, QString *error = nullptr);
    bool isOpen() const;
    QString path() const { return m_path; }
    void close();

    // Inserts or replaces the run (whole: output and files too). False when the write failed
    // (logged; a full disk must not stop runs).
    bool save(const RunRecord &run);

    // Newest first, at most `limit`, without output and files (`complete` false). `text`
    // filters on code, output, source and language (case-insensitive substring); empty: all.
    QList<RunRecord> recent(int limit, const QString &text = QString()) const;
    // The whole run, with output and files.
    std::optional<RunRecord> load(const QString &id) const;
    int count() const;
    bool contains(const QString &id) const;

    // Deletes runs created before now - `days` (days <= 0: keeps everything) and, beyond
    // `maxRuns` (0: no cap), the oldest. Returns how many went.
    int prune(int days, int maxRuns = 0);

private:
    QString m_connection; // QSqlDatabase connection name, unique per store
    QString m_path;
};
