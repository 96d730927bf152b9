#pragma once
// Shared by test_device_verify and slow_device_verify: the Export dialog writing the workbench's
// export of MIT's 49kb case (the one test_device_run uses), skipping with a message when
// ../shared/reference/runtimes or a device tool is absent.
#include "graph/PublishedSchemes.h"
#include "DeviceTestSupport.h"

#include "ExportDialog.h"
#include "device/DeviceRunner.h"


namespace tinyscope::test {

inline ExportRequest request49kb()
{
    ExportRequest rq;
    rq.model = ModelSource::zooWithParams("mcunet-5fps", sharedPath("reference/tinyengine/full-int8-params.pkl"));
    rq.scheme = schemeByName("mcunet-5fps/49kb", nullptr);
    rq.scheme_label = "mcunet-5fps/49kb";
    rq.name = "49kb-int8";
    return rq;
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

}  // namespace tinyscope::test
