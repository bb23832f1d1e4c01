#pragma once

#include "taskstore.h"

#include <QJsonObject>
#include <memory>

class McpCatalog;
class McpReplies;
struct McpMessage;

// The tasks/* methods of both eras for one session: 2025-11-25's tasks/get, tasks/result,
// tasks/cancel and tasks/list, and 2026-07-28's tasks/get, tasks/cancel and tasks/update
// (extension io.modelcontextprotocol/tasks). A task belongs to the session's owner: to anyone
// else its id answers as one never issued. The session decides which methods its era has, and
// says who asks; this answers through McpReplies and knows nothing else of the session.
class TaskMethods
{
public:
    // Who asks and how, as the session knows it when the request arrives.
    struct Asker
    {
        QString owner;              // whose tasks the request may see
        bool modern = false;        // the request speaks revision 2026-07-28
        bool declaresTasks = false; // ... and its client declares the tasks extension
    };

    // `replies` answers for the session, which owns this and so outlives it.
    TaskMethods(const McpCatalog *catalog, McpReplies *replies);
    TaskMethods(const TaskMethods &) = delete;
    TaskMethods &operator=(const TaskMethods &) = delete;

    void handle(const McpMessage &m, const QJsonObject &params, const Asker &asker);

    // {"requiredCapabilities": the tasks extension}: the data of a -32021 about it.
    static QJsonObject tasksRequirement();

private:
    // The server's store, if any tool runs as a task; else the request is answered with
    // "method not found" and this is null.
    TaskStore *storeFor(const McpMessage &m) const;
    // A 2026-07-28 request needs the client to declare the tasks extension; false (and the
    // request answered with -32021) when it did not.
    bool allowed(const McpMessage &m, const Asker &asker) const;
    // The asker's task `taskId`, or null (and the request answered: to anyone but its owner
    // a task answers as an id never issued).
    const TaskStore::Task *taskOf(TaskStore *store, const McpMessage &m, const QString &taskId,
                                  const QString &owner) const;
    void get(const McpMessage &m, const QJsonObject &params, const Asker &asker);
    void result(const McpMessage &m, const QJsonObject &params, const Asker &asker);
    void cancel(const McpMessage &m, const QJsonObject &params, const Asker &asker);
    void list(const McpMessage &m, const Asker &asker);
    void update(const McpMessage &m, const QJsonObject &params, const Asker &asker);

    const McpCatalog *m_catalog;
    McpReplies *m_replies;
    // Gone with this, and so with the session: tasks/result answers when its task ends, which
    // may be after the session has gone.
    std::shared_ptr<char> m_alive = std::make_shared<char>();
};
