#include "builtinlanguage.h"
#include "imagescripts.h"
#include "language.h"
#include "languageregistry.h"
#include "runnetwork.h"
#include "sandboxconfig.h"
#include "sandboxspec.h"

#include <QProcess>
#include <QRegularExpression>
#include <QTest>

namespace {
const Language &lang(const QString &name)
{
    return builtInLanguage(name);
}

QStringList runCommand(const QString &language)
{
    SandboxConfig config;
    config.instanceId = QStringLiteral("unit");
    const Language &l = lang(language);
    return SandboxSpec::forRun(l, l.image, config, RunNetwork::decide(config), QString()).command;
}

// What containers/loaders/image-scripts.sh says the image carries (its label's value).
QStringList labelled(const QString &image)
{
    QProcess p;
    p.start(QStringLiteral("sh"), {QStringLiteral(CS_IMAGE_SCRIPTS), image});
    if (!p.waitForFinished(10000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
        qFatal("image-scripts.sh failed: %s", p.readAllStandardError().constData());
    return ImageScripts::fromLabel(QString::fromUtf8(p.readAllStandardOutput()));
}

qsizetype longest(const QStringList &words)
{
    qsizetype n = 0;
    for (const QString &w : words)
        n = qMax(n, w.size());
    return n;
}
} // namespace

class tst_ImageScripts : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void namesAreThoseTheImagesAreLabelledWith();
    void inlineWithoutTheLabel();
    void pythonRunsTheImagesFiles();
    void nodeRunsTheImagesLoader();
    void onlyWhatTheImageCarries();
    void fromLabel();
};

void tst_ImageScripts::namesAreThoseTheImagesAreLabelledWith()
{
    // The build labels an image with the names of what it installed; the server must compute
    // the very same names from the texts it embeds, or it would never use them.
    const QStringList names = ImageScripts::names();
    QCOMPARE(names.size(), 3);
    QVERIFY(
        QRegularExpression(QStringLiteral("^cs-run-[0-9a-f]{16}$")).match(names.at(0)).hasMatch());
    QVERIFY(QRegularExpression(QStringLiteral("^python-loader-[0-9a-f]{16}\\.bin$"))
                .match(names.at(1))
                .hasMatch());
    QVERIFY(QRegularExpression(QStringLiteral("^node-loader-[0-9a-f]{16}\\.js$"))
                .match(names.at(2))
                .hasMatch());
    QCOMPARE(labelled(QStringLiteral("python")), QStringList({names.at(0), names.at(1)}));
    QCOMPARE(labelled(QStringLiteral("node")), QStringList({names.at(0), names.at(2)}));
    QCOMPARE(labelled(QStringLiteral("gcc")), QStringList({names.at(0)}));
}

void tst_ImageScripts::inlineWithoutTheLabel()
{
    // A custom image, or one of ours from another build: the texts go on the command line.
    const QStringList command = runCommand(QStringLiteral("python"));
    QVERIFY(longest(command) > 10000);
    QCOMPARE(ImageScripts::compact(command, {}), command);
    QCOMPARE(ImageScripts::compact(command, {QStringLiteral("cs-run-0000000000000000")}), command);
}

void tst_ImageScripts::pythonRunsTheImagesFiles()
{
    const QStringList command = runCommand(QStringLiteral("python"));
    const QStringList names = ImageScripts::names();
    const QStringList compact = ImageScripts::compact(command, labelled(QStringLiteral("python")));
    QCOMPARE(compact.size(), command.size());
    // sh -c '. FILE' cs-run main.py python3 -u -c BOOT "": the supervisor sourced with its own
    // arguments, the boot script kept (it names the compiled loader), the loader's text gone.
    QCOMPARE(compact.mid(0, 2), QStringList({"/bin/sh", "-c"}));
    QCOMPARE(compact.at(2), QStringLiteral(". /usr/local/share/code-sandbox/") + names.at(0));
    QCOMPARE(compact.mid(3, 5), command.mid(3, 5));
    QCOMPARE(compact.at(8), command.at(8));
    QVERIFY(compact.at(8).contains(names.at(1)));
    QCOMPARE(compact.at(9), QString());
    QVERIFY2(longest(compact) < 2048, qPrintable(QString::number(longest(compact))));
}

void tst_ImageScripts::nodeRunsTheImagesLoader()
{
    for (const char *language : {"javascript", "typescript"}) {
        const QStringList command = runCommand(QString::fromLatin1(language));
        const QStringList compact =
            ImageScripts::compact(command, labelled(QStringLiteral("node")));
        const int e = compact.indexOf(QStringLiteral("-e"));
        QVERIFY(e > 0);
        QCOMPARE(compact.mid(0, e + 1),
                 QStringList({"/bin/sh", "-c", compact.at(2), "cs-run",
                              lang(QString::fromLatin1(language)).fileName, "node", "-e"}));
        // As node -e runs its text: in the global scope, named [eval].
        const QString stub = compact.at(e + 1);
        QVERIFY2(stub.startsWith("require(\"vm\").runInThisContext(require(\"fs\").readFileSync("
                                 "\"/usr/local/share/code-sandbox/" +
                                 ImageScripts::names().at(2) + "\""),
                 qPrintable(stub));
        QVERIFY(stub.endsWith("{ filename: \"[eval]\" })"));
        QCOMPARE(compact.mid(e + 2), command.mid(e + 2)); // typescript's argument stays
        QVERIFY(longest(compact) < 1024);
    }
}

void tst_ImageScripts::onlyWhatTheImageCarries()
{
    // An image with the supervisor but another loader: only the supervisor's text goes.
    const QStringList command = runCommand(QStringLiteral("python"));
    const QStringList compact =
        ImageScripts::compact(command, {ImageScripts::names().at(0), "python-loader-0000.bin"});
    QVERIFY(compact.at(2).startsWith(". /usr/local/share/code-sandbox/cs-run-"));
    QCOMPARE(compact.at(9), command.at(9));
    // And a command of other words is left as it is.
    const QStringList gcc = runCommand(QStringLiteral("c"));
    const QStringList compactGcc = ImageScripts::compact(gcc, labelled(QStringLiteral("gcc")));
    QCOMPARE(compactGcc.mid(3), gcc.mid(3));
}

void tst_ImageScripts::fromLabel()
{
    QCOMPARE(ImageScripts::fromLabel(QString()), QStringList());
    QCOMPARE(ImageScripts::fromLabel(QStringLiteral("a, b,,c")), QStringList({"a", "b", "c"}));
}

QTEST_GUILESS_MAIN(tst_ImageScripts)
#include "tst_imagescripts.moc"
