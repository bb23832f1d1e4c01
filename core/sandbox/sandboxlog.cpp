#include "sandboxlog.h"

Q_LOGGING_CATEGORY(lcSandbox, "sandbox.run", QtInfoMsg)
