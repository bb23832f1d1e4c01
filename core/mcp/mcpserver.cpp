#include "mcpserver.h"

#include "mcpsession.h"
#include "mcptransport.h"

McpServer::McpServer(const ServerInfo &info, QObject *parent) : QObject(parent), m_info(info) {}

QJsonObject McpServer::capabilities() const
{
    // Advertise only what is implemented: the tool and resource lists never change at run time.
    QJsonObject caps{{QStringLiteral("logging"), QJsonObject()}};
    if (!m_tools.all().isEmpty())
        caps.insert(QStringLiteral("tools"), QJsonObject{{QStringLiteral("listChanged"), false}});
    if (!m_resources.all().isEmpty())
        caps.insert(QStringLiteral("resources"),
                    QJsonObject{{QStringLiteral("subscribe"), false},
                                {QStringLiteral("listChanged"), false}});
    return caps;
}

McpSession *McpServer::openSession(McpTransport *transport)
{
    auto *session = new McpSession(this, transport, this);
    Q_EMIT sessionOpened(session);
    return session;
}
