// Where commands write: --name never leads outside --out, and every command that writes refuses
// an output it cannot write (an existing file where a folder goes, a folder where a file goes, a
// path below a file, a folder an export cannot swap) at once — exit 2, one line naming the path,
// no progress printed, nothing created.
#include "FaultInjection.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/AtomicFolder.h"
#include "io/JsonFile.h"
#include "io/OutputPaths.h"

#include <sys/stat.h>

using namespace tinyscope;
using namespace tinyscope::test;

class TestOutputPaths : public QObject {
    Q_OBJECT
    QTemporaryDir scratch;

    struct Refusal {
        QStringList args;
        QString says;   // the path (and reason) the one-line message must contain
    };

    // Each command exits 2 at once with one line naming the path, prints nothing on stdout (no
    // progress: no work began) and creates nothing in `dir`.
    static void expectRefusedBeforeWork(const std::vector<Refusal>& cases, const QString& dir, const QString& cwd)
    {
        const std::optional<Snapshot> before = snapshot(dir);
        for (const Refusal& c : cases) {
            QProcess p;
            p.setWorkingDirectory(cwd);
            const QString what = c.args.join(QLatin1Char(' '));
            p.start(tinyscopeBinary(), c.args);
            QVERIFY(p.waitForFinished(300000));
            const std::string out = p.readAllStandardOutput().toStdString(), err = p.readAllStandardError().toStdString();
            QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 2,
                     qPrintable(what + QStringLiteral(": exit %1: ").arg(p.exitCode()) + QString::fromStdString(err)));
            QVERIFY2(out.empty(), qPrintable(what + QStringLiteral(": printed ") + QString::fromStdString(out)));
            QCOMPARE(lineCount(err), 1);
            QVERIFY2(err.find(c.says.toStdString()) != std::string::npos, qPrintable(what + QStringLiteral(": ") + QString::fromStdString(err)));
            QVERIFY2(snapshot(dir) == before, qPrintable(what + QStringLiteral(": ") + describe(snapshot(dir))));
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(scratch.isValid());
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed (setup.sh installs it)");
    }

    // --name never leads outside --out: a name with a folder part is refused, by every command
    // that takes one, before any work; nothing appears outside.
    void namesNeverLeadOutsideTheOutputFolder()
    {
        QTemporaryDir parent;
        const QString out = parent.path() + QStringLiteral("/a/b/out");
        const CliRun e = runTinyscope(exportArgs(out, 1, QStringLiteral("../../x")));
        QCOMPARE(e.code, 2);
        QVERIFY2(e.err.find("--name ../../x") != std::string::npos, e.err.c_str());
        QVERIFY(e.out.empty());
        const CliRun m = runTinyscope({QStringLiteral("make-accdata"), QStringLiteral("--out"), out, QStringLiteral("--name"),
                                                   QStringLiteral("../../../x"), QStringLiteral("--count"), QStringLiteral("1")});
        QCOMPARE(m.code, 2);
        QVERIFY2(m.err.find("--name ../../../x") != std::string::npos, m.err.c_str());
        QVERIFY(m.out.empty());
        for (const QString& bad : {QStringLiteral(".."), QStringLiteral("."), QStringLiteral("a/b"), QString()}) {
            const CliRun r = runTinyscope(exportArgs(out, 1, bad));
            QVERIFY2(r.code == 2 && r.out.empty(), qPrintable(QStringLiteral("--name '%1': %2").arg(bad, shortErr(r))));
        }
        QVERIFY2(snapshot(parent.path())->empty(), qPrintable(describe(snapshot(parent.path()))));
        QVERIFY(inputErrorOf([] { requireFileStem("../x", "--name"); }).contains(QStringLiteral("without '/'")));
        QVERIFY(inputErrorOf([] { requireFileStem("net-1.b", "--name"); }).isEmpty());
    }

    // Every command that writes refuses an output it cannot write — an existing file where a
    // folder goes, a folder where a file goes, a path below a file — at once: exit 2, one line
    // naming the path and the reason, no progress printed, nothing created.
    void folderOutputsAreCheckedBeforeAnyWork()
    {
        QTemporaryDir dir;
        const QString file = dir.path() + QStringLiteral("/plain.txt");
        writeText(file, "a file\n");
        const QString below = file + QStringLiteral("/sub");
        const QString cwd = dir.path() + QStringLiteral("/cwd");
        QVERIFY(QDir().mkpath(cwd));
        std::vector<Refusal> cases;
        for (const QString& bad : {file, below}) {
            cases.push_back({exportArgs(bad, 1), bad});
            cases.push_back({{QStringLiteral("make-accdata"), QStringLiteral("--supernet"), shippedSupernet(), QStringLiteral("--count"), QStringLiteral("2"),
                              QStringLiteral("--out"), bad}, bad});
            cases.push_back({{QStringLiteral("train-supernet"), QStringLiteral("--preset"), QStringLiteral("tiny"), QStringLiteral("--max-steps"),
                              QStringLiteral("1"), QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--out"), bad}, bad});
        }
        // make-accdata's src/ is a file.
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("acc")));
        writeText(dir.path() + QStringLiteral("/acc/src"), "not a folder");
        cases.push_back({{QStringLiteral("make-accdata"), QStringLiteral("--supernet"), shippedSupernet(), QStringLiteral("--count"), QStringLiteral("2"),
                          QStringLiteral("--out"), dir.path() + QStringLiteral("/acc")}, dir.path() + QStringLiteral("/acc/src: exists and is not a folder")});
        // Folders an export cannot swap: the current folder, one holding folders.
        cases.push_back({exportArgs(QStringLiteral("."), 1), QStringLiteral("--out .: is the current folder")});
        cases.push_back({exportArgs(dir.path(), 1), dir.path() + QStringLiteral(": holds the folder '")});
        expectRefusedBeforeWork(cases, dir.path(), cwd);
    }

    void fileOutputsAreCheckedBeforeAnyWork()
    {
        QTemporaryDir dir;
        const QString file = dir.path() + QStringLiteral("/plain.txt");
        writeText(file, "a file\n");
        const QString below = file + QStringLiteral("/sub");
        // Folders where a command's file would go.
        for (const char* f : {"f.json", "f.svg", "f.pth", "f.bin"}) QVERIFY(QDir(dir.path()).mkpath(QLatin1String(f)));
        std::vector<Refusal> cases;
        for (const QString& bad : {dir.path() + QStringLiteral("/f.json"), below + QStringLiteral("/x.json")}) {
            cases.push_back({{QStringLiteral("search"), QStringLiteral("--macs"), QStringLiteral("50"), QStringLiteral("--out"), bad}, bad});
            cases.push_back({{QStringLiteral("memory"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--scheme"),
                              QStringLiteral("full"), QStringLiteral("--save-scheme"), bad}, bad});
            cases.push_back({{QStringLiteral("train-graph"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--scheme"),
                              QStringLiteral("full"), QStringLiteral("--save-scheme"), bad}, bad});
        }
        for (const QString& bad : {dir.path() + QStringLiteral("/f.svg"), below + QStringLiteral("/x.svg")}) {
            cases.push_back({{QStringLiteral("search"), QStringLiteral("--macs"), QStringLiteral("50"), QStringLiteral("--diagram"), bad}, bad});
            cases.push_back({{QStringLiteral("cost"), QStringLiteral("--max"), QStringLiteral("--diagram"), bad}, bad});
            cases.push_back({{QStringLiteral("train-graph"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--scheme"),
                              QStringLiteral("full"), QStringLiteral("--svg"), bad}, bad});
        }
        // Stems: STEM.pth / STEM.bin is a folder, or STEM lies below a file.
        const QString stem = dir.path() + QStringLiteral("/f");
        cases.push_back({{QStringLiteral("ship-supernet"), QStringLiteral("--run"), dir.path(), QStringLiteral("--out"), stem}, stem + QStringLiteral(".pth")});
        cases.push_back({{QStringLiteral("train-predictor"), QStringLiteral("--data"), dir.path(), QStringLiteral("--out"), stem}, stem + QStringLiteral(".bin")});
        cases.push_back({{QStringLiteral("ship-supernet"), QStringLiteral("--run"), dir.path(), QStringLiteral("--out"), below + QStringLiteral("/x")}, below});
        cases.push_back({{QStringLiteral("train-predictor"), QStringLiteral("--data"), dir.path(), QStringLiteral("--out"), below + QStringLiteral("/x")}, below});
        expectRefusedBeforeWork(cases, dir.path(), dir.path());
    }

};

QTEST_GUILESS_MAIN(TestOutputPaths)
#include "test_output_paths.moc"
