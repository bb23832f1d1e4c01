#pragma once

#include "toolcall.h"

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QTimer>
#include <functional>

// Tool calls that run as tasks: the call answers at once with a task handle, goes on without
// any request held open, and is polled (tasks/get) until it ends; its result is then kept for a
// bounded time. One store per server, shared by every session and both eras (2025-11-25 tasks,
// the 2026-07-28 extension io.modelcontextprotocol/tasks), so a task outlives the request and
// the HTTP connection that created it; a 2025 HTTP session that ends cancels its own
// (StreamableHttpServer::endSession), since nobody else may reach them.
//
// A task belongs to its owner, the McpSession::owner() of the call that made it: the MCP session,
// or for 2026-07-28 requests over HTTP the credential they came with. Every look-up names the
// owner, and another owner's task answers exactly as an id never issued does, so a client can
// neither see, poll, fetch nor cancel another client's task, nor learn that it exists. The task
// id (128 random bits) is a second lock, not the only one.
//
// Finished results are kept as compact JSON (UTF-8 bytes, a fraction of a QJsonObject tree's
// size) within a byte budget over all owners; past it, the results that ended first go.
class TaskStore : public QObject
{
public:
    enum class Status
    {
        Working,
        Completed,
        Failed,
        Cancelled
    };
    struct Task
    {
        QString id;
        QString owner;
        QString tool;
        Status status = Status::Working;
        QString statusMessage;
        QDateTime created;
        QDateTime updated;
        qint64 endedMs = 0;   // when it reached a terminal status (ms since the epoch)
        quint64 endOrder = 0; // the order of the ends, where many fall in one millisecond
        // Completed: what tools/call would have answered; failed: the JSON-RPC error. Compact
        // JSON, parsed only when asked for.
        QByteArray outcome;
        QPointer<ToolCall> call;
        QList<std::function<void()>> waiters; // tasks/result (2025-11-25) waiting for the end

        bool isTerminal() const { return status != Status::Working; }
        QJsonObject result() const
        {
            return status == Status::Completed ? QJsonDocument::fromJson(outcome).object()
                                               : QJsonObject();
        }
        QJsonObject error() const
        {
            return status == Status::Failed ? QJsonDocument::fromJson(outcome).object()
                                            : QJsonObject();
        }
    };

    // A finished task is kept this long after it ended (and at least this long after it was
    // created): what ttlMs / ttl announce.
    static constexpr qint64 kKeepMs = 10 * 60 * 1000;
    // How often clients are told to poll.
    static constexpr int kPollIntervalMs = 1000;
    // Tasks kept at once, running and finished. At the cap the oldest finished one goes; when
    // all are running, a new task is refused.
    static constexpr int kMaxTasks = 256;
    // Bytes of finished results kept at once, over all owners. A tool call's answer may carry
    // files (20 MiB each is allowed), so a count alone does not bound the memory.
    static constexpr qint64 kResultBudgetBytes = qint64(256) * 1024 * 1024;
    // Ids of dropped tasks remembered (for a clearer answer to their owner than "unknown").
    static constexpr int kMaxDropped = 1024;

    explicit TaskStore(QObject *parent = nullptr);
    ~TaskStore() override;

    // Another budget than kResultBudgetBytes (tests); applies from the next task that ends.
    void setResultBudget(qint64 bytes) { m_budget = bytes; }
    qint64 resultBudget() const { return m_budget; }
    // Bytes of finished results kept now.
    qint64 keptBytes() const { return m_keptBytes; }

    // Takes the call over (it becomes the store's child); the tool's handler is then started
    // by the caller. The task belongs to call->owner(). Returns the task id, or an empty string
    // and `error` when the store is full.
    QString start(ToolCall *call, QString *error);

    // The owner's task with this id; null for an unknown id and for another owner's task alike.
    Task *find(const QString &id, const QString &owner);

    // What to answer the owner for an id find() does not know: a dropped result says why, any
    // other id (never issued, expired, or another owner's) the same words.
    QString notFoundMessage(const QString &id, const QString &owner) const;

    // Stops the owner's working task (its container is removed); false for an id find() does
    // not know.
    bool cancel(const QString &id, const QString &owner);

    // Stops every working task of the owner: its MCP session has ended, and with it the only
    // way to reach them.
    void cancelOwnedBy(const QString &owner);

    // `done` runs once the owner's task has ended (now, if it has or is unknown).
    void whenEnded(const QString &id, const QString &owner, const std::function<void()> &done);

    // The owner's tasks, oldest first.
    QList<const Task *> all(const QString &owner);
    int size() const { return int(m_tasks.size()); }

    static QString statusName(Status s);

    // The 2026-07-28 extension's Task: flat, ttlMs / pollIntervalMs.
    static QJsonObject modernJson(const Task &t);
    // 2025-11-25's Task: ttl / pollInterval.
    static QJsonObject legacyJson(const Task &t);

private:
    struct Dropped
    {
        QString owner;
        QString reason;
        qint64 atMs = 0;
    };

    static void cancelEach(const QList<QPointer<ToolCall>> &calls);

    static QString newId();

    static QJsonObject common(const Task &t);

    // The call's signals move its task along. They reach only the store: nothing about a task
    // is sent to any client unasked (no notifications/tasks/status), so no other session can
    // hear of it.
    void follow(ToolCall *call, const QString &id);

    void end(const QString &id, Status status, const QJsonObject &outcome);

    // Drops the results that ended first until the rest fit the budget. A result larger than
    // the whole budget goes alone, at once, rather than pushing every other one out.
    void keepWithinBudget(const QString &justEnded, qint64 bytes);

    QHash<QString, Task>::iterator oldestFinished();

    QHash<QString, Task>::iterator drop(QHash<QString, Task>::iterator it, const QString &reason);

    void prune();

    bool dropOldestFinished();

    QHash<QString, Task> m_tasks;
    QHash<QString, Dropped> m_dropped;
    qint64 m_budget = kResultBudgetBytes;
    qint64 m_keptBytes = 0;
    quint64 m_ends = 0;
    QTimer m_sweep;
};
