#pragma once

#include "promptregistry.h"
#include "resourceregistry.h"
#include "toolregistry.h"

#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <functional>

class TaskStore;

struct ServerInfo
{
    QString name;
    QString title;
    QString version;
    QString instructions;
};

// What a server offers every session: its identity, tools, resources, prompts, completions.
// McpServer owns one and fills it; each McpSession only reads it, so a session never needs the
// server itself.
class McpCatalog
{
public:
    // completion/complete: (ref, argument {name, value}, context) → values to offer.
    using CompletionHandler = std::function<QStringList(
        const QJsonObject &ref, const QJsonObject &argument, const QJsonObject &context)>;

    explicit McpCatalog(const ServerInfo &info) : m_info(info) {}

    const ServerInfo &info() const { return m_info; }
    ToolRegistry &tools() { return m_tools; }
    const ToolRegistry &tools() const { return m_tools; }
    ResourceRegistry &resources() { return m_resources; }
    const ResourceRegistry &resources() const { return m_resources; }
    PromptRegistry &prompts() { return m_prompts; }
    const PromptRegistry &prompts() const { return m_prompts; }
    void setCompletionHandler(const CompletionHandler &handler) { m_completion = handler; }
    const CompletionHandler &completionHandler() const { return m_completion; }
    void setResourceSubscriptions(bool enabled) { m_subscriptions = enabled; }
    bool resourceSubscriptions() const { return m_subscriptions; }
    // Where tool calls that run as tasks are kept (null: no tasks). Shared by every session.
    TaskStore *taskStore() const { return m_taskStore; }
    void setTaskStore(TaskStore *store) { m_taskStore = store; }
    // Some tool may run as a task, and there is a store for it.
    bool offersTasks() const;
    // What initialize announces: only what is implemented (the lists never change at run time).
    QJsonObject capabilities() const;
    // What server/discover announces (2026-07-28): no subscriptions (no subscriptions/listen
    // here), tasks as the io.modelcontextprotocol/tasks extension.
    QJsonObject modernCapabilities() const;

private:
    ServerInfo m_info;
    ToolRegistry m_tools;
    ResourceRegistry m_resources;
    PromptRegistry m_prompts;
    CompletionHandler m_completion;
    bool m_subscriptions = false;
    TaskStore *m_taskStore = nullptr;
};
