#include "kubetarget.h"

#include <QTest>

class tst_KubeTarget : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void parse_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<QString>("context");
        QTest::addColumn<QString>("ns");
        QTest::addColumn<QString>("error"); // the start of the message when invalid

        QTest::newRow("current") << "k8s://" << true << ""
                                 << ""
                                 << "";
        QTest::newRow("context") << "k8s://kind-dev" << true << "kind-dev"
                                 << ""
                                 << "";
        QTest::newRow("context and namespace") << "k8s://kind-dev/sandboxes" << true << "kind-dev"
                                               << "sandboxes"
                                               << "";
        QTest::newRow("current context, namespace") << "k8s:///team-a" << true << ""
                                                    << "team-a"
                                                    << "";
        QTest::newRow("trailing slash") << "k8s://prod/" << true << "prod"
                                        << ""
                                        << "";
        QTest::newRow("upper-case scheme") << "K8S://prod" << true << "prod"
                                           << ""
                                           << "";
        QTest::newRow("gke") << "k8s://gke_proj_europe-west1_c1/ns" << true
                             << "gke_proj_europe-west1_c1"
                             << "ns"
                             << "";
        QTest::newRow("eks, slash encoded")
            << "k8s://arn:aws:eks:eu-west-1:123456789012:cluster%2Fprod/sandboxes" << true
            << "arn:aws:eks:eu-west-1:123456789012:cluster/prod"
            << "sandboxes"
            << "";
        QTest::newRow("eks, slash not encoded")
            << "k8s://arn:aws:eks:eu-west-1:1:cluster/prod/sandboxes" << false << ""
            << ""
            << "'k8s://arn:aws:eks:eu-west-1:1:cluster/prod/sandboxes' has more than one '/': "
               "write a '/' inside the context's name as %2F";
        QTest::newRow("not k8s") << "tcp://host:2376" << false << ""
                                 << ""
                                 << "'tcp://host:2376' is not a cluster address";
        QTest::newRow("bad namespace") << "k8s://dev/Team_A" << false << ""
                                       << ""
                                       << "'k8s://dev/Team_A': 'Team_A' is not a namespace name";
        QTest::newRow("namespace too long") << "k8s://dev/" + QString(64, u'a') << false << ""
                                            << ""
                                            << "'k8s://dev/aaaa";
        QTest::newRow("space") << "k8s://my context" << false << ""
                               << ""
                               << "'k8s://my context': a cluster address holds no spaces";
        QTest::newRow("query") << "k8s://dev?ns=x" << false << ""
                               << ""
                               << "'k8s://dev?ns=x': a cluster address takes no query";
        QTest::newRow("not utf-8") << "k8s://%ff%fe" << false << ""
                                   << ""
                                   << "'k8s://%ff%fe': the context's name is not valid UTF-8";
    }

    void parse()
    {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(QString, context);
        QFETCH(QString, ns);
        QFETCH(QString, error);
        QString message;
        const KubeTarget t = KubeTarget::parse(text, &message);
        QCOMPARE(t.isValid(), valid);
        if (!valid) {
            QVERIFY2(message.startsWith(error), qPrintable(message));
            return;
        }
        QVERIFY(message.isEmpty());
        QCOMPARE(t.context, context);
        QCOMPARE(t.namespace_, ns);
        // The canonical form parses back to the same target.
        const KubeTarget again = KubeTarget::parse(t.url());
        QVERIFY(again.isValid());
        QCOMPARE(again.context, context);
        QCOMPARE(again.namespace_, ns);
    }
};

QTEST_GUILESS_MAIN(tst_KubeTarget)
#include "tst_kubetarget.moc"
