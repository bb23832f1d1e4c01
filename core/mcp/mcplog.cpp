#include "mcplog.h"

Q_LOGGING_CATEGORY(lcMcp, "sandbox.mcp", QtInfoMsg)
