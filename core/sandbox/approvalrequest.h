#pragma once

#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QPair>
#include <QString>
#include <QStringList>
#include <optional>

// A run waiting for a person's approval: everything the window shows before they decide. It
// crosses the monitor socket as JSON from a headless instance, so fromJson trusts nothing.
struct ApprovalRequest
{
    QString id;     // unique (a UUID)
    QString client; // the assistant's clientInfo.name ("" when it gave none)
    QString tool;   // the tool it called
    QString language;
    QString code;
    int timeoutSec = 0;
    QStringList libraries;
    QList<QPair<QString, qint64>> files; // path and size of each input file
    QString sessionId;
    qint64 memoryBytes = 0;
    double cpus = 0;
    bool network = false;
    QString instanceId; // the server that asks
    QString mode;       // how that server serves: "window", "stdio", "http"
    int waitSec = 0;    // how long it waits for an answer

    // Code, as shown and as sent, is cut at this size (the call itself keeps all of it).
    static constexpr qsizetype kMaxCode = 256 * 1024;

    QJsonObject toJson() const;
    static std::optional<ApprovalRequest> fromJson(const QJsonObject &json);
};
Q_DECLARE_METATYPE(ApprovalRequest)
