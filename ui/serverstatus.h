#pragma once

#include <QString>

// What the window says about the MCP servers: its own HTTP endpoint and the headless instances
// that report to it.
struct ServerStatus
{
    bool httpEnabled = false;
    bool listening = false;
    QString url;   // http://127.0.0.1:8765/mcp
    QString token; // empty: no authentication
    QString error; // why it does not listen
    int httpSessions = 0;
    int instances = 0; // headless instances watched through the monitor socket
    QString binary;    // this program, for the assistant configurations
};
