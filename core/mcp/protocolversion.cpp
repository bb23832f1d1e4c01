#include "protocolversion.h"

QStringList ProtocolVersion::supported()
{
    return {kLatest, QStringLiteral("2025-06-18"), QStringLiteral("2025-03-26"),
            QStringLiteral("2024-11-05")};
}

bool ProtocolVersion::isSupported(const QString &version)
{
    return supported().contains(version);
}

QString ProtocolVersion::negotiate(const QString &requested)
{
    return isSupported(requested) ? requested : kLatest;
}
