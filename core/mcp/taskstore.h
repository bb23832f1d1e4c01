#pragma once

#include "toolcall.h"

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QRandomGenerator>
#include <QTimer>
#include <algorithm>
#include <functional>
#include <utility>

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
//
// Header-only because the room's source list lives in core/CMakeLists.txt.
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

    explicit TaskStore(QObject *parent = nullptr) : QObject(parent)
    {
        m_sweep.setInterval(60 * 1000);
        QObject::connect(&m_sweep, &QTimer::timeout, this, [this] { prune(); });
        m_sweep.start();
    }
    ~TaskStore() override
    {
        // Whatever still runs is stopped with the server: its container goes with it. Collected
        // first: each cancellation ends its task, and its waiters may look tasks up.
        QList<QPointer<ToolCall>> running;
        for (const Task &t : std::as_const(m_tasks))
            if (t.call && !t.isTerminal())
                running.append(t.call);
        cancelEach(running);
    }

    // Another budget than kResultBudgetBytes (tests); applies from the next task that ends.
    void setResultBudget(qint64 bytes) { m_budget = bytes; }
    qint64 resultBudget() const { return m_budget; }
    // Bytes of finished results kept now.
    qint64 keptBytes() const { return m_keptBytes; }

    // Takes the call over (it becomes the store's child); the tool's handler is then started
    // by the caller. The task belongs to call->owner(). Returns the task id, or an empty string
    // and `error` when the store is full.
    QString start(ToolCall *call, QString *error)
    {
        prune();
        if (m_tasks.size() >= kMaxTasks && !dropOldestFinished()) {
            *error = QStringLiteral("%1 tasks are running, the most this server keeps; wait for "
                                    "one to end or cancel one")
                         .arg(m_tasks.size());
            return QString();
        }
        Task t;
        t.id = newId();
        t.owner = call->owner();
        t.tool = call->tool();
        t.created = t.updated = QDateTime::currentDateTimeUtc();
        t.call = call;
        const QString id = t.id;
        m_tasks.insert(id, t);
        call->setParent(this);
        follow(call, id);
        return id;
    }

    // The owner's task with this id; null for an unknown id and for another owner's task alike.
    Task *find(const QString &id, const QString &owner)
    {
        prune();
        const auto it = m_tasks.find(id);
        return it == m_tasks.end() || it->owner != owner ? nullptr : &*it;
    }

    // What to answer the owner for an id find() does not know: a dropped result says why, any
    // other id (never issued, expired, or another owner's) the same words.
    QString notFoundMessage(const QString &id, const QString &owner) const
    {
        const auto it = m_dropped.constFind(id);
        if (it != m_dropped.cend() && it->owner == owner)
            return QStringLiteral("task '%1' has expired: its result was dropped to keep the "
                                  "server's memory bounded (%2); run the call again")
                .arg(id, it->reason);
        return QStringLiteral("no task '%1' here (finished tasks are kept %2 minutes)")
            .arg(id)
            .arg(kKeepMs / 60000);
    }

    // Stops the owner's working task (its container is removed); false for an id find() does
    // not know.
    bool cancel(const QString &id, const QString &owner)
    {
        Task *task = find(id, owner);
        if (!task)
            return false;
        if (!task->isTerminal() && task->call)
            task->call->cancel(); // → cancelRequested → Cancelled
        return true;
    }

    // Stops every working task of the owner: its MCP session has ended, and with it the only
    // way to reach them.
    void cancelOwnedBy(const QString &owner)
    {
        QList<QPointer<ToolCall>> running;
        for (const Task &t : std::as_const(m_tasks))
            if (t.owner == owner && t.call && !t.isTerminal())
                running.append(t.call);
        cancelEach(running);
    }

    // `done` runs once the owner's task has ended (now, if it has or is unknown).
    void whenEnded(const QString &id, const QString &owner, const std::function<void()> &done)
    {
        Task *task = find(id, owner);
        if (!task || task->isTerminal())
            done();
        else
            task->waiters.append(done);
    }

    // The owner's tasks, oldest first.
    QList<const Task *> all(const QString &owner)
    {
        prune();
        QList<const Task *> list;
        for (const Task &t : std::as_const(m_tasks))
            if (t.owner == owner)
                list.append(&t);
        std::sort(list.begin(), list.end(),
                  [](const Task *a, const Task *b) { return a->created < b->created; });
        return list;
    }
    int size() const { return int(m_tasks.size()); }

    static QString statusName(Status s)
    {
        switch (s) {
        case Status::Working:
            return QStringLiteral("working");
        case Status::Completed:
            return QStringLiteral("completed");
        case Status::Failed:
            return QStringLiteral("failed");
        case Status::Cancelled:
            return QStringLiteral("cancelled");
        }
        return QString();
    }

    // The 2026-07-28 extension's Task: flat, ttlMs / pollIntervalMs.
    static QJsonObject modernJson(const Task &t)
    {
        QJsonObject o = common(t);
        o.insert(QStringLiteral("ttlMs"), kKeepMs);
        o.insert(QStringLiteral("pollIntervalMs"), kPollIntervalMs);
        return o;
    }
    // 2025-11-25's Task: ttl / pollInterval.
    static QJsonObject legacyJson(const Task &t)
    {
        QJsonObject o = common(t);
        o.insert(QStringLiteral("ttl"), kKeepMs);
        o.insert(QStringLiteral("pollInterval"), kPollIntervalMs);
        return o;
    }

private:
    struct Dropped
    {
        QString owner;
        QString reason;
        qint64 atMs = 0;
    };

    static void cancelEach(const QList<QPointer<ToolCall>> &calls)
    {
        for (const QPointer<ToolCall> &call : calls)
            if (call)
                call->cancel();
    }

    static QString newId()
    {
        quint32 words[4];
        QRandomGenerator::system()->fillRange(words);
        return QStringLiteral("task-") +
               QString::fromLatin1(
                   QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex());
    }

    static QJsonObject common(const Task &t)
    {
        QJsonObject o{{QStringLiteral("taskId"), t.id},
                      {QStringLiteral("status"), statusName(t.status)},
                      {QStringLiteral("createdAt"), t.created.toString(Qt::ISODateWithMs)},
                      {QStringLiteral("lastUpdatedAt"), t.updated.toString(Qt::ISODateWithMs)}};
        if (!t.statusMessage.isEmpty())
            o.insert(QStringLiteral("statusMessage"), t.statusMessage);
        return o;
    }

    // The call's signals move its task along. They reach only the store: nothing about a task
    // is sent to any client unasked (no notifications/tasks/status), so no other session can
    // hear of it.
    void follow(ToolCall *call, const QString &id)
    {
        QObject::connect(call, &ToolCall::progressReady, this, [this, id](const QJsonObject &p) {
            const auto it = m_tasks.find(id);
            if (it != m_tasks.end() && !it->isTerminal() && p.contains(u"message")) {
                it->statusMessage = p.value(u"message").toString();
                it->updated = QDateTime::currentDateTimeUtc();
            }
        });
        QObject::connect(call, &ToolCall::finished, this, [this, id](const QJsonObject &result) {
            end(id, Status::Completed, result);
        });
        QObject::connect(call, &ToolCall::failed, this,
                         [this, id](const QJsonObject &error) { end(id, Status::Failed, error); });
        QObject::connect(call, &ToolCall::cancelRequested, this,
                         [this, id] { end(id, Status::Cancelled, {}); });
    }

    void end(const QString &id, Status status, const QJsonObject &outcome)
    {
        const auto it = m_tasks.find(id);
        if (it == m_tasks.end() || it->isTerminal())
            return;
        it->status = status;
        if (!outcome.isEmpty())
            it->outcome = QJsonDocument(outcome).toJson(QJsonDocument::Compact);
        m_keptBytes += it->outcome.size();
        it->updated = QDateTime::currentDateTimeUtc();
        it->endedMs = QDateTime::currentMSecsSinceEpoch();
        it->endOrder = ++m_ends;
        if (status == Status::Cancelled)
            it->statusMessage = QStringLiteral("cancelled; its sandbox is removed");
        if (it->call)
            it->call->deleteLater();
        const qint64 bytes = it->outcome.size();
        const auto waiters = std::exchange(it->waiters, {});
        // Waiters answer from the result before the budget may drop it.
        for (const auto &done : waiters)
            done();
        keepWithinBudget(id, bytes);
    }

    // Drops the results that ended first until the rest fit the budget. A result larger than
    // the whole budget goes alone, at once, rather than pushing every other one out.
    void keepWithinBudget(const QString &justEnded, qint64 bytes)
    {
        const auto it = m_tasks.find(justEnded);
        if (bytes > m_budget && it != m_tasks.end()) {
            drop(it, QStringLiteral("its result of %1 MiB is larger than the %2 MiB of results "
                                    "kept over all tasks")
                         .arg(double(bytes) / (1024 * 1024), 0, 'f', 1)
                         .arg(m_budget / (1024 * 1024)));
            return;
        }
        while (m_keptBytes > m_budget) {
            const auto oldest = oldestFinished();
            if (oldest == m_tasks.end())
                return;
            drop(oldest, QStringLiteral("results are kept up to %1 MiB over all tasks")
                             .arg(m_budget / (1024 * 1024)));
        }
    }

    QHash<QString, Task>::iterator oldestFinished()
    {
        auto oldest = m_tasks.end();
        for (auto it = m_tasks.begin(); it != m_tasks.end(); ++it)
            if (it->isTerminal() && (oldest == m_tasks.end() || it->endOrder < oldest->endOrder))
                oldest = it;
        return oldest;
    }

    QHash<QString, Task>::iterator drop(QHash<QString, Task>::iterator it, const QString &reason)
    {
        if (m_dropped.size() >= kMaxDropped)
            m_dropped.clear(); // rare; the owner then hears "unknown" instead of "dropped"
        m_dropped.insert(it->id, Dropped{it->owner, reason, QDateTime::currentMSecsSinceEpoch()});
        m_keptBytes -= it->outcome.size();
        return m_tasks.erase(it);
    }

    void prune()
    {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        for (auto it = m_tasks.begin(); it != m_tasks.end();) {
            const bool expired = it->isTerminal() && now - it->endedMs > kKeepMs &&
                                 now - it->created.toMSecsSinceEpoch() > kKeepMs;
            if (expired) {
                m_keptBytes -= it->outcome.size();
                it = m_tasks.erase(it);
            } else {
                ++it;
            }
        }
        m_dropped.removeIf([now](const auto &d) { return now - d.value().atMs > kKeepMs; });
    }

    bool dropOldestFinished()
    {
        const auto oldest = oldestFinished();
        if (oldest == m_tasks.end())
            return false;
        drop(oldest, QStringLiteral("at most %1 tasks are kept").arg(kMaxTasks));
        return true;
    }

    QHash<QString, Task> m_tasks;
    QHash<QString, Dropped> m_dropped;
    qint64 m_budget = kResultBudgetBytes;
    qint64 m_keptBytes = 0;
    quint64 m_ends = 0;
    QTimer m_sweep;
};
