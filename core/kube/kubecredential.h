#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QSslCertificate>
#include <QSslKey>
#include <QString>

// What a request presents to the API server at one moment: a bearer token, and/or a client
// certificate that an exec plugin handed over (a kubeconfig's own client certificate is in the
// access's TLS configuration instead). Holds secrets: never logged, never in a message.
struct KubeCredential
{
    QByteArray token;                        // empty: no Authorization header
    QList<QSslCertificate> certificateChain; // from an exec plugin, with privateKey
    QSslKey privateKey;
    QDateTime expiry; // invalid: does not expire (until the server says 401)
    QString error;    // why none could be had (the plugin failed, the token file is gone, …)

    bool ok() const { return error.isEmpty(); }
};
