#include "consentcommand.h"

#include "commandline.h"
#include "httptoken.h"
#include "tokenstore.h"

#include <QEventLoop>
#include <QHostAddress>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QTimer>
#include <cstdio>

int ConsentCommand::run(const CommandLine &cl)
{
    const HttpToken::Resolved token = HttpToken::resolve(cl, TokenStore::defaultPath());
    if (token.token.isEmpty()) {
        std::fprintf(stderr, "code-sandbox: %s\n",
                     qPrintable(token.error.isEmpty()
                                    ? QStringLiteral("answering a sign-in needs the shared token")
                                    : token.error));
        return 2;
    }
    const bool v6 = QHostAddress(cl.httpHost).protocol() == QAbstractSocket::IPv6Protocol;
    const QUrl url(QStringLiteral("http://%1:%2/oauth/decide")
                       .arg(v6 ? QStringLiteral("[%1]").arg(cl.httpHost) : cl.httpHost)
                       .arg(cl.httpPort));
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    request.setRawHeader("Authorization", "Bearer " + token.token.toUtf8());
    request.setTransferTimeout(15000);
    const bool allow = cl.consentAction == u"approve";
    QJsonObject body{{QStringLiteral("request"), cl.consentRequest},
                     {QStringLiteral("allow"), allow}};
    if (!cl.consentAs.isEmpty())
        body.insert(QStringLiteral("assistant"), cl.consentAs);
    QNetworkAccessManager network;
    QNetworkReply *reply = network.post(request, QJsonDocument(body).toJson());
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    const QJsonObject answer = QJsonDocument::fromJson(reply->readAll()).object();
    reply->deleteLater();
    if (status == 200) {
        if (allow)
            std::fprintf(stdout,
                         "sign-in %s allowed: it runs as the assistant '%s' under its "
                         "policy (Settings → Assistants)%s\n",
                         qPrintable(cl.consentRequest),
                         qPrintable(answer.value(u"assistant").toString()),
                         cl.consentAs.isEmpty() ? "; --as NAME chooses another" : "");
        else
            std::fprintf(stdout, "sign-in %s refused\n", qPrintable(cl.consentRequest));
        return 0;
    }
    const QString why = answer.value(u"error_description").toString();
    std::fprintf(stderr, "code-sandbox: %s: %s\n", qPrintable(url.toString()),
                 qPrintable(why.isEmpty() ? reply->errorString() : why));
    return 2;
}
