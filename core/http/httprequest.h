#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QMetaType>
#include <QPair>

// One complete HTTP request as HttpServer hands it to its handler, body included.
struct HttpRequest
{
    QByteArray method; // "POST"
    QByteArray path;   // "/mcp": the target without query and fragment, not percent-decoded
    QByteArray query;  // after '?', may be empty
    // In the order received, names as spelled by the client; values trimmed, folds unfolded.
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray body;
    QHostAddress peer;

    // Field names are case-insensitive (RFC 9110 5.1); the first of repeated fields wins.
    QByteArray header(const QByteArray &name) const
    {
        for (const auto &h : headers)
            if (h.first.compare(name, Qt::CaseInsensitive) == 0)
                return h.second;
        return {};
    }
};

// So that handlers may receive requests through queued connections too.
Q_DECLARE_METATYPE(HttpRequest)
