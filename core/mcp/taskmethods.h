#pragma once

#include "taskstore.h"

#include <QJsonObject>

class McpCatalog;
class McpSession;
struct McpMessage;

// The tasks/* methods of both eras for one session: 2025-11-25's tasks/get, tasks/result,
// tasks/cancel and tasks/list, and 2026-07-28's tasks/get, tasks/cancel and tasks/update
// (extension io.modelcontextprotocol/tasks). A task belongs to the session's owner: to anyone
// else its id answers as one never issued. The session decides which methods its era has.
class TaskMethods
{
public:
    TaskMethods(const McpCatalog *catalog, McpSession *session);

    void handle(const McpMessage &m, const QJsonObject &params);

    // {"requiredCapabilities": the tasks extension}: the data of a -32021 about it.
    static QJsonObject tasksRequirement();

private:
    // The server's store, if any tool runs as a task; else the request is answered with
    // "method not found" and this is null.
    TaskStore *storeFor(const McpMessage &m) const;
    // A 2026-07-28 request needs the client to declare the tasks extension; false (and the
    // request answered with -32021) when it did not.
    bool allowed(const McpMessage &m) const;
    // The caller's task `taskId`, or null (and the request answered: to anyone but its owner
    // a task answers as an id never issued).
    const TaskStore::Task *taskOf(TaskStore *store, const McpMessage &m,
                                  const QString &taskId) const;
    void get(const McpMessage &m, const QJsonObject &params);
    void result(const McpMessage &m, const QJsonObject &params);
    void cancel(const McpMessage &m, const QJsonObject &params);
    void list(const McpMessage &m);
    void update(const McpMessage &m, const QJsonObject &params);

    const McpCatalog *m_catalog;
    McpSession *m_session;
};
