#pragma once

#include "sandboxbackend.h"

#include <QString>

// The facts about a sandbox image an engine does not have, as the sandbox room knows them when a
// create fails: which image, for which language, where, and what the image builder says of it.
// The room that answers people and models words them (ImageWording); this room words none.
struct MissingImage
{
    QString image;
    QString language;  // canonical name, e.g. "go"
    QString buildName; // containers/build-images.sh's argument for it ("" when there is none)
    QString endpoint;  // the engine (or cluster) that lacks it
    bool severalEngines = false;
    SandboxBackend::ImageStatus build; // the image builder's status, read at the failure
};
