// EgressList: the server's, a policy's and a call's allow-lists. A call's list must lie within
// its policy's and the server's (uncovered names the first entry that does not), a policy's is cut
// to the server's (within), and a list a person edits keeps what parses (parseEach).
#include "egresslist.h"

#include <QTest>

class TestEgressList : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void uncovered_data()
    {
        QTest::addColumn<QStringList>("asked");
        QTest::addColumn<QStringList>("allowed");
        QTest::addColumn<QString>("first");
        const QString none;
        QTest::newRow("nothing asked") << QStringList() << QStringList() << none;
        QTest::newRow("the same name")
            << QStringList{"api.github.com"} << QStringList{"api.github.com"} << none;
        QTest::newRow("a name below a wildcard")
            << QStringList{"api.github.com"} << QStringList{"*.github.com"} << none;
        QTest::newRow("the wildcard's own suffix is not below it")
            << QStringList{"github.com"} << QStringList{"*.github.com"} << "github.com";
        QTest::newRow("a narrower wildcard")
            << QStringList{"*.eu.example.com"} << QStringList{"*.example.com"} << none;
        QTest::newRow("the same wildcard")
            << QStringList{"*.example.com"} << QStringList{"*.example.com"} << none;
        QTest::newRow("a wider wildcard")
            << QStringList{"*.example.com"} << QStringList{"*.eu.example.com"} << "*.example.com";
        QTest::newRow("a wildcard is not within a name")
            << QStringList{"*.example.com"} << QStringList{"example.com", "www.example.com"}
            << "*.example.com";
        QTest::newRow("no suffix trick")
            << QStringList{"badexample.com"} << QStringList{"*.example.com"} << "badexample.com";
        QTest::newRow("one port of the two defaults")
            << QStringList{"pypi.org:443"} << QStringList{"pypi.org"} << none;
        QTest::newRow("both defaults need both")
            << QStringList{"pypi.org"} << QStringList{"pypi.org:443"} << "pypi.org";
        QTest::newRow("both defaults from two entries")
            << QStringList{"pypi.org"} << QStringList{"pypi.org:443", "pypi.org:80"} << none;
        QTest::newRow("the defaults from a wildcard and a name")
            << QStringList{"api.example.com"}
            << QStringList{"*.example.com:443", "api.example.com:80"} << none;
        QTest::newRow("another port")
            << QStringList{"pypi.org:8443"} << QStringList{"pypi.org"} << "pypi.org:8443";
        QTest::newRow("the first beyond, in order")
            << QStringList{"a.test", "b.test", "c.test"} << QStringList{"a.test"} << "b.test";
        QTest::newRow("an address through its literal")
            << QStringList{"10.0.0.5:8080"} << QStringList{"10.0.0.5:8080"} << none;
        QTest::newRow("an address is never within a wildcard")
            << QStringList{"10.0.0.5"} << QStringList{"*.5"} << "10.0.0.5";
        QTest::newRow("case and the trailing dot")
            << QStringList{"API.GitHub.com."} << QStringList{"*.github.com"} << none;
        QTest::newRow("nothing allowed") << QStringList{"a.test"} << QStringList() << "a.test";
    }
    void uncovered()
    {
        QFETCH(QStringList, asked);
        QFETCH(QStringList, allowed);
        QFETCH(QString, first);
        QCOMPARE(EgressList::uncovered(asked, allowed), first);
        // within() keeps exactly the covered ones, so it is everything when none is beyond.
        const QStringList kept = EgressList::within(asked, allowed);
        if (first.isEmpty())
            QCOMPARE(kept, asked);
        else
            QVERIFY(!kept.contains(first));
    }

    void withinKeepsOrder()
    {
        QCOMPARE(
            EgressList::within({"a.test", "x.other", "*.b.test", "b.test"}, {"a.test", "*.b.test"}),
            (QStringList{"a.test", "*.b.test"}));
    }

    void parseEachKeepsWhatParses()
    {
        QStringList rejected;
        QCOMPARE(
            EgressList::parseEach({" PyPI.org. ", "http://x.org/", "", "pypi.org", "*"}, &rejected),
            QStringList{"pypi.org"});
        QCOMPARE(rejected, (QStringList{"http://x.org/", "*"}));
    }
};

QTEST_GUILESS_MAIN(TestEgressList)
#include "tst_egresslist.moc"
