#pragma once

#include "language.h"
#include "runnetwork.h"

#include <QByteArray>
#include <QList>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <optional>

class SandboxSession;

// A file placed in the workdir before the program starts.
struct InputFile
{
    QString path; // relative to the workdir, normalised (see WorkdirPath)
    QByteArray content;
};

struct ExecutionRequest
{
    ExecutionRequest() = default;
    ExecutionRequest(const QString &language, const QString &code, int timeoutSec = 0)
        : language(language), code(code), timeoutSec(timeoutSec)
    {}

    QString language; // name or alias
    QString code;
    int timeoutSec = 0; // 0: the configured default
    QList<InputFile> files;
    // Packages installed with the language's package manager before the run.
    QStringList libraries;
    // Who asked (the MCP client's name, or "manual") and through which tool: shown in the
    // window and kept in the history, never given to the program.
    QString source;
    QString tool;
    // The name the client claimed (clientInfo) when `source` is another (its credential's),
    // and what identifies the caller ("credential c-… (name)", "launched by …"): the window
    // shows both beside the source. `identityNote`: why it ran under the default policy when
    // its name points to another (AssistantPolicies::forCaller), a note on its record.
    QString claimedName;
    QString identity;
    QString identityNote;
    // Its network as decided once (RunNetwork::decide: RunGate from the server's settings, the
    // caller's policy and the call's `network`; a session's run gets its session's): what its
    // sandbox reaches, the record keeps and a person is shown. Without it, the server's (filled
    // in by SandboxService::execute).
    std::optional<RunNetwork> network;
    // The server's workspaces (SandboxConfig::workspaces) the run asked for, by name, checked
    // against the server's list and the caller's policy where the request is made.
    QStringList workspaces;
    QString sessionId; // the sandbox session it runs in; empty: a fresh container
    // `language` and the session as resolved once where the request is made (the tools room),
    // so the service and the session manager do not look them up again. Without `resolved`,
    // SandboxService::execute resolves `language` itself.
    std::optional<Language> resolved;
    QPointer<SandboxSession> session;
};
