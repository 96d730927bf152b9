// `tinyscope device-run` refusing what it cannot run, fast (default tier): a missing tool names its
// Debian package, a bad export folder names the folder or file; both exit 2. The run itself on the
// emulated Cortex-M7 is in slow_device_run.cpp.
#include "DeviceTestSupport.h"

#include "device/DeviceRunner.h"
#include "io/JsonFile.h"

#include <QDirIterator>
#include <QFile>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

using namespace tinyscope;

namespace {

test::CliRun runWithPath(const QStringList& args, const QString& path)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PATH"), path);
    p.setProcessEnvironment(env);
    p.start(test::tinyscopeBinary(), args);
    if (!p.waitForFinished(120000)) {
        p.kill();
        return {};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, p.readAllStandardOutput().toStdString(),
            p.readAllStandardError().toStdString()};
}

void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

}  // namespace

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
        const test::CliRun r = runWithPath({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir.path()}, empty.path());
        QCOMPARE(r.code, 2);
        QCOMPARE(test::lineCount(r.err), 1);
        QVERIFY2(r.err.find("install the Debian package gcc-arm-none-eabi") != std::string::npos, r.err.c_str());
        QVERIFY(r.out.empty());

        // The cross compiler present but no emulator: PATH holds links to every tool except qemu-system-arm.
        QTemporaryDir bin;
        if (!test::linkDeviceToolsButQemu(bin.path())) QSKIP("gcc-arm-none-eabi is not installed: the second case needs the cross compiler without QEMU");
        const test::CliRun q = runWithPath({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir.path()}, bin.path());
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
        writeFile(dir.path() + QStringLiteral("/m-graph.json"), "[]");
        writeFile(dir.path() + QStringLiteral("/scale.json"), "{}");
        const test::CliRun b = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), dir.path()});
        QCOMPARE(b.code, 2);
        QCOMPARE(test::lineCount(b.err), 1);
        QVERIFY2(b.err.find("no *.pkl") != std::string::npos, b.err.c_str());

        // Malformed files: refused by the workbench's reader before any code is generated, naming the file.
        writeFile(dir.path() + QStringLiteral("/m-params.pkl"), "not a pickle");
        writeFile(dir.path() + QStringLiteral("/m-graph.json"), "[{\"name\": ");
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
        writeFile(scalePath, QByteArray::fromStdString(scales.dump()));
        const test::CliRun r = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--keep"), keep});
        QCOMPARE(r.code, 2);
        QCOMPARE(test::lineCount(r.err), 1);
        QVERIFY2(r.err.find("TinyEngine's code generator failed on '" + exportDir.toStdString() + "/mcunet-5fps-graph.json': KeyError: 'v15_x_scale'") !=
                     std::string::npos,
                 r.err.c_str());
        QVERIFY(QFileInfo::exists(keep + QStringLiteral("/gen/codegen.log")));
        QVERIFY(!QFileInfo::exists(keep + QStringLiteral("/summary.json")));
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
