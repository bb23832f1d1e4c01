#pragma once

#include <QString>

// The per-call timeout a server applies: the default a call gets and the most one may ask for.
// The rule that turns what the user asked for into these two numbers is written here once; the
// command line and the window's settings both go through it.
struct CallTimeout
{
    int defaultSec = 0;
    int maxSec = 0;

    // `askedDefault`, `askedMax`: what the user set (0: nothing); `fallback`: what applies
    // otherwise. A default above the maximum raises it, unless the maximum was asked for too:
    // then it is an error (false, with `error` set). Without a default, the fallback's applies,
    // within the maximum.
    static bool resolve(int askedDefault, int askedMax, const CallTimeout &fallback,
                        CallTimeout *out, QString *error);
    // The timeout of one call that asked for `askedSec` (0: the default).
    int forCall(int askedSec) const;
};
