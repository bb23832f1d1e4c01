#include "clientiddocuments.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

// What the e2e test (tests/e2e/http-oauth.test.mjs) cannot reach from a fixture on loopback: the
// addresses a document may not be fetched from, caching's bounds, and documents refused without
// a network.
class TestClientIdDocuments : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void onlyPublicAddressesByDefault_data()
    {
        QTest::addColumn<QString>("address");
        QTest::addColumn<bool>("isPublic");
        QTest::newRow("public v4") << "93.184.216.34" << true;
        QTest::newRow("public v6") << "2606:2800:220:1::1" << true;
        for (const char *reserved : {"127.0.0.1",
                                     "127.8.9.10",
                                     "10.1.2.3",
                                     "172.16.0.1",
                                     "172.31.255.255",
                                     "192.168.1.1",
                                     "169.254.169.254",
                                     "100.64.0.1",
                                     "0.0.0.0",
                                     "224.0.0.1",
                                     "255.255.255.255",
                                     "::1",
                                     "::",
                                     "fe80::1",
                                     "fc00::1",
                                     "fd12:3456::1",
                                     "ff02::1",
                                     "::ffff:10.0.0.1",
                                     "::ffff:127.0.0.1",
                                     "64:ff9b::a00:1",
                                     "::127.0.0.1",
                                     "2002:7f00:1::1",
                                     "2001:0:4136:e378::1",
                                     "2001:db8::1",
                                     "64:ff9b:1::1"})
            QTest::newRow(reserved) << QString::fromLatin1(reserved) << false;
        QTest::newRow("172.32 is public") << "172.32.0.1" << true;
        QTest::newRow("mapped public") << "::ffff:93.184.216.34" << true;
    }
    void onlyPublicAddressesByDefault()
    {
        QFETCH(QString, address);
        QFETCH(bool, isPublic);
        QCOMPARE(ClientIdDocuments::isPublic(QHostAddress(address)), isPublic);
    }

    void cacheFollowsCacheControlWithinBounds()
    {
        QCOMPARE(ClientIdDocuments::cacheSeconds(""), ClientIdDocuments::kDefaultCacheSec);
        QCOMPARE(ClientIdDocuments::cacheSeconds("public, max-age=60"), 60);
        QCOMPARE(ClientIdDocuments::cacheSeconds("max-age=31536000"),
                 ClientIdDocuments::kMaxCacheSec);
        QCOMPARE(ClientIdDocuments::cacheSeconds("max-age=60, no-store"), 0);
        QCOMPARE(ClientIdDocuments::cacheSeconds("No-Cache"), 0);
        QCOMPARE(ClientIdDocuments::cacheSeconds("max-age=-5"), 0);
        QCOMPARE(ClientIdDocuments::cacheSeconds("max-age=soon"), 0);
    }

    void urlsThatCannotBeDocuments()
    {
        QVERIFY(ClientIdDocuments::checkUrl(QStringLiteral("https://claude.ai/oauth/client.json"))
                    .isEmpty());
        QVERIFY(ClientIdDocuments::checkUrl(QStringLiteral("https://example.com:8443/c?x=1"))
                    .isEmpty());
        QVERIFY(ClientIdDocuments::isDocumentUrl(QStringLiteral("https://claude.ai/c.json")));
        QVERIFY(!ClientIdDocuments::isDocumentUrl(QStringLiteral("cs-client-0123")));
        for (const char *bad :
             {"http://example.com/c.json", "https://example.com", "https://example.com/",
              "https://u:p@example.com/c.json", "https://example.com/c.json#x",
              "https://example.com/a/../c.json", "https://example.com/./c.json",
              "https://example.com/%2e%2e/c", "https:///c.json"})
            QVERIFY2(!ClientIdDocuments::checkUrl(QString::fromLatin1(bad)).isEmpty(), bad);
        QVERIFY(!ClientIdDocuments::checkUrl(QStringLiteral("https://e.com/") + QString(2000, u'a'))
                     .isEmpty());
    }

    void documentsMustDescribeThemselves()
    {
        const QString url = QStringLiteral("https://example.com/client.json");
        const auto body = [&](const QJsonObject &extra) {
            QJsonObject o{{QStringLiteral("client_id"), url},
                          {QStringLiteral("client_name"), QStringLiteral("Example")},
                          {QStringLiteral("redirect_uris"),
                           QJsonArray{QStringLiteral("http://127.0.0.1:3000/cb")}}};
            for (auto it = extra.begin(); it != extra.end(); ++it)
                o.insert(it.key(), it.value());
            return QJsonDocument(o).toJson();
        };
        QString why;
        const auto good = ClientIdDocuments::parse(url, body({}), &why);
        QVERIFY2(good, qPrintable(why));
        QCOMPARE(good->id, url);
        QCOMPARE(good->name, QStringLiteral("Example"));
        // Not normalised: a trailing slash, another case, is another client.
        QVERIFY(!ClientIdDocuments::parse(
            url,
            body(
                {{QStringLiteral("client_id"), QStringLiteral("https://EXAMPLE.com/client.json")}}),
            &why));
        QVERIFY(why.contains(QStringLiteral("not the URL")));
        QVERIFY(!ClientIdDocuments::parse(url,
                                          body({{QStringLiteral("token_endpoint_auth_method"),
                                                 QStringLiteral("client_secret_basic")}}),
                                          &why));
        QVERIFY(!ClientIdDocuments::parse(
            url, body({{QStringLiteral("client_secret_expires_at"), 0}}), &why));
        QVERIFY(!ClientIdDocuments::parse(
            url, body({{QStringLiteral("redirect_uris"), QJsonArray{}}}), &why));
        QVERIFY(!ClientIdDocuments::parse(
            url, body({{QStringLiteral("client_name"), QStringLiteral("Claude\u202eedoC")}}),
            &why));
        QVERIFY(!ClientIdDocuments::parse(url, "[1, 2]", &why));
    }

    // A document cannot know the port its app will listen on: loopback redirects match on all but
    // the port (RFC 8252 7.3); nothing else may differ.
    void loopbackRedirectsOnAnyPort()
    {
        OAuthClient c;
        c.redirectUris = {QStringLiteral("http://127.0.0.1:3000/callback"),
                          QStringLiteral("https://app.example.com/cb")};
        QVERIFY(OAuthClients::allowsRedirect(c, QStringLiteral("http://127.0.0.1:3000/callback")));
        QVERIFY(OAuthClients::allowsRedirect(c, QStringLiteral("http://127.0.0.1:51234/callback")));
        QVERIFY(OAuthClients::allowsRedirect(c, QStringLiteral("http://127.0.0.1/callback")));
        QVERIFY(!OAuthClients::allowsRedirect(c, QStringLiteral("http://127.0.0.1:3000/other")));
        QVERIFY(
            !OAuthClients::allowsRedirect(c, QStringLiteral("http://127.0.0.1:3000/callback?x")));
        QVERIFY(!OAuthClients::allowsRedirect(c, QStringLiteral("http://localhost:3000/callback")));
        QVERIFY(
            !OAuthClients::allowsRedirect(c, QStringLiteral("http://evil.example:3000/callback")));
        QVERIFY(
            !OAuthClients::allowsRedirect(c, QStringLiteral("https://app.example.com:8443/cb")));
    }

    // Refused without a connection: a private address, given as such or behind a name.
    void privateAddressesAreNotFetched()
    {
        ClientIdDocuments documents({});
        QObject context;
        for (const char *url : {"https://127.0.0.1:9/c.json", "https://[::1]:9/c.json",
                                "https://localhost:9/c.json", "https://169.254.169.254/latest"}) {
            bool called = false;
            QString reason;
            documents.fetch(QString::fromLatin1(url), &context,
                            [&](const std::optional<OAuthClient> &client, const QString &why) {
                                called = true;
                                QVERIFY(!client);
                                reason = why;
                            });
            QVERIFY2(!called, "answered later, never within the call");
            QTRY_VERIFY2(called, url);
            QVERIFY2(reason.contains(QStringLiteral("not a public address")), qPrintable(reason));
        }
    }

    // A caller gone before the answer is not called.
    void noAnswerToACallerThatIsGone()
    {
        ClientIdDocuments documents({});
        auto *context = new QObject;
        bool called = false;
        documents.fetch(
            QStringLiteral("https://127.0.0.1:9/c.json"), context,
            [&](const std::optional<OAuthClient> &, const QString &) { called = true; });
        delete context;
        QTest::qWait(50);
        QVERIFY(!called);
    }
};

QTEST_MAIN(TestClientIdDocuments)
#include "tst_clientiddocuments.moc"
