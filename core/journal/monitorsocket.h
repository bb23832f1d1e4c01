#pragma once

#include <QString>

// Where the desktop app listens for the execution events of headless instances: one socket per
// user, in a folder only that user can enter.
class MonitorSocket
{
public:
    // $CODE_SANDBOX_MONITOR_SOCKET, else $XDG_RUNTIME_DIR/code-sandbox/monitor.sock, else
    // <temp>/code-sandbox-<uid>/monitor.sock. The folder is created (mode 0700) when `create`.
    // Empty when that folder exists but is not this user's alone (nobody may listen there).
    static QString path(bool create = false);

    // Whether a server accepts connections on `path` now. A local connect is answered by the
    // kernel, whether or not the listener's event loop is busy, so this never waits.
    static bool isServed(const QString &path);
};
