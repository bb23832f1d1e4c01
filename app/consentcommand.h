#pragma once

struct CommandLine;

// --approve-client and --deny-client: a person's answer to an assistant waiting to sign in, for a
// server that has no window to ask (its sign-in page shows the command). Sent to the server at
// --host and --port with the shared token, which only the user holds.
class ConsentCommand
{
public:
    // The exit code: 0 answered, 2 not (the reason on stderr).
    static int run(const CommandLine &cl);
};
