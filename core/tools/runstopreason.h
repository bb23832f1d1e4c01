#pragma once

#include <QString>

// Why a run was stopped, in the words its caller reads (the tool result's "[cancelled: …]" and
// cancel_reason). The sandbox room passes a reason on as it is given (RunControl::stop,
// Execution::cancel) and words none itself: what callers are told is written here, in the room
// that writes tool results.
namespace RunStopReason {

// A person stopped it in the window: a run of the window's process, or of a headless instance
// that the window asked over the monitor socket.
inline QString fromWindow()
{
    return QStringLiteral("stopped from the Code Sandbox window");
}

// A person stopped it from the run's view in the chat (MCP Apps), through the client that
// called it.
inline QString fromView()
{
    return QStringLiteral("stopped by the user from the run's view in the chat");
}

} // namespace RunStopReason
