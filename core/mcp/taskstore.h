#pragma once

#include "toolcall.h"

#include <QDateTime>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QRandomGenerator>
#include <QTimer>
#include <functional>

// Tool calls that run as tasks: the call answers at once with a task handle, goes on without
// any request held open, and is polled (tasks/get) until it ends; its result is then kept for a
// bounded time. One store per server, shared by every session and both eras (2025-11-25 tasks,
// the 2026-07-28 extension io.modelcontextprotocol/tasks), so a task outlives the request, the
// HTTP connection and the HTTP session that created it.
//
// The task id is 128 random bits: whoever holds it may poll or cancel the task, as with a
// session_id. Header-only because the room's source list lives in core/CMakeLists.txt.
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
        QString tool;
        Status status = Status::Working;
        QString statusMessage;
        QDateTime created;
        QDateTime updated;
        qint64 endedMs = 0; // when it reached a terminal status (ms since the epoch)
        QJsonObject result; // completed: what tools/call would have answered
        QJsonObject error;  // failed: the JSON-RPC error
        QPointer<ToolCall> call;
        QList<std::function<void()>> waiters; // tasks/result (2025-11-25) waiting for the end

        bool isTerminal() const { return status != Status::Working; }
    };

    // A finished task is kept this long after it ended (and at least this long after it was
    // created): what ttlMs / ttl announce.
    static constexpr qint64 kKeepMs = 10 * 60 * 1000;
    // How often clients are told to poll.
    static constexpr int kPollIntervalMs = 1000;
    // Tasks kept at once, running and finished. At the cap the oldest finished one goes; when
    // all are running, a new task is refused.
    static constexpr int kMaxTasks = 256;

    explicit TaskStore(QObject *parent = nullptr) : QObject(parent)
    {
        m_sweep.setInterval(60 * 1000);
        QObject::connect(&m_sweep, &QTimer::timeout, this, [this] { prune(); });
        m_sweep.start();
    }
    ~TaskStore() override
    {
        // Whatever still runs is stopped with the server: its container goes with it.
        for (Task &t : m_tasks)
            if (t.call && !t.isTerminal())
                t.call->cancel();
    }

    // Takes the call over (it becomes the store's child); the tool's handler is then started
    // by the caller. Returns the task id, or an empty string and `error` when the store is full.
    QString start(ToolCall *call, QString *error)
    {
        prune();
        if (m_tasks.size() >= kMaxTasks && !dropOldestFinished()) {
            *error = QStringLiteral("%1 tasks are running, the most this server keeps; wait for "
                                    "one to end or cancel one")
                         .arg(m_tasks.size());
            return QString();
        }
        quint32 words[4];
        QRandomGenerator::system()->fillRange(words);
        Task t;
        t.id = QStringLiteral("task-") +
               QString::fromLatin1(
                   QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex());
        t.tool = call->tool();
        t.created = t.updated = QDateTime::currentDateTimeUtc();
        t.call = call;
        const QString id = t.id;
        m_tasks.insert(id, t);
        call->setParent(this);
        QObject::connect(call, &ToolCall::progressReady, this, [this, id](const QJsonObject &p) {
            Task *task = find(id);
            if (task && !task->isTerminal() && p.contains(u"message")) {
                task->statusMessage = p.value(u"message").toString();
                task->updated = QDateTime::currentDateTimeUtc();
            }
        });
        QObject::connect(call, &ToolCall::finished, this, [this, id](const QJsonObject &result) {
            end(id, Status::Completed, result, {});
        });
        QObject::connect(call, &ToolCall::failed, this, [this, id](const QJsonObject &error) {
            end(id, Status::Failed, {}, error);
        });
        QObject::connect(call, &ToolCall::cancelRequested, this,
                         [this, id] { end(id, Status::Cancelled, {}, {}); });
        return id;
    }

    Task *find(const QString &id)
    {
        prune();
        const auto it = m_tasks.find(id);
        return it == m_tasks.end() ? nullptr : &*it;
    }

    // Stops a working task (its container is removed); false for an unknown id.
    bool cancel(const QString &id)
    {
        Task *task = find(id);
        if (!task)
            return false;
        if (!task->isTerminal() && task->call)
            task->call->cancel(); // → cancelRequested → Cancelled
        return true;
    }

    // `done` runs once the task has ended (now, if it has).
    void whenEnded(const QString &id, const std::function<void()> &done)
    {
        Task *task = find(id);
        if (!task || task->isTerminal())
            done();
        else
            task->waiters.append(done);
    }

    QList<const Task *> all()
    {
        prune();
        QList<const Task *> list;
        for (const Task &t : std::as_const(m_tasks))
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

    void end(const QString &id, Status status, const QJsonObject &result, const QJsonObject &error)
    {
        const auto it = m_tasks.find(id);
        if (it == m_tasks.end() || it->isTerminal())
            return;
        it->status = status;
        it->result = result;
        it->error = error;
        it->updated = QDateTime::currentDateTimeUtc();
        it->endedMs = QDateTime::currentMSecsSinceEpoch();
        if (status == Status::Cancelled)
            it->statusMessage = QStringLiteral("cancelled; its sandbox is removed");
        if (it->call)
            it->call->deleteLater();
        const auto waiters = std::exchange(it->waiters, {});
        for (const auto &done : waiters)
            done();
    }

    void prune()
    {
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        for (auto it = m_tasks.begin(); it != m_tasks.end();) {
            const bool expired = it->isTerminal() && now - it->endedMs > kKeepMs &&
                                 now - it->created.toMSecsSinceEpoch() > kKeepMs;
            it = expired ? m_tasks.erase(it) : std::next(it);
        }
    }

    bool dropOldestFinished()
    {
        auto oldest = m_tasks.end();
        for (auto it = m_tasks.begin(); it != m_tasks.end(); ++it)
            if (it->isTerminal() && (oldest == m_tasks.end() || it->endedMs < oldest->endedMs))
                oldest = it;
        if (oldest == m_tasks.end())
            return false;
        m_tasks.erase(oldest);
        return true;
    }

    QHash<QString, Task> m_tasks;
    QTimer m_sweep;
};
