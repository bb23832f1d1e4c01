// The widgets on their own, without an engine: settings persistence and the settings dialog,
// the assistant configuration dialog, the code highlighter, the image strip.
#include "appsettings.h"
#include "codehighlighter.h"
#include "connectassistantdialog.h"
#include "imagestrip.h"
#include "imageviewerdialog.h"
#include "policyeditor.h"
#include "runeditor.h"
#include "safeimage.h"
#include "settingsdialog.h"
#include "showntext.h"
#include "workspacedialog.h"
#include "workspaceseditor.h"

#include <QBuffer>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QGroupBox>
#include <QGuiApplication>
#include <QImage>
#include <QImageReader>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextLayout>
#include <QTimer>
#include <functional>

namespace {

QByteArray pngBytes(int width, int height, const QColor &color)
{
    QImage image(width, height, QImage::Format_ARGB32);
    image.fill(color);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    return bytes;
}

QByteArray encoded(const char *format, int width = 16, int height = 16)
{
    QImage image(width, height, QImage::Format_RGB32);
    image.fill(Qt::darkCyan);
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, format);
    return bytes;
}

quint32 crc32(const QByteArray &bytes)
{
    quint32 crc = 0xffffffffu;
    for (const char c : bytes) {
        crc ^= quint8(c);
        for (int k = 0; k < 8; ++k)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

QByteArray pngChunk(const QByteArray &type, const QByteArray &data)
{
    QByteArray chunk;
    const auto be32 = [&chunk](quint32 v) {
        for (int shift = 24; shift >= 0; shift -= 8)
            chunk.append(char((v >> shift) & 0xff));
    };
    be32(quint32(data.size()));
    chunk += type + data;
    be32(crc32(type + data));
    return chunk;
}

// A well-formed PNG header that claims `side` × `side` RGBA pixels, with a few bytes of data: a
// decoder that trusted it would allocate side² × 4 bytes.
QByteArray hugePng(quint32 side)
{
    QByteArray ihdr;
    for (int i = 0; i < 2; ++i)
        for (int shift = 24; shift >= 0; shift -= 8)
            ihdr.append(char((side >> shift) & 0xff));
    ihdr.append(char(8)); // bit depth
    ihdr.append(char(6)); // RGBA
    ihdr.append(QByteArray(3, '\0'));
    // zlib: an empty stored block (the data ends far too early).
    const QByteArray idat = QByteArray::fromHex("789c030000000001");
    return QByteArray::fromHex("89504e470d0a1a0a") + pngChunk("IHDR", ihdr) +
           pngChunk("IDAT", idat) + pngChunk("IEND", {});
}

OutputFile file(OutputFile::Kind kind, const QString &name, const QByteArray &data,
                const QString &mimeType, bool included = true)
{
    OutputFile f;
    f.kind = kind;
    f.name = name;
    f.data = included ? data : QByteArray();
    f.size = data.size();
    f.mimeType = mimeType;
    f.included = included;
    return f;
}

// The format the highlighter gave the character at `position` of `block`.
QTextCharFormat formatAt(const QTextBlock &block, int position)
{
    for (const QTextLayout::FormatRange &range : block.layout()->formats()) {
        if (position >= range.start && position < range.start + range.length)
            return range.format;
    }
    return {};
}

} // namespace

class TestUiWidgets : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void settingsRoundTrip();
    void settingsEnginesOfOlderVersions();
    void settingsDefaultsWhenMissing();
    void settingsOutOfRangeFallBack();
    void settingsDialogShowsAndReturnsValues();
    void settingsDialogRejectsInvalidEnvNames();
    void settingsDialogEngineList();
    void settingsDialogBindsSecrets();
    void settingsDialogAddsWorkspaces();
    void settingsDialogRefusesBadWorkspaceNames();
    void workspaceNameFromFolder_data();
    void workspaceNameFromFolder();
    void connectDialogTexts();
    void connectDialogMasksToken();
    void connectDialogCopiesRealToken();
    void connectDialogWithoutHttp();
    void highlighterKeywords_data();
    void highlighterKeywords();
    void highlighterMultiLineComment();
    void highlighterPythonTripleQuotes();
    void highlighterCommentInsideString();
    void imageStripSortsFiles();
    void imageStripNotIncluded();
    void safeImageFormats_data();
    void safeImageFormats();
    void safeImageRefusesHugeHeader();
    void imageStripShowsUnsafeImagesAsFiles();
    void imageViewerRefusesOtherFormats();
    void runEditorShowsImageNotes();
};

void TestUiWidgets::settingsRoundTrip()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(QStringLiteral("settings.ini"));

    AppSettings a;
    a.engines = {QStringLiteral("unix:///run/user/1000/podman/podman.sock"),
                 QStringLiteral("ssh://ci@build-host"), QStringLiteral("context:lab")};
    a.images = {{QStringLiteral("python"), QStringLiteral("registry.example/py:3.12")},
                {QStringLiteral("rust"), QStringLiteral("rust:1-slim")}};
    a.defaultTimeoutSec = 120;
    a.memoryMiB = 2048;
    a.cpus = 2.5;
    a.pidsLimit = 1024;
    a.passThroughEnv = {QStringLiteral("HTTP_PROXY"), QStringLiteral("_private"),
                        QStringLiteral("LANG")};
    a.httpEnabled = false;
    a.httpPort = 9100;
    a.httpToken = QStringLiteral("s3cret-token");
    a.historyRetentionDays = 0;
    a.keepRunningInBackground = false;
    {
        QSettings s(path, QSettings::IniFormat);
        a.save(s);
    }
    QSettings s(path, QSettings::IniFormat);
    const AppSettings b = AppSettings::load(s);
    QCOMPARE(b.engines, a.engines);
    QCOMPARE(b.engineSocket, a.engines.first());
    // The first under the key versions with one engine read, the others beside it.
    QCOMPARE(s.value(QStringLiteral("engine/socket")).toString(), a.engines.first());
    QCOMPARE(s.value(QStringLiteral("engine/more")).toStringList(), a.engines.mid(1));
    QCOMPARE(b.images, a.images);
    QCOMPARE(b.defaultTimeoutSec, 120);
    QCOMPARE(b.memoryMiB, 2048);
    QCOMPARE(b.cpus, 2.5);
    QCOMPARE(b.pidsLimit, 1024);
    QCOMPARE(b.passThroughEnv, a.passThroughEnv);
    QCOMPARE(b.httpEnabled, false);
    QCOMPARE(b.httpPort, quint16(9100));
    QCOMPARE(b.httpToken, a.httpToken);
    QCOMPARE(b.historyRetentionDays, 0);
    QCOMPARE(b.keepRunningInBackground, false);
    QVERIFY(a == b);

    // A single name and an emptied list survive too (INI stores lists as comma lists).
    AppSettings c = b;
    c.passThroughEnv = {QStringLiteral("ONLY")};
    c.images.clear();
    c.httpToken.clear();
    c.save(s);
    QCOMPARE(AppSettings::load(s).passThroughEnv, c.passThroughEnv);
    QVERIFY(AppSettings::load(s).images.isEmpty());
    QVERIFY(AppSettings::load(s).httpToken.isEmpty());
    c.passThroughEnv.clear();
    c.save(s);
    QVERIFY(AppSettings::load(s).passThroughEnv.isEmpty());
    QVERIFY(AppSettings::load(s) == c);
    // Back to one engine, then to auto-detection: nothing of the others is left.
    c.engines = {QStringLiteral("/var/run/docker.sock")};
    c.save(s);
    QVERIFY(!s.contains(QStringLiteral("engine/more")));
    QCOMPARE(AppSettings::load(s).engines, c.engines);
    c.engines.clear();
    c.engineSocket.clear();
    c.save(s);
    QVERIFY(AppSettings::load(s).engines.isEmpty());
    QVERIFY(AppSettings::load(s).engineSocket.isEmpty());
}

void TestUiWidgets::settingsEnginesOfOlderVersions()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("old.ini"));
    {
        // As a version with one engine wrote it.
        QSettings s(path, QSettings::IniFormat);
        s.setValue(QStringLiteral("engine/socket"), QStringLiteral(" unix:///run/podman.sock "));
    }
    QSettings s(path, QSettings::IniFormat);
    AppSettings a = AppSettings::load(s);
    QCOMPARE(a.engines, QStringList{QStringLiteral("unix:///run/podman.sock")});
    QCOMPARE(a.engineSocket, QStringLiteral("unix:///run/podman.sock"));

    // Several, then an older version changes the one it knows: that one is replaced, the others
    // stay, and blanks and repeats are dropped.
    a.engines.append(QStringLiteral("tcp://10.0.0.7:2376"));
    a.save(s);
    s.setValue(QStringLiteral("engine/socket"), QStringLiteral("/var/run/docker.sock"));
    s.setValue(QStringLiteral("engine/more"),
               QStringList{QStringLiteral("tcp://10.0.0.7:2376"), QStringLiteral(" "),
                           QStringLiteral("/var/run/docker.sock")});
    QCOMPARE(AppSettings::load(s).engines, (QStringList{QStringLiteral("/var/run/docker.sock"),
                                                        QStringLiteral("tcp://10.0.0.7:2376")}));

    // A caller that knows only the single field is saved as before.
    AppSettings single;
    single.engineSocket = QStringLiteral("/run/user/1000/podman/podman.sock");
    single.save(s);
    QCOMPARE(s.value(QStringLiteral("engine/socket")).toString(), single.engineSocket);
    QVERIFY(!s.contains(QStringLiteral("engine/more")));
    QCOMPARE(AppSettings::load(s).engines, QStringList{single.engineSocket});
}

void TestUiWidgets::settingsDefaultsWhenMissing()
{
    QTemporaryDir dir;
    QSettings s(dir.filePath(QStringLiteral("empty.ini")), QSettings::IniFormat);
    QVERIFY(AppSettings::load(s) == AppSettings());
}

void TestUiWidgets::settingsOutOfRangeFallBack()
{
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("bad.ini"));
    {
        QSettings s(path, QSettings::IniFormat);
        s.setValue(QStringLiteral("limits/timeoutSec"), 100000);
        s.setValue(QStringLiteral("limits/memoryMiB"), -5);
        s.setValue(QStringLiteral("limits/cpus"), QStringLiteral("lots"));
        s.setValue(QStringLiteral("limits/pidsLimit"), QStringLiteral("12abc"));
        s.setValue(QStringLiteral("server/httpPort"), 70000);
        s.setValue(QStringLiteral("server/httpEnabled"), QStringLiteral("maybe"));
        s.setValue(QStringLiteral("history/retentionDays"), -1);
        s.setValue(QStringLiteral("environment/passThrough"),
                   QStringList{QStringLiteral("GOOD"), QStringLiteral("1BAD"),
                               QStringLiteral("NO-DASH"), QStringLiteral("GOOD")});
        s.setValue(QStringLiteral("images/python"), QStringLiteral("has space"));
        s.setValue(QStringLiteral("images/go"), QStringLiteral("golang:1.22"));
    }
    QSettings s(path, QSettings::IniFormat);
    const AppSettings a = AppSettings::load(s);
    const AppSettings d;
    QCOMPARE(a.defaultTimeoutSec, d.defaultTimeoutSec);
    QCOMPARE(a.memoryMiB, d.memoryMiB);
    QCOMPARE(a.cpus, d.cpus);
    QCOMPARE(a.pidsLimit, d.pidsLimit);
    QCOMPARE(a.httpPort, d.httpPort);
    QCOMPARE(a.httpEnabled, d.httpEnabled);
    QCOMPARE(a.historyRetentionDays, d.historyRetentionDays);
    QCOMPARE(a.passThroughEnv, QStringList{QStringLiteral("GOOD")});
    QCOMPARE(a.images.size(), 1);
    QCOMPARE(a.images.value(QStringLiteral("go")), QStringLiteral("golang:1.22"));

    // The limits themselves are accepted.
    s.setValue(QStringLiteral("limits/timeoutSec"), AppSettings::kMaxTimeoutSec);
    s.setValue(QStringLiteral("limits/cpus"), AppSettings::kMinCpus);
    s.setValue(QStringLiteral("server/httpPort"), 65535);
    const AppSettings b = AppSettings::load(s);
    QCOMPARE(b.defaultTimeoutSec, AppSettings::kMaxTimeoutSec);
    QCOMPARE(b.cpus, AppSettings::kMinCpus);
    QCOMPARE(b.httpPort, quint16(65535));
}

void TestUiWidgets::settingsDialogShowsAndReturnsValues()
{
    AppSettings current;
    current.engines = {QStringLiteral("/var/run/docker.sock"), QStringLiteral("ssh://ci@gpu-box")};
    current.engineSocket = current.engines.first();
    current.images = {{QStringLiteral("go"), QStringLiteral("golang:1.22")},
                      {QStringLiteral("cobol"), QStringLiteral("gnucobol:3")}};
    current.defaultTimeoutSec = 45;
    current.memoryMiB = 1024;
    current.cpus = 1.5;
    current.pidsLimit = 300;
    current.passThroughEnv = {QStringLiteral("HTTPS_PROXY")};
    current.httpPort = 9000;
    current.httpToken = QStringLiteral("tok");
    current.historyRetentionDays = 7;

    SettingsDialog dialog(current, {QStringLiteral("python"), QStringLiteral("go")});
    QVERIFY(dialog.settings() == current);

    auto *timeout = dialog.findChild<QSpinBox *>(QStringLiteral("timeoutSpin"));
    auto *memory = dialog.findChild<QSpinBox *>(QStringLiteral("memorySpin"));
    auto *cpus = dialog.findChild<QDoubleSpinBox *>(QStringLiteral("cpusSpin"));
    auto *pids = dialog.findChild<QSpinBox *>(QStringLiteral("pidsSpin"));
    auto *port = dialog.findChild<QSpinBox *>(QStringLiteral("portSpin"));
    auto *retention = dialog.findChild<QSpinBox *>(QStringLiteral("retentionSpin"));
    auto *env = dialog.findChild<QListWidget *>(QStringLiteral("passThroughList"));
    auto *images = dialog.findChild<QTableWidget *>(QStringLiteral("imagesTable"));
    auto *engines = dialog.findChild<QListWidget *>(QStringLiteral("engineList"));
    auto *engineEdit = dialog.findChild<QLineEdit *>(QStringLiteral("engineEdit"));
    auto *token = dialog.findChild<QLineEdit *>(QStringLiteral("tokenEdit"));
    auto *http = dialog.findChild<QCheckBox *>(QStringLiteral("httpEnabledCheck"));
    auto *keep = dialog.findChild<QCheckBox *>(QStringLiteral("keepRunningCheck"));
    QVERIFY(timeout && memory && cpus && pids && port && retention && env && images && engines &&
            engineEdit && token && http && keep);
    QVERIFY(dialog.findChild<QObject *>(QStringLiteral("restartNote")));

    QCOMPARE(timeout->value(), 45);
    QCOMPARE(memory->value(), 1024);
    QCOMPARE(cpus->value(), 1.5);
    QCOMPARE(pids->value(), 300);
    QCOMPARE(port->value(), 9000);
    QCOMPARE(retention->value(), 7);
    QCOMPARE(env->count(), 1);
    QCOMPARE(engines->count(), 2);
    QCOMPARE(engines->item(0)->text(), QStringLiteral("/var/run/docker.sock"));
    QCOMPARE(engines->item(1)->text(), QStringLiteral("ssh://ci@gpu-box"));
    QCOMPARE(token->echoMode(), QLineEdit::Password);
    QCOMPARE(token->placeholderText(), QStringLiteral("stored token"));
    // The languages given, then a saved override for one not in the list.
    QCOMPARE(images->rowCount(), 3);
    QCOMPARE(images->item(0, 0)->text(), QStringLiteral("python"));
    QCOMPARE(images->item(0, 1)->text(), QString());
    QCOMPARE(images->item(1, 1)->text(), QStringLiteral("golang:1.22"));
    QCOMPARE(images->item(2, 0)->text(), QStringLiteral("cobol"));

    timeout->setValue(90);
    memory->setValue(4096);
    cpus->setValue(3.0);
    pids->setValue(512);
    port->setValue(8800);
    retention->setValue(0);
    QCOMPARE(retention->text(), QStringLiteral("forever"));
    http->setChecked(false);
    QVERIFY(!port->isEnabled());
    keep->setChecked(false);
    QVERIFY(dialog.addEngine(QStringLiteral("  unix:///tmp/engine.sock ")));
    token->clear();
    images->item(0, 1)->setText(QStringLiteral("python:3.12-slim"));
    images->item(1, 1)->setText(QString());
    QVERIFY(dialog.addPassThroughName(QStringLiteral("NO_PROXY")));

    const AppSettings edited = dialog.settings();
    QCOMPARE(edited.defaultTimeoutSec, 90);
    QCOMPARE(edited.memoryMiB, 4096);
    QCOMPARE(edited.cpus, 3.0);
    QCOMPARE(edited.pidsLimit, 512);
    QCOMPARE(edited.httpPort, quint16(8800));
    QCOMPARE(edited.historyRetentionDays, 0);
    QCOMPARE(edited.httpEnabled, false);
    QCOMPARE(edited.keepRunningInBackground, false);
    QCOMPARE(edited.engines, (QStringList{QStringLiteral("/var/run/docker.sock"),
                                          QStringLiteral("ssh://ci@gpu-box"),
                                          QStringLiteral("unix:///tmp/engine.sock")}));
    QCOMPARE(edited.engineSocket, QStringLiteral("/var/run/docker.sock"));
    QVERIFY(edited.httpToken.isEmpty());
    QCOMPARE(edited.passThroughEnv,
             (QStringList{QStringLiteral("HTTPS_PROXY"), QStringLiteral("NO_PROXY")}));
    const QMap<QString, QString> expectedImages{
        {QStringLiteral("python"), QStringLiteral("python:3.12-slim")},
        {QStringLiteral("cobol"), QStringLiteral("gnucobol:3")}};
    QCOMPARE(edited.images, expectedImages);

    // Removing goes through the selection and the Remove button.
    auto *remove = dialog.findChild<QPushButton *>(QStringLiteral("removeEnvButton"));
    QVERIFY(remove);
    QVERIFY(!remove->isEnabled());
    env->item(0)->setSelected(true);
    QVERIFY(remove->isEnabled());
    remove->click();
    QCOMPARE(dialog.settings().passThroughEnv, QStringList{QStringLiteral("NO_PROXY")});
}

void TestUiWidgets::settingsDialogRejectsInvalidEnvNames()
{
    AppSettings current;
    current.passThroughEnv = {QStringLiteral("HOME")};
    SettingsDialog dialog(current, {});
    auto *env = dialog.findChild<QListWidget *>(QStringLiteral("passThroughList"));
    auto *edit = dialog.findChild<QLineEdit *>(QStringLiteral("envNameEdit"));
    auto *add = dialog.findChild<QPushButton *>(QStringLiteral("addEnvButton"));
    QVERIFY(env && edit && add);

    for (const QString &bad :
         {QStringLiteral("1ABC"), QStringLiteral("MY-VAR"), QStringLiteral("A B"),
          QStringLiteral(""), QStringLiteral("X=1"), QStringLiteral("HOME")}) {
        QVERIFY2(!dialog.addPassThroughName(bad), qPrintable(bad));
        edit->setText(bad);
        QVERIFY2(!add->isEnabled(), qPrintable(bad));
    }
    QCOMPARE(env->count(), 1);

    // The editor's validator drops what cannot start a name while typing, and Enter adds the
    // name rather than accepting the dialog.
    dialog.findChild<QTabWidget *>()->setCurrentIndex(3);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    edit->clear();
    edit->setFocus();
    QTest::keyClicks(edit, QStringLiteral("9_OK-2"));
    QCOMPARE(edit->text(), QStringLiteral("_OK2"));
    QVERIFY(add->isEnabled());
    QTest::keyClick(edit, Qt::Key_Return);
    QCOMPARE(env->count(), 2);
    QCOMPARE(env->item(1)->text(), QStringLiteral("_OK2"));
    QVERIFY(edit->text().isEmpty());
    QVERIFY(dialog.isVisible());
}

void TestUiWidgets::settingsDialogEngineList()
{
    SettingsDialog dialog(AppSettings(), {});
    auto *list = dialog.findChild<QListWidget *>(QStringLiteral("engineList"));
    auto *edit = dialog.findChild<QLineEdit *>(QStringLiteral("engineEdit"));
    auto *add = dialog.findChild<QPushButton *>(QStringLiteral("addEngineButton"));
    auto *remove = dialog.findChild<QPushButton *>(QStringLiteral("removeEngineButton"));
    auto *first = dialog.findChild<QPushButton *>(QStringLiteral("firstEngineButton"));
    auto *error = dialog.findChild<QLabel *>(QStringLiteral("engineError"));
    QVERIFY(list && edit && add && remove && first && error);
    auto *ok = dialog.findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
    // Empty: auto-detect.
    QCOMPARE(list->count(), 0);
    QVERIFY(ok->isEnabled());
    QVERIFY(!add->isEnabled());
    QVERIFY(dialog.settings().engines.isEmpty());

    // What --engine takes, and nothing else.
    for (const QString &bad :
         {QStringLiteral("relative/docker.sock"), QStringLiteral("http://host:2375"),
          QStringLiteral("tcp://"), QStringLiteral("ssh://user:pw@host"),
          QStringLiteral("context:no spaces")}) {
        QVERIFY2(!dialog.addEngine(bad), qPrintable(bad));
        edit->setText(bad);
        QVERIFY2(!add->isEnabled(), qPrintable(bad));
        QVERIFY2(!error->isHidden() && !error->text().isEmpty(), qPrintable(bad));
        // OK would drop what was typed: it waits for a valid address or an empty field.
        QVERIFY2(!ok->isEnabled(), qPrintable(bad));
    }
    QCOMPARE(list->count(), 0);
    for (const QString &good :
         {QStringLiteral("/run/podman/podman.sock"), QStringLiteral("unix:///var/run/docker.sock"),
          QStringLiteral("tcp://127.0.0.1:2375"), QStringLiteral("ssh://ci@build-host:2222"),
          QStringLiteral("context:lab")}) {
        edit->setText(good);
        QVERIFY2(add->isEnabled(), qPrintable(good));
        QVERIFY2(error->isHidden(), qPrintable(good));
        QVERIFY2(ok->isEnabled(), qPrintable(good));
        add->click();
        QVERIFY2(edit->text().isEmpty(), qPrintable(good));
    }
    QCOMPARE(list->count(), 5);
    // Listed once.
    QVERIFY(!dialog.addEngine(QStringLiteral("context:lab")));
    edit->setText(QStringLiteral("context:lab"));
    QVERIFY(!add->isEnabled());
    edit->clear();

    // The selected one first; another removed.
    QVERIFY(!first->isEnabled() && !remove->isEnabled());
    list->setCurrentRow(3);
    QVERIFY(first->isEnabled() && remove->isEnabled());
    first->click();
    list->setCurrentRow(4);
    remove->click();
    const QStringList expected{
        QStringLiteral("ssh://ci@build-host:2222"), QStringLiteral("/run/podman/podman.sock"),
        QStringLiteral("unix:///var/run/docker.sock"), QStringLiteral("tcp://127.0.0.1:2375")};
    QCOMPARE(dialog.settings().engines, expected);
    QCOMPARE(dialog.settings().engineSocket, expected.first());

    // One typed and not added counts as added when the dialog is accepted.
    edit->setText(QStringLiteral("ssh://other-host"));
    QCOMPARE(dialog.settings().engines, expected + QStringList{QStringLiteral("ssh://other-host")});
}

// Bound secrets on the Environment page: shown as NAME ← HOSTVAR for hosts, added from three
// fields with the hosts checked as the gateway checks them, removed through the selection, and
// saved as names and hosts only.
void TestUiWidgets::settingsDialogBindsSecrets()
{
    AppSettings current;
    current.secrets = {{QStringLiteral("GH_TOKEN"),
                        QStringLiteral("GH_TOKEN"),
                        {QStringLiteral("api.github.com")}}};
    SettingsDialog dialog(current, {});
    QVERIFY(dialog.settings() == current);

    auto *group = dialog.findChild<QGroupBox *>(QStringLiteral("secretsGroup"));
    auto *list = dialog.findChild<QListWidget *>(QStringLiteral("secretList"));
    auto *name = dialog.findChild<QLineEdit *>(QStringLiteral("secretNameEdit"));
    auto *hostVar = dialog.findChild<QLineEdit *>(QStringLiteral("secretHostVarEdit"));
    auto *hosts = dialog.findChild<QLineEdit *>(QStringLiteral("secretHostsEdit"));
    auto *add = dialog.findChild<QPushButton *>(QStringLiteral("addSecretButton"));
    auto *remove = dialog.findChild<QPushButton *>(QStringLiteral("removeSecretButton"));
    auto *error = dialog.findChild<QLabel *>(QStringLiteral("secretError"));
    QVERIFY(group && list && name && hostVar && hosts && add && remove && error);
    QCOMPARE(group->title(), QStringLiteral("Bound secrets"));
    bool explained = false;
    for (const QLabel *label : group->findChildren<QLabel *>())
        explained = explained || shownText(label).contains(QStringLiteral("holds a placeholder"));
    QVERIFY(explained);
    QCOMPARE(list->count(), 1);
    QCOMPARE(list->item(0)->text(), QStringLiteral("GH_TOKEN ← GH_TOKEN for api.github.com"));
    QVERIFY(!add->isEnabled());
    QVERIFY(!remove->isEnabled());

    dialog.findChild<QTabWidget *>()->setCurrentIndex(3);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));
    QVERIFY(!error->isVisible());

    // Add is offered once the three parts make a binding; a host the gateway would refuse is
    // named under the fields.
    QTest::keyClicks(name, QStringLiteral("9OPENAI_API_KEY"));
    QCOMPARE(name->text(), QStringLiteral("OPENAI_API_KEY"));
    QTest::keyClicks(hostVar, QStringLiteral("MY_KEY"));
    QVERIFY(!add->isEnabled());
    QTest::keyClicks(hosts, QStringLiteral("http://api.openai.com"));
    QVERIFY(!add->isEnabled());
    QVERIFY(error->isVisible());
    QVERIFY2(error->text().contains(QStringLiteral("not a host pattern")),
             qPrintable(error->text()));
    hosts->setText(QStringLiteral("API.openai.com, *.openai.azure.com:8443"));
    QVERIFY(add->isEnabled());
    QVERIFY(!error->isVisible());
    add->click();
    QCOMPARE(list->count(), 2);
    QCOMPARE(list->item(1)->text(),
             QStringLiteral("OPENAI_API_KEY ← MY_KEY for api.openai.com, *.openai.azure.com:8443"));
    QVERIFY(name->text().isEmpty() && hostVar->text().isEmpty() && hosts->text().isEmpty());

    // A name bound already is refused, and said so; so are bindings that are not ones.
    name->setText(QStringLiteral("GH_TOKEN"));
    hostVar->setText(QStringLiteral("OTHER"));
    hosts->setText(QStringLiteral("example.com"));
    QVERIFY(!add->isEnabled());
    QVERIFY(error->isVisible());
    QVERIFY2(error->text().contains(QStringLiteral("bound already")), qPrintable(error->text()));
    QVERIFY(!dialog.addSecret(QStringLiteral("GH_TOKEN"), QStringLiteral("OTHER"),
                              QStringLiteral("example.com")));
    QVERIFY(!dialog.addSecret(QStringLiteral("1BAD"), QStringLiteral("V"),
                              QStringLiteral("example.com")));
    QVERIFY(!dialog.addSecret(QStringLiteral("K"), QStringLiteral("V-2"),
                              QStringLiteral("example.com")));
    QVERIFY(!dialog.addSecret(QStringLiteral("K"), QStringLiteral("V"), QStringLiteral(" , ")));
    QCOMPARE(list->count(), 2);

    // Enter in a field adds the binding rather than accepting the dialog.
    name->setText(QStringLiteral("NPM_TOKEN"));
    hostVar->setText(QStringLiteral("NPM_TOKEN"));
    hosts->setText(QStringLiteral("registry.npmjs.org"));
    hosts->setFocus();
    QTest::keyClick(hosts, Qt::Key_Return);
    QCOMPARE(list->count(), 3);
    QVERIFY(dialog.isVisible());

    // Removing goes through the selection and the Remove button.
    list->item(0)->setSelected(true);
    QVERIFY(remove->isEnabled());
    remove->click();
    QCOMPARE(list->count(), 2);
    QVERIFY(!remove->isEnabled());

    const QList<AppSettings::SecretBinding> expected{
        {QStringLiteral("OPENAI_API_KEY"),
         QStringLiteral("MY_KEY"),
         {QStringLiteral("api.openai.com"), QStringLiteral("*.openai.azure.com:8443")}},
        {QStringLiteral("NPM_TOKEN"),
         QStringLiteral("NPM_TOKEN"),
         {QStringLiteral("registry.npmjs.org")}}};
    const AppSettings edited = dialog.settings();
    QCOMPARE(edited.secrets, expected);
    QVERIFY(edited != current);
    // GH_TOKEN may be bound anew once removed.
    QVERIFY(dialog.addSecret(QStringLiteral("GH_TOKEN"), QStringLiteral("GH_TOKEN"),
                             QStringLiteral("api.github.com")));
    dialog.reject();

    // Saved: names and hosts in the file, read back the same.
    QTemporaryDir dir;
    QSettings s(dir.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
    edited.save(s);
    QCOMPARE(s.value(QStringLiteral("environment/secrets")).toStringList(),
             (QStringList{QStringLiteral("OPENAI_API_KEY=MY_KEY@api.openai.com,"
                                         "*.openai.azure.com:8443"),
                          QStringLiteral("NPM_TOKEN=NPM_TOKEN@registry.npmjs.org")}));
    QCOMPARE(AppSettings::load(s).secrets, expected);
}

namespace {
// Runs `fill` on the workspace dialog `editor` opens next (modal: exec() returns only once it is
// closed), while the editor's button is clicked; false when no dialog opened.
bool withWorkspaceDialog(WorkspacesEditor *editor, QPushButton *button,
                         const std::function<void(WorkspaceDialog *)> &fill)
{
    bool opened = false;
    QTimer::singleShot(0, editor, [&] {
        auto *dialog = editor->findChild<WorkspaceDialog *>();
        if (!dialog)
            return;
        opened = true;
        fill(dialog);
        if (dialog->isVisible())
            dialog->reject(); // what the test left open
    });
    QTest::mouseClick(button, Qt::LeftButton);
    return opened;
}

int tabIndex(const SettingsDialog &dialog, const QString &title)
{
    const auto *tabs = dialog.findChild<QTabWidget *>(QStringLiteral("settingsTabs"));
    for (int i = 0; tabs && i < tabs->count(); ++i)
        if (tabs->tabText(i) == title)
            return i;
    return -1;
}
} // namespace

// Settings → Workspaces: the table shows what is saved; Add… asks for a folder, names the
// workspace after it, and the dialog sets mode, apply and rules (the defaults shown beside
// them); what it added is in the saved settings. Edit and Remove work on the selected row.
void TestUiWidgets::settingsDialogAddsWorkspaces()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("data")));
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("My Project!")));
    const QString root = QFileInfo(dir.path()).canonicalFilePath();
    AppSettings current;
    Workspace data;
    data.name = QStringLiteral("data");
    data.path = root + QStringLiteral("/data");
    current.workspaces = {data};
    SettingsDialog dialog(current, {});
    QVERIFY(dialog.settings() == current);
    const int tab = tabIndex(dialog, QStringLiteral("Workspaces"));
    QVERIFY(tab >= 0);
    dialog.findChild<QTabWidget *>()->setCurrentIndex(tab);
    dialog.show();
    QVERIFY(QTest::qWaitForWindowExposed(&dialog));

    WorkspacesEditor *editor = dialog.workspacesEditor();
    QTableWidget *table = editor->table();
    auto *add = editor->findChild<QPushButton *>(QStringLiteral("addWorkspaceButton"));
    auto *edit = editor->findChild<QPushButton *>(QStringLiteral("editWorkspaceButton"));
    auto *remove = editor->findChild<QPushButton *>(QStringLiteral("removeWorkspaceButton"));
    auto *exposure = editor->findChild<QLabel *>(QStringLiteral("workspaceExposureNote"));
    auto *rules = editor->findChild<QLabel *>(QStringLiteral("workspaceRules"));
    QVERIFY(add && edit && remove && exposure && rules);
    QVERIFY(exposure->isVisible());
    QCOMPARE(shownText(exposure),
             QStringLiteral("A read-only workspace still exposes what it holds: the program can "
                            "read it and, with network, send what it read."));
    for (const QString &pattern : Workspace::defaultExclusions())
        QVERIFY2(rules->text().contains(pattern), qPrintable(pattern));
    QCOMPARE(table->rowCount(), 1);
    QCOMPARE(table->item(0, WorkspacesEditor::NameColumn)->text(), QStringLiteral("data"));
    QCOMPARE(table->item(0, WorkspacesEditor::FolderColumn)->text(),
             QDir::toNativeSeparators(data.path));
    QCOMPARE(table->item(0, WorkspacesEditor::ModeColumn)->text(), QStringLiteral("read-only"));
    QCOMPARE(table->item(0, WorkspacesEditor::ApplyColumn)->text(), QStringLiteral("—"));
    QVERIFY(!edit->isEnabled() && !remove->isEnabled());

    // Add…: the folder chooser, then the dialog, named after the folder.
    editor->setFolderChooser(
        [&dir](QWidget *) { return dir.filePath(QStringLiteral("My Project!")); });
    QString proposedName;
    QStringList shownDefaults;
    QVERIFY(withWorkspaceDialog(editor, add, [&](WorkspaceDialog *d) {
        auto *name = d->findChild<QLineEdit *>(QStringLiteral("workspaceNameEdit"));
        auto *mode = d->findChild<QComboBox *>(QStringLiteral("workspaceModeCombo"));
        auto *apply = d->findChild<QComboBox *>(QStringLiteral("workspaceApplyCombo"));
        auto *exclude = d->findChild<QPlainTextEdit *>(QStringLiteral("workspaceExcludeEdit"));
        auto *include = d->findChild<QPlainTextEdit *>(QStringLiteral("workspaceIncludeEdit"));
        auto *defaults = d->findChild<QPlainTextEdit *>(QStringLiteral("workspaceDefaultsView"));
        auto *buttons = d->findChild<QDialogButtonBox *>();
        if (!name || !mode || !apply || !exclude || !include || !defaults || !buttons)
            return;
        proposedName = name->text();
        shownDefaults = defaults->toPlainText().split(u'\n');
        if (!defaults->isReadOnly() || apply->isEnabled()) // read-only mode: nothing to apply
            return;
        mode->setCurrentIndex(mode->findData(int(Workspace::Mode::CopyOnWrite)));
        apply->setCurrentIndex(apply->findData(int(Workspace::Apply::Ask)));
        exclude->setPlainText(QStringLiteral("build/\n  *.log \n\nbuild/"));
        include->setPlainText(QStringLiteral(".env.example"));
        QTest::mouseClick(buttons->button(QDialogButtonBox::Ok), Qt::LeftButton);
    }));
    QCOMPARE(proposedName, QStringLiteral("My-Project"));
    QCOMPARE(shownDefaults, Workspace::defaultExclusions());
    QCOMPARE(table->rowCount(), 2);
    QCOMPARE(table->item(1, WorkspacesEditor::NameColumn)->text(), QStringLiteral("My-Project"));
    QCOMPARE(table->item(1, WorkspacesEditor::ModeColumn)->text(), QStringLiteral("copy-on-write"));
    QCOMPARE(table->item(1, WorkspacesEditor::ApplyColumn)->text(), QStringLiteral("ask"));
    // Selected once added: its own rules show under the defaults.
    QVERIFY(rules->text().contains(QStringLiteral("My-Project also keeps out: build/, *.log.")));
    QVERIFY(rules->text().contains(QStringLiteral("My-Project lets in: .env.example.")));
    // The policy editor offers the names it can choose from.
    QTableWidget *policies = dialog.policyEditor()->table();
    QVERIFY(shownToolTip(policies->item(0, PolicyEditor::WorkspacesColumn)->toolTip())
                .contains(QStringLiteral("lists: data, My-Project.")));

    // Edit changes the selected row.
    table->selectRow(0);
    QVERIFY(edit->isEnabled());
    QVERIFY(withWorkspaceDialog(editor, edit, [](WorkspaceDialog *d) {
        auto *mode = d->findChild<QComboBox *>(QStringLiteral("workspaceModeCombo"));
        mode->setCurrentIndex(mode->findData(int(Workspace::Mode::CopyOnWrite)));
        d->accept();
    }));
    QCOMPARE(table->item(0, WorkspacesEditor::ModeColumn)->text(), QStringLiteral("copy-on-write"));
    QCOMPARE(table->item(0, WorkspacesEditor::ApplyColumn)->text(), QStringLiteral("never"));

    // Saved and read back.
    const AppSettings edited = dialog.settings();
    dialog.reject();
    QTemporaryDir store;
    QSettings s(store.filePath(QStringLiteral("settings.ini")), QSettings::IniFormat);
    edited.save(s);
    const AppSettings loaded = AppSettings::load(s);
    QCOMPARE(loaded.workspaces.size(), 2);
    const Workspace &added = loaded.workspaces.at(1);
    QCOMPARE(added.name, QStringLiteral("My-Project"));
    QCOMPARE(added.path, root + QStringLiteral("/My Project!"));
    QCOMPARE(added.mode, Workspace::Mode::CopyOnWrite);
    QCOMPARE(added.apply, Workspace::Apply::Ask);
    QCOMPARE(added.exclude, (QStringList{QStringLiteral("build/"), QStringLiteral("*.log")}));
    QCOMPARE(added.include, QStringList{QStringLiteral(".env.example")});
    QCOMPARE(loaded.workspaces.at(0).mode, Workspace::Mode::CopyOnWrite);
    QVERIFY(loaded == edited);

    // Remove goes through the selection.
    table->selectRow(0);
    QTest::mouseClick(remove, Qt::LeftButton);
    QCOMPARE(editor->names(), QStringList{QStringLiteral("My-Project")});
    QCOMPARE(dialog.settings().workspaces.size(), 1);
}

// A name that is not one, or is taken, is refused with a message saying why, and OK stays off.
void TestUiWidgets::settingsDialogRefusesBadWorkspaceNames()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("data")));
    AppSettings current;
    Workspace data;
    data.name = QStringLiteral("data");
    data.path = QFileInfo(dir.filePath(QStringLiteral("data"))).canonicalFilePath();
    current.workspaces = {data};
    SettingsDialog dialog(current, {});
    WorkspacesEditor *editor = dialog.workspacesEditor();
    auto *add = editor->findChild<QPushButton *>(QStringLiteral("addWorkspaceButton"));
    QVERIFY(add);
    editor->setFolderChooser([&data](QWidget *) { return data.path; });

    QStringList messages;
    bool okWasEnabled = true;
    bool stayedOpen = false;
    QVERIFY(withWorkspaceDialog(editor, add, [&](WorkspaceDialog *d) {
        auto *name = d->findChild<QLineEdit *>(QStringLiteral("workspaceNameEdit"));
        auto *error = d->findChild<QLabel *>(QStringLiteral("workspaceError"));
        QPushButton *ok = d->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
        // The folder's name is taken: the proposal is the next free one.
        messages.append(name->text());
        for (const QString &typed : {QStringLiteral("my data"), QStringLiteral("-data"),
                                     QStringLiteral("data"), QString(QChar(u'x')).repeated(65)}) {
            name->setText(typed);
            messages.append(error->isVisible() ? error->text() : QString());
            okWasEnabled = okWasEnabled && ok->isEnabled();
        }
        // Enter (the default button) does not get past it either.
        QTest::keyClick(name, Qt::Key_Return);
        stayedOpen = d->isVisible();
    }));
    QCOMPARE(messages.value(0), QStringLiteral("data-2"));
    QCOMPARE(messages.value(1),
             QStringLiteral("'my data' is not a valid name: a letter or digit, then up to 63 "
                            "letters, digits, '_', '.' or '-'."));
    QVERIFY2(messages.value(2).startsWith(QStringLiteral("'-data' is not a valid name")),
             qPrintable(messages.value(2)));
    QCOMPARE(messages.value(3), QStringLiteral("A workspace named 'data' exists already."));
    QVERIFY2(messages.value(4).contains(QStringLiteral("is not a valid name")),
             qPrintable(messages.value(4)));
    QVERIFY(!okWasEnabled);
    QVERIFY(stayedOpen);
    QCOMPARE(editor->table()->rowCount(), 1);
    QCOMPARE(dialog.settings().workspaces.size(), 1);

    // The same through the editor itself.
    Workspace bad = data;
    bad.name = QStringLiteral("bad/name");
    QString why;
    QVERIFY(!editor->addWorkspace(bad, &why));
    QVERIFY2(why.contains(QStringLiteral("is not a valid name")), qPrintable(why));
    QVERIFY(!editor->addWorkspace(data, &why));
    QCOMPARE(why, QStringLiteral("A workspace named 'data' exists already."));
    bad.name = QStringLiteral("data.v2");
    QVERIFY(editor->addWorkspace(bad, &why));
    QCOMPARE(dialog.settings().workspaces.size(), 2);
}

void TestUiWidgets::workspaceNameFromFolder_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QStringList>("taken");
    QTest::addColumn<QString>("name");
    QTest::newRow("plain") << "/home/me/data" << QStringList() << "data";
    QTest::newRow("spaces and marks") << "/home/me/My Project!" << QStringList() << "My-Project";
    QTest::newRow("hidden folder") << "/home/me/.config" << QStringList() << "config";
    QTest::newRow("trailing slash") << "/home/me/sales/" << QStringList() << "sales";
    QTest::newRow("taken") << "/srv/data" << QStringList{"data", "data-2"} << "data-3";
    QTest::newRow("nothing usable") << "/home/me/!!!" << QStringList() << "workspace";
    QTest::newRow("accented") << "/home/me/données" << QStringList() << "donn-es";
    QTest::newRow("long") << "/x/" + QString(100, u'a') << QStringList() << QString(60, u'a');
}

void TestUiWidgets::workspaceNameFromFolder()
{
    QFETCH(QString, folder);
    QFETCH(QStringList, taken);
    QFETCH(QString, name);
    QCOMPARE(WorkspaceDialog::nameFor(folder, taken), name);
    QVERIFY(Workspace::isValidName(name));
}

void TestUiWidgets::connectDialogTexts()
{
    const QString binary = QStringLiteral("/opt/code sandbox/bin/code-sandbox");
    const QString url = QStringLiteral("http://127.0.0.1:8765/mcp");
    ConnectAssistantDialog dialog(binary, url, QStringLiteral("abc123"));

    const auto text = [&](const char *name) {
        auto *edit = dialog.findChild<QPlainTextEdit *>(QString::fromLatin1(name));
        return edit ? edit->toPlainText() : QString();
    };
    const QString claudeCode = text("claudeCodeText");
    QCOMPARE(claudeCode, QStringLiteral("claude mcp add code-sandbox -- '%1' --stdio").arg(binary));
    // One command, continued on a second line.
    QVERIFY(text("claudeCodeHttpText")
                .startsWith(QStringLiteral("claude mcp add --transport http code-sandbox ") + url +
                            QStringLiteral(" \\\n  --header \"Authorization: Bearer ")));
    QVERIFY(text("geminiText").contains(QStringLiteral("\"command\": \"") + binary + u'"'));
    QVERIFY(text("geminiText").contains(QStringLiteral("\"args\": [\"--stdio\"]")));
    QVERIFY(text("geminiHttpText").contains(QStringLiteral("\"httpUrl\": \"") + url + u'"'));
    QVERIFY(text("claudeDesktopText").contains(binary));

    // The JSON snippets are valid JSON with the structure the clients read.
    for (const char *name : {"geminiText", "geminiHttpText", "claudeDesktopText"}) {
        QJsonParseError error;
        const QJsonDocument doc = QJsonDocument::fromJson(text(name).toUtf8(), &error);
        QVERIFY2(error.error == QJsonParseError::NoError, name);
        QVERIFY(doc.object()
                    .value(QStringLiteral("mcpServers"))
                    .toObject()
                    .contains(QStringLiteral("code-sandbox")));
    }
    const QJsonObject desktop = QJsonDocument::fromJson(text("claudeDesktopText").toUtf8())
                                    .object()[QStringLiteral("mcpServers")]
                                    .toObject()[QStringLiteral("code-sandbox")]
                                    .toObject();
    QCOMPARE(desktop.value(QStringLiteral("command")).toString(), binary);
}

void TestUiWidgets::connectDialogMasksToken()
{
    const QString token = QStringLiteral("f00dfeedcafe");
    ConnectAssistantDialog dialog(QStringLiteral("/usr/bin/code-sandbox"),
                                  QStringLiteral("http://127.0.0.1:8765/mcp"), token);
    auto *http = dialog.findChild<QPlainTextEdit *>(QStringLiteral("claudeCodeHttpText"));
    auto *gemini = dialog.findChild<QPlainTextEdit *>(QStringLiteral("geminiHttpText"));
    auto *show = dialog.findChild<QCheckBox *>(QStringLiteral("showTokenCheck"));
    QVERIFY(http && gemini && show);
    QVERIFY(!show->isChecked());
    for (QPlainTextEdit *edit : {http, gemini}) {
        QVERIFY(!edit->toPlainText().contains(token));
        QVERIFY(edit->toPlainText().contains(QStringLiteral("Bearer ••••")));
    }
    show->setChecked(true);
    for (QPlainTextEdit *edit : {http, gemini})
        QVERIFY(edit->toPlainText().contains(QStringLiteral("Bearer ") + token));
    show->setChecked(false);
    QVERIFY(!http->toPlainText().contains(token));
}

void TestUiWidgets::connectDialogCopiesRealToken()
{
    const QString token = QStringLiteral("0123456789abcdef");
    const QString url = QStringLiteral("http://127.0.0.1:8765/mcp");
    ConnectAssistantDialog dialog(QStringLiteral("/usr/bin/code-sandbox"), url, token);
    QClipboard *clipboard = QGuiApplication::clipboard();

    auto *copy = dialog.findChild<QPushButton *>(QStringLiteral("claudeCodeHttpCopy"));
    QVERIFY(copy);
    clipboard->clear();
    copy->click();
    QCOMPARE(clipboard->text(),
             QStringLiteral("claude mcp add --transport http code-sandbox %1 \\\n  --header "
                            "\"Authorization: Bearer %2\"")
                 .arg(url, token));

    auto *geminiCopy = dialog.findChild<QPushButton *>(QStringLiteral("geminiHttpCopy"));
    QVERIFY(geminiCopy);
    geminiCopy->click();
    const QJsonObject server = QJsonDocument::fromJson(clipboard->text().toUtf8())
                                   .object()[QStringLiteral("mcpServers")]
                                   .toObject()[QStringLiteral("code-sandbox")]
                                   .toObject();
    QCOMPARE(server.value(QStringLiteral("httpUrl")).toString(), url);
    QCOMPARE(server.value(QStringLiteral("headers"))
                 .toObject()
                 .value(QStringLiteral("Authorization"))
                 .toString(),
             QStringLiteral("Bearer ") + token);

    auto *stdioCopy = dialog.findChild<QPushButton *>(QStringLiteral("claudeDesktopCopy"));
    QVERIFY(stdioCopy);
    stdioCopy->click();
    QVERIFY(clipboard->text().contains(QStringLiteral("/usr/bin/code-sandbox")));
}

void TestUiWidgets::connectDialogWithoutHttp()
{
    ConnectAssistantDialog dialog(QStringLiteral("/usr/bin/code-sandbox"), QString(),
                                  QStringLiteral("tok"));
    QVERIFY(dialog.findChild<QPlainTextEdit *>(QStringLiteral("claudeCodeText")));
    QVERIFY(!dialog.findChild<QPlainTextEdit *>(QStringLiteral("claudeCodeHttpText")));
    QVERIFY(!dialog.findChild<QPlainTextEdit *>(QStringLiteral("geminiHttpText")));
    for (QPlainTextEdit *edit : dialog.findChildren<QPlainTextEdit *>())
        QVERIFY(!edit->toPlainText().contains(QStringLiteral("tok")));
}

void TestUiWidgets::highlighterKeywords_data()
{
    QTest::addColumn<QString>("language");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("keyword");
    QTest::addColumn<QString>("identifier");
    QTest::newRow("python") << QStringLiteral("python") << QStringLiteral("def compute(values):")
                            << QStringLiteral("def") << QStringLiteral("compute");
    QTest::newRow("cpp") << QStringLiteral("cpp") << QStringLiteral("return counter;")
                         << QStringLiteral("return") << QStringLiteral("counter");
    QTest::newRow("rust") << QStringLiteral("rust") << QStringLiteral("let mut total = 0;")
                          << QStringLiteral("mut") << QStringLiteral("total");
    QTest::newRow("bash") << QStringLiteral("bash") << QStringLiteral("for item in list; do")
                          << QStringLiteral("for") << QStringLiteral("item");
    QTest::newRow("r") << QStringLiteral("r") << QStringLiteral("f <- function(x) is.function(x)")
                       << QStringLiteral("function") << QStringLiteral("is.function");
    QTest::newRow("go") << QStringLiteral("go") << QStringLiteral("func main() { fmt.Println(1) }")
                        << QStringLiteral("func") << QStringLiteral("main");
    QTest::newRow("java") << QStringLiteral("java") << QStringLiteral("public static void main")
                          << QStringLiteral("static") << QStringLiteral("main");
    QTest::newRow("typescript") << QStringLiteral("typescript")
                                << QStringLiteral("interface Point { x: number }")
                                << QStringLiteral("interface") << QStringLiteral("Point");
    QTest::newRow("ruby") << QStringLiteral("ruby") << QStringLiteral("def greet; puts 1; end")
                          << QStringLiteral("end") << QStringLiteral("greet");
}

void TestUiWidgets::highlighterKeywords()
{
    QFETCH(QString, language);
    QFETCH(QString, code);
    QFETCH(QString, keyword);
    QFETCH(QString, identifier);

    // In an editor, as in the app: a document without a layout yet drops the formats when its
    // layout is created.
    QPlainTextEdit editor;
    QTextDocument &doc = *editor.document();
    CodeHighlighter highlighter(&doc);
    doc.setPlainText(code);
    // Before a language is set nothing is coloured.
    QVERIFY(doc.firstBlock().layout()->formats().isEmpty());
    highlighter.setLanguage(language);

    const QTextBlock block = doc.firstBlock();
    const QTextCharFormat keywordFormat = formatAt(block, int(code.indexOf(keyword)));
    const QTextCharFormat identifierFormat = formatAt(block, int(code.indexOf(identifier)));
    QVERIFY(keywordFormat != identifierFormat);
    QCOMPARE(keywordFormat.fontWeight(), int(QFont::Bold));
    QVERIFY(keywordFormat.foreground().color() != identifierFormat.foreground().color());
}

void TestUiWidgets::highlighterMultiLineComment()
{
    // In an editor, as in the app: a document without a layout yet drops the formats when its
    // layout is created.
    QPlainTextEdit editor;
    QTextDocument &doc = *editor.document();
    CodeHighlighter highlighter(&doc);
    highlighter.setLanguage(QStringLiteral("cpp"));
    doc.setPlainText(QStringLiteral("int a = 1; /* starts here\n"
                                    "return inside comment\n"
                                    "ends */ return a;"));
    const QTextBlock first = doc.firstBlock();
    const QTextBlock second = first.next();
    const QTextBlock third = second.next();
    const QTextCharFormat keyword = formatAt(first, 0); // int
    const QTextCharFormat comment = formatAt(first, 12);
    QVERIFY(comment.fontItalic());
    QVERIFY(keyword != comment);
    // "return" inside the comment is comment, not keyword; after "*/" it is a keyword again.
    QCOMPARE(formatAt(second, 0), comment);
    QCOMPARE(formatAt(third, 0), comment);
    QCOMPARE(formatAt(third, 8), keyword);
    QVERIFY(first.userState() > 0);
    QVERIFY(second.userState() > 0);
    QCOMPARE(third.userState(), 0);

    // Closing the comment in the first line un-comments the next ones.
    QTextCursor cursor(doc.firstBlock());
    cursor.movePosition(QTextCursor::EndOfBlock);
    cursor.insertText(QStringLiteral(" */"));
    QCOMPARE(formatAt(doc.firstBlock().next(), 0), keyword);
}

void TestUiWidgets::highlighterPythonTripleQuotes()
{
    // In an editor, as in the app: a document without a layout yet drops the formats when its
    // layout is created.
    QPlainTextEdit editor;
    QTextDocument &doc = *editor.document();
    CodeHighlighter highlighter(&doc);
    highlighter.setLanguage(QStringLiteral("python"));
    doc.setPlainText(QStringLiteral("x = \"\"\"first\n"
                                    "def not_a_keyword\n"
                                    "\"\"\"\n"
                                    "def f(): pass"));
    const QTextBlock first = doc.firstBlock();
    const QTextCharFormat string = formatAt(first, 4);
    QVERIFY(string.isValid());
    QCOMPARE(formatAt(first.next(), 0), string);
    const QTextBlock last = doc.lastBlock();
    QCOMPARE(formatAt(last, 0).fontWeight(), int(QFont::Bold));
}

void TestUiWidgets::highlighterCommentInsideString()
{
    // In an editor, as in the app: a document without a layout yet drops the formats when its
    // layout is created.
    QPlainTextEdit editor;
    QTextDocument &doc = *editor.document();
    CodeHighlighter highlighter(&doc);
    highlighter.setLanguage(QStringLiteral("python"));
    doc.setPlainText(QStringLiteral("s = \"# not a comment\"; return 42 # comment"));
    const QTextBlock block = doc.firstBlock();
    const QTextCharFormat string = formatAt(block, 5);
    const QTextCharFormat keyword = formatAt(block, 23);
    const QTextCharFormat number = formatAt(block, 30);
    const QTextCharFormat comment = formatAt(block, 34);
    QVERIFY(!string.fontItalic());
    QCOMPARE(keyword.fontWeight(), int(QFont::Bold));
    QVERIFY(number.isValid() && number != string && number != keyword);
    QVERIFY(comment.fontItalic());
}

void TestUiWidgets::imageStripSortsFiles()
{
    ImageStrip strip;
    strip.setFiles({file(OutputFile::Kind::Plot, QStringLiteral("figure-0001.png"),
                         pngBytes(640, 480, Qt::red), QStringLiteral("image/png")),
                    file(OutputFile::Kind::Output, QStringLiteral("data.csv"),
                         QByteArray("a,b\n1,2\n"), QStringLiteral("text/csv")),
                    file(OutputFile::Kind::Output, QStringLiteral("charts/bar.png"),
                         pngBytes(200, 300, Qt::blue), QStringLiteral("image/png"))});
    QCOMPARE(strip.imageCount(), 2);
    QCOMPARE(strip.listedFileCount(), 1);
    auto *thumbnails = strip.findChild<QListWidget *>(QStringLiteral("thumbnails"));
    auto *list = strip.findChild<QListWidget *>(QStringLiteral("fileList"));
    QVERIFY(thumbnails && list);
    QCOMPARE(thumbnails->count(), 2);
    QCOMPARE(thumbnails->item(0)->text(), QStringLiteral("figure-0001.png"));
    QCOMPARE(thumbnails->item(1)->text(), QStringLiteral("charts/bar.png"));
    QVERIFY(!thumbnails->item(0)->icon().isNull());
    QCOMPARE(list->count(), 1);
    QVERIFY(list->item(0)->text().startsWith(QStringLiteral("data.csv")));

    // Save… follows the one selection across both lists.
    auto *save = strip.findChild<QPushButton *>(QStringLiteral("saveButton"));
    QVERIFY(save);
    QVERIFY(!save->isEnabled());
    list->setCurrentRow(0);
    QVERIFY(save->isEnabled());
    thumbnails->setCurrentRow(1);
    QVERIFY(save->isEnabled());
    QVERIFY(list->selectedItems().isEmpty());

    strip.setFiles({});
    QCOMPARE(strip.imageCount(), 0);
    QCOMPARE(strip.listedFileCount(), 0);
}

void TestUiWidgets::imageStripNotIncluded()
{
    ImageStrip strip;
    strip.setFiles({file(OutputFile::Kind::Plot, QStringLiteral("huge.png"),
                         QByteArray(8 * 1024 * 1024, 'x'), QStringLiteral("image/png"), false),
                    file(OutputFile::Kind::Output, QStringLiteral("ok.png"),
                         pngBytes(32, 32, Qt::green), QStringLiteral("image/png"))});
    QCOMPARE(strip.imageCount(), 1);
    QCOMPARE(strip.listedFileCount(), 1);
    auto *list = strip.findChild<QListWidget *>(QStringLiteral("fileList"));
    QVERIFY(list);
    const QString text = list->item(0)->text();
    QVERIFY2(text.contains(QStringLiteral("huge.png")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("not included: too large")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("MiB")), qPrintable(text));
    // Nothing to save when the content was left out.
    list->setCurrentRow(0);
    QVERIFY(!strip.findChild<QPushButton *>(QStringLiteral("saveButton"))->isEnabled());
}

void TestUiWidgets::safeImageFormats_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("data");
    QTest::addColumn<bool>("decoded");
    QTest::addColumn<bool>("guessable"); // what loadFromData's detection made of them

    const QByteArray png = encoded("PNG");
    const QByteArray gif =
        QByteArray::fromBase64("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7");
    QTest::newRow("png") << QStringLiteral("plot.png") << png << true << true;
    QTest::newRow("png, upper case") << QStringLiteral("PLOT.PNG") << png << true << true;
    QTest::newRow("jpeg") << QStringLiteral("photo.jpg") << encoded("JPEG") << true << true;
    QTest::newRow("jpeg, .jpeg") << QStringLiteral("photo.jpeg") << encoded("JPEG") << true << true;
    QTest::newRow("gif") << QStringLiteral("anim.gif") << gif << true << true;
    // PNG bytes under another name: the name decides, the bytes never pick a plugin.
    QTest::newRow("png bytes named .bmp") << QStringLiteral("x.bmp") << png << false << true;
    QTest::newRow("png bytes named .tiff") << QStringLiteral("x.tiff") << png << false << true;
    QTest::newRow("png bytes named .svg") << QStringLiteral("x.svg") << png << false << true;
    QTest::newRow("png bytes, no extension") << QStringLiteral("plot") << png << false << true;
    QTest::newRow("png bytes named .jpg") << QStringLiteral("x.jpg") << png << false << true;
    // Formats Qt decodes when left to guess, but the window does not.
    QTest::newRow("bmp") << QStringLiteral("x.bmp") << encoded("BMP") << false << true;
    QTest::newRow("ppm") << QStringLiteral("x.ppm") << encoded("PPM") << false << true;
    QTest::newRow("xpm") << QStringLiteral("x.xpm") << encoded("XPM") << false << true;
    QTest::newRow("ico") << QStringLiteral("x.ico") << encoded("ICO") << false << true;
    QTest::newRow("bmp named .png") << QStringLiteral("x.png") << encoded("BMP") << false << true;
    QTest::newRow("xpm named .png") << QStringLiteral("x.png") << encoded("XPM") << false << true;
    QTest::newRow("ppm named .gif") << QStringLiteral("x.gif") << encoded("PPM") << false << true;
    QTest::newRow("garbage named .png")
        << QStringLiteral("x.png") << QByteArray(100, 'g') << false << false;
    QTest::newRow("empty named .png") << QStringLiteral("x.png") << QByteArray() << false << false;
}

void TestUiWidgets::safeImageFormats()
{
    QFETCH(QString, name);
    QFETCH(QByteArray, data);
    QFETCH(bool, decoded);
    QFETCH(bool, guessable);
    // The samples are what they claim: Qt's detection decodes them.
    QCOMPARE(!QImage::fromData(data).isNull(), guessable);
    QString why;
    const QImage image = SafeImage::decode(name, data, &why);
    QCOMPARE(!image.isNull(), decoded);
    QCOMPARE(why.isEmpty(), decoded);
    if (decoded)
        QVERIFY(image.width() >= 1 && image.height() >= 1);
}

void TestUiWidgets::safeImageRefusesHugeHeader()
{
    // 60000 × 60000 RGBA would be 13.4 GiB.
    const QByteArray bytes = hugePng(60000);
    QBuffer buffer;
    buffer.setData(bytes);
    buffer.open(QIODevice::ReadOnly);
    QImageReader header(&buffer, "png");
    QCOMPARE(header.size(), QSize(60000, 60000)); // the header is well-formed
    QString why;
    QVERIFY(SafeImage::decode(QStringLiteral("bomb.png"), bytes, &why).isNull());
    QVERIFY2(why.contains(QStringLiteral("too large")) && why.contains(u"60000"), qPrintable(why));
    // A small one of the same make gets past the size check (whatever its empty data gives).
    why.clear();
    SafeImage::decode(QStringLiteral("small.png"), hugePng(64), &why);
    QVERIFY2(!why.contains(QStringLiteral("too large")), qPrintable(why));
}

void TestUiWidgets::imageStripShowsUnsafeImagesAsFiles()
{
    const QByteArray png = pngBytes(40, 30, Qt::red);
    ImageStrip strip;
    strip.setFiles({file(OutputFile::Kind::Output, QStringLiteral("real.png"), png,
                         QStringLiteral("image/png")),
                    file(OutputFile::Kind::Output, QStringLiteral("disguised.bmp"), png,
                         QStringLiteral("image/bmp")),
                    file(OutputFile::Kind::Output, QStringLiteral("icon.xpm"), encoded("XPM"),
                         QStringLiteral("image/x-xpixmap")),
                    file(OutputFile::Kind::Plot, QStringLiteral("bomb.png"), hugePng(60000),
                         QStringLiteral("image/png"))});
    QCOMPARE(strip.imageCount(), 1);
    QCOMPARE(strip.listedFileCount(), 3);
    auto *list = strip.findChild<QListWidget *>(QStringLiteral("fileList"));
    QVERIFY(list);
    QVERIFY(list->item(0)->text().startsWith(QStringLiteral("disguised.bmp")));
    QVERIFY2(list->item(0)->toolTip().contains(QStringLiteral("not a PNG, JPEG or GIF")),
             qPrintable(list->item(0)->toolTip()));
    QVERIFY(list->item(2)->toolTip().contains(QStringLiteral("too large")));
}

void TestUiWidgets::imageViewerRefusesOtherFormats()
{
    ImageViewerDialog shown(file(OutputFile::Kind::Plot, QStringLiteral("p.png"),
                                 pngBytes(20, 10, Qt::blue), QStringLiteral("image/png")));
    auto *label = shown.findChild<QLabel *>(QStringLiteral("imageLabel"));
    QVERIFY(label);
    QVERIFY(!label->pixmap().isNull());
    QCOMPARE(label->pixmap().size(), QSize(20, 10));

    ImageViewerDialog refused(file(OutputFile::Kind::Output, QStringLiteral("p.bmp"),
                                   pngBytes(20, 10, Qt::blue), QStringLiteral("image/bmp")));
    label = refused.findChild<QLabel *>(QStringLiteral("imageLabel"));
    QVERIFY(label);
    QVERIFY(label->pixmap().isNull());
    QVERIFY2(label->text().contains(QStringLiteral("cannot be shown")), qPrintable(label->text()));
}

// A language whose image is not ready is marked in the list and, once chosen, says why beside it;
// the language itself stays what it was.
void TestUiWidgets::runEditorShowsImageNotes()
{
    RunEditor editor;
    editor.setLanguages({QStringLiteral("python"), QStringLiteral("go")});
    auto *combo = editor.findChild<QComboBox *>(QStringLiteral("languageCombo"));
    auto *note = editor.findChild<QLabel *>(QStringLiteral("imageNote"));
    QVERIFY(combo && note);
    QVERIFY(note->isHidden());

    const QString building =
        QStringLiteral("the image for go is being built (about 40 s left); try again shortly");
    editor.setImageNotes({{QStringLiteral("go"), building}});
    QCOMPARE(editor.language(), QStringLiteral("python"));
    QVERIFY(note->isHidden()); // python's image is ready
    QVERIFY(combo->itemIcon(0).isNull());
    QVERIFY(!combo->itemData(0, Qt::ToolTipRole).isValid());
    QVERIFY(!combo->itemIcon(1).isNull());
    QCOMPARE(shownToolTip(combo->itemData(1, Qt::ToolTipRole).toString()), building);
    QCOMPARE(combo->itemText(1), QStringLiteral("go"));

    editor.setLanguage(QStringLiteral("go"));
    QCOMPARE(editor.language(), QStringLiteral("go"));
    QVERIFY(!note->isHidden());
    QVERIFY2(note->text().contains(QStringLiteral("being built")), qPrintable(note->text()));
    QCOMPARE(shownToolTip(note->toolTip()), building);
    QCOMPARE(editor.imageNote(), building);

    // Built: the mark and the note go.
    editor.setImageNotes({});
    QVERIFY(note->isHidden());
    QVERIFY(combo->itemIcon(1).isNull());
    QVERIFY(editor.imageNote().isEmpty());
}

QTEST_MAIN(TestUiWidgets)
#include "tst_uiwidgets.moc"
