#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <functional>

class McpServer;
class ToolCall;

// The tools, resources, prompts and completions that the official MCP conformance suite
// (@modelcontextprotocol/conformance) looks for by name, with the contents its scenarios check.
// They exist only to exercise the MCP library; the product never registers them.
class Fixtures
{
public:
    static void registerAll(McpServer &server);

private:
    static void addContentTools(McpServer &server);
    static void addStreamingTools(McpServer &server);
    static void addClientRequestTools(McpServer &server);
    static void addResources(McpServer &server);
    static void addPrompts(McpServer &server);
    static void addCompletions(McpServer &server);

    // Sends notifications one by one, `delayMs` apart, then finishes with `result`: the suite
    // checks that a client sees several of them before the answer.
    static void emitThenFinish(ToolCall *call, int steps, int delayMs,
                               const std::function<void(ToolCall *, int)> &notify,
                               const QJsonObject &result);
    // Asks the client for an elicitation with `requestedSchema` and reports what it answered.
    static void elicit(ToolCall *call, const QString &message, const QJsonObject &requestedSchema,
                       const QString &prefix);

    static QJsonObject noArguments();
    static QJsonObject result(const QJsonArray &content);
    static QJsonObject text(const QString &text);
    static QJsonObject image();
    static QJsonObject embedded(const QString &uri, const QString &mimeType, const QString &text);
};
