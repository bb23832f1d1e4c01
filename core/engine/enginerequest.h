#pragma once

#include <QByteArray>

// One HTTP/1.1 request to the engine. Bodies are small JSON documents or tar archives, so they
// are sent whole with a Content-Length.
struct EngineRequest
{
    // What any answer may hold unless the request says otherwise: far above any JSON the engine
    // sends (a container list of thousands), far below what would hurt the server. An archive of
    // a sandbox's files asks for much less (its byte budget), so a file that only claims its
    // size, like a sparse one, cannot make the server hold it.
    static constexpr qint64 kDefaultMaxBodyBytes = 64 * 1024 * 1024;

    QByteArray method;
    QByteArray path; // already versioned, e.g. /v1.41/containers/create
    QByteArray body;
    QByteArray contentType;
    bool upgrade = false; // attach: ask the engine to hijack the connection for raw streams
    // The answer's body is read up to this many bytes; past it the request fails with
    // EngineError::Kind::TooLarge and the connection is dropped mid-answer.
    qint64 maxBodyBytes = kDefaultMaxBodyBytes;

    QByteArray serialize() const;
};
