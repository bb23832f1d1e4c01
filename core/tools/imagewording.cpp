#include "imagewording.h"

QString ImageWording::progress(const SandboxBackend::ImageStatus &status, const QString &language,
                               const QDateTime &now)
{
    using State = SandboxBackend::ImageStatus::State;
    const qint64 left = status.secondsLeft(now);
    const QString when =
        left < 0 ? QStringLiteral("started at %1")
                       .arg(status.started.toLocalTime().toString(QStringLiteral("HH:mm:ss")))
        : left == 0 ? QStringLiteral("it should be ready any moment")
                    : QStringLiteral("about %1 s left").arg(left);
    switch (status.state) {
    case State::Building:
        return QStringLiteral("the image for %1 is being built (%2); try again shortly")
            .arg(language, when);
    case State::Queued:
        return QStringLiteral("the image for %1 is queued to be built after others (%2); "
                              "try again later")
            .arg(language, when);
    case State::Failed:
        return QStringLiteral("the last build of the image for %1 failed%2")
            .arg(language,
                 status.log.isEmpty() ? QString() : QStringLiteral(" (log: %1)").arg(status.log));
    default:
        return {};
    }
}

QString ImageWording::missingHint(const MissingImage &missing)
{
    // While containers/build-images.sh builds the image (or its build failed), that is the
    // answer: the call only has to be made again once it is there.
    QString building = progress(missing.build, missing.language);
    if (!building.isEmpty()) {
        building[0] = building[0].toUpper();
        return building + u'.';
    }
    if (missing.buildName.isEmpty())
        return {};
    const QString flag = missing.buildName == u"node" ? QStringLiteral("js") : missing.buildName;
    // With several engines, the image is missing on this one: build (or copy) it there.
    if (missing.severalEngines)
        return QStringLiteral("The engine %1 does not have it. Build or copy it there with: "
                              "containers/build-images.sh --engine %1 %2 (from the Code Sandbox "
                              "source tree), or name another image with --%3-image.")
            .arg(missing.endpoint, missing.buildName, flag);
    return QStringLiteral("Build it with: containers/build-images.sh %1 (from the Code Sandbox "
                          "source tree), or name another image with --%2-image.")
        .arg(missing.buildName, flag);
}

QString ImageWording::listing(const SandboxBackend::ImageStatus &status, const QString &language,
                              const QString &image, const QString &buildName)
{
    using State = SandboxBackend::ImageStatus::State;
    switch (status.state) {
    case State::Ready:
        return {};
    case State::Missing:
        return QStringLiteral("the engine does not have %1; build it with "
                              "containers/build-images.sh %2 (from the Code Sandbox source tree)")
            .arg(image, buildName);
    case State::Unknown:
        return status.error.isEmpty()
                   ? QStringLiteral("the engine did not say")
                   : QStringLiteral("the engine did not say (%1)").arg(status.error);
    default:
        return progress(status, language);
    }
}
