#pragma once

#include "jsonrpcmessage.h"
#include "protocolera.h"

#include <QByteArray>

// One incoming MCP message as a transport hands it to its session: parsed once, with its era
// decided once (by the body alone on stdio; with the headers on Streamable HTTP). The session
// neither parses nor classifies again.
struct McpMessage : JsonRpcMessage
{
    ProtocolEra::Verdict era;

    McpMessage() = default;
    McpMessage(const JsonRpcMessage &message, const ProtocolEra::Verdict &verdict)
        : JsonRpcMessage(message), era(verdict)
    {}

    // A message that is nothing but its bytes (a stdio line): its era follows from its body.
    static McpMessage parse(const QByteArray &bytes)
    {
        const JsonRpcMessage m = JsonRpcMessage::parse(bytes);
        return {m, ProtocolEra::classify(m)};
    }
};
