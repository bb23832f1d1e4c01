#pragma once

#include <QList>
#include <QPair>
#include <QProcessEnvironment>
#include <QStringList>

// The host variables named to enter the sandbox (--pass-through-env, its environment variable,
// or the window's settings), resolved against the host's environment in one place. Values are
// read once, here, and never logged.
struct PassThroughEnv
{
    QList<QPair<QString, QString>> values; // name and value, in the order named
    QStringList missing;                   // named but not set on the host

    // `names` must be valid names (AppSettings::isValidEnvName, the one check); the caller
    // refuses or drops the others with its own message.
    static PassThroughEnv resolve(const QStringList &names, const QProcessEnvironment &env);
};
