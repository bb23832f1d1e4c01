#pragma once

#include "resourceregistry.h"
#include "toolregistry.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

class McpSession;
class McpTransport;

struct ServerInfo
{
    QString name;
    QString title;
    QString version;
    QString instructions;
};

// What all sessions share: identity, tools and resources. Each client connection is a session.
class McpServer : public QObject
{
    Q_OBJECT
public:
    explicit McpServer(const ServerInfo &info, QObject *parent = nullptr);

    const ServerInfo &info() const { return m_info; }
    ToolRegistry &tools() { return m_tools; }
    const ToolRegistry &tools() const { return m_tools; }
    ResourceRegistry &resources() { return m_resources; }
    const ResourceRegistry &resources() const { return m_resources; }
    QJsonObject capabilities() const;

    // The session serves the transport until it closes; both are then deleted.
    McpSession *openSession(McpTransport *transport);

Q_SIGNALS:
    void sessionOpened(McpSession *session);

private:
    ServerInfo m_info;
    ToolRegistry m_tools;
    ResourceRegistry m_resources;
};
