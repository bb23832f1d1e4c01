#include "appsettings.h"

#include <QFile>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

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

private:
    static QByteArray fileText(const QString &path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
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

QTEST_GUILESS_MAIN(tst_AppSettings)
#include "tst_appsettings.moc"
