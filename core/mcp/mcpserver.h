#pragma once

#include "mcpcatalog.h"

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <functional>

class McpSession;
class McpTransport;
class TaskStore;

// What all sessions share: identity, tools, resources, prompts. Each client connection (stdio)
// or HTTP session is a McpSession.
class McpServer : public QObject
{
    Q_OBJECT
public:
    using CompletionHandler = McpCatalog::CompletionHandler;

    explicit McpServer(const ServerInfo &info, QObject *parent = nullptr);

    const McpCatalog &catalog() const { return m_catalog; }
    const ServerInfo &info() const { return m_catalog.info(); }
    ToolRegistry &tools() { return m_catalog.tools(); }
    const ToolRegistry &tools() const { return m_catalog.tools(); }
    ResourceRegistry &resources() { return m_catalog.resources(); }
    const ResourceRegistry &resources() const { return m_catalog.resources(); }
    PromptRegistry &prompts() { return m_catalog.prompts(); }
    const PromptRegistry &prompts() const { return m_catalog.prompts(); }
    void setCompletionHandler(const CompletionHandler &handler)
    {
        m_catalog.setCompletionHandler(handler);
    }
    const CompletionHandler &completionHandler() const { return m_catalog.completionHandler(); }
    // Lets clients subscribe to resources; updates are announced with notifyResourceUpdated().
    void setResourceSubscriptions(bool enabled) { m_catalog.setResourceSubscriptions(enabled); }
    bool resourceSubscriptions() const { return m_catalog.resourceSubscriptions(); }
    QJsonObject capabilities() const { return m_catalog.capabilities(); }

    // The session serves the transport until it closes; both are then deleted.
    McpSession *openSession(McpTransport *transport);
    // One request of revision 2026-07-28 over HTTP: a session that lives for that request only,
    // is not listed in sessions() and not announced; its calls belong to `owner`.
    McpSession *openRequest(McpTransport *transport, const QString &owner);
    TaskStore *tasks() const { return m_catalog.taskStore(); }
    QList<McpSession *> sessions() const;
    // Sends notifications/resources/updated to every session subscribed to the URI.
    void notifyResourceUpdated(const QString &uri);

Q_SIGNALS:
    void sessionOpened(McpSession *session);

private:
    McpCatalog m_catalog;
    QList<QPointer<McpSession>> m_sessions;
};
