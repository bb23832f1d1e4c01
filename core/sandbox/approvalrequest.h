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
    QString client; // the assistant: its credential's name, else its clientInfo.name, whole
    // What identified it, and the name it claimed when that is another: "credential c-… (alpha),
    // claims 'claude-code'", "launched by /usr/bin/claude (pid 42, uid 1000)"; "" when nothing.
    QString identity;
    QString tool; // the tool it called
    QString language;
    QString code;
    int timeoutSec = 0;
    QStringList libraries;
    // The workspaces it asks for, each as "NAME (read-only)" or "NAME (copy-on-write)".
    QStringList workspaces;
    QList<QPair<QString, qint64>> files; // path and size of each input file
    QString sessionId;
    qint64 memoryBytes = 0;
    double cpus = 0;
    bool network = false;
    // With network: the only hosts the run may reach (the allow-list mode); empty: the open
    // network, when `network` is set.
    QStringList egress;
    // Set: not a run to start but a connection of a running one, held by the egress gateway:
    // the host it reaches for (a name or an address, as the program gave it) and its port. The
    // run's program, language and hosts are the fields above; "always" adds the host to the
    // assistant's list rather than letting its runs go unasked.
    QString host;
    int port = 0;
    QString runId;      // the run it belongs to (the window's list names it)
    QString instanceId; // the server that asks
    QString mode;       // how that server serves: "window", "stdio", "http"
    int waitSec = 0;    // how long it waits for an answer

    bool isConnection() const { return !host.isEmpty(); }
    // "host:port" ("[::1]:443" for an IPv6 address), as the window shows it and a policy lists it.
    QString hostPort() const;
    // The allow-list entry that lets its assistant reach this host from now on: the host alone
    // for the web's ports (an entry without a port covers 443 and 80), else with its port.
    QString hostPattern() const;

    QJsonObject toJson() const;
    static std::optional<ApprovalRequest> fromJson(const QJsonObject &json);
};
Q_DECLARE_METATYPE(ApprovalRequest)
