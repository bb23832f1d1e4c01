#include "kubelog.h"

Q_LOGGING_CATEGORY(lcKube, "sandbox.kube", QtInfoMsg)
