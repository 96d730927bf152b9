// `tinyscope device-run` refusing what it cannot run, fast (default tier): a missing tool names its
// Debian package, a bad export folder names the folder or file; both exit 2. The run itself on the
// emulated Cortex-M7 is in slow_device_run.cpp.
#include "DeviceTestSupport.h"

#include "device/DeviceRunner.h"
#include "io/JsonFile.h"

#include <QDirIterator>
#include <QMap>
#include <QFile>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

using namespace tinyscope;

// The process's temporary folders go to `tmp` (to see that the runner leaves none behind).
void withTmpdir(QProcess& p, const QString& tmp)
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("TMPDIR"), tmp);
    p.setProcessEnvironment(env);
}

class TestDeviceRun : public QObject {
    Q_OBJECT

    // The workbench's export of MIT's 49kb case into `dir`; false (and the test skipped) without
    // ../shared or the device tools.
    bool exportForDevice(const QString& dir)
    {
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) {
            QTest::qSkip(qPrintable(why), __FILE__, __LINE__);
            return false;
        }
        const test::CliRun e = test::runTinyscope({QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                                   QString::fromStdString(test::sharedPath("reference/tinyengine/full-int8-params.pkl")),
                                                   QStringLiteral("--scheme"), QStringLiteral("mcunet-5fps/49kb"), QStringLiteral("--out"), dir});
        if (e.code != 0) {
            QTest::qFail(e.err.c_str(), __FILE__, __LINE__);
            return false;
        }
        return true;
    }

private Q_SLOTS:
    void aMissingToolNamesItsDebianPackage()
    {
        QTemporaryDir empty, exportDir;
        // No arm-none-eabi-gcc on PATH (an empty folder): one line naming the package, exit 2.
        const test::CliRun r = test::runWithPath({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir.path()}, empty.path());
        QCOMPARE(r.code, 2);
        QCOMPARE(test::lineCount(r.err), 1);
        QVERIFY2(r.err.find("install the Debian package gcc-arm-none-eabi") != std::string::npos, r.err.c_str());
        QVERIFY(r.out.empty());

        // The cross compiler present but no emulator: PATH holds links to every tool except qemu-system-arm.
        QTemporaryDir bin;
        if (!test::linkDeviceToolsButQemu(bin.path())) QSKIP("gcc-arm-none-eabi is not installed: the second case needs the cross compiler without QEMU");
        const test::CliRun q = test::runWithPath({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir.path()}, bin.path());
        QCOMPARE(q.code, 2);
        QCOMPARE(test::lineCount(q.err), 1);
        QVERIFY2(q.err.find("install the Debian package qemu-system-arm") != std::string::npos, q.err.c_str());
    }

    void aBadExportFolderIsRefusedNamingIt()
    {
        // Options are checked before anything runs.
        const test::CliRun zero = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), QStringLiteral("x"),
                                                      QStringLiteral("--images"), QStringLiteral("0")});
        QCOMPARE(zero.code, 2);
        QVERIFY2(zero.err.find("--images") != std::string::npos, zero.err.c_str());
        const test::CliRun board = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), QStringLiteral("x"),
                                                       QStringLiteral("--board"), QStringLiteral("stm32f999")});
        QCOMPARE(board.code, 2);
        QVERIFY2(board.err.find("stm32f999") != std::string::npos && board.err.find("stm32f746") != std::string::npos, board.err.c_str());
        const test::CliRun none = test::runTinyscope({QStringLiteral("device-run")});
        QCOMPARE(none.code, 2);
        QVERIFY2(none.err.find("--export") != std::string::npos, none.err.c_str());

        const std::string missing = missingDevicePackage();
        if (!missing.empty()) QSKIP(qPrintable(QStringLiteral("the device tools are incomplete (install %1): the folder is checked after the tools").arg(QString::fromStdString(missing))));
        QTemporaryDir dir;
        const QString absent = dir.path() + QStringLiteral("/no-such-export");
        const test::CliRun a = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), absent});
        QCOMPARE(a.code, 2);
        QCOMPARE(test::lineCount(a.err), 1);
        QVERIFY2(a.err.find("no-such-export") != std::string::npos && a.err.find("does not exist") != std::string::npos, a.err.c_str());

        // A graph without params: the missing file is named.
        test::writeFile(dir.path() + QStringLiteral("/m-graph.json"), "[]");
        test::writeFile(dir.path() + QStringLiteral("/scale.json"), "{}");
        const test::CliRun b = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), dir.path()});
        QCOMPARE(b.code, 2);
        QCOMPARE(test::lineCount(b.err), 1);
        QVERIFY2(b.err.find("no *.pkl") != std::string::npos, b.err.c_str());

        // Malformed files: refused by the workbench's reader before any code is generated, naming the file.
        test::writeFile(dir.path() + QStringLiteral("/m-params.pkl"), "not a pickle");
        test::writeFile(dir.path() + QStringLiteral("/m-graph.json"), "[{\"name\": ");
        const test::CliRun c = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), dir.path(), QStringLiteral("--keep"),
                                                   dir.path() + QStringLiteral("/build")});
        QCOMPARE(c.code, 2);
        QCOMPARE(test::lineCount(c.err), 1);
        QVERIFY2(c.err.find("m-graph.json") != std::string::npos || c.err.find("m-params.pkl") != std::string::npos, c.err.c_str());
        // Nothing was built for it.
        QVERIFY(!QFileInfo::exists(dir.path() + QStringLiteral("/build/summary.json")));
    }

    // A hang (here: a one-second bound, so the code generator is still running) is killed with every
    // process of the pipeline, reported in one line with the last output, and leaves no build folder.
    void aHangIsKilledAndReportedWithTheLastOutput()
    {
        QTemporaryDir dir;
        const QString exportDir = dir.path() + QStringLiteral("/export"), tmp = dir.path() + QStringLiteral("/tmp");
        if (!exportForDevice(exportDir)) return;
        QVERIFY(QDir().mkpath(tmp));
        QProcess p;
        withTmpdir(p, tmp);
        p.start(test::tinyscopeBinary(), {QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--timeout"), QStringLiteral("1")});
        QVERIFY(p.waitForFinished(60000));
        const std::string err = p.readAllStandardError().toStdString();
        QCOMPARE(p.exitCode(), 2);
        QCOMPARE(test::lineCount(err), 1);
        QVERIFY2(err.find("did not finish within 1 s (hang), killed; last output: ") != std::string::npos, err.c_str());
        QVERIFY(test::noProcessMentions(exportDir));
        QCOMPARE(QDir(tmp).entryList(QDir::AllEntries | QDir::NoDotAndDotDot), QStringList());

        // Issue 45: a run killed with SIGKILL leaves its temporary folder; the next run removes it once
        // its process is gone, and leaves a running one's (and anything else) alone.
        QProcess dead;
        dead.start(QStringLiteral("/bin/sleep"), {QStringLiteral("0.2")});
        QVERIFY(dead.waitForStarted());
        const qint64 deadPid = dead.processId();
        QVERIFY(dead.waitForFinished());
        const QString stale = tmp + QStringLiteral("/tinyscope-device-Stale1"), live = tmp + QStringLiteral("/tinyscope-device-Live01"),
                      other = tmp + QStringLiteral("/tinyscope-device-NoMark");
        for (const QString& d : {stale, live, other}) QVERIFY(QDir().mkpath(d + QStringLiteral("/build")));
        test::writeFile(stale + QStringLiteral("/.tinyscope-device-run"), QByteArray::number(deadPid));
        test::writeFile(live + QStringLiteral("/.tinyscope-device-run"), QByteArray::number(QCoreApplication::applicationPid()));
        QProcess q;
        withTmpdir(q, tmp);
        q.start(test::tinyscopeBinary(), {QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--timeout"), QStringLiteral("1")});
        QVERIFY(q.waitForFinished(60000));
        QCOMPARE(q.exitCode(), 2);
        QCOMPARE(QDir(tmp).entryList(QDir::AllEntries | QDir::NoDotAndDotDot),
                 QStringList({QStringLiteral("tinyscope-device-Live01"), QStringLiteral("tinyscope-device-NoMark")}));
    }

    // Issue 45: --keep DIR may only be a folder device-run owns — new, empty, or one it made before —
    // since the pipeline replaces build/, gen/ and run/ inside it. Another folder is refused and
    // nothing in it is touched. A label of the wrong shape is refused before the compile.
    void keepRefusesAFolderItDidNotMakeAndChecksComeFirst()
    {
        QTemporaryDir dir;
        const QString exportDir = dir.path() + QStringLiteral("/export"), mine = dir.path() + QStringLiteral("/mine");
        if (!exportForDevice(exportDir)) return;
        QVERIFY(QDir().mkpath(mine + QStringLiteral("/build")));
        test::writeFile(mine + QStringLiteral("/build/thesis.tex"), "years of work\n");
        const test::CliRun r = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--keep"), mine});
        QCOMPARE(r.code, 2);
        QCOMPARE(test::lineCount(r.err), 1);
        QVERIFY2(r.err.find("a folder that holds files and was not made by device-run") != std::string::npos, r.err.c_str());
        QVERIFY(QFileInfo::exists(mine + QStringLiteral("/build/thesis.tex")));
        QCOMPARE(QDir(mine).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden), QStringList({QStringLiteral("build")}));

        // A label that does not fit the classifier: refused in a moment, nothing built.
        const QString graphPath = exportDir + QStringLiteral("/mcunet-5fps-graph.json"), keep = dir.path() + QStringLiteral("/keep");
        Json g = readJsonFile(graphPath.toStdString());
        for (Json& op : g)
            for (Json& t : op["inputs"])
                if (t["name"] == "label") t["shape"] = Json::array({1, 7});
        test::writeFile(graphPath, QByteArray::fromStdString(g.dump()));
        const test::CliRun l = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--keep"), keep});
        QCOMPARE(l.code, 2);
        QVERIFY2(l.err.find("parameter 'label' has shape [1, 7], the classifier's output needs [1, 10]") != std::string::npos, l.err.c_str());
        QVERIFY(!QFileInfo::exists(keep + QStringLiteral("/gen")));
    }

    // Ctrl-C while the pipeline runs in its own process group: the runner kills the group (the seam's
    // JobControl cancellation) and the command says so with exit 130.
    void anInterruptStopsEveryProcessOfThePipeline()
    {
        QTemporaryDir dir;
        const QString exportDir = dir.path() + QStringLiteral("/export"), tmp = dir.path() + QStringLiteral("/tmp");
        if (!exportForDevice(exportDir)) return;
        QVERIFY(QDir().mkpath(tmp));
        QProcess p;
        withTmpdir(p, tmp);
        // --keep: a removed build folder would make the orphans fail by themselves; kept, only the kill stops them.
        p.start(test::tinyscopeBinary(), {QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--keep"), dir.path() + QStringLiteral("/build")});
        QVERIFY(p.waitForStarted());
        // Wait until TinyEngine's code generator runs (a grandchild: python under the script's subshell).
        bool running = false;
        for (int i = 0; i < 600 && !running; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            running = test::processesMentioning(QStringLiteral("tiny_training.py -f ") + exportDir) > 0;
        }
        QVERIFY(running);
        ::kill(static_cast<pid_t>(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 130);
        QVERIFY(test::noProcessMentions(exportDir));
        QVERIFY(!QFileInfo::exists(dir.path() + QStringLiteral("/build/summary.json")));
    }

    // TinyEngine's code generator refusing the folder (scale.json without the classifier's scales,
    // which the workbench's int8 forward does not need but the generator's QAS does): one line naming
    // the graph and the generator's error; the kept folder holds no summary as if it were a result.
    void aCodeGeneratorErrorIsOneLineNamingTheGraph()
    {
        QTemporaryDir dir;
        const QString exportDir = dir.path() + QStringLiteral("/export"), keep = dir.path() + QStringLiteral("/build");
        if (!exportForDevice(exportDir)) return;
        const QString scalePath = exportDir + QStringLiteral("/scale.json");
        Json scales = readJsonFile(scalePath.toStdString());
        QVERIFY(scales.erase("v15_x_scale") == 1 && scales.erase("v15_y_scale") == 1);
        test::writeFile(scalePath, QByteArray::fromStdString(scales.dump()));
        const test::CliRun r = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--keep"), keep});
        QCOMPARE(r.code, 2);
        QCOMPARE(test::lineCount(r.err), 1);
        QVERIFY2(r.err.find("TinyEngine's code generator failed on '" + exportDir.toStdString() + "/mcunet-5fps-graph.json': KeyError: 'v15_x_scale'") !=
                     std::string::npos,
                 r.err.c_str());
        QVERIFY(QFileInfo::exists(keep + QStringLiteral("/gen/codegen.log")));
        QVERIFY(!QFileInfo::exists(keep + QStringLiteral("/summary.json")));
    }

    // Issue 45: the program on the emulated board reaches the host only through QEMU's semihosting,
    // and QEMU runs under a Landlock ruleset: the program can create and write files in its run
    // folder, nothing else (tests/device/escape_guest.c tries: create beside and above, append, read,
    // remove, rename out). The same program run unconfined (TINYSCOPE_DEVICE_SANDBOX=off) does
    // escape, so the check can fail.
    void theEmulatedProgramIsConfinedToItsRunFolder()
    {
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        const QString d = dir.path(), outside = d + QStringLiteral("/outside.txt"), elf = d + QStringLiteral("/guest.elf");
        const QString board = test::sourceDir() + QStringLiteral("/resources/device/mps2-an500");
        QProcess cc;
        cc.start(QStringLiteral("arm-none-eabi-gcc"),
                 {QStringLiteral("-mcpu=cortex-m7"), QStringLiteral("-mthumb"), QStringLiteral("-mfpu=fpv5-sp-d16"), QStringLiteral("-mfloat-abi=hard"),
                  QStringLiteral("-O1"), QStringLiteral("--specs=rdimon.specs"), QStringLiteral("-nostartfiles"), QStringLiteral("-T"), board + QStringLiteral("/link.ld"),
                  QStringLiteral("-I"), board, QStringLiteral("-DOUTSIDE=\"%1\"").arg(outside), board + QStringLiteral("/startup.c"),
                  test::sourceDir() + QStringLiteral("/tests/device/escape_guest.c"), QStringLiteral("-o"), elf});
        QVERIFY(cc.waitForFinished(120000));
        QVERIFY2(cc.exitCode() == 0, cc.readAllStandardError().constData());

        const auto runGuest = [&](const QString& work, bool confined) {
            test::writeFile(outside, "original\n");
            QProcess p;
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("TS_KERNEL_CACHE"), d + QStringLiteral("/cache"));
            env.insert(QStringLiteral("TS_QEMU_TIMEOUT"), QStringLiteral("60"));
            env.insert(QStringLiteral("TINYSCOPE_SHARED"), test::sharedDir());
            if (!confined) env.insert(QStringLiteral("TINYSCOPE_DEVICE_SANDBOX"), QStringLiteral("off"));
            p.setProcessEnvironment(env);
            p.start(QStringLiteral("/bin/bash"), {test::sourceDir() + QStringLiteral("/resources/device/run_export.sh"), QStringLiteral("--run-elf"), elf, work});
            if (!p.waitForFinished(120000)) p.kill();
            const QByteArray err = p.readAllStandardError();
            QFile f(work + QStringLiteral("/run/result.txt"));
            QMap<QString, int> result;
            if (p.exitCode() == 0 && f.open(QIODevice::ReadOnly))
                for (const QByteArray& line : f.readAll().split('\n'))
                    if (const QList<QByteArray> kv = line.split(' '); kv.size() == 2) result[QString::fromLatin1(kv[0])] = kv[1].toInt();
            if (result.isEmpty()) qWarning("run_export.sh --run-elf: exit %d: %s", p.exitCode(), err.constData());
            return result;
        };

        const QString work = d + QStringLiteral("/work");
        const QMap<QString, int> confined = runGuest(work, true);
        QCOMPARE(confined.size(), 8);
        QCOMPARE(confined.value(QStringLiteral("create_inside")), 1);   // the run folder is the program's
        for (const char* attempt : {"create_parent", "create_absolute", "append_existing", "read_outside", "read_etc", "remove_outside", "rename_out"})
            QVERIFY2(confined.value(QLatin1String(attempt), -1) == 0, attempt);
        QFile o(outside);
        QVERIFY(o.open(QIODevice::ReadOnly));
        QCOMPARE(o.readAll(), QByteArray("original\n"));
        o.close();
        for (const QString& p : {work + QStringLiteral("/escape-relative.txt"), outside + QStringLiteral(".new"), work + QStringLiteral("/moved-out.txt")})
            QVERIFY2(!QFileInfo::exists(p), qPrintable(p));
        QVERIFY(QFileInfo::exists(work + QStringLiteral("/run/inside.txt")));

        // Unconfined, the same program writes beside its run folder: what the sandbox prevents.
        const QString open = d + QStringLiteral("/open");
        const QMap<QString, int> unconfined = runGuest(open, false);
        QCOMPARE(unconfined.value(QStringLiteral("create_parent")), 1);
        QVERIFY(QFileInfo::exists(open + QStringLiteral("/escape-relative.txt")));
    }

    // Issue 45: names that TinyEngine's generator would paste into C are refused when the export is
    // read, before any code is generated or compiled: a newline and code, an #include, a comment end,
    // a quote — in a parameter name of the graph, a key of the params pickle and of scale.json. One
    // line, exit 2, the key named and the value escaped; nothing is built and no file appears outside.
    void injectedNamesAreRefusedBeforeAnythingIsBuilt()
    {
        QTemporaryDir dir;
        const QString exportDir = dir.path() + QStringLiteral("/export");
        if (!exportForDevice(exportDir)) return;
        const QString graphPath = exportDir + QStringLiteral("/mcunet-5fps-graph.json"), scalePath = exportDir + QStringLiteral("/scale.json");
        const QString paramsPath = exportDir + QStringLiteral("/mcunet-5fps-params.pkl");
        QFile gf(graphPath), sf(scalePath), pf(paramsPath);
        QVERIFY(gf.open(QIODevice::ReadOnly) && sf.open(QIODevice::ReadOnly) && pf.open(QIODevice::ReadOnly));
        const QByteArray graph = gf.readAll(), scale = sf.readAll(), params = pf.readAll();
        const QString marker = dir.path() + QStringLiteral("/pwned");
        // The same length as "v15_bias" where the pickle is patched in place (its key length is in the bytes before it).
        const std::vector<std::pair<std::string, std::string>> names = {
            {"newline and code", "v15_bias;\n__attribute__((constructor)) static void p(void){fopen(\"" + marker.toStdString() + "\",\"w\");}\nint x"},
            {"#include", "v15_bias\n#include \"/etc/passwd\"\n"},
            {"comment end", "v15_bias*/ int y; /*"},
            {"quote", "v15_bias\"x"},
        };
        const std::string keep = (dir.path() + QStringLiteral("/build")).toStdString();
        for (const auto& [shape, name] : names) {
            // In the graph (a parameter name, every use), then in scale.json (a key).
            Json g = Json::parse(graph.toStdString());
            for (Json& op : g)
                for (Json& t : op["inputs"])
                    if (t["name"] == "v15_bias") t["name"] = name;
            test::writeFile(graphPath, QByteArray::fromStdString(g.dump()));
            test::CliRun r = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--keep"), QString::fromStdString(keep)});
            QVERIFY2(r.code == 2 && test::lineCount(r.err) == 1, (shape + ": " + r.err).c_str());
            QVERIFY2(r.err.find("mcunet-5fps-graph.json") != std::string::npos && r.err.find("not a name TinyEngine's code generator can emit safely") != std::string::npos,
                     r.err.c_str());
            QVERIFY2(r.err.find('\n') == r.err.size() - 1, r.err.c_str());   // the name's newline is escaped
            test::writeFile(graphPath, graph);

            Json s = Json::parse(scale.toStdString());
            s[name] = 0.5;
            test::writeFile(scalePath, QByteArray::fromStdString(s.dump()));
            r = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--keep"), QString::fromStdString(keep)});
            QVERIFY2(r.code == 2 && test::lineCount(r.err) == 1, (shape + ": " + r.err).c_str());
            QVERIFY2(r.err.find("scale.json: key '") != std::string::npos, r.err.c_str());
            test::writeFile(scalePath, scale);
            QVERIFY(!QFileInfo::exists(marker));
            QVERIFY(!QFileInfo::exists(QString::fromStdString(keep) + QStringLiteral("/gen")));
        }
        // A pickle key: "v15_bias" replaced by a name of the same length holding a newline.
        QByteArray bad = params;
        const int at = bad.indexOf("v15_bias");
        QVERIFY(at > 0);
        bad.replace(at, 8, "v15\n#inc");
        test::writeFile(paramsPath, bad);
        const test::CliRun p = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--keep"), QString::fromStdString(keep)});
        QVERIFY2(p.code == 2 && test::lineCount(p.err) == 1, p.err.c_str());
        QVERIFY2(p.err.find("mcunet-5fps-params.pkl: key 'v15\\n#inc'") != std::string::npos, p.err.c_str());
        QVERIFY(!QFileInfo::exists(QString::fromStdString(keep) + QStringLiteral("/gen")));
    }

    void syntheticImagesContinueOneLcgStream()
    {
        // Image 0 is the docs' LCG image (device byte i = (h, w, c) of HWC); image 1 continues the stream.
        const auto two = lcgImages(2, 3, 4, 5);
        QCOMPARE(two.size(), std::size_t(2));
        std::uint32_t x = 1;
        std::vector<std::int8_t> stream;
        for (int i = 0; i < 2 * 60; ++i) {
            x = 1664525u * x + 1013904223u;
            stream.push_back(static_cast<std::int8_t>(x >> 24));
        }
        for (int k = 0; k < 2; ++k)
            for (int h = 0; h < 4; ++h)
                for (int w = 0; w < 5; ++w)
                    for (int c = 0; c < 3; ++c)
                        QCOMPARE(two[static_cast<std::size_t>(k)][static_cast<std::size_t>((c * 4 + h) * 5 + w)],
                                 stream[static_cast<std::size_t>(k * 60 + (h * 5 + w) * 3 + c)]);
        QCOMPARE(lcgImages(1, 3, 4, 5)[0], two[0]);
    }
};

QTEST_GUILESS_MAIN(TestDeviceRun)
#include "test_device_run.moc"
