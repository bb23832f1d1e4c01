#include "calltimeout.h"

#include <QtGlobal>

bool CallTimeout::resolve(int askedDefault, int askedMax, const CallTimeout &fallback,
                          CallTimeout *out, QString *error)
{
    CallTimeout t;
    t.maxSec = askedMax > 0 ? askedMax : fallback.maxSec;
    if (askedDefault <= 0) {
        t.defaultSec = qMin(fallback.defaultSec, t.maxSec);
    } else if (askedMax > 0 && askedDefault > askedMax) {
        *error = QStringLiteral("--timeout %1 is above --max-timeout %2")
                     .arg(askedDefault)
                     .arg(askedMax);
        return false;
    } else {
        // Asking for a long default says that long calls are wanted: the maximum follows.
        t.defaultSec = askedDefault;
        t.maxSec = qMax(t.maxSec, askedDefault);
    }
    *out = t;
    return true;
}

int CallTimeout::forCall(int askedSec) const
{
    return qMin(askedSec > 0 ? askedSec : defaultSec, maxSec);
}
