#include "appsettings.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <functional>

// The HTTP token typed into Settings goes to the token file (0600) beside the settings file,
// never into the settings file itself; a token older versions kept there is moved once.
class tst_AppSettings : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tokenGoesToTheTokenFile();
    void legacyTokenIsMovedOnce();
    void emptyTokenForgetsTheStoredOne();
    void tokenPathIsBesideTheSettings();
    void policiesRoundTrip();
    void malformedPoliciesFallBackToTheDefaults();
    void secretsRoundTrip();
    void badSecretsAreDropped();
    void secretBindingParse_data();
    void secretBindingParse();
    void workspacesRoundTrip();
    void badWorkspacesAreSkipped();

private:
    static QByteArray fileText(const QString &path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }
    static QStringList workspaceTexts(const QList<Workspace> &workspaces)
    {
        QStringList texts;
        for (const Workspace &w : workspaces)
            texts.append(QString::fromUtf8(
                QJsonDocument(AppSettings::workspaceToJson(w)).toJson(QJsonDocument::Compact)));
        return texts;
    }
    static constexpr QFileDevice::Permissions kOwnerGroupOther = QFileDevice::Permissions(0x7077);
};

void tst_AppSettings::tokenGoesToTheTokenFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString ini = dir.filePath("code-sandbox.conf");
    AppSettings a;
    a.httpToken = QStringLiteral("typed-in-settings-0123456789abcdef");
    {
        QSettings s(ini, QSettings::IniFormat);
        a.save(s);
    }
    QVERIFY2(!fileText(ini).contains("typed-in-settings"), fileText(ini).constData());
    const QString token = dir.filePath("http-token");
    QCOMPARE(fileText(token).trimmed(), QByteArray("typed-in-settings-0123456789abcdef"));
    QCOMPARE(QFile::permissions(token) & kOwnerGroupOther,
             QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    QSettings s(ini, QSettings::IniFormat);
    QCOMPARE(AppSettings::load(s).httpToken, a.httpToken);
}

void tst_AppSettings::legacyTokenIsMovedOnce()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString ini = dir.filePath("code-sandbox.conf");
    {
        QSettings s(ini, QSettings::IniFormat);
        s.setValue("server/token", "old-token-in-settings");
        s.setValue("server/httpPort", 9000);
    }
    QVERIFY(fileText(ini).contains("old-token-in-settings"));
    {
        QSettings s(ini, QSettings::IniFormat);
        const AppSettings loaded = AppSettings::load(s);
        QCOMPARE(loaded.httpToken, QStringLiteral("old-token-in-settings"));
        QCOMPARE(loaded.httpPort, quint16(9000));
    }
    QVERIFY2(!fileText(ini).contains("old-token-in-settings"), fileText(ini).constData());
    QVERIFY(!fileText(ini).contains("server/token") && !fileText(ini).contains("token="));
    const QString token = dir.filePath("http-token");
    QCOMPARE(fileText(token).trimmed(), QByteArray("old-token-in-settings"));
    QCOMPARE(QFile::permissions(token) & kOwnerGroupOther,
             QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    // Once: a token changed in the file later is not overwritten by a second load.
    QFile f(token);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("changed-later\n");
    f.close();
    QSettings s(ini, QSettings::IniFormat);
    QCOMPARE(AppSettings::load(s).httpToken, QStringLiteral("changed-later"));
}

void tst_AppSettings::emptyTokenForgetsTheStoredOne()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QSettings s(dir.filePath("code-sandbox.conf"), QSettings::IniFormat);
    AppSettings a;
    a.httpToken = QStringLiteral("something");
    a.save(s);
    QVERIFY(QFile::exists(dir.filePath("http-token")));
    a.httpToken.clear();
    a.save(s);
    QVERIFY(!QFile::exists(dir.filePath("http-token")));
    QVERIFY(AppSettings::load(s).httpToken.isEmpty());
}

void tst_AppSettings::tokenPathIsBesideTheSettings()
{
    QSettings s(QStringLiteral("/somewhere/code-sandbox/code-sandbox.conf"), QSettings::IniFormat);
    QCOMPARE(AppSettings::tokenPath(s), QStringLiteral("/somewhere/code-sandbox/http-token"));
}

// The assistants' policies survive a save and a load, alone (savePolicies, as "always allow"
// does) or with the rest; the defaults leave no key behind.
void tst_AppSettings::policiesRoundTrip()
{
    QTemporaryDir dir;
    const QString ini = dir.filePath("code-sandbox.conf");
    AppSettings a;
    AssistantPolicy claude;
    claude.client = QStringLiteral("claude-code");
    claude.action = AssistantPolicy::Action::Ask;
    claude.languages = {QStringLiteral("python")};
    a.policies.assistants.append(claude);
    a.policies.approvalTimeoutSec = 45;
    {
        QSettings s(ini, QSettings::IniFormat);
        a.save(s);
    }
    {
        QSettings s(ini, QSettings::IniFormat);
        QCOMPARE(AppSettings::load(s).policies, a.policies);
        QCOMPARE(AppSettings::loadPolicies(s), a.policies);
        AssistantPolicies changed = a.policies;
        changed.allowAlways(QStringLiteral("claude-code"));
        AppSettings::savePolicies(s, changed);
        QCOMPARE(AppSettings::loadPolicies(s).forClient(QStringLiteral("claude-code")).action,
                 AssistantPolicy::Action::Run);
        AppSettings::savePolicies(s, AssistantPolicies());
        QVERIFY(!s.contains(QStringLiteral("assistants/policies")));
    }
}

void tst_AppSettings::malformedPoliciesFallBackToTheDefaults()
{
    QTemporaryDir dir;
    const QString ini = dir.filePath("code-sandbox.conf");
    {
        QSettings s(ini, QSettings::IniFormat);
        s.setValue(QStringLiteral("assistants/policies"), QStringLiteral("{not json"));
        s.setValue(QStringLiteral("limits/timeoutSec"), 42);
    }
    QSettings s(ini, QSettings::IniFormat);
    const AppSettings loaded = AppSettings::load(s);
    QCOMPARE(loaded.policies, AssistantPolicies());
    QCOMPARE(loaded.defaultTimeoutSec, 42); // the rest of the file still counts
}

// Bound secrets are kept as --secret spells them, names and hosts only: the file never holds a
// value, which is read from the host's environment at each start.
void tst_AppSettings::secretsRoundTrip()
{
    QTemporaryDir dir;
    const QString ini = dir.filePath("code-sandbox.conf");
    AppSettings a;
    a.secrets = {
        {QStringLiteral("OPENAI_API_KEY"),
         QStringLiteral("MY_OPENAI_KEY"),
         {QStringLiteral("api.openai.com")}},
        {QStringLiteral("GH_TOKEN"),
         QStringLiteral("GH_TOKEN"),
         {QStringLiteral("api.github.com"), QStringLiteral("*.githubusercontent.com:8443")}}};
    {
        QSettings s(ini, QSettings::IniFormat);
        a.save(s);
    }
    {
        QSettings s(ini, QSettings::IniFormat);
        QCOMPARE(s.value("environment/secrets").toStringList(),
                 (QStringList{"OPENAI_API_KEY=MY_OPENAI_KEY@api.openai.com",
                              "GH_TOKEN=GH_TOKEN@api.github.com,*.githubusercontent.com:8443"}));
        const AppSettings b = AppSettings::load(s);
        QCOMPARE(b.secrets, a.secrets);
        QVERIFY(b == a);
    }
    // A different binding is a different setting.
    AppSettings c = a;
    c.secrets.last().hosts.removeLast();
    QVERIFY(c != a);
    c = a;
    c.secrets.first().hostVar = QStringLiteral("OTHER");
    QVERIFY(c != a);

    // One binding with several hosts (commas inside one INI value), then none: nothing is left.
    c.secrets = {a.secrets.last()};
    {
        QSettings s(ini, QSettings::IniFormat);
        c.save(s);
    }
    {
        QSettings s(ini, QSettings::IniFormat);
        QCOMPARE(AppSettings::load(s).secrets, c.secrets);
        c.secrets.clear();
        c.save(s);
        QVERIFY(!s.contains("environment/secrets"));
        QVERIFY(AppSettings::load(s).secrets.isEmpty());
    }
    QVERIFY(!fileText(ini).contains("secrets"));
}

// A hand-edited file cannot keep the app from starting: entries that are not bindings are
// dropped (and said so in the log), the others kept, normalised as the gateway writes hosts.
void tst_AppSettings::badSecretsAreDropped()
{
    QTemporaryDir dir;
    const QString ini = dir.filePath("code-sandbox.conf");
    {
        QSettings s(ini, QSettings::IniFormat);
        s.setValue("environment/secrets",
                   QStringList{" GOOD = HOST_GOOD @ API.Example.COM. , *.b.example.com ",
                               "1BAD=V@a.example.com", "K=NO-DASH@a.example.com",
                               "K=V@http://a.example.com", "K=V@", "K@a.example.com", "",
                               "GOOD=OTHER@c.example.com", "LAST=V@c.example.com:8443"});
        s.setValue("limits/timeoutSec", 42);
    }
    const QRegularExpression ignored(
        QStringLiteral("^settings: ignoring a (second )?bound secret"));
    for (int i = 0; i < 6; ++i)
        QTest::ignoreMessage(QtWarningMsg, ignored);
    QSettings s(ini, QSettings::IniFormat);
    const AppSettings loaded = AppSettings::load(s);
    const QList<AppSettings::SecretBinding> expected{
        {QStringLiteral("GOOD"),
         QStringLiteral("HOST_GOOD"),
         {QStringLiteral("api.example.com"), QStringLiteral("*.b.example.com")}},
        {QStringLiteral("LAST"), QStringLiteral("V"), {QStringLiteral("c.example.com:8443")}}};
    QCOMPARE(loaded.secrets, expected);
    QCOMPARE(loaded.defaultTimeoutSec, 42); // the rest of the file still counts

    // Not a list at all: a single string is one entry.
    s.setValue("environment/secrets", QStringLiteral("ONE=V@one.example.com"));
    QCOMPARE(AppSettings::load(s).secrets.size(), 1);
}

void tst_AppSettings::secretBindingParse_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("written"); // toString() of the result; "" when refused
    QTest::addColumn<QString>("error");   // a part of the error

    QTest::newRow("one host") << "K=V@a.example.com"
                              << "K=V@a.example.com" << QString();
    QTest::newRow("repeated host") << "K=V@a.example.com,A.example.com"
                                   << "K=V@a.example.com" << QString();
    QTest::newRow("blank hosts skipped") << "K=V@,a.example.com,,"
                                         << "K=V@a.example.com" << QString();
    QTest::newRow("no host") << "K=V@ , " << QString() << "names no host";
    QTest::newRow("bad host") << "K=V@a b" << QString() << "not a host pattern";
    QTest::newRow("no '='") << "K@a.example.com" << QString() << "NAME=HOSTVAR@HOST";
    QTest::newRow("no '@'") << "K=V" << QString() << "NAME=HOSTVAR@HOST";
    QTest::newRow("bad name") << "K-1=V@a.example.com" << QString() << "not a variable name";
    QTest::newRow("bad host variable")
        << "K=$V@a.example.com" << QString() << "not a host variable's name";
}

void tst_AppSettings::secretBindingParse()
{
    QFETCH(QString, text);
    QFETCH(QString, written);
    QFETCH(QString, error);
    QString why;
    const std::optional<AppSettings::SecretBinding> b =
        AppSettings::SecretBinding::parse(text, &why);
    QCOMPARE(b ? b->toString() : QString(), written);
    if (!error.isEmpty())
        QVERIFY2(why.contains(error), qPrintable(why));
}

// Workspaces are kept as one JSON list: every field comes back, and none is a different
// setting.
void tst_AppSettings::workspacesRoundTrip()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("data")));
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("repo")));
    const QString ini = dir.filePath("code-sandbox.conf");
    AppSettings a;
    Workspace data;
    data.name = QStringLiteral("data");
    data.path = dir.filePath(QStringLiteral("data"));
    Workspace repo;
    repo.name = QStringLiteral("my.repo-2");
    repo.path = dir.filePath(QStringLiteral("repo"));
    repo.mode = Workspace::Mode::CopyOnWrite;
    repo.apply = Workspace::Apply::Ask;
    repo.exclude = {QStringLiteral("build/"), QStringLiteral("*.log")};
    repo.include = {QStringLiteral(".env.example")};
    a.workspaces = {data, repo};
    {
        QSettings s(ini, QSettings::IniFormat);
        a.save(s);
    }
    {
        QSettings s(ini, QSettings::IniFormat);
        const AppSettings b = AppSettings::load(s);
        QCOMPARE(workspaceTexts(b.workspaces), workspaceTexts(a.workspaces));
        QCOMPARE(b.workspaces.at(1).apply, Workspace::Apply::Ask);
        QCOMPARE(b.workspaces.at(1).mode, Workspace::Mode::CopyOnWrite);
        QCOMPARE(b.workspaces.at(1).include, repo.include);
        QVERIFY(b == a);
    }
    // Each field counts towards equality.
    const auto differs = [&a](const std::function<void(Workspace &)> &change) {
        AppSettings c = a;
        change(c.workspaces.last());
        return c != a;
    };
    QVERIFY(differs([](Workspace &w) { w.name = QStringLiteral("other"); }));
    QVERIFY(differs([](Workspace &w) { w.path += QStringLiteral("/x"); }));
    QVERIFY(differs([](Workspace &w) { w.mode = Workspace::Mode::ReadOnly; }));
    QVERIFY(differs([](Workspace &w) { w.apply = Workspace::Apply::Always; }));
    QVERIFY(differs([](Workspace &w) { w.exclude.removeLast(); }));
    QVERIFY(differs([](Workspace &w) { w.include.clear(); }));

    // None: the key is gone.
    AppSettings none = a;
    none.workspaces.clear();
    {
        QSettings s(ini, QSettings::IniFormat);
        none.save(s);
        QVERIFY(!s.contains("workspaces/folders"));
        QVERIFY(AppSettings::load(s).workspaces.isEmpty());
    }
}

// A hand-edited entry that is not a workspace is skipped, said in the log; a folder that is not
// there is kept (a drive unplugged today), said too; the rest of the file still counts.
void tst_AppSettings::badWorkspacesAreSkipped()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("good")));
    const QString good = dir.filePath(QStringLiteral("good"));
    const QString gone = dir.filePath(QStringLiteral("gone"));
    const auto entry = [](const QString &name, const QString &path) {
        return QJsonObject{{QStringLiteral("name"), name}, {QStringLiteral("path"), path}};
    };
    QJsonObject badMode = entry(QStringLiteral("m"), good);
    badMode.insert(QStringLiteral("mode"), QStringLiteral("read-write"));
    QJsonObject badApply = entry(QStringLiteral("a"), good);
    badApply.insert(QStringLiteral("apply"), QStringLiteral("sometimes"));
    QJsonObject badExclude = entry(QStringLiteral("e"), good);
    badExclude.insert(QStringLiteral("exclude"), QJsonArray{QStringLiteral("ok"), 3});
    QJsonObject padded = entry(QStringLiteral("padded"), good + QStringLiteral("/"));
    padded.insert(QStringLiteral("mode"), QStringLiteral("copy-on-write"));
    padded.insert(QStringLiteral("exclude"),
                  QJsonArray{QStringLiteral("  build/ "), QString(), QStringLiteral("build/")});
    const QJsonArray list{entry(QStringLiteral("good"), good),
                          entry(QStringLiteral("bad name"), good),
                          entry(QStringLiteral("relative"), QStringLiteral("some/folder")),
                          entry(QStringLiteral("root"), QStringLiteral("/")),
                          badMode,
                          badApply,
                          badExclude,
                          QStringLiteral("not an object"),
                          entry(QStringLiteral("good"), good), // a second one
                          entry(QStringLiteral("gone"), gone),
                          padded};
    const QString ini = dir.filePath("code-sandbox.conf");
    {
        QSettings s(ini, QSettings::IniFormat);
        s.setValue("workspaces/folders",
                   QString::fromUtf8(QJsonDocument(list).toJson(QJsonDocument::Compact)));
        s.setValue("limits/timeoutSec", 42);
    }
    for (int i = 0; i < 8; ++i)
        QTest::ignoreMessage(QtWarningMsg,
                             QRegularExpression(QStringLiteral("^settings: ignoring a (second )?"
                                                               "workspace")));
    QTest::ignoreMessage(QtWarningMsg,
                         qPrintable(QStringLiteral("settings: the folder of workspace gone, %1, "
                                                   "is not there; runs cannot have it until it "
                                                   "is back")
                                        .arg(gone)));
    QSettings s(ini, QSettings::IniFormat);
    const AppSettings loaded = AppSettings::load(s);
    QCOMPARE(loaded.defaultTimeoutSec, 42);
    QStringList names;
    for (const Workspace &w : loaded.workspaces)
        names.append(w.name);
    QCOMPARE(names, (QStringList{"good", "gone", "padded"}));
    QCOMPARE(loaded.workspaces.at(0).mode, Workspace::Mode::ReadOnly);
    QCOMPARE(loaded.workspaces.at(0).apply, Workspace::Apply::Never);
    QCOMPARE(loaded.workspaces.at(1).path, gone);
    QCOMPARE(loaded.workspaces.at(2).path, good);
    QCOMPARE(loaded.workspaces.at(2).mode, Workspace::Mode::CopyOnWrite);
    QCOMPARE(loaded.workspaces.at(2).exclude, QStringList{"build/"});

    // Not JSON at all: none, said once, and the app goes on.
    s.setValue("workspaces/folders", QStringLiteral("data=/home/me/data"));
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral(
                                           "^settings: the workspaces are not a JSON list")));
    QVERIFY(AppSettings::load(s).workspaces.isEmpty());
}

QTEST_GUILESS_MAIN(tst_AppSettings)
#include "tst_appsettings.moc"
