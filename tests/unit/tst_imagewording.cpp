// ImageWording: the sentences about sandbox images that the tools and the window show, made from
// the facts the sandbox room reports (ImageStatus, MissingImage).
#include "imagewording.h"

#include <QTest>

using Status = SandboxBackend::ImageStatus;

class TestImageWording : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void progressNamesTheStateAndTimeLeft();
    void progressIsEmptyWhenNothingIsOnTheWay();
    void missingHintWaitsForABuildUnderWay();
    void missingHintSaysHowToBuild();
    void missingHintNamesTheEngineAmongSeveral();
    void missingHintIsEmptyWithoutABuild();
    void listingCoversEveryState();
};

static Status status(Status::State state, const QDateTime &now, qint64 secondsLeft = -1)
{
    Status s;
    s.state = state;
    s.started = now.addSecs(-10);
    if (secondsLeft >= 0)
        s.expected = now.addSecs(secondsLeft);
    return s;
}

void TestImageWording::progressNamesTheStateAndTimeLeft()
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    QCOMPARE(
        ImageWording::progress(status(Status::State::Building, now, 40), QStringLiteral("go"), now),
        QStringLiteral("the image for go is being built (about 40 s left); try again shortly"));
    QCOMPARE(
        ImageWording::progress(status(Status::State::Building, now, 0), QStringLiteral("go"), now),
        QStringLiteral("the image for go is being built (it should be ready any moment); try again "
                       "shortly"));
    const Status queued = status(Status::State::Queued, now);
    QCOMPARE(ImageWording::progress(queued, QStringLiteral("r"), now),
             QStringLiteral(
                 "the image for r is queued to be built after others (started at %1); try again "
                 "later")
                 .arg(queued.started.toLocalTime().toString(QStringLiteral("HH:mm:ss"))));
    Status failed = status(Status::State::Failed, now);
    QCOMPARE(ImageWording::progress(failed, QStringLiteral("rust"), now),
             QStringLiteral("the last build of the image for rust failed"));
    failed.log = QStringLiteral("/var/log/b.log");
    QCOMPARE(ImageWording::progress(failed, QStringLiteral("rust"), now),
             QStringLiteral("the last build of the image for rust failed (log: /var/log/b.log)"));
}

void TestImageWording::progressIsEmptyWhenNothingIsOnTheWay()
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    for (auto state : {Status::State::Ready, Status::State::Missing, Status::State::Unknown})
        QVERIFY(ImageWording::progress(status(state, now, 5), QStringLiteral("go"), now).isEmpty());
}

static MissingImage missing(const QString &buildName)
{
    MissingImage m;
    m.image = QStringLiteral("code-sandbox/node:latest");
    m.language = QStringLiteral("javascript");
    m.buildName = buildName;
    m.endpoint = QStringLiteral("ssh://builder@far");
    m.build.state = Status::State::Missing;
    return m;
}

void TestImageWording::missingHintWaitsForABuildUnderWay()
{
    MissingImage m = missing(QStringLiteral("node"));
    m.build = status(Status::State::Building, QDateTime::currentDateTimeUtc(), 600);
    const QString hint = ImageWording::missingHint(m);
    // A sentence of its own after the create error: capital first, full stop last.
    QVERIFY2(hint.startsWith(QStringLiteral("The image for javascript is being built (about ")),
             qPrintable(hint));
    QVERIFY2(hint.endsWith(QStringLiteral(" s left); try again shortly.")), qPrintable(hint));
}

void TestImageWording::missingHintSaysHowToBuild()
{
    // build-images.sh builds "node", but the flag that names another image is --js-image.
    QCOMPARE(ImageWording::missingHint(missing(QStringLiteral("node"))),
             QStringLiteral(
                 "Build it with: containers/build-images.sh node (from the Code Sandbox source "
                 "tree), or name another image with --js-image."));
}

void TestImageWording::missingHintNamesTheEngineAmongSeveral()
{
    MissingImage m = missing(QStringLiteral("node"));
    m.severalEngines = true;
    QCOMPARE(
        ImageWording::missingHint(m),
        QStringLiteral(
            "The engine ssh://builder@far does not have it. Build or copy it there with: "
            "containers/build-images.sh --engine ssh://builder@far node (from the Code Sandbox "
            "source tree), or name another image with --js-image."));
}

void TestImageWording::missingHintIsEmptyWithoutABuild()
{
    // An image of the user's own (no build-images.sh name): nothing to advise.
    QVERIFY(ImageWording::missingHint(missing(QString())).isEmpty());
}

void TestImageWording::listingCoversEveryState()
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    const QString image = QStringLiteral("code-sandbox/go:latest");
    QVERIFY(ImageWording::listing(status(Status::State::Ready, now), QStringLiteral("go"), image,
                                  QStringLiteral("go"))
                .isEmpty());
    QCOMPARE(ImageWording::listing(status(Status::State::Missing, now), QStringLiteral("go"), image,
                                   QStringLiteral("go")),
             QStringLiteral("the engine does not have code-sandbox/go:latest; build it with "
                            "containers/build-images.sh go (from the Code Sandbox source tree)"));
    Status unknown = status(Status::State::Unknown, now);
    QCOMPARE(ImageWording::listing(unknown, QStringLiteral("go"), image, QStringLiteral("go")),
             QStringLiteral("the engine did not say"));
    unknown.error = QStringLiteral("connection refused");
    QCOMPARE(ImageWording::listing(unknown, QStringLiteral("go"), image, QStringLiteral("go")),
             QStringLiteral("the engine did not say (connection refused)"));
    QVERIFY(ImageWording::listing(status(Status::State::Building, now, 30), QStringLiteral("go"),
                                  image, QStringLiteral("go"))
                .startsWith(QStringLiteral("the image for go is being built (about ")));
}

QTEST_GUILESS_MAIN(TestImageWording)
#include "tst_imagewording.moc"
