#include "promptregistry.h"

QJsonObject PromptDefinition::toJson() const
{
    QJsonObject o{{QStringLiteral("name"), name}};
    if (!title.isEmpty())
        o.insert(QStringLiteral("title"), title);
    if (!description.isEmpty())
        o.insert(QStringLiteral("description"), description);
    if (!arguments.isEmpty())
        o.insert(QStringLiteral("arguments"), arguments);
    return o;
}

QString PromptDefinition::missingArgument(const QJsonObject &given) const
{
    for (const QJsonValue &a : arguments) {
        const QJsonObject arg = a.toObject();
        const QString argName = arg.value(u"name").toString();
        if (arg.value(u"required").toBool() && !given.value(argName).isString())
            return QStringLiteral("missing required argument '%1'").arg(argName);
    }
    return {};
}

const PromptDefinition *PromptRegistry::find(const QString &name) const
{
    for (const PromptDefinition &p : m_prompts)
        if (p.name == name)
            return &p;
    return nullptr;
}
