#pragma once

#include "promptregistry.h"
#include "resourceregistry.h"
#include "toolregistry.h"

#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QString>
#include <functional>

class McpSession;
class McpTransport;

struct ServerInfo
{
    QString name;
    QString title;
    QString version;
    QString instructions;
};

// What all sessions share: identity, tools, resources, prompts. Each client connection (stdio)
// or HTTP session is a McpSession.
class McpServer : public QObject
{
    Q_OBJECT
public:
    // completion/complete: (ref, argument {name, value}, context) → values to offer.
    using CompletionHandler = std::function<QStringList(
        const QJsonObject &ref, const QJsonObject &argument, const QJsonObject &context)>;

    explicit McpServer(const ServerInfo &info, QObject *parent = nullptr);

    const ServerInfo &info() const { return m_info; }
    ToolRegistry &tools() { return m_tools; }
    const ToolRegistry &tools() const { return m_tools; }
    ResourceRegistry &resources() { return m_resources; }
    const ResourceRegistry &resources() const { return m_resources; }
    PromptRegistry &prompts() { return m_prompts; }
    const PromptRegistry &prompts() const { return m_prompts; }
    void setCompletionHandler(const CompletionHandler &handler) { m_completion = handler; }
    const CompletionHandler &completionHandler() const { return m_completion; }
    // Lets clients subscribe to resources; updates are announced with notifyResourceUpdated().
    void setResourceSubscriptions(bool enabled) { m_subscriptions = enabled; }
    bool resourceSubscriptions() const { return m_subscriptions; }
    QJsonObject capabilities() const;

    // The session serves the transport until it closes; both are then deleted.
    McpSession *openSession(McpTransport *transport);
    QList<McpSession *> sessions() const;
    // Sends notifications/resources/updated to every session subscribed to the URI.
    void notifyResourceUpdated(const QString &uri);

Q_SIGNALS:
    void sessionOpened(McpSession *session);

private:
    ServerInfo m_info;
    ToolRegistry m_tools;
    ResourceRegistry m_resources;
    PromptRegistry m_prompts;
    CompletionHandler m_completion;
    bool m_subscriptions = false;
    QList<QPointer<McpSession>> m_sessions;
};
