#include "applog.h"

Q_LOGGING_CATEGORY(lcApp, "sandbox.app", QtInfoMsg)
