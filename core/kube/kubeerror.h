#pragma once

#include <QByteArray>
#include <QString>

// Every failure of a request to the API server in one shape: the server's own `Status` (reason
// and message: "pods is forbidden: User … cannot create resource …") where it sent one,
// otherwise what went wrong on the way (no connection, TLS, no answer in time, a body too big,
// no credential to present).
struct KubeError
{
    enum class Kind
    {
        None,
        Credentials, // no token or certificate could be had (a plugin failed, a file is gone)
        Unreachable, // no connection to the API server
        Tls,         // the server's certificate was refused, or the handshake failed
        Timeout,     // no complete answer within the request's deadline
        TooLarge,    // the answer's body passed the client's byte cap
        Http         // the server answered with a status of 400 or more
    };

    Kind kind = Kind::None;
    int status = 0; // HTTP status for Http
    QString reason; // the Status's reason (Forbidden, NotFound, AlreadyExists, …) for Http
    QString message;

    bool isError() const { return kind != Kind::None; }
    bool isNotFound() const { return kind == Kind::Http && status == 404; }
    QString toString() const { return message; }

    // A non-2xx answer: the Status object's message when the body is one, else the status line
    // and the start of the body.
    static KubeError fromHttp(int status, const QByteArray &body);
};
