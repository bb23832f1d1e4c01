#pragma once

#include "language.h"
#include "languageregistry.h"

#include <QString>

// A language of the built-in table, for tests that render its sandboxes; one the test itself
// names wrongly ends the test at once.
inline const Language &builtInLanguage(const QString &name)
{
    static const LanguageRegistry registry = LanguageRegistry::builtIn();
    const Language *l = registry.find(name);
    if (!l)
        qFatal("unknown language in the test itself");
    return *l;
}
