#include "language.h"

#include <QJsonArray>

QJsonObject Language::toJson() const
{
    return {{QStringLiteral("name"), name},
            {QStringLiteral("title"), title},
            {QStringLiteral("aliases"), QJsonArray::fromStringList(aliases)},
            {QStringLiteral("image"), image},
            {QStringLiteral("file_name"), fileName},
            {QStringLiteral("run_command"),
             compileCommand.isEmpty()
                 ? command.join(u' ')
                 : compileCommand + QStringLiteral(" && ") + command.join(u' ')},
            {QStringLiteral("compiled"), !compileCommand.isEmpty()},
            {QStringLiteral("libraries_installable"), !installCommand.isEmpty()},
            {QStringLiteral("package_manager"), packageManager},
            {QStringLiteral("preinstalled_libraries"), QJsonArray::fromStringList(preinstalled)},
            {QStringLiteral("use_cases"), QJsonArray::fromStringList(useCases)},
            {QStringLiteral("visualization_support"), visualization},
            {QStringLiteral("sessions"),
             liveSession ? QStringLiteral("live: variables, imports, functions, files and "
                                          "installed packages persist between calls")
                         : QStringLiteral("files and installed packages persist between calls; "
                                          "each call runs the program anew")},
            {QStringLiteral("examples"), QJsonArray{example}}};
}
