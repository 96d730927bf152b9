// Two `tinyscope device-run` processes at the same time on one fresh kernel cache (the user's default,
// <XDG_STATE_HOME>/tinyscope/device-kernels), as two terminals or the GUI and a terminal would start
// them (slow tier: two pipelines, ~2 × 30 s of CPU). resources/device/run_export.sh shares two things
// between runs there: the compiled TinyEngine kernel archive and the QEMU plugin. The host `gcc` that
// builds the plugin is replaced (on PATH) by a slow writer: the shared object stands half-written at
// its output path for 15 s, as a linker's output does while it is written, which widens the window in
// which the other run could pick it up. Both runs must succeed with the same logits and instruction
// counts; the kernels are compiled once (the second run waits for the first's archive and reuses it);
// the plugin is built once; nothing temporary is left in the cache.
//
// Before the fix (run_export.sh of commit 67db48a, which wrote the plugin in place and replaced the
// archive folder by rm -rf + mv without a lock) this test failed in both of two tries: run 1 exited 2
// with "the program on the emulated board failed (exit 135)" — QEMU died of SIGBUS loading the plugin
// the other run was still writing. (Both runs compiling the kernels, the count checked below, was not
// reached there.) See docs/DEVICE_RUNNER.md, "Concurrent runs". Skips with a message without
// ../shared/reference/runtimes or a device tool.
#include "TestSupport.h"

#include "device/DeviceRunner.h"
#include "io/JsonFile.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <memory>
#include <vector>

using namespace tinyscope;

namespace {

// gcc on PATH for the pipeline: building a shared object (-shared … -o OUT), it builds into OUT.slow-writer,
// removes OUT and leaves the first 4 KB of it there for 15 s (a new file, as GNU ld unlinks its output
// before writing it), then completes OUT; everything else goes to the real gcc.
// Each plugin build appends OUT to `log`.
QString slowWriterGcc(const QString& realGcc, const QString& log)
{
    return QStringLiteral(
               "#!/bin/bash\n"
               "set -e\n"
               "out=; shared=0; next=0; args=()\n"
               "for a in \"$@\"; do\n"
               "  if (( next )); then out=$a; args+=(\"$a.slow-writer\"); next=0; continue; fi\n"
               "  [[ $a == -o ]] && next=1\n"
               "  [[ $a == -shared ]] && shared=1\n"
               "  args+=(\"$a\")\n"
               "done\n"
               "if (( shared )) && [[ -n $out ]]; then\n"
               "  echo \"$out\" >> '%2'\n"
               "  '%1' \"${args[@]}\"\n"
               "  rm -f \"$out\"\n"
               "  head -c 4096 \"$out.slow-writer\" > \"$out\"\n"
               "  sleep 15\n"
               "  cat \"$out.slow-writer\" > \"$out\"\n"
               "  rm -f \"$out.slow-writer\"\n"
               "  exit 0\n"
               "fi\n"
               "exec '%1' \"$@\"\n")
        .arg(realGcc, log);
}

}  // namespace

class SlowDeviceConcurrency : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void twoRunsAtOnceShareOneFreshKernelCache()
    {
        REQUIRE_SHARED();
        if (!QFileInfo::exists(test::sharedDir() + QStringLiteral("/reference/runtimes/tinyengine")))
            QSKIP("../shared/reference/runtimes (TinyEngine, CMSIS) not found: the device runner needs them");
        if (const std::string pkg = missingDevicePackage(); !pkg.empty())
            QSKIP(qPrintable(QStringLiteral("a device tool is missing: install the Debian package %1").arg(QString::fromStdString(pkg))));
        const QString realGcc = QStandardPaths::findExecutable(QStringLiteral("gcc"));
        QVERIFY(!realGcc.isEmpty());

        QTemporaryDir dir;
        const QString exportDir = dir.path() + QStringLiteral("/export"), state = dir.path() + QStringLiteral("/state"),
                      bin = dir.path() + QStringLiteral("/bin"), log = dir.path() + QStringLiteral("/plugin-builds.txt");
        const test::CliRun e = test::runTinyscope({QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                                   QString::fromStdString(test::sharedPath("reference/tinyengine/full-int8-params.pkl")),
                                                   QStringLiteral("--scheme"), QStringLiteral("mcunet-5fps/49kb"), QStringLiteral("--out"), exportDir});
        QVERIFY2(e.code == 0, e.err.c_str());
        QVERIFY(QDir().mkpath(bin) && QDir().mkpath(state));
        {
            QFile w(bin + QStringLiteral("/gcc"));
            QVERIFY(w.open(QIODevice::WriteOnly));
            w.write(slowWriterGcc(realGcc, log).toUtf8());
        }
        QVERIFY(QFile::setPermissions(bin + QStringLiteral("/gcc"), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));

        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PATH"), bin + QLatin1Char(':') + env.value(QStringLiteral("PATH")));
        env.insert(QStringLiteral("XDG_STATE_HOME"), state);   // the default cache, fresh: <state>/tinyscope/device-kernels
        env.insert(QStringLiteral("TMPDIR"), dir.path());
        std::vector<std::unique_ptr<QProcess>> runs;
        for (int k = 0; k < 2; ++k) {
            auto p = std::make_unique<QProcess>();
            p->setProcessEnvironment(env);
            p->start(test::tinyscopeBinary(), {QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--images"), QStringLiteral("1"),
                                               QStringLiteral("--json")});
            QVERIFY(p->waitForStarted());
            runs.push_back(std::move(p));
        }
        std::vector<Json> out;
        QString failures;
        for (std::size_t k = 0; k < runs.size(); ++k) {
            QProcess& p = *runs[k];
            QVERIFY(p.waitForFinished(850000));
            const QByteArray err = p.readAllStandardError();
            if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
                failures += QStringLiteral("run %1: exit %2: %3 ").arg(k + 1).arg(p.exitCode()).arg(QString::fromUtf8(err).trimmed());
            else
                out.push_back(Json::parse(p.readAllStandardOutput().toStdString()));
        }
        QVERIFY2(failures.isEmpty(), qPrintable(failures));
        for (const Json& j : out) {
            QCOMPARE(j["inference_match"].get<bool>(), true);
            QCOMPARE(j["device_logits"][0], Json::parse("[-26, -30, -28, -32, -18, -15, -26, -25, -29, -34]"));   // the LCG image
        }
        QCOMPARE(out[0]["device_logits"], out[1]["device_logits"]);
        QCOMPARE(out[0]["instructions_per_inference"], out[1]["instructions_per_inference"]);
        QCOMPARE(out[0]["instructions_per_step"], out[1]["instructions_per_step"]);
        // One run compiled the kernels, the other waited for its archive and took it.
        QCOMPARE(int(out[0]["kernel_archive_reused"].get<bool>()) + int(out[1]["kernel_archive_reused"].get<bool>()), 1);

        // The plugin was built once; the cache holds one complete archive, one plugin, one sandbox
        // launcher (docs/DEVICE_RUNNER.md: QEMU runs under it), the lock files, and nothing temporary.
        QFile builds(log);
        QVERIFY(builds.open(QIODevice::ReadOnly));
        QCOMPARE(builds.readAll().count('\n'), 1);
        const QString cache = state + QStringLiteral("/tinyscope/device-kernels");
        QStringList archives, plugins, launchers, other;
        QDirIterator it(cache, QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString rel = QDir(cache).relativeFilePath(it.next());
            if (rel.endsWith(QStringLiteral("/libtinyengine_kernels.a"))) archives << rel;
            else if (rel.startsWith(QStringLiteral("insn_marks-")) && rel.endsWith(QStringLiteral(".so"))) plugins << rel;
            else if (rel.startsWith(QStringLiteral("landlock_exec-")) && !rel.contains(QLatin1Char('.'))) launchers << rel;
            else if (!rel.endsWith(QStringLiteral(".lock")) && !it.fileInfo().isDir() && !rel.endsWith(QStringLiteral("/sources.txt"))) other << rel;
            if (rel.contains(QStringLiteral(".tmp."))) other << rel;
        }
        QCOMPARE(archives.size(), 1);
        QCOMPARE(plugins.size(), 1);
        QCOMPARE(launchers.size(), 1);
        QVERIFY2(other.isEmpty(), qPrintable(other.join(QLatin1Char(' '))));
        QCOMPARE(QDir(dir.path()).entryList({QStringLiteral("tinyscope-device-*")}, QDir::Dirs), QStringList());
    }
};

QTEST_GUILESS_MAIN(SlowDeviceConcurrency)
#include "slow_device_concurrency.moc"
