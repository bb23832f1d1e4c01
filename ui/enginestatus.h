#pragma once

#include <QString>

// What the window says about one container engine.
struct EngineStatus
{
    bool known = false; // not asked yet
    bool reachable = false;
    QString product; // "Docker Engine", "Podman"
    QString version;
    QString apiVersion;
    QString address;  // as the sandbox names it: a socket path, tcp://…, ssh://…
    QString error;    // why it does not answer
    QString fix;      // what to try
    int running = 0;  // runs of this window placed there, not finished
    int capacity = 0; // how many it runs well at once
    quint64 placed = 0;
    int cpus = 0; // 0: not known
    qint64 memoryBytes = 0;

    bool operator==(const EngineStatus &o) const
    {
        return known == o.known && reachable == o.reachable && product == o.product &&
               version == o.version && apiVersion == o.apiVersion && address == o.address &&
               error == o.error && fix == o.fix && running == o.running && capacity == o.capacity &&
               placed == o.placed && cpus == o.cpus && memoryBytes == o.memoryBytes;
    }
    bool operator!=(const EngineStatus &o) const { return !(*this == o); }
};
