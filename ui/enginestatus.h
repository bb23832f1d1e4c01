#pragma once

#include <QString>

// What the window says about the container engine.
struct EngineStatus
{
    bool known = false; // not asked yet
    bool reachable = false;
    QString product; // "Docker Engine", "Podman"
    QString version;
    QString apiVersion;
    QString socket;
    QString error; // why it does not answer
    QString fix;   // what to try
};
