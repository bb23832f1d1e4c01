#include "enginerequest.h"

QByteArray EngineRequest::serialize() const
{
    QByteArray out;
    out.reserve(160 + body.size());
    out += method + ' ' + path + " HTTP/1.1\r\nHost: docker\r\nUser-Agent: code-sandbox\r\n";
    if (upgrade)
        out += "Connection: Upgrade\r\nUpgrade: tcp\r\n";
    if (!contentType.isEmpty())
        out += "Content-Type: " + contentType + "\r\n";
    if (!body.isEmpty() || method == "POST" || method == "PUT")
        out += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    out += "\r\n";
    out += body;
    return out;
}
