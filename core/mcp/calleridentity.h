#pragma once

#include <QString>

// Who is behind an MCP connection as far as the server can tell without taking the client's
// word for it: the credential its HTTP requests carried, or the program that launched a stdio
// instance. The name in clientInfo is only a claim; this is what policies trust first.
struct CallerIdentity
{
    QString transport;      // "stdio", "http"; "" in tests and for in-process callers
    QString credentialId;   // the credential of its HTTP requests; "": the shared token, no auth
    QString credentialName; // the assistant that credential was made for
    // A stdio instance: the program that started it (its parent process).
    QString launcher;        // that program's executable, resolved
    QString launcherCommand; // its command line, arguments joined with spaces
    qint64 launcherPid = 0;
    qint64 launcherUid = -1;

    bool hasCredential() const { return !credentialId.isEmpty(); }
    // The name this caller runs as: its credential's whatever it claims, else its claim.
    QString assistant(const QString &claimed) const
    {
        return hasCredential() ? credentialName : claimed;
    }
    // "credential c-1a2b3c4d (Claude Code)", "launched by /usr/bin/claude (pid 42, uid 1000)",
    // "the shared token"; "" when nothing is known.
    QString describe() const;

    // The launcher of this process as /proc tells it (nothing filled where /proc is silent).
    static CallerIdentity ofParentProcess();
};
