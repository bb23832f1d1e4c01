#include "language.h"

#include <QJsonArray>

QJsonObject Language::toJson() const
{
    return {{QStringLiteral("name"), name},
            {QStringLiteral("title"), title},
            {QStringLiteral("aliases"), QJsonArray::fromStringList(aliases)},
            {QStringLiteral("image"), image},
            {QStringLiteral("file_name"), fileName},
            {QStringLiteral("run_command"), command.join(u' ')},
            {QStringLiteral("package_manager"), packageManager},
            {QStringLiteral("preinstalled_libraries"), QJsonArray::fromStringList(preinstalled)},
            {QStringLiteral("use_cases"), QJsonArray::fromStringList(useCases)},
            {QStringLiteral("visualization_support"), visualization},
            {QStringLiteral("examples"), QJsonArray{example}}};
}
