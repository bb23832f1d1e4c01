#include "mcpserver.h"

#include "mcpsession.h"
#include "mcptransport.h"

McpServer::McpServer(const ServerInfo &info, QObject *parent) : QObject(parent), m_info(info) {}

QJsonObject McpServer::capabilities() const
{
    // Advertise only what is implemented: the lists never change at run time.
    QJsonObject caps{{QStringLiteral("logging"), QJsonObject()}};
    if (!m_tools.all().isEmpty())
        caps.insert(QStringLiteral("tools"), QJsonObject{{QStringLiteral("listChanged"), false}});
    if (!m_resources.isEmpty())
        caps.insert(QStringLiteral("resources"),
                    QJsonObject{{QStringLiteral("subscribe"), m_subscriptions},
                                {QStringLiteral("listChanged"), false}});
    if (!m_prompts.all().isEmpty())
        caps.insert(QStringLiteral("prompts"), QJsonObject{{QStringLiteral("listChanged"), false}});
    if (m_completion)
        caps.insert(QStringLiteral("completions"), QJsonObject());
    return caps;
}

McpSession *McpServer::openSession(McpTransport *transport)
{
    auto *session = new McpSession(this, transport, this);
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
