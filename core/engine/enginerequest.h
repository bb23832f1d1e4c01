#pragma once

#include <QByteArray>

// One HTTP/1.1 request to the engine. Bodies are small JSON documents or tar archives, so they
// are sent whole with a Content-Length.
struct EngineRequest
{
    QByteArray method;
    QByteArray path; // already versioned, e.g. /v1.41/containers/create
    QByteArray body;
    QByteArray contentType;
    bool upgrade = false; // attach: ask the engine to hijack the connection for raw streams

    QByteArray serialize() const;
};
