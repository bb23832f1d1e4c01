#include "mcpcatalog.h"

QJsonObject McpCatalog::capabilities() const
{
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
    if (offersTasks())
        caps.insert(
            QStringLiteral("tasks"),
            QJsonObject{{QStringLiteral("list"), QJsonObject()},
                        {QStringLiteral("cancel"), QJsonObject()},
                        {QStringLiteral("requests"),
                         QJsonObject{{QStringLiteral("tools"),
                                      QJsonObject{{QStringLiteral("call"), QJsonObject()}}}}}});
    return caps;
}

bool McpCatalog::offersTasks() const
{
    if (!m_taskStore)
        return false;
    for (const ToolDefinition &t : m_tools.all())
        if (!t.taskSupport.isEmpty())
            return true;
    return false;
}

QJsonObject McpCatalog::modernCapabilities() const
{
    QJsonObject caps{{QStringLiteral("logging"), QJsonObject()}};
    if (!m_tools.all().isEmpty())
        caps.insert(QStringLiteral("tools"), QJsonObject());
    if (!m_resources.isEmpty())
        caps.insert(QStringLiteral("resources"), QJsonObject());
    // 2026-07-28 answers prompts/list even without prompts (an empty list is a cacheable
    // answer, which its caching rules ask for), so prompts are handled and declared.
    caps.insert(QStringLiteral("prompts"), QJsonObject());
    if (m_completion)
        caps.insert(QStringLiteral("completions"), QJsonObject());
    if (offersTasks())
        caps.insert(QStringLiteral("extensions"),
                    QJsonObject{{QStringLiteral("io.modelcontextprotocol/tasks"), QJsonObject()}});
    return caps;
}
