#include "credentialcommand.h"

#include "commandline.h"
#include "credentialstore.h"

#include <QHostAddress>
#include <cstdio>

namespace {
QString endpointUrl(const CommandLine &cl)
{
    const QHostAddress address(cl.httpHost);
    const QString host = address.protocol() == QAbstractSocket::IPv6Protocol
                             ? QStringLiteral("[%1]").arg(cl.httpHost)
                             : cl.httpHost;
    return QStringLiteral("http://%1:%2/mcp").arg(host).arg(cl.httpPort);
}

QString when(const QDateTime &time)
{
    return time.isValid() ? time.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"))
                          : QStringLiteral("never");
}

int makeOne(CredentialStore &store, const CommandLine &cl)
{
    QString error;
    const auto made = store.create(cl.credentialName, &error);
    if (!made) {
        std::fprintf(stderr, "code-sandbox: --new-credential: %s\n", qPrintable(error));
        return 2;
    }
    // The secret alone on stdout, so that $(code-sandbox --new-credential NAME) is it; the
    // rest is for the person reading.
    std::fprintf(stdout, "%s\n", qPrintable(made->secret));
    std::fflush(stdout);
    std::fprintf(stderr,
                 "code-sandbox: credential %s made for '%s' (stored hashed in %s; this is the "
                 "only time it is shown).\n"
                 "  Claude Code: claude mcp add --transport http code-sandbox %s \\\n"
                 "                 --header \"Authorization: Bearer %s\"\n"
                 "  Revoke it:   code-sandbox --revoke-credential %s\n",
                 qPrintable(made->credential.id), qPrintable(made->credential.name),
                 qPrintable(store.path()), qPrintable(endpointUrl(cl)), qPrintable(made->secret),
                 qPrintable(made->credential.id));
    return 0;
}
} // namespace

int CredentialCommand::run(const CommandLine &cl)
{
    CredentialStore store(CredentialStore::defaultPath());
    if (cl.credentialAction == u"new")
        return makeOne(store, cl);
    if (cl.credentialAction == u"revoke") {
        QString error;
        const int revoked = store.revoke(cl.credentialName, &error);
        if (revoked == 0) {
            std::fprintf(stderr, "code-sandbox: --revoke-credential: %s\n", qPrintable(error));
            return 2;
        }
        std::fprintf(stdout, "revoked %d credential(s) of '%s'\n", revoked,
                     qPrintable(cl.credentialName));
        return 0;
    }
    const QList<Credential> all = store.list();
    if (all.isEmpty()) {
        std::fprintf(stdout, "No credentials (code-sandbox --new-credential NAME makes one); "
                             "HTTP clients use the shared token.\n");
        return 0;
    }
    std::fprintf(stdout, "%-12s %-24s %-17s %-17s %s\n", "ID", "ASSISTANT", "MADE", "LAST USED",
                 "KIND");
    for (const Credential &c : all)
        std::fprintf(stdout, "%-12s %-24s %-17s %-17s %s\n", qPrintable(c.id), qPrintable(c.name),
                     qPrintable(when(c.created)), qPrintable(when(c.lastUsed)),
                     c.isGrant() ? "signed in" : "token");
    return 0;
}
