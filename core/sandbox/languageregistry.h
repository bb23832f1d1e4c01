#pragma once

#include "language.h"

#include <QList>

// The languages this build knows, looked up by name or alias (case-insensitive).
class LanguageRegistry
{
public:
    static LanguageRegistry builtIn();

    void add(const Language &language) { m_languages.append(language); }
    const Language *find(const QString &nameOrAlias) const;
    const QList<Language> &all() const { return m_languages; }
    QStringList names() const;
    // Replaces the image of one language (--python-image, CONTAINER_IMAGE); false if unknown.
    bool setImage(const QString &nameOrAlias, const QString &image);

private:
    QList<Language> m_languages;
};
