#pragma once

#include <QByteArray>

class HttpResponder;

// Where an HttpResponder's bytes go, and whom it tells when its response is done: the
// connection that received the request. An interface, so that the responder does not depend on
// the connection that creates it.
class HttpResponseSink
{
public:
    virtual ~HttpResponseSink() = default;

    virtual void write(const QByteArray &bytes) = 0;
    // The response ended; the connection serves its next request or closes.
    virtual void responseFinished(HttpResponder *responder, bool keepAlive) = 0;
    // The responder was dropped without a complete response.
    virtual void abandon(HttpResponder *responder) = 0;
};
