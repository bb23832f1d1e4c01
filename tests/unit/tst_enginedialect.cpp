#include "containerspec.h"
#include "enginedialect.h"
#include "languageregistry.h"
#include "runnetwork.h"
#include "sandboxconfig.h"
#include "sandboxspec.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

namespace {
QJsonObject version(const QString &componentName)
{
    return {{QStringLiteral("Version"), QStringLiteral("4.3.1")},
            {QStringLiteral("Components"),
             QJsonArray{QJsonObject{{QStringLiteral("Name"), componentName}}}}};
}

EngineDialect podman()
{
    return EngineDialect::fromVersion(version(QStringLiteral("Podman Engine")));
}

QJsonObject adapted(const EngineDialect &d, const QJsonObject &spec)
{
    return d.adaptCreate(spec);
}

// The create body the sandbox really sends for a Python run.
QJsonObject pythonSpec(const QStringList &passThrough = {})
{
    SandboxConfig config;
    config.instanceId = QStringLiteral("test");
    for (const QString &name : passThrough)
        config.passThroughEnv.append({name, QStringLiteral("value")});
    const LanguageRegistry registry = LanguageRegistry::builtIn();
    const Language *python = registry.find(QStringLiteral("python"));
    return python ? ContainerSpec::render(SandboxSpec::forRun(*python, python->image, config,
                                                              RunNetwork::decide(config)))
                  : QJsonObject();
}

QStringList envNames(const QJsonObject &spec)
{
    QStringList names;
    for (const QJsonValue &e : spec.value(u"Env").toArray())
        names.append(e.toString().section(u'=', 0, 0));
    return names;
}

QString envValue(const QJsonObject &spec, const QString &name)
{
    for (const QJsonValue &e : spec.value(u"Env").toArray())
        if (e.toString().section(u'=', 0, 0) == name)
            return e.toString().section(u'=', 1);
    return {};
}
} // namespace

class tst_EngineDialect : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void kindFromVersion_data();
    void kindFromVersion();
    void dockerBodiesAreUntouched();
    void podmanUnsetsWhatItAdds_data();
    void podmanUnsetsWhatItAdds();
    void podmanNamesTheProcessLimit();
    void podmanKeepsAnExplicitProcessLimit();
    void podmanWorkdirIsACappedTmpfs();
    void podmanKeepsOtherMounts();
    void podmanLeavesAnEmptyRequestAlone();
    void processLimit_data();
    void processLimit();
};

void tst_EngineDialect::kindFromVersion_data()
{
    QTest::addColumn<QJsonObject>("version");
    QTest::addColumn<int>("kind");
    QTest::addColumn<QString>("init");
    const int docker = int(EngineDialect::Kind::Docker);
    const int podman = int(EngineDialect::Kind::Podman);
    QTest::newRow("docker 20.10") << version(QStringLiteral("Engine")) << docker << "docker-init";
    QTest::newRow("podman 4") << version(QStringLiteral("Podman Engine")) << podman
                              << "podman-init";
    QTest::newRow("no components")
        << QJsonObject{{QStringLiteral("Version"), QStringLiteral("1")}} << docker << "docker-init";
    QTest::newRow("garbage components")
        << QJsonObject{{QStringLiteral("Components"), QStringLiteral("podman")}} << docker
        << "docker-init";
}

void tst_EngineDialect::kindFromVersion()
{
    QFETCH(QJsonObject, version);
    QFETCH(int, kind);
    QFETCH(QString, init);
    const EngineDialect d = EngineDialect::fromVersion(version);
    QCOMPARE(int(d.kind()), kind);
    QCOMPARE(d.initName(), init);
    QCOMPARE(d.name(), kind == int(EngineDialect::Kind::Podman) ? QStringLiteral("Podman")
                                                                : QStringLiteral("Docker"));
}

void tst_EngineDialect::dockerBodiesAreUntouched()
{
    const QJsonObject spec = pythonSpec();
    QCOMPARE(EngineDialect().adaptCreate(spec), spec);
    QCOMPARE(EngineDialect::fromVersion(version(QStringLiteral("Engine"))).adaptCreate(spec), spec);
}

void tst_EngineDialect::podmanUnsetsWhatItAdds_data()
{
    QTest::addColumn<QStringList>("passThrough");
    QTest::addColumn<QString>("unset");
    QTest::newRow("nothing passed through") << QStringList{} << "TERM container";
    QTest::newRow("TERM passed through") << QStringList{QStringLiteral("TERM")} << "container";
    QTest::newRow("both passed through")
        << QStringList{QStringLiteral("TERM"), QStringLiteral("container")} << QString();
}

void tst_EngineDialect::podmanUnsetsWhatItAdds()
{
    QFETCH(QStringList, passThrough);
    QFETCH(QString, unset);
    const QJsonObject before = pythonSpec(passThrough);
    const QJsonObject after = adapted(podman(), before);
    QCOMPARE(envValue(after, QStringLiteral("CS_UNSET_ENV")), unset);
    QCOMPARE(envNames(after).contains(QStringLiteral("CS_UNSET_ENV")), !unset.isEmpty());
    // Everything the request set is still there, in the same order.
    const QJsonArray envBefore = before.value(u"Env").toArray();
    const QJsonArray envAfter = after.value(u"Env").toArray();
    QCOMPARE(envAfter.size(), envBefore.size() + (unset.isEmpty() ? 0 : 1));
    for (qsizetype i = 0; i < envBefore.size(); ++i)
        QCOMPARE(envAfter.at(i), envBefore.at(i));
}

void tst_EngineDialect::podmanNamesTheProcessLimit()
{
    const QJsonObject after = adapted(podman(), pythonSpec());
    const QJsonArray ulimits = after.value(u"HostConfig").toObject().value(u"Ulimits").toArray();
    QCOMPARE(ulimits.size(), 2);
    QCOMPARE(ulimits.at(0).toObject().value(u"Name").toString(), QStringLiteral("nofile"));
    QCOMPARE(ulimits.at(0).toObject().value(u"Hard").toInt(), 1024);
    const QJsonObject nproc = ulimits.at(1).toObject();
    QCOMPARE(nproc.value(u"Name").toString(), QStringLiteral("nproc"));
    const qint64 limit = EngineDialect::podmanProcessLimit();
    QVERIFY(limit > 0);
    QCOMPARE(nproc.value(u"Soft").toInteger(), limit);
    QCOMPARE(nproc.value(u"Hard").toInteger(), limit);
    // The cgroup's pids limit still binds the container, whatever RLIMIT_NPROC says.
    QCOMPARE(after.value(u"HostConfig").toObject().value(u"PidsLimit"),
             pythonSpec().value(u"HostConfig").toObject().value(u"PidsLimit"));
}

void tst_EngineDialect::podmanKeepsAnExplicitProcessLimit()
{
    QJsonObject spec = pythonSpec();
    QJsonObject host = spec.value(u"HostConfig").toObject();
    const QJsonArray ulimits{QJsonObject{{QStringLiteral("Name"), QStringLiteral("nproc")},
                                         {QStringLiteral("Soft"), 64},
                                         {QStringLiteral("Hard"), 64}}};
    host.insert(QStringLiteral("Ulimits"), ulimits);
    spec.insert(QStringLiteral("HostConfig"), host);
    const QJsonObject after = adapted(podman(), spec);
    QCOMPARE(after.value(u"HostConfig").toObject().value(u"Ulimits").toArray(), ulimits);
}

void tst_EngineDialect::podmanWorkdirIsACappedTmpfs()
{
    const QJsonObject before = pythonSpec();
    const QJsonObject hostBefore = before.value(u"HostConfig").toObject();
    QCOMPARE(hostBefore.value(u"Mounts").toArray().size(), 1); // the workdir volume
    const QJsonObject host = adapted(podman(), before).value(u"HostConfig").toObject();
    QCOMPARE(host.value(u"Mounts").toArray(), QJsonArray());
    const QJsonObject tmpfs = host.value(u"Tmpfs").toObject();
    // /tmp as it was, and the workdir with the volume's options: size cap kept, owner as "U",
    // exec allowed as on the volume.
    QCOMPARE(tmpfs.value(u"/tmp"), hostBefore.value(u"Tmpfs").toObject().value(u"/tmp"));
    const QStringList options = tmpfs.value(u"/sandbox").toString().split(u',');
    SandboxConfig defaults;
    QVERIFY2(options.contains(QStringLiteral("size=%1").arg(defaults.tmpfsBytes)),
             qPrintable(options.join(u',')));
    for (const char *o : {"rw", "nosuid", "nodev", "mode=0755", "exec", "U"})
        QVERIFY2(options.contains(QLatin1String(o)), o);
    for (const QString &o : options)
        QVERIFY2(!o.startsWith(u"uid=") && !o.startsWith(u"gid="), qPrintable(o));
}

void tst_EngineDialect::podmanKeepsOtherMounts()
{
    // A named volume (a library cache) and a bind mount are Podman's as much as Docker's.
    QJsonObject spec = pythonSpec();
    QJsonObject host = spec.value(u"HostConfig").toObject();
    QJsonArray mounts = host.value(u"Mounts").toArray();
    const QJsonObject named{{QStringLiteral("Type"), QStringLiteral("volume")},
                            {QStringLiteral("Source"), QStringLiteral("code-sandbox-libs-x")},
                            {QStringLiteral("Target"), QStringLiteral("/opt/libs")},
                            {QStringLiteral("ReadOnly"), true}};
    const QJsonObject bind{{QStringLiteral("Type"), QStringLiteral("bind")},
                           {QStringLiteral("Source"), QStringLiteral("/etc/ssl/certs/ca.pem")},
                           {QStringLiteral("Target"), QStringLiteral("/etc/ssl/ca.pem")}};
    mounts.append(named);
    mounts.append(bind);
    host.insert(QStringLiteral("Mounts"), mounts);
    spec.insert(QStringLiteral("HostConfig"), host);
    const QJsonObject after = adapted(podman(), spec).value(u"HostConfig").toObject();
    QCOMPARE(after.value(u"Mounts").toArray(), (QJsonArray{named, bind}));
    QVERIFY(after.value(u"Tmpfs").toObject().contains(u"/sandbox"));
}

void tst_EngineDialect::podmanLeavesAnEmptyRequestAlone()
{
    QCOMPARE(podman().adaptCreate(QJsonObject()), QJsonObject());
}

void tst_EngineDialect::processLimit_data()
{
    QTest::addColumn<qint64>("ownHard");
    QTest::addColumn<qint64>("pidMax");
    QTest::addColumn<qint64>("limit");
    QTest::newRow("pid_max is lower") << qint64(96364) << qint64(32768) << qint64(32768);
    QTest::newRow("own limit is lower") << qint64(4096) << qint64(4194304) << qint64(4096);
    QTest::newRow("unlimited here") << qint64(-1) << qint64(4194304) << qint64(4194304);
    QTest::newRow("no pid_max") << qint64(4096) << qint64(-1) << qint64(4096);
    QTest::newRow("neither known") << qint64(-1) << qint64(-1) << qint64(32768);
}

void tst_EngineDialect::processLimit()
{
    QFETCH(qint64, ownHard);
    QFETCH(qint64, pidMax);
    QFETCH(qint64, limit);
    QCOMPARE(EngineDialect::podmanProcessLimit(ownHard, pidMax), limit);
}

QTEST_GUILESS_MAIN(tst_EngineDialect)
#include "tst_enginedialect.moc"
