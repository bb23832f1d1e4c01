#pragma once

#include <QString>

// Every failure of the engine client — a refused connection, a non-2xx answer, a malformed
// response — is reduced to this one type so callers handle a single shape of error.
struct EngineError
{
    enum class Kind
    {
        None,
        Unreachable,
        Http,
        Protocol,
        Closed,
        Timeout, // no byte of the answer for the client's request timeout
        TooLarge // the answer's body passed the request's byte cap; the connection was dropped
    };

    Kind kind = Kind::None;
    int status = 0;  // HTTP status for Kind::Http
    QString message; // the engine's own "message" where it sent one

    bool isError() const { return kind != Kind::None; }
    bool isNotFound() const { return kind == Kind::Http && status == 404; }
    QString toString() const;

    static EngineError http(int status, const QString &message)
    {
        return {Kind::Http, status, message};
    }
    static EngineError of(Kind kind, const QString &message) { return {kind, 0, message}; }
};
