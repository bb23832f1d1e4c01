// SnapshotStore: where sessions' snapshots are kept on the server's side. Caps per session and in
// all (the oldest go first, a snapshot over a session's cap is refused and nothing is kept), the
// .csnap file read back only when its manifest and hash match, and hostile files (changed,
// renamed entries, extra entries, paths that leave, another format) refused with a clear error.
// The store never interprets `state`: it is bytes here.
#include "snapshotstore.h"
#include "tararchive.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

namespace {
SessionSnapshot snapshotOf(const QString &session, int afterCall)
{
    SessionSnapshot s;
    s.sessionId = session;
    s.afterCall = afterCall;
    s.createdAt = QDateTime::currentDateTimeUtc();
    s.kind = QStringLiteral("python");
    s.language = QStringLiteral("python");
    return s;
}

QByteArray bytes(int n, char c)
{
    return QByteArray(n, c);
}

// The entries of a .csnap, to build altered ones from.
QList<TarArchive::Entry> entriesOf(const QByteArray &csnap)
{
    QString error;
    QList<TarArchive::Entry> entries = TarArchive::unpack(csnap, 1 << 30, &error);
    if (!error.isEmpty())
        qWarning() << error;
    return entries;
}
} // namespace

class TestSnapshotStore : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void keepsAndReadsBack()
    {
        QTemporaryDir dir;
        SnapshotStore store(dir.path(), {});
        SessionSnapshot s = snapshotOf(QStringLiteral("s-a-1"), 1);
        QCOMPARE(store.add(&s, "state-bytes", "files-tar"), QString());
        QCOMPARE(s.id, QStringLiteral("s-a-1.1"));
        QCOMPARE(s.bytes, qint64(11 + 9));
        QCOMPARE(s.sha256, SnapshotStore::contentHash("state-bytes", "files-tar"));
        QVERIFY(QFile::exists(dir.path() + QStringLiteral("/s-a-1/1.csnap")));
        QByteArray state, files;
        QCOMPARE(store.load(s.id, &state, &files), QString());
        QCOMPARE(state, QByteArray("state-bytes"));
        QCOMPARE(files, QByteArray("files-tar"));
        SessionSnapshot second = snapshotOf(QStringLiteral("s-a-1"), 2);
        second.parent = s.id;
        QCOMPARE(store.add(&second, "2", "2"), QString());
        QCOMPARE(second.id, QStringLiteral("s-a-1.2"));
        QCOMPARE(store.of(QStringLiteral("s-a-1")).size(), 2);
        QCOMPARE(store.find(second.id)->parent, s.id);
        QVERIFY(store.find(QStringLiteral("s-a-1.3")) == nullptr);
    }

    void capsDropTheOldestAndRefuseTheTooLarge()
    {
        QTemporaryDir dir;
        SnapshotStore store(dir.path(), {1000, 2500});
        SessionSnapshot tooBig = snapshotOf(QStringLiteral("s-a-1"), 1);
        const QString refused = store.add(&tooBig, bytes(900, 's'), bytes(200, 'f'));
        QVERIFY2(refused.contains(QLatin1String("more than a session's snapshots may hold")),
                 qPrintable(refused));
        QVERIFY(store.of(QStringLiteral("s-a-1")).isEmpty());
        QVERIFY(!QDir(dir.path() + QStringLiteral("/s-a-1")).exists() ||
                QDir(dir.path() + QStringLiteral("/s-a-1")).isEmpty());

        // 400 bytes each: a session keeps two (800 <= 1000), the third drops the first.
        QStringList ids;
        for (int call = 1; call <= 3; ++call) {
            SessionSnapshot s = snapshotOf(QStringLiteral("s-a-1"), call);
            QCOMPARE(store.add(&s, bytes(300, 's'), bytes(100, 'f')), QString());
            ids.append(s.id);
        }
        QCOMPARE(store.of(QStringLiteral("s-a-1")).size(), 2);
        QCOMPARE(store.of(QStringLiteral("s-a-1")).first().id, ids[1]);
        QVERIFY(!QFile::exists(dir.path() + QStringLiteral("/s-a-1/1.csnap")));
        // In all: 2500. Other sessions' snapshots push out the oldest of any session.
        for (int i = 0; i < 5; ++i) {
            SessionSnapshot s = snapshotOf(QStringLiteral("s-b-%1").arg(i), 1);
            QCOMPARE(store.add(&s, bytes(300, 's'), bytes(100, 'f')), QString());
        }
        QVERIFY(store.totalBytes() <= 2500);
        QCOMPARE(store.totalBytes(), qint64(6 * 400));
        // The oldest of all went: s-a-1's older one.
        QCOMPARE(store.of(QStringLiteral("s-a-1")).size(), 1);
        QCOMPARE(store.of(QStringLiteral("s-a-1")).first().id, ids[2]);
        QCOMPARE(store.of(QStringLiteral("s-b-4")).size(), 1);
    }

    void aChangedFileIsRefused()
    {
        QTemporaryDir dir;
        SnapshotStore store(dir.path(), {});
        SessionSnapshot s = snapshotOf(QStringLiteral("s-a-1"), 1);
        QCOMPARE(store.add(&s, "state", "files"), QString());
        const QString path = dir.path() + QStringLiteral("/s-a-1/1.csnap");
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QByteArray csnap = f.readAll();
        f.close();
        // The state changed in place, its length kept.
        QList<TarArchive::Entry> entries = entriesOf(csnap);
        for (TarArchive::Entry &e : entries)
            if (e.path == u"state")
                e.data = "STATE";
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(TarArchive::pack(entries));
        f.close();
        QByteArray state, files;
        const QString error = store.load(s.id, &state, &files);
        QVERIFY2(error.contains(QLatin1String("does not match its hash")), qPrintable(error));
    }

    void hostileArchivesAreRefused_data()
    {
        QTest::addColumn<QString>("change");
        QTest::addColumn<QString>("expected");
        QTest::newRow("extra entry") << "extra"
                                     << "an entry it should not";
        QTest::newRow("path that leaves") << "escape"
                                          << "an entry it should not";
        QTest::newRow("no state") << "nostate"
                                  << "lacks its state";
        QTest::newRow("other format") << "format"
                                      << "not a code-sandbox-snapshot";
        QTest::newRow("hash of other content") << "hash"
                                               << "does not match its hash";
        QTest::newRow("unknown kind") << "kind"
                                      << "unknown kind";
        QTest::newRow("not a tar") << "garbage"
                                   << "not a readable archive";
        QTest::newRow("too large") << "large"
                                   << "not a readable archive";
    }

    void hostileArchivesAreRefused()
    {
        QFETCH(QString, change);
        QFETCH(QString, expected);
        SessionSnapshot s = snapshotOf(QStringLiteral("s-a-1"), 1);
        s.id = QStringLiteral("s-a-1.1");
        s.sha256 = SnapshotStore::contentHash("state", "files");
        QString error;
        QList<TarArchive::Entry> entries =
            entriesOf(SnapshotStore::pack(s, "state", "files", &error));
        QVERIFY(error.isEmpty());
        const auto manifest = [&entries]() -> TarArchive::Entry & {
            for (TarArchive::Entry &e : entries)
                if (e.path == u"manifest.json")
                    return e;
            return entries.first();
        };
        const auto setManifest = [&](const QString &key, const QJsonValue &value) {
            QJsonObject m = QJsonDocument::fromJson(manifest().data).object();
            m.insert(key, value);
            manifest().data = QJsonDocument(m).toJson();
        };
        TarArchive::Entry extra;
        extra.data = "x";
        QByteArray csnap;
        if (change == u"extra") {
            extra.path = QStringLiteral("run.py");
            entries.append(extra);
        } else if (change == u"escape") {
            extra.path = QStringLiteral("../../etc/cron.d/x");
            entries.append(extra);
        } else if (change == u"nostate") {
            entries.removeIf([](const TarArchive::Entry &e) { return e.path == u"state"; });
        } else if (change == u"format") {
            setManifest(QStringLiteral("format"), QStringLiteral("pickle"));
        } else if (change == u"hash") {
            setManifest(QStringLiteral("sha256"), SnapshotStore::contentHash("other", "files"));
        } else if (change == u"kind") {
            setManifest(QStringLiteral("kind"), QStringLiteral("native"));
        } else if (change == u"garbage") {
            csnap = "not an archive at all";
        } else if (change == u"large") {
            entries.append({QStringLiteral("big"), bytes(200000, 'b')});
        }
        if (csnap.isEmpty())
            csnap = TarArchive::pack(entries);
        SessionSnapshot read;
        QByteArray state, files;
        const QString refused = SnapshotStore::unpack(csnap, 10000, &read, &state, &files);
        QVERIFY2(refused.contains(expected), qPrintable(refused));
    }

    void sweepsOnlyStaleFoldersOfGoneSessions()
    {
        QTemporaryDir dir;
        SnapshotStore store(dir.path(), {});
        SessionSnapshot live = snapshotOf(QStringLiteral("s-a-1"), 1);
        QCOMPARE(store.add(&live, "s", "f"), QString());
        QVERIFY(QDir().mkpath(dir.path() + QStringLiteral("/s-gone-1")));
        store.sweepStale(3600); // fresh: kept
        QVERIFY(QDir(dir.path() + QStringLiteral("/s-gone-1")).exists());
        store.sweepStale(-1); // any age
        QVERIFY(!QDir(dir.path() + QStringLiteral("/s-gone-1")).exists());
        QVERIFY(QFile::exists(dir.path() + QStringLiteral("/s-a-1/1.csnap")));
        store.removeSession(QStringLiteral("s-a-1"));
        QVERIFY(!QDir(dir.path() + QStringLiteral("/s-a-1")).exists());
        QCOMPARE(store.totalBytes(), qint64(0));
    }
};

QTEST_GUILESS_MAIN(TestSnapshotStore)
#include "tst_snapshotstore.moc"
