#pragma once

#include <QString>

// The HTTP bearer token kept in the user's config directory: generated once (256 random bits),
// readable only by the user, shown by --print-token.
class TokenStore
{
public:
    static QString path();
    // The stored token, created on first use; empty with `error` set when it cannot be.
    static QString loadOrCreate(QString *error);
};
