#pragma once

#include "missingimage.h"
#include "sandboxbackend.h"

#include <QDateTime>
#include <QString>

// The sentences that tell people and models about sandbox images: a tool's error when the image
// is missing, get_supported_languages' image list, and the window's notes beside a language. The
// sandbox room reports the facts (SandboxBackend::ImageStatus, MissingImage); this is the one
// place that words them, so that the window and the assistant read the same thing.
class ImageWording
{
public:
    // While the image is on its way or its build failed, a sentence naming `language`; empty in
    // the other states.
    static QString progress(const SandboxBackend::ImageStatus &status, const QString &language,
                            const QDateTime &now = QDateTime::currentDateTimeUtc());
    // Appended to the error of a run whose image is missing: wait for the build under way, or how
    // to build (or copy) the image; empty when there is no advice to give.
    static QString missingHint(const MissingImage &missing);
    // One line of an image list: the progress, how to build a missing image, or why the engine's
    // answer is not known; empty for a ready image.
    static QString listing(const SandboxBackend::ImageStatus &status, const QString &language,
                           const QString &image, const QString &buildName);
};
