#include "mcpserver.h"

#include "mcpsession.h"
#include "mcptransport.h"
#include "taskstore.h"

McpServer::McpServer(const ServerInfo &info, QObject *parent) : QObject(parent), m_catalog(info)
{
    m_catalog.setTaskStore(new TaskStore(this));
}

McpSession *McpServer::openRequest(McpTransport *transport, const QString &owner)
{
    auto *session = new McpSession(&m_catalog, transport, this);
    session->setOwner(owner);
    return session;
}

McpSession *McpServer::openSession(McpTransport *transport)
{
    auto *session = new McpSession(&m_catalog, transport, this);
    m_sessions.append(session);
    m_sessions.removeIf([](const QPointer<McpSession> &s) { return s.isNull(); });
    Q_EMIT sessionOpened(session);
    return session;
}

QList<McpSession *> McpServer::sessions() const
{
    QList<McpSession *> out;
    for (const auto &s : m_sessions)
        if (s)
            out.append(s);
    return out;
}

void McpServer::notifyResourceUpdated(const QString &uri)
{
    for (McpSession *s : sessions())
        s->resourceUpdated(uri);
}
