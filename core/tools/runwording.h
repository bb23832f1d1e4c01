#pragma once

#include <QJsonObject>
#include <QString>

struct ExecutionResult;
struct SandboxConfig;

// What a model and a person read of runs: a result's text and its MCP shape, and how the run
// tools describe this server's sandboxes (network, limits). Words only: the run flow is
// SandboxTools', and nothing here starts or follows a run.
class RunWording
{
public:
    // The text a model reads: stdout as is; stderr, exit status, timeout and truncation labelled.
    static QString formatText(const ExecutionResult &result, const QString &printHint);
    // The tool result: that text (or the structured result as JSON text, `jsonText`), figures as
    // images, other files as resources, structuredContent, isError for a failed run.
    static QJsonObject toolResult(const ExecutionResult &result, const QString &printHint,
                                  bool jsonText);
    static QJsonObject executionOutputSchema();
    // The `workspaces` argument's schema, naming this server's workspaces and their modes;
    // undefined (no argument) on a server without any.
    static QJsonValue workspacesFragment(const SandboxConfig &config);
    // The tools' `network` argument, saying what a call gets without it on this server.
    static QJsonObject networkFragment(const SandboxConfig &config);
    // What every run gets on this server, for the run tools' descriptions: its network (the
    // hosts, the bound secrets' variables), memory, CPU, timeout.
    static QString describeLimits(const SandboxConfig &config);
    // The network part of it: the hosts and how to reach them, or none.
    static QString describeNetwork(const SandboxConfig &config);
};
