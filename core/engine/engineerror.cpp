#include "engineerror.h"

QString EngineError::toString() const
{
    switch (kind) {
    case Kind::None:
        return QString();
    case Kind::Http:
        return QStringLiteral("container engine answered %1: %2").arg(status).arg(message);
    case Kind::Unreachable:
    case Kind::Protocol:
    case Kind::Closed:
    case Kind::Timeout:
    case Kind::TooLarge:
        return message;
    }
    return message;
}
