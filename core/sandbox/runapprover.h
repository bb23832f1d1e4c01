#pragma once

#include "approvalrequest.h"

#include <QObject>

// Whoever a person approves runs through: the window itself (in its own process), or the window
// reached over the monitor socket (a headless instance). The asking side (RunGate) keeps the
// deadline; an approver only carries questions and answers.
class RunApprover : public QObject
{
    Q_OBJECT
public:
    enum class Answer
    {
        AllowOnce,
        AllowAlways, // this run, and the assistant's runs from now on
        Deny
    };
    Q_ENUM(Answer)

    using QObject::QObject;
    // Whether a person can be asked now (a window is there).
    virtual bool isAvailable() const = 0;
    virtual void ask(const ApprovalRequest &request) = 0;
    // The question is void (answered elsewhere, timed out, the call was cancelled): the window
    // closes it. `why` is shown where it stays visible.
    virtual void withdraw(const QString &id, const QString &why) = 0;

    static QString answerName(Answer answer); // "allow", "always", "deny"
    static bool answerFromName(const QString &name, Answer *answer);

Q_SIGNALS:
    void answered(const QString &id, RunApprover::Answer answer, const QString &reason);
    // The window went away: questions still open will never be answered.
    void lost();
};
