#pragma once

#include <QString>
#include <QStringList>

// The MCP revisions this server speaks, newest first. All version logic lives here.
namespace ProtocolVersion {
inline const QString kLatest = QStringLiteral("2025-11-25");
QStringList supported();
bool isSupported(const QString &version);
// The client's version when we speak it, else our latest (the client then decides).
QString negotiate(const QString &requested);
// Streamable HTTP: a request without MCP-Protocol-Version is taken as this revision.
inline const QString kHttpDefault = QStringLiteral("2025-03-26");
} // namespace ProtocolVersion
