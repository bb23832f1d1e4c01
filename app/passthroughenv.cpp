#include "passthroughenv.h"

PassThroughEnv PassThroughEnv::resolve(const QStringList &names, const QProcessEnvironment &env)
{
    PassThroughEnv r;
    for (const QString &name : names) {
        if (env.contains(name))
            r.values.append({name, env.value(name)});
        else
            r.missing.append(name);
    }
    return r;
}
