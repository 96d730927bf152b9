#pragma once
// Shared by test_device_verify and slow_device_verify: the Export dialog writing the workbench's
// export of MIT's 49kb case (the one test_device_run uses), skipping with a message when
// ../shared/reference/runtimes or a device tool is absent; processes of the device pipeline.
#include "TestSupport.h"

#include "ExportDialog.h"
#include "device/DeviceRunner.h"

#include <QDirIterator>
#include <QFile>

#include <chrono>
#include <thread>

namespace tinyscope::test {

inline ExportRequest request49kb()
{
    ExportRequest rq;
    rq.model.zoo = "mcunet-5fps";
    rq.model.params = sharedPath("reference/tinyengine/full-int8-params.pkl");
    rq.scheme = "mcunet-5fps/49kb";
    rq.name = "49kb-int8";
    return rq;
}

// Empty when the device can run here, else why not (the test skips with it).
inline QString deviceUnavailable()
{
    if (!haveShared() || !QFileInfo::exists(sharedDir() + QStringLiteral("/reference/runtimes/tinyengine")))
        return QStringLiteral("../shared/reference/runtimes not found: the device runner needs TinyEngine");
    if (const std::string pkg = missingDevicePackage(); !pkg.empty())
        return QStringLiteral("a device tool is missing: install the Debian package %1").arg(QString::fromStdString(pkg));
    return QString();
}

// Check + Write in the dialog into `dir`; QVERIFY inside (the caller stops when QTest::currentTestFailed()).
inline void checkAndWrite(ui::ExportDialog& d, const QString& dir)
{
    d.setOutputFolder(dir);
    d.check();
    QVERIFY(d.waitForIdle(120000));
    QVERIFY2(d.hasPlan(), qPrintable(d.statusText()));
    QVERIFY(!d.canVerify());   // nothing written yet
    d.write();
    QVERIFY(d.waitForIdle(60000));
    QVERIFY2(d.writtenFiles().size() == 3, qPrintable(d.statusText()));
    QVERIFY(d.canVerify());
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

}  // namespace tinyscope::test
