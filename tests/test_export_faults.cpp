// An export that meets a fault, with real faults in the real binary: tinyscope runs under a small
// LD_PRELOAD library (tests/faults/FaultInject.c) that fails the N-th file-system call with EIO or
// ENOSPC, or kills the process (SIGKILL) before it. A failed export leaves the earlier export byte
// for byte and nothing beside it; one killed at any call leaves the complete old set or the
// complete new one (with or without RENAME_EXCHANGE), and the next export removes what it left.
#include "FaultInjection.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/AtomicFolder.h"
#include "io/JsonFile.h"
#include "io/OutputPaths.h"

#include <sys/stat.h>

using namespace tinyscope;
using namespace tinyscope::test;

class TestExportFaults : public QObject {
    Q_OBJECT
    QTemporaryDir scratch;

    // A folder holding export A (seed 1) and a file of the user's: the earlier export every
    // fault test starts from. Returns {that folder, the folder after export B (seed 2)}.
    std::pair<Snapshot, Snapshot> earlierExport(const QString& out)
    {
        const CliRun r = runTinyscope(exportArgs(out, 1));
        if (r.code != 0) qFatal("export A failed: %s", r.err.c_str());
        writeText(out + QStringLiteral("/notes.txt"), "kept across exports\n");
        const Snapshot old = *snapshot(out);
        return {old, merged(old, exportedSet(scratch.path(), 2))};
    }

    // Puts `want` back into `out` in-process, with the code every export runs before writing: it
    // removes what a killed export left beside the folder (and puts back a folder the fallback's
    // two renames left missing). Afterwards nothing but the folder may be there.
    static void restore(const QString& out, const Snapshot& want)
    {
        std::vector<NamedFile> files;
        for (const auto& [name, bytes] : want) files.push_back({name.toStdString(), bytes.toStdString()});
        replaceFilesInFolder(out.toStdString(), files);
        QCOMPARE(snapshot(out), std::optional<Snapshot>(want));
        QVERIFY2(leftovers(QFileInfo(out).absolutePath()).isEmpty(), qPrintable(leftovers(QFileInfo(out).absolutePath()).join(QLatin1Char(' '))));
    }

    // Kills export B over export A before each of its calls in turn; returns how often the folder
    // held the old set, the new set, and was missing (only without RENAME_EXCHANGE).
    void killAtEveryCall(bool noExchange)
    {
        QTemporaryDir parent;
        const QString out = parent.path() + QStringLiteral("/out");
        const auto [old, next] = earlierExport(out);
        Faults f;
        f.path = parent.path();
        // The calls that write; removing files (what the next run does for a killed one) is not
        // counted, so call N is the same call in every run.
        f.ops = QStringLiteral("mkdir,mkdirat,write,fsync,link,linkat,rename,renameat,renameat2");
        f.noExchange = noExchange;
        const int total = countCalls(exportArgs(out, 2), f, scratch.path());
        QVERIFY(total >= 10);
        QCOMPARE(snapshot(out), std::optional<Snapshot>(next));
        restore(out, old);
        int sawOld = 0, sawNew = 0, sawMissing = 0, sawLeftovers = 0;
        for (int n = 1; n <= total; ++n) {
            f.at = n;
            f.action = QStringLiteral("kill");
            QCOMPARE(runFaulty(exportArgs(out, 2), f).code, -2);
            std::optional<Snapshot> now = snapshot(out);
            if (!now) {
                // Between the fallback's two renames: the old folder waits beside it, complete.
                QVERIFY(noExchange);
                const QStringList olds = QDir(parent.path()).entryList({QStringLiteral(".out.tinyscope-old-*")}, QDir::Dirs | QDir::Hidden);
                QCOMPARE(olds.size(), 1);
                QCOMPARE(snapshot(parent.path() + QLatin1Char('/') + olds[0]), std::optional<Snapshot>(old));
                if (sawMissing++ == 0) {
                    // The next run puts it back first, even one that then fails at its first write.
                    Faults fail;
                    fail.path = parent.path();
                    fail.ops = QStringLiteral("write");
                    fail.at = 1;
                    const CliRun r = runFaulty(exportArgs(out, 2), fail);
                    QVERIFY2(r.code == 2, r.err.c_str());
                    QCOMPARE(snapshot(out), std::optional<Snapshot>(old));
                    QVERIFY(leftovers(parent.path()).isEmpty());
                }
            } else {
                QVERIFY2(now == old || now == next, qPrintable(QStringLiteral("killed at call %1: %2").arg(n).arg(describe(now))));
                (now == old ? sawOld : sawNew) += 1;
            }
            sawLeftovers += !leftovers(parent.path()).isEmpty();
            restore(out, old);
        }
        qInfo("%d calls; killed before each: old set %d, new set %d, folder missing (old one beside it) %d, leftovers %d", total, sawOld,
              sawNew, sawMissing, sawLeftovers);
        QVERIFY(sawOld > 0 && sawNew > 0 && sawLeftovers > 0);
        QVERIFY(noExchange ? sawMissing > 0 : sawMissing == 0);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(scratch.isValid());
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed (setup.sh installs it)");
    }

    // EIO at every file-system call of an export over an earlier one (folder, writes, flushes,
    // links, the rename, the clean-up): a failed export exits 2 with one line naming the folder
    // and leaves the earlier export byte for byte, with nothing beside it; a fault after the swap
    // costs only the clean-up.
    void exportFailingAtAnyCallLeavesTheEarlierExport()
    {
        QTemporaryDir parent;
        const QString out = parent.path() + QStringLiteral("/out");
        const auto [old, next] = earlierExport(out);
        Faults f;
        f.path = parent.path();
        const int total = countCalls(exportArgs(out, 2), f, scratch.path());
        QVERIFY(total > 5);
        QCOMPARE(snapshot(out), std::optional<Snapshot>(next));   // the clean run kept notes.txt and replaced the set
        restore(out, old);
        int failed = 0;
        for (int n = 1; n <= total; ++n) {
            f.at = n;
            f.action = QStringLiteral("EIO");
            const CliRun r = runFaulty(exportArgs(out, 2), f);
            const std::optional<Snapshot> now = snapshot(out);
            if (r.code == 0) {
                QVERIFY2(now == next, qPrintable(QStringLiteral("EIO at call %1: exit 0 but %2").arg(n).arg(describe(now))));
            } else {
                ++failed;
                QVERIFY2(r.code == 2, qPrintable(QStringLiteral("EIO at call %1: exit %2: %3").arg(n).arg(r.code).arg(shortErr(r))));
                QCOMPARE(lineCount(r.err), 1);
                QVERIFY2(r.err.find(out.toStdString()) != std::string::npos && r.err.find("Input/output error") != std::string::npos, r.err.c_str());
                QVERIFY2(now == old, qPrintable(QStringLiteral("EIO at call %1 (%2): the earlier export changed: %3").arg(n).arg(shortErr(r), describe(now))));
                QVERIFY2(leftovers(parent.path()).isEmpty(),
                         qPrintable(QStringLiteral("EIO at call %1 left %2").arg(n).arg(leftovers(parent.path()).join(QLatin1Char(' ')))));
            }
            restore(out, old);
        }
        qInfo("%d calls; EIO at each: %d failed with the earlier export intact, %d after the swap succeeded", total, failed, total - failed);
        QVERIFY(failed >= 5);
    }

    // The disk fills up at any write of an export: into an earlier export, that export stays; into
    // a new folder, no folder and no file appear.
    void exportOnAFullDiskLeavesNothingBehind()
    {
        QTemporaryDir parent;
        const QString out = parent.path() + QStringLiteral("/out");
        const auto [old, next] = earlierExport(out);
        Faults f;
        f.path = parent.path();
        f.ops = QStringLiteral("write");
        QCOMPARE(countCalls(exportArgs(out, 2), f, scratch.path()), 3);
        restore(out, old);
        const QString fresh = parent.path() + QStringLiteral("/new");
        for (int n = 1; n <= 3; ++n) {
            f.at = n;
            f.action = QStringLiteral("ENOSPC");
            for (const QString& dir : {out, fresh}) {
                const CliRun r = runFaulty(exportArgs(dir, 2), f);
                QCOMPARE(r.code, 2);
                QVERIFY2(r.err.find("No space left on device") != std::string::npos && r.err.find(dir.toStdString()) != std::string::npos, r.err.c_str());
            }
            QCOMPARE(snapshot(out), std::optional<Snapshot>(old));
            QVERIFY2(!QFileInfo::exists(fresh), qPrintable(describe(snapshot(fresh))));
            QVERIFY(leftovers(parent.path()).isEmpty());
        }
    }

    // SIGKILL before every call of an export over an earlier one: the folder holds the complete
    // old set or the complete new one, never a mix and never neither; what the killed run left
    // beside it goes with the next export.
    void exportKilledAtAnyCallLeavesTheOldOrTheNewSet() { killAtEveryCall(false); }

    // The same on a filesystem without RENAME_EXCHANGE (two renames): killed between them the
    // folder is missing, its old version complete beside it, and the next export puts it back.
    void exportWithoutRenameExchangeRecoversTheOldSet() { killAtEveryCall(true); }

    // The binary's next export removes what killed ones left (the old version's per-file staging
    // too) and keeps the user's file.
    void nextExportRemovesWhatKilledOnesLeft()
    {
        QTemporaryDir parent;
        const QString out = parent.path() + QStringLiteral("/out");
        const auto [old, next] = earlierExport(out);
        writeText(out + QStringLiteral("/.net-graph.json.partial"), "half");
        writeText(out + QStringLiteral("/.net-params.pkl.partial.tmp-4242"), "half");
        const std::optional<Snapshot> withPartials = snapshot(out);
        auto hidden = [&] { return QDir(parent.path()).entryList(QDir::Dirs | QDir::Hidden | QDir::NoDotAndDotDot); };
        Faults f;
        f.path = parent.path();
        f.ops = QStringLiteral("renameat2,renameat");
        f.at = 1;
        f.action = QStringLiteral("kill");
        QCOMPARE(runFaulty(exportArgs(out, 2), f).code, -2);   // killed before the swap: a full staging folder
        QCOMPARE(snapshot(out), withPartials);
        const QStringList first = hidden();
        QCOMPARE(first.size(), 2);
        f.ops = QStringLiteral("fsync");
        f.at = 5;   // the three files, the staging folder, then the parent after the swap
        QCOMPARE(runFaulty(exportArgs(out, 2), f).code, -2);   // killed after the swap: the old folder stays
        QCOMPARE(snapshot(out), std::optional<Snapshot>(next));   // the old version's partials were not carried over
        const QStringList second = hidden();
        QCOMPARE(second.size(), 2);
        QVERIFY(second != first);   // the first run's staging folder went
        QVERIFY(leftovers(parent.path()).size() > 0);
        const CliRun r = runTinyscope(exportArgs(out, 2));
        QVERIFY2(r.code == 0, r.err.c_str());
        QCOMPARE(snapshot(out), std::optional<Snapshot>(next));
        QCOMPARE(hidden(), QStringList{QStringLiteral("out")});
    }

    // In-process: the other files of the folder are kept (hard links, same bytes), the folder's
    // mode is kept, a symlink to a folder replaces the folder it names, and nothing stays beside it.
    void replacingFilesKeepsTheFolderAndItsOtherFiles()
    {
        QTemporaryDir parent;
        const QString out = parent.path() + QStringLiteral("/real");
        QVERIFY(QDir().mkpath(out));
        writeText(out + QStringLiteral("/keep.bin"), "keep");
        writeText(out + QStringLiteral("/a.txt"), "old a");
        QVERIFY(::chmod(out.toLocal8Bit().constData(), 0750) == 0);
        QVERIFY(QFile::link(out, parent.path() + QStringLiteral("/link")));
        replaceFilesInFolder((parent.path() + QStringLiteral("/link")).toStdString(), {{"a.txt", "new a"}, {"b.txt", "new b"}});
        QVERIFY(QFileInfo(parent.path() + QStringLiteral("/link")).isSymLink());
        const Snapshot want = {{QStringLiteral("a.txt"), "new a"}, {QStringLiteral("b.txt"), "new b"}, {QStringLiteral("keep.bin"), "keep"}};
        QCOMPARE(snapshot(out), std::optional<Snapshot>(want));
        struct stat st {};
        QVERIFY(::stat(out.toLocal8Bit().constData(), &st) == 0);
        QCOMPARE(st.st_mode & 07777, 0750u);
        QVERIFY(leftovers(parent.path()).isEmpty());
        QCOMPARE(QDir(parent.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).size(), 2);
        // A missing folder (and its parents) is created.
        replaceFilesInFolder((parent.path() + QStringLiteral("/x/y/z")).toStdString(), {{"a.txt", "a"}});
        QCOMPARE(snapshot(parent.path() + QStringLiteral("/x/y/z")), std::optional<Snapshot>(Snapshot{{QStringLiteral("a.txt"), "a"}}));
        // A file where the folder goes is refused, naming it.
        QVERIFY(inputErrorOf([&] { replaceFilesInFolder((out + QStringLiteral("/a.txt")).toStdString(), {{"a.txt", "a"}}); })
                    .contains(QStringLiteral("exists and is not a folder")));
    }
};

QTEST_GUILESS_MAIN(TestExportFaults)
#include "test_export_faults.moc"
