#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <functional>

struct PromptDefinition
{
    QString name;
    QString title;
    QString description;
    QJsonArray arguments; // [{name, description?, required?}]
    // Returns {description?, messages:[…]} for validated arguments.
    std::function<QJsonObject(const QJsonObject &arguments)> get;
    // Instead of get, when set: the whole request's params (2026-07-28 multi round-trip
    // requests carry inputResponses and requestState beside the arguments).
    std::function<QJsonObject(const QJsonObject &params)> getWithParams;

    QJsonObject toJson() const;
    // Empty when every required argument is present, else the message naming the missing one.
    QString missingArgument(const QJsonObject &arguments) const;
};

class PromptRegistry
{
public:
    void add(const PromptDefinition &prompt) { m_prompts.append(prompt); }
    const PromptDefinition *find(const QString &name) const;
    const QList<PromptDefinition> &all() const { return m_prompts; }

private:
    QList<PromptDefinition> m_prompts;
};
