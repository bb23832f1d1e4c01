#include "journallog.h"

Q_LOGGING_CATEGORY(lcJournal, "sandbox.journal", QtInfoMsg)
