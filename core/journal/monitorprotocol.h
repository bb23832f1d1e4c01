#pragma once

#include "approvalrequest.h"
#include "journalevent.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <optional>
#include <variant>

// The messages of the monitor socket, in one place: one JSON object per line, its "type" saying
// which. Headless instances (MonitorPublisher, MonitorApprover) and a second launch of the app
// write to the window (MonitorServer); the window writes back to an instance. The lines are
// what they were before this class (old and new instances talk to each other), and everything
// read is a line from another process: decode trusts nothing, and anything it does not know
// is rejected with a reason, never half taken.
class MonitorProtocol
{
public:
    // Who reads a line: each side knows only the messages meant for it.
    enum class Direction
    {
        ToWindow,  // from an instance or a second launch to the window
        ToInstance // from the window to a headless instance
    };

    // To the window. An instance says who it is first; nothing else of it counts before.
    struct Hello
    {
        QString instance; // never empty
        qint64 pid = 0;
        QString mode; // how it serves: "stdio", "http"
        QString version;

        QJsonObject toJson() const;
    };
    // To the window, from a second launch of the app: show yourself.
    struct Show
    {
    };
    // To the window: a person is to approve a run (MonitorApprover).
    struct Approve
    {
        ApprovalRequest request;
    };
    // To the window: the question is no longer open (answered elsewhere, cancelled, timed out).
    struct Withdraw
    {
        QString id;  // never empty
        QString why; // cut to kMaxWhy characters when read
    };
    // To an instance: stop one of its runs.
    struct Stop
    {
        QString run; // never empty
    };
    // To an instance: a person's answer to one of its approvals.
    struct Answer
    {
        QString id;     // never empty
        QString answer; // "allow", "always", "deny" (RunApprover checks the name)
        QString reason;
    };
    // To the window: an assistant signing in (OAuth) to the instance's HTTP endpoint waits for
    // a person (the instance's OAuthServer's ConsentRequest). A Withdraw of its id ends it.
    struct SignIn
    {
        QString id; // never empty
        QString clientId;
        QString clientName;
        QString source;
        QString redirectUri;
        QString openedFrom; // "" from instances that do not say
    };
    // To an instance: a person's answer to one of its sign-ins.
    struct SignInAnswer
    {
        QString id; // never empty
        bool allow = false;
        QString assistant; // the name it runs as ("": its registered one)
    };
    // Execution events (JournalEvent) go to the window as they are.
    using Message = std::variant<Hello, Show, JournalEvent, Approve, Withdraw, Stop, Answer, SignIn,
                                 SignInAnswer>;

    struct Decoded
    {
        std::optional<Message> message;
        QString type;  // the line's "type", when it had one (for a log line)
        QString error; // why there is no message
    };

    // The longest line each side reads (its LineFramer's limit): a finished run with its
    // output and files can be large; what the window says is short.
    static constexpr qsizetype kMaxLineToWindow = 256 * 1024 * 1024;
    static constexpr qsizetype kMaxLineToInstance = 64 * 1024;
    static constexpr qsizetype kMaxWhy = 200;
    // A sign-in's fields are as long as the server lets them be (OAuthClients); longer is
    // not one of its questions.
    static constexpr qsizetype kMaxSignInField = 2048;

    static qsizetype maxLine(Direction direction);
    // One line, with its newline.
    static QByteArray encode(const Message &message);
    // One line as its reader's LineFramer gave it (without the newline).
    static Decoded decode(const QByteArray &line, Direction direction);
};
