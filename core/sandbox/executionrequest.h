#pragma once

#include <QString>

struct ExecutionRequest
{
    QString language; // name or alias
    QString code;
    int timeoutSec = 0; // 0: the configured default
};
