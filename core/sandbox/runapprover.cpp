#include "runapprover.h"

QString RunApprover::answerName(Answer answer)
{
    switch (answer) {
    case Answer::AllowOnce:
        return QStringLiteral("allow");
    case Answer::AllowAlways:
        return QStringLiteral("always");
    case Answer::Deny:
        return QStringLiteral("deny");
    }
    return QStringLiteral("deny");
}

bool RunApprover::answerFromName(const QString &name, Answer *answer)
{
    for (Answer a : {Answer::AllowOnce, Answer::AllowAlways, Answer::Deny}) {
        if (name == answerName(a)) {
            *answer = a;
            return true;
        }
    }
    return false;
}
