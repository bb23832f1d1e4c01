#include "enginelog.h"

Q_LOGGING_CATEGORY(lcEngine, "sandbox.engine", QtInfoMsg)
