// Where commands write: --name never leads outside --out, and every command that writes refuses
// an output it cannot write (an existing file where a folder goes, a folder where a file goes, a
// path below a file, a folder an export cannot swap, a device, FIFO or socket a new file would be
// renamed over) at once — exit 2, one line naming the path, no progress printed, nothing created.
// A killed writer's temporaries are removed by the next write; paths in messages are escaped.
#include "FaultInjection.h"

#include "Error.h"
#include "io/AtomicFile.h"
#include "io/AtomicFolder.h"
#include "io/JsonFile.h"
#include "io/OutputPaths.h"

#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tinyscope;
using namespace tinyscope::test;

#define REQUIRE_DATASET()                                                                                   \
    do {                                                                                                    \
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed (setup.sh installs it)"); \
    } while (0)

namespace {

// The file type of `path` itself (a link is not followed): S_IFIFO, S_IFLNK, ...; 0 when missing.
mode_t typeOf(const QString& path)
{
    struct stat st {};
    return ::lstat(path.toLocal8Bit().constData(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

// Makes a special file of `kind` ("FIFO", "socket", "character device") at `path`; false when this
// machine does not let us (a device node needs root). The device is a copy of /dev/null's node in
// a scratch folder: a test never points a writer at the system's own /dev/null.
bool makeSpecialFile(const QString& kind, const QString& path)
{
    const QByteArray p = path.toLocal8Bit();
    if (kind == QLatin1String("FIFO")) return ::mkfifo(p.constData(), 0666) == 0;
    if (kind == QLatin1String("character device")) return ::geteuid() == 0 && ::mknod(p.constData(), S_IFCHR | 0666, makedev(1, 3)) == 0;
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    if (fd < 0 || static_cast<std::size_t>(p.size()) >= sizeof addr.sun_path) return false;
    std::memcpy(addr.sun_path, p.constData(), static_cast<std::size_t>(p.size()));
    const bool ok = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);   // the socket file stays
    return ok;
}

mode_t fileTypeOfKind(const QString& kind)
{
    return kind == QLatin1String("FIFO") ? S_IFIFO : kind == QLatin1String("socket") ? S_IFSOCK : S_IFCHR;
}

// A pid no process has: a child that has exited and been reaped.
pid_t deadPid()
{
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
}

}  // namespace

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
    void initTestCase() { QVERIFY(scratch.isValid()); }

    // --name never leads outside --out: a name with a folder part is refused, by every command
    // that takes one, before any work; nothing appears outside.
    void namesNeverLeadOutsideTheOutputFolder()
    {
        REQUIRE_DATASET();
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
        REQUIRE_DATASET();
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
        REQUIRE_DATASET();
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

    // A writer renames a new file over its target; over a device, a FIFO or a socket that would
    // replace the node itself (`deploy --out /dev/null` as root replaced /dev/null with 1.2 MB).
    // Such a target — or a link to one — is refused by the early check and by the writer itself,
    // naming the path and what it is, and the node is untouched.
    void specialFilesAreNeverReplaced_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<bool>("throughALink");
        for (const char* kind : {"FIFO", "socket", "character device"}) {
            QTest::newRow(kind) << QString::fromLatin1(kind) << false;
            QTest::newRow(qPrintable(QStringLiteral("link to a %1").arg(QLatin1String(kind)))) << QString::fromLatin1(kind) << true;
        }
    }

    void specialFilesAreNeverReplaced()
    {
        QFETCH(QString, kind);
        QFETCH(bool, throughALink);
        QTemporaryDir dir;
        const QString node = dir.path() + QStringLiteral("/node.json");
        if (!makeSpecialFile(kind, node)) QSKIP(qPrintable(QStringLiteral("cannot make a %1 here (a device node needs root)").arg(kind)));
        const QString target = throughALink ? dir.path() + QStringLiteral("/link.json") : node;
        if (throughALink) QVERIFY(QFile::link(QStringLiteral("node.json"), target));
        const QString what = (throughALink ? QStringLiteral("is a symbolic link to a ") : QStringLiteral("is a ")) + kind;
        const QString early = inputErrorOf([&] { requireWritableFile(target.toStdString(), "--out"); });
        QVERIFY2(early.startsWith(QStringLiteral("--out ") + target + QStringLiteral(": ") + what), qPrintable(early));
        const QString late = inputErrorOf([&] { writeFileAtomic(target.toStdString(), "new bytes"); });
        QVERIFY2(late.startsWith(target + QStringLiteral(": ") + what), qPrintable(late));
        QCOMPARE(typeOf(node), fileTypeOfKind(kind));
        if (throughALink) QCOMPARE(typeOf(target), mode_t(S_IFLNK));
        // A folder swapped in whole would drop the node too: refused when it has the name of a file
        // being written. A link there is an entry like any other: the new file takes its place in
        // the new folder, the node it named is carried over untouched.
        const std::string name = lastPathComponent(target.toStdString());
        const QString inFolder = inputErrorOf([&] { replaceFilesInFolder(dir.path().toStdString(), {{name, "new bytes"}}); });
        if (throughALink) QVERIFY2(inFolder.isEmpty(), qPrintable(inFolder));
        else QVERIFY2(inFolder.startsWith(node + QStringLiteral(": ") + what), qPrintable(inFolder));
        QCOMPARE(typeOf(node), fileTypeOfKind(kind));
        QCOMPARE(int(QDir(dir.path()).entryList(QDir::AllEntries | QDir::System | QDir::Hidden | QDir::NoDotAndDotDot).size()), throughALink ? 2 : 1);
    }

    // Decision: a symbolic link to a regular file is written through — the file it names is
    // replaced atomically (its folder takes the temporary) and the link stays a link, as `>` in a
    // shell would leave it. A link to a folder or to nothing is refused.
    void aLinkToARegularFileIsWrittenThrough()
    {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("real")));
        QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("links")));
        const QString real = dir.path() + QStringLiteral("/real/out.json"), link = dir.path() + QStringLiteral("/links/out.json");
        writeText(real, "old");
        QVERIFY(QFile::link(QStringLiteral("../real/out.json"), link));
        QVERIFY(inputErrorOf([&] { requireWritableFile(link.toStdString(), "--out"); }).isEmpty());
        writeFileAtomic(link.toStdString(), "new");
        QCOMPARE(typeOf(link), mode_t(S_IFLNK));
        QCOMPARE(QFileInfo(link).canonicalFilePath(), QFileInfo(real).canonicalFilePath());
        QCOMPARE(readFileBytes(real.toStdString()), std::string("new"));
        QVERIFY2(leftovers(dir.path()).isEmpty(), qPrintable(leftovers(dir.path()).join(QLatin1Char(' '))));

        const QString toFolder = dir.path() + QStringLiteral("/folder.json"), dangling = dir.path() + QStringLiteral("/dangling.json");
        QVERIFY(QFile::link(QStringLiteral("real"), toFolder));
        QVERIFY(QFile::link(QStringLiteral("missing/x.json"), dangling));
        const QString folderError = inputErrorOf([&] { writeFileAtomic(toFolder.toStdString(), "x"); });
        QVERIFY2(folderError.startsWith(toFolder + QStringLiteral(": is a folder")), qPrintable(folderError));
        const QString danglingError = inputErrorOf([&] { requireWritableFile(dangling.toStdString(), "--out"); });
        QVERIFY2(danglingError.startsWith(QStringLiteral("--out ") + dangling + QStringLiteral(": is a symbolic link to a missing file")),
                 qPrintable(danglingError));
        QVERIFY(!inputErrorOf([&] { writeFileAtomic(dangling.toStdString(), "x"); }).isEmpty());
        QCOMPARE(typeOf(toFolder), mode_t(S_IFLNK));
        QCOMPARE(typeOf(dangling), mode_t(S_IFLNK));
    }

    // Through the real binary: `cost --diagram` onto a FIFO (and, as root, a device node) exits 2
    // before any work with one line naming it; onto a link to a file it writes that file.
    void theCliRefusesASpecialFileAsItsOutput()
    {
        QTemporaryDir dir;
        QStringList nodes;
        for (const char* kind : {"FIFO", "character device"}) {
            const QString node = dir.path() + QStringLiteral("/") + QString::fromLatin1(kind).replace(QLatin1Char(' '), QLatin1Char('-')) +
                                 QStringLiteral(".dot");
            if (!makeSpecialFile(QString::fromLatin1(kind), node)) continue;
            const CliRun r = runTinyscope({QStringLiteral("cost"), QStringLiteral("--max"), QStringLiteral("--diagram"), node});
            QVERIFY2(r.code == 2 && r.out.empty() && lineCount(r.err) == 1, qPrintable(QString::number(r.code) + QStringLiteral(" ") + shortErr(r)));
            QVERIFY2(r.err.find("--diagram " + node.toStdString() + ": is a " + kind) != std::string::npos, r.err.c_str());
            QCOMPARE(typeOf(node), fileTypeOfKind(QString::fromLatin1(kind)));
            nodes << node;
        }
        QVERIFY(!nodes.isEmpty());
        const QString real = dir.path() + QStringLiteral("/real.dot"), link = dir.path() + QStringLiteral("/link.dot");
        writeText(real, "old");
        QVERIFY(QFile::link(real, link));
        const CliRun w = runTinyscope({QStringLiteral("cost"), QStringLiteral("--max"), QStringLiteral("--diagram"), link});
        QVERIFY2(w.code == 0, qPrintable(shortErr(w)));
        QCOMPARE(typeOf(link), mode_t(S_IFLNK));
        QVERIFY2(readFileBytes(real.toStdString()).rfind("digraph", 0) == 0, readFileBytes(real.toStdString()).substr(0, 40).c_str());
        QVERIFY2(leftovers(dir.path()).isEmpty(), qPrintable(leftovers(dir.path()).join(QLatin1Char(' '))));
    }

    // A writer killed before its rename leaves `<target>.tmp-<pid>-<n>`; the next write of that
    // target removes the temporaries of processes no longer running and keeps a live one's.
    void staleTemporariesOfAKilledWriterAreRemovedByTheNextWrite()
    {
        QTemporaryDir dir;
        const std::string target = (dir.path() + QStringLiteral("/t.json")).toStdString();
        const std::string dead = std::to_string(deadPid()), live = std::to_string(::getpid());
        const std::vector<std::string> stale = {target + ".tmp-" + dead + "-0", target + ".tmp-" + dead};
        const std::vector<std::string> kept = {target + ".tmp-" + live + "-99999", target + ".tmp-" + dead + "-x", target + ".tmp-notapid-0",
                                               (dir.path() + QStringLiteral("/other.json.tmp-")).toStdString() + dead + "-0"};
        for (const std::string& p : stale) writeNewFile(p, "partial");
        for (const std::string& p : kept) writeNewFile(p, "partial");
        writeFileAtomic(target, "{}");
        for (const std::string& p : stale) QVERIFY2(!QFileInfo::exists(QString::fromStdString(p)), p.c_str());
        for (const std::string& p : kept) QVERIFY2(QFileInfo::exists(QString::fromStdString(p)), p.c_str());
        QCOMPARE(readFileBytes(target), std::string("{}"));

        // The real case: `cost --diagram` killed (SIGKILL) just before its rename, then run again.
        const QString out = dir.path() + QStringLiteral("/d.dot");
        const QStringList args = {QStringLiteral("cost"), QStringLiteral("--max"), QStringLiteral("--diagram"), out};
        Faults killAtRename;
        killAtRename.path = QStringLiteral("d.dot");
        killAtRename.ops = QStringLiteral("rename");
        killAtRename.at = 1;
        killAtRename.action = QStringLiteral("kill");
        QCOMPARE(runFaulty(args, killAtRename).code, -2);
        const QStringList left = QDir(dir.path()).entryList({QStringLiteral("d.dot.tmp-*")}, QDir::Files | QDir::Hidden);
        QCOMPARE(int(left.size()), 1);
        const CliRun again = runTinyscope(args);
        QVERIFY2(again.code == 0, qPrintable(shortErr(again)));
        QVERIFY2(QDir(dir.path()).entryList({QStringLiteral("d.dot.tmp-*")}, QDir::Files | QDir::Hidden).isEmpty(), qPrintable(left.join(QLatin1Char(' '))));
        QVERIFY(QFileInfo(out).isFile());
    }

    // Paths quoted in messages are escaped and bounded: a name with escape sequences or newlines
    // cannot move the cursor or split the line, a 100 KB one does not flood the terminal.
    void outputPathsAreEscapedInMessages()
    {
        const std::string hostile = "/nonexistent-\x1b[2J\n-folder/x.dot";
        const QString e = inputErrorOf([&] { requireWritableFile(hostile, "--diagram"); });
        QVERIFY2(e.startsWith(QStringLiteral("--diagram /nonexistent-\\x1b[2J\\n-folder/x.dot: ")), qPrintable(e));
        const CliRun r = runTinyscope({QStringLiteral("cost"), QStringLiteral("--max"), QStringLiteral("--diagram"), QString::fromStdString(hostile)});
        QCOMPARE(r.code, 2);
        QCOMPARE(lineCount(r.err), 1);
        QVERIFY2(r.err.find('\x1b') == std::string::npos && r.err.find("\\x1b[2J\\n") != std::string::npos, r.err.c_str());
        const std::string huge = "/nonexistent/" + std::string(100000, 'a') + ".dot";
        const QString h = inputErrorOf([&] { requireWritableFile(huge, "--diagram"); });
        QVERIFY2(!h.isEmpty() && h.size() < 5000 && h.contains(QStringLiteral("100,017 bytes")), qPrintable(h.left(300)));
        const QString w = inputErrorOf([&] { writeFileAtomic(hostile, "x"); });
        QVERIFY2(w.startsWith(QStringLiteral("/nonexistent-\\x1b[2J\\n-folder/x.dot: cannot write")), qPrintable(w));
        const QString read = inputErrorOf([&] { readFileBytes(hostile); });
        QVERIFY2(read.startsWith(QStringLiteral("/nonexistent-\\x1b[2J\\n-folder/x.dot: cannot open")), qPrintable(read));
    }
};

QTEST_GUILESS_MAIN(TestOutputPaths)
#include "test_output_paths.moc"
