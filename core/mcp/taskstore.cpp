#include "taskstore.h"

#include <QRandomGenerator>
#include <algorithm>
#include <utility>

TaskStore::TaskStore(QObject *parent) : QObject(parent)
{
    m_sweep.setInterval(60 * 1000);
    QObject::connect(&m_sweep, &QTimer::timeout, this, [this] { prune(); });
    m_sweep.start();
}

TaskStore::~TaskStore()
{
    // Whatever still runs is stopped with the server: its container goes with it. Collected
    // first: each cancellation ends its task, and its waiters may look tasks up.
    QList<QPointer<ToolCall>> running;
    for (const Task &t : std::as_const(m_tasks))
        if (t.call && !t.isTerminal())
            running.append(t.call);
    cancelEach(running);
}

QString TaskStore::start(ToolCall *call, QString *error)
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

TaskStore::Task *TaskStore::find(const QString &id, const QString &owner)
{
    prune();
    const auto it = m_tasks.find(id);
    return it == m_tasks.end() || it->owner != owner ? nullptr : &*it;
}

QString TaskStore::notFoundMessage(const QString &id, const QString &owner) const
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

bool TaskStore::cancel(const QString &id, const QString &owner)
{
    Task *task = find(id, owner);
    if (!task)
        return false;
    if (!task->isTerminal() && task->call)
        task->call->cancel(); // → cancelRequested → Cancelled
    return true;
}

void TaskStore::cancelOwnedBy(const QString &owner)
{
    QList<QPointer<ToolCall>> running;
    for (const Task &t : std::as_const(m_tasks))
        if (t.owner == owner && t.call && !t.isTerminal())
            running.append(t.call);
    cancelEach(running);
}

void TaskStore::whenEnded(const QString &id, const QString &owner,
                          const std::function<void()> &done)
{
    Task *task = find(id, owner);
    if (!task || task->isTerminal())
        done();
    else
        task->waiters.append(done);
}

QList<const TaskStore::Task *> TaskStore::all(const QString &owner)
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

QString TaskStore::statusName(Status s)
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

QJsonObject TaskStore::modernJson(const Task &t)
{
    QJsonObject o = common(t);
    o.insert(QStringLiteral("ttlMs"), kKeepMs);
    o.insert(QStringLiteral("pollIntervalMs"), kPollIntervalMs);
    return o;
}

QJsonObject TaskStore::legacyJson(const Task &t)
{
    QJsonObject o = common(t);
    o.insert(QStringLiteral("ttl"), kKeepMs);
    o.insert(QStringLiteral("pollInterval"), kPollIntervalMs);
    return o;
}

void TaskStore::cancelEach(const QList<QPointer<ToolCall>> &calls)
{
    for (const QPointer<ToolCall> &call : calls)
        if (call)
            call->cancel();
}

QString TaskStore::newId()
{
    quint32 words[4];
    QRandomGenerator::system()->fillRange(words);
    return QStringLiteral("task-") +
           QString::fromLatin1(
               QByteArray(reinterpret_cast<const char *>(words), sizeof words).toHex());
}

QJsonObject TaskStore::common(const Task &t)
{
    QJsonObject o{{QStringLiteral("taskId"), t.id},
                  {QStringLiteral("status"), statusName(t.status)},
                  {QStringLiteral("createdAt"), t.created.toString(Qt::ISODateWithMs)},
                  {QStringLiteral("lastUpdatedAt"), t.updated.toString(Qt::ISODateWithMs)}};
    if (!t.statusMessage.isEmpty())
        o.insert(QStringLiteral("statusMessage"), t.statusMessage);
    return o;
}

void TaskStore::follow(ToolCall *call, const QString &id)
{
    QObject::connect(call, &ToolCall::progressReady, this, [this, id](const QJsonObject &p) {
        const auto it = m_tasks.find(id);
        if (it != m_tasks.end() && !it->isTerminal() && p.contains(u"message")) {
            it->statusMessage = p.value(u"message").toString();
            it->updated = QDateTime::currentDateTimeUtc();
        }
    });
    QObject::connect(call, &ToolCall::finished, this,
                     [this, id](const QJsonObject &result) { end(id, Status::Completed, result); });
    QObject::connect(call, &ToolCall::failed, this,
                     [this, id](const QJsonObject &error) { end(id, Status::Failed, error); });
    QObject::connect(call, &ToolCall::cancelRequested, this,
                     [this, id] { end(id, Status::Cancelled, {}); });
}

void TaskStore::end(const QString &id, Status status, const QJsonObject &outcome)
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

void TaskStore::keepWithinBudget(const QString &justEnded, qint64 bytes)
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

QHash<QString, TaskStore::Task>::iterator TaskStore::oldestFinished()
{
    auto oldest = m_tasks.end();
    for (auto it = m_tasks.begin(); it != m_tasks.end(); ++it)
        if (it->isTerminal() && (oldest == m_tasks.end() || it->endOrder < oldest->endOrder))
            oldest = it;
    return oldest;
}

QHash<QString, TaskStore::Task>::iterator TaskStore::drop(QHash<QString, Task>::iterator it,
                                                          const QString &reason)
{
    if (m_dropped.size() >= kMaxDropped)
        m_dropped.clear(); // rare; the owner then hears "unknown" instead of "dropped"
    m_dropped.insert(it->id, Dropped{it->owner, reason, QDateTime::currentMSecsSinceEpoch()});
    m_keptBytes -= it->outcome.size();
    return m_tasks.erase(it);
}

void TaskStore::prune()
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

bool TaskStore::dropOldestFinished()
{
    const auto oldest = oldestFinished();
    if (oldest == m_tasks.end())
        return false;
    drop(oldest, QStringLiteral("at most %1 tasks are kept").arg(kMaxTasks));
    return true;
}
