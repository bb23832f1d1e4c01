#pragma once

class McpServer;

// The fixtures the conformance suite looks for under revision 2026-07-28 only: tools and a
// prompt that answer with InputRequiredResult (multi round-trip requests, SEP-2322), the
// capability check (-32021), and the tasks extension's tools (greet, slow_compute, failing_job).
// Like Fixtures, they exist only to exercise the MCP library.
class ModernFixtures
{
public:
    static void registerAll(McpServer &server);
};
