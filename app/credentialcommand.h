#pragma once

struct CommandLine;

// --new-credential, --list-credentials and --revoke-credential: the window's Settings →
// Assistants credentials, without a window.
class CredentialCommand
{
public:
    // The exit code: 0 done, 2 refused (the reason on stderr).
    static int run(const CommandLine &cl);
};
