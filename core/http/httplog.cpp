#include "httplog.h"

Q_LOGGING_CATEGORY(lcHttp, "sandbox.http", QtInfoMsg)
