#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <functional>

class ToolCall;

struct ToolDefinition
{
    QString name;
    QString title;
    QString description;
    QJsonObject inputSchema;
    QJsonObject outputSchema; // empty: none declared
    QJsonObject annotations;
    // Whether a call may run as a task (tools/call answered at once with a task handle, the
    // result polled with tasks/get): empty (never, the default), "optional" or "required".
    QString taskSupport;
    // MCP Apps: the tool's _meta.ui (resourceUri of its view, visibility). Shown, and an
    // app-only tool (visibility ["app"]: called by a view, never by the model) listed and
    // callable, only for clients that declare the extension; other clients see the tool list
    // as it would be without views.
    QJsonObject ui;
    bool appOnly = false;
    // Called with arguments already validated against inputSchema.
    std::function<void(ToolCall *)> handler;

    QJsonObject toJson() const;
    // toJson() with _meta.ui (and the legacy _meta["ui/resourceUri"] older hosts read).
    QJsonObject toJsonForUi() const;

    // A schema property: {"type": type, "description": description}.
    static QJsonObject property(const QString &type, const QString &description);
    // Annotations of a tool that touches nothing outside its sandbox (not destructive, no open
    // world); read-only tools are also idempotent.
    static QJsonObject localAnnotations(const QString &title, bool readOnly);
};

class ToolRegistry
{
public:
    // Refuses names outside MCP's 1–128 [A-Za-z0-9_.-] and duplicates.
    bool add(const ToolDefinition &tool);
    const ToolDefinition *find(const QString &name) const;
    const QList<ToolDefinition> &all() const { return m_tools; }
    static bool isValidName(const QString &name);

private:
    QList<ToolDefinition> m_tools;
};
