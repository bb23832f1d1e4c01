#pragma once

#include "language.h"

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
    // The run's own allow-list (the call's `network`, within what the server and the caller's
    // policy allow: the tools room checks): host patterns the program may reach through the
    // egress gateway; an empty list is no network. Without it, the server's choice
    // (--egress, --network, or none).
    std::optional<QStringList> egress;
    // With an allow-list: a connection to a host beyond it is held while a person decides (the
    // caller's policy says "ask" for other hosts), instead of refused at once.
    bool askOtherHosts = false;
    // What its runtime must be (SandboxSpec::isolation): its caller's policy's; "" any.
    QString isolation;
    // The names of the server's bound secrets (--secret) it gets: its caller's policy's. Without
    // it, all of them.
    std::optional<QStringList> secrets;
    QString sessionId; // the sandbox session it runs in; empty: a fresh container
    // `language` and the session as resolved once where the request is made (the tools room),
    // so the service and the session manager do not look them up again. Without `resolved`,
    // SandboxService::execute resolves `language` itself.
    std::optional<Language> resolved;
    QPointer<SandboxSession> session;
};
