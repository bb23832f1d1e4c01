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
    return caps;
}
