#include "backendlog.h"

Q_LOGGING_CATEGORY(lcBackend, "sandbox.backend", QtInfoMsg)
