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
// Nothing of what runs is ever cut: the program, the libraries and the files (names and sizes)
// travel whole, so the person allows exactly what runs. Their size is bounded by the tool call
// they come from (64 MiB a stdio message, 4 MiB an HTTP body) and by the monitor socket's line
// (256 MiB), which a request cannot get near. The other fields name things; one longer than its
// bound makes the request invalid rather than shortened.
struct ApprovalRequest
{
    QString id;     // unique (a UUID)
    QString client; // the assistant's clientInfo.name ("" when it gave none), whole
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
    // With network: the only hosts the run may reach (the allow-list mode); empty: the open
    // network, when `network` is set.
    QStringList egress;
    QString instanceId; // the server that asks
    QString mode;       // how that server serves: "window", "stdio", "http"
    int waitSec = 0;    // how long it waits for an answer

    QJsonObject toJson() const;
    static std::optional<ApprovalRequest> fromJson(const QJsonObject &json);
};
Q_DECLARE_METATYPE(ApprovalRequest)
