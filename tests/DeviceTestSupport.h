#pragma once
// Shared by the device suites (test_device_run, slow_device_run, test_device_verify,
// slow_device_verify): whether the emulated device can run here, and the processes of its pipeline.
#include "TestSupport.h"

#include "device/DeviceRunner.h"

#include <QDirIterator>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>

#include <chrono>
#include <thread>

namespace tinyscope::test {

// Empty when the device can run here, else why not (the test skips with it).
inline QString deviceUnavailable()
{
    if (!haveShared() || !QFileInfo::exists(sharedDir() + QStringLiteral("/reference/runtimes/tinyengine")))
        return QStringLiteral("../shared/reference/runtimes not found: the device runner needs TinyEngine");
    if (const std::string pkg = missingDevicePackage(); !pkg.empty())
        return QStringLiteral("a device tool is missing: install the Debian package %1").arg(QString::fromStdString(pkg));
    return QString();
}

// `tinyscope ARGS` with PATH = `path` (to show a tool missing).
inline CliRun runWithPath(const QStringList& args, const QString& path)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PATH"), path);
    p.setProcessEnvironment(env);
    p.start(tinyscopeBinary(), args);
    if (!p.waitForFinished(120000)) {
        p.kill();
        return {};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, p.readAllStandardOutput().toStdString(),
            p.readAllStandardError().toStdString()};
}

inline void writeFile(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
}

// Processes (other than this one) whose command line mentions `needle` (zombies have none).
inline int processesMentioning(const QString& needle)
{
    int n = 0;
    QDirIterator it(QStringLiteral("/proc"), QDir::Dirs | QDir::NoDotAndDotDot);
    while (it.hasNext()) {
        const QString d = it.next();
        bool isPid = false;
        const qint64 pid = QFileInfo(d).fileName().toLongLong(&isPid);
        if (!isPid || pid == QCoreApplication::applicationPid()) continue;
        QFile f(d + QStringLiteral("/cmdline"));
        if (f.open(QIODevice::ReadOnly) && QString::fromUtf8(f.readAll().replace('\0', ' ')).contains(needle)) ++n;
    }
    return n;
}

inline bool noProcessMentions(const QString& needle)
{
    for (int i = 0; i < 50; ++i) {   // SIGKILLed children are reaped by init shortly after
        if (processesMentioning(needle) == 0) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

// Fills `dir` with links to every tool the device runner looks for except qemu-system-arm, so a PATH
// of `dir` alone shows the emulator as the missing one. False when the cross compiler is not
// installed (or a link cannot be made).
inline bool linkDeviceToolsButQemu(const QString& dir)
{
    if (QStandardPaths::findExecutable(QStringLiteral("arm-none-eabi-gcc")).isEmpty()) return false;
    for (const char* tool : {"arm-none-eabi-gcc", "arm-none-eabi-g++", "arm-none-eabi-size", "arm-none-eabi-nm", "arm-none-eabi-ar", "gcc"}) {
        const QString t = QStandardPaths::findExecutable(QString::fromLatin1(tool));
        if (!t.isEmpty() && !QFile::link(t, dir + QLatin1Char('/') + QLatin1String(tool))) return false;
    }
    return true;
}

}  // namespace tinyscope::test
