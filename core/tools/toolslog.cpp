#include "toolslog.h"

Q_LOGGING_CATEGORY(lcTools, "sandbox.tools", QtInfoMsg)
