#pragma once

#include "toolschemas.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>
#include <memory>
#include <optional>

class Execution;
class McpServer;
class RunGate;
struct LoneEngine;
class SandboxService;
class SessionManager;
class ToolCall;
struct ExecutionRequest;
struct SandboxConfig;
struct ExecutionResult;
struct Language;

// The product's tools and resources, with the names and arguments of the projects users move
// from: run_python_code and run_javascript_code (code-sandbox-mcp), execute_code,
// get_supported_languages and get_language_details (llm-sandbox). The run flow: a call's
// arguments, the gate, the run and its progress; what the results say is RunWording's.
class SandboxTools
{
public:
    // With `sessions`, the run tools take a session_id and the session tools are added
    // (SessionTools). With `gate`, every run passes the assistants' policies first (RunGate).
    static void registerAll(McpServer &server, SandboxService &sandbox,
                            SessionManager *sessions = nullptr, RunGate *gate = nullptr);

    // execute_code's `files` argument as input files; false with `error` set when a path escapes
    // the workdir, a path repeats, or base64 content does not decode.
    static bool parseFiles(const QJsonArray &files, const QString &programFile,
                           ExecutionRequest *request, QString *error);
    // A call's `network` (host patterns; [] for none) into `egress`, or why it cannot have it
    // on a server with `config`: a pattern that is not one, or a host beyond the server's
    // allow-list, or any host on a server without network. Empty when it may.
    static QString parseNetwork(const QJsonObject &args, const SandboxConfig &config,
                                std::optional<QStringList> *egress);
    // A call's `workspaces` (names of the server's --workspace folders) into `names`, or why it
    // cannot have them: a name the server does not have. Empty when it may.
    static QString parseWorkspaces(const QJsonObject &args, const SandboxConfig &config,
                                   QStringList *names);

private:
    // registerAll's parts; `values` fills the schema files' placeholders.
    struct RunContext;
    static void registerRunTools(McpServer &server, const RunContext &context,
                                 const ToolSchemas::Values &values);
    static void registerLanguageTools(McpServer &server, SandboxService &sandbox,
                                      const std::shared_ptr<LoneEngine> &lone,
                                      const ToolSchemas::Values &values);
    static void registerResources(McpServer &server, SandboxService &sandbox,
                                  const std::shared_ptr<LoneEngine> &lone);
    // Through the gate (when there is one), then startRun.
    static void runCode(const RunContext &context, ToolCall *call, const ExecutionRequest &request,
                        bool jsonText);
    // `gate` asks the window about held connections (an admitted request that asks for other
    // hosts); null: nobody to ask.
    static void startRun(const RunContext &context, ToolCall *call, const ExecutionRequest &request,
                         bool jsonText);
    // The rest of startRun: the call follows `execution` (progress, output as log lines, the
    // result, cancellation, and held connections put to the gate when `askOtherHosts`).
    static void followRun(const RunContext &context, ToolCall *call, Execution *execution,
                          const QString &hint, bool jsonText, bool askOtherHosts);
    // The run view (MCP Apps): its ui:// resource and the tools it calls (read_run_output,
    // stop_run), for clients that declare the extension only.
    static void registerViewTools(McpServer &server, const RunContext &context);
    static QJsonObject viewMeta();
    // The result's _meta for the run view: its id and the figures structuredContent lacks.
    // `snapshotOf`: {session_id, after_run} of a session's call, whose snapshot the view shows.
    static QJsonObject viewFigures(const ExecutionResult &result, const QString &viewId,
                                   const QJsonObject &snapshotOf);
    static constexpr const char *kViewUri = "ui://code-sandbox/run.html";
};
