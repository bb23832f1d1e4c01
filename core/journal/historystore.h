#pragma once

#include "runrecord.h"

#include <QList>
#include <QObject>
#include <QString>
#include <QThread>
#include <QTimer>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>

// Every execution, kept in SQLite (Qt Sql) in the user's data dir. WAL mode and a busy timeout
// make several writers safe: the window and each headless instance write their own runs into the
// same file. Values of pass-through variables are never stored, and those of bound secrets never
// reach a record (RunRecord::secrets has names and hosts only).
//
// Writes, searches and pruning run on a worker thread with its own connection, in the order they
// were asked for: a slow disk or another process holding the write lock never holds up the
// owner's event loop (an MCP answer, the window). Their results come back on the owner's thread.
// Only load(), contains() and count() read on the calling thread, through a connection of their
// own: in WAL mode a reader does not wait for a writer.
//
// Every store applies a retention, whoever opens it: by age and by the total size of what it
// keeps (oldest first), when it opens (once the owner's event loop runs, so that a retention set
// right after open() is the one applied), every hour, and after a write that took it over the size
// cap.
class HistoryStore : public QObject
{
    Q_OBJECT
public:
    struct Retention
    {
        int days = 30;                          // older runs go; 0: no age limit
        qint64 maxBytes = 1024LL * 1024 * 1024; // code, output and files of all runs; 0: no cap
        int maxRuns = 0;                        // the newest this many are kept; 0: no cap
        bool operator==(const Retention &o) const
        {
            return days == o.days && maxBytes == o.maxBytes && maxRuns == o.maxRuns;
        }
    };
    // Runs queued for writing may hold this many bytes (code, output, files); a run beyond it is
    // not saved (logged). One run is always accepted when nothing is queued.
    static constexpr qint64 kMaxPendingBytes = 64LL * 1024 * 1024;
    // How often the retention is applied while the store is open.
    static constexpr int kRetentionIntervalMs = 60 * 60 * 1000;

    explicit HistoryStore(QObject *parent = nullptr);
    // Finishes the queued writes first.
    ~HistoryStore() override;
    HistoryStore(const HistoryStore &) = delete;
    HistoryStore &operator=(const HistoryStore &) = delete;

    // $CODE_SANDBOX_HISTORY, else <XDG data dir>/code-sandbox/history.sqlite.
    static QString defaultPath();
    // 30 days and 1 GiB, or $CODE_SANDBOX_HISTORY_DAYS (0: no age limit) and
    // $CODE_SANDBOX_HISTORY_MAX_MB (MiB; 0: no cap). A new store starts with these.
    static Retention defaultRetention();

    // Opens (creating the folder, the file and the schema as needed) on the worker and waits for
    // that, but not for the first retention pass. False with a message.
    bool open(const QString &path, QString *error = nullptr);
    bool isOpen() const { return m_open; }
    QString path() const { return m_path; }
    // Finishes the queued writes, then closes.
    void close();

    Retention retention() const { return m_retention; }
    // Applied from now on, and at once (on the worker).
    void setRetention(const Retention &retention);
    void setRetentionDays(int days);

    // Queues the run (whole: output and files too) for writing and returns at once. False when
    // it was not queued (not open, or too much already waiting: logged). A write that fails is
    // logged; saved() tells either way.
    bool save(const RunRecord &run);
    // A person's decision on a run's workspaces (applied or discarded, in the window): the run's
    // `workspaces` replaced, nothing else of it, on the worker. workspacesUpdated tells whether
    // the run was there and written (an instance with --no-history never stored it).
    void updateWorkspaces(const QString &id, const QJsonArray &workspaces);

    // Newest first, at most `limit`, without output, files and workspaces (`complete` false).
    // `text` filters on code, output, source, language and tool (case-insensitive substring);
    // empty: all. Read on the worker; `done` is called on `context`'s thread, unless `context` is
    // gone by then.
    void recent(int limit, const QString &text, QObject *context,
                std::function<void(const QList<RunRecord> &)> done);
    // Deletes what `retention` does not keep, on the worker: runs created before now - days,
    // beyond maxRuns the oldest, and the oldest until the rest fits in maxBytes. `done` gets how
    // many went (on `context`'s thread).
    void prune(const Retention &retention, QObject *context = nullptr,
               std::function<void(int)> done = {});

    // On the calling thread (see above).
    std::optional<RunRecord> load(const QString &id) const;
    bool contains(const QString &id) const;
    int count() const;

    // Blocks until what was queued before this call is done. False on timeout. For tests.
    bool waitForIdle(int timeoutMs = 60000) const;

Q_SIGNALS:
    // After each queued write, on the owner's thread.
    void saved(const QString &id, bool ok);
    // After each updateWorkspaces(), on the owner's thread.
    void workspacesUpdated(const QString &id, bool ok);
    // A retention pass (at open, hourly, after a write) removed runs.
    void pruned(int removed);

private:
    struct Worker;
    void post(std::function<void(Worker &)> job) const;
    void scheduleRetention();
    QString readConnection() const;

    QThread m_thread;
    QObject *m_context = nullptr; // lives in m_thread: jobs are queued to it
    std::shared_ptr<Worker> m_worker;
    QString m_path;
    bool m_open = false;
    Retention m_retention;
    bool m_retentionScheduled = false;
    QTimer m_retentionTimer;
    std::shared_ptr<std::atomic<qint64>> m_pendingBytes;
    mutable QString m_readConnection; // on the owner's thread, opened when first needed
};
