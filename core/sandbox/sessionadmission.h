#pragma once

#include <QString>

class SandboxSession;

// Whether a call may use a session, as SessionManager::admit (or lookup) decides: the session, or
// why not, as facts. The tools room words them for the caller.
struct SessionAdmission
{
    enum class Refusal
    {
        None,          // admitted: `session` is the caller's, ready for the call
        Unknown,       // no such session here (or another caller's, which is not theirs to learn)
        Ended,         // it ended: `endedReason` says why
        OtherInstance, // the id names another instance of this server: `instance`
        OtherLanguage, // `session` runs another language than the call's
        Libraries,     // the call names libraries, which a session installs only when created
        Starting,      // `session` is still starting
        Busy           // `session` runs another call
    };

    Refusal refusal = Refusal::Unknown;
    // The caller's session: set when admitted and for the refusals about the session itself
    // (OtherLanguage, Libraries, Starting, Busy).
    SandboxSession *session = nullptr;
    QString endedReason; // Ended
    QString instance;    // OtherInstance: the instance tag the id names
    QString here;        // OtherInstance: this instance's tag
    QString asked;       // OtherLanguage: the call's language

    bool admitted() const { return refusal == Refusal::None; }
};
