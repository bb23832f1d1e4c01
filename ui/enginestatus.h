#pragma once

#include <QString>
#include <QStringList>

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
    QString runtime;      // its sandboxes' runtime ("" the engine's default)
    QStringList runtimes; // the ones it has, once it said

    bool operator==(const EngineStatus &o) const
    {
        return known == o.known && reachable == o.reachable && product == o.product &&
               version == o.version && apiVersion == o.apiVersion && address == o.address &&
               error == o.error && fix == o.fix && running == o.running && capacity == o.capacity &&
               placed == o.placed && cpus == o.cpus && memoryBytes == o.memoryBytes &&
               runtime == o.runtime && runtimes == o.runtimes;
    }
    bool operator!=(const EngineStatus &o) const { return !(*this == o); }
};
