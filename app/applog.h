#pragma once

#include <QLoggingCategory>

// The app's one logging category.
Q_DECLARE_LOGGING_CATEGORY(lcApp)
