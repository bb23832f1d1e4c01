#pragma once

#include <QString>

struct CommandLine;

// Which bearer token an HTTP server started with these options would use, and where it comes
// from; the server and --print-token both ask here, so they cannot disagree. In order:
// --token-file, --token, CODE_SANDBOX_TOKEN, then the token store (generated on first use).
class HttpToken
{
public:
    struct Resolved
    {
        QString token;  // empty on error or with --no-auth
        QString source; // for the startup line: "the token file /x", "the token store /y", …
        QString error;
        bool stored = false; // from the token store
    };

    // `storePath`: the token store's file (TokenStore::defaultPath() outside tests).
    static Resolved resolve(const CommandLine &cl, const QString &storePath);
};
