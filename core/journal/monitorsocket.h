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

    enum class Folder
    {
        Private,
        Missing,
        Unsafe
    };
    // The folder that holds `socketPath`: this user's alone (a real folder, not a link, owned by
    // this user, mode 0700 or narrower), not there, or unsafe (`why` says how). Looked at
    // again before every connection: the folder can appear, or change, after the instance starts.
    static Folder checkFolder(const QString &socketPath, QString *why = nullptr);

    // The user id of the process at the other end of a connected local socket (for a client,
    // the listener's, as it was when it listened); -1 when it cannot be told.
    static qint64 peerUid(qintptr descriptor);
};
