#include "uilog.h"

Q_LOGGING_CATEGORY(lcUi, "sandbox.ui", QtInfoMsg)
