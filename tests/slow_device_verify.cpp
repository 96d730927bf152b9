// The Export dialog's "Verify on an emulated Cortex-M7" end to end (slow tier: TinyEngine's code
// generator, the kernels compiled for Cortex-M7 when the cache is cold, QEMU; ~30–60 s of CPU): the
// dialog writes the workbench's export of MIT's 49kb MCUNet-5fps case, runs it on the emulated board
// through the progress stages of the seam, and shows the verdict "matches", the real binary's SRAM
// and flash as bars against the chosen board (the figures of docs/DEVICE_RUNNER.md) and the
// instruction counts. Screenshots export-dialog-verify*.png go to screenshots/ in the test's working
// folder. Skips with a message without ../shared/reference/runtimes or a device tool.
#include "DeviceVerifySupport.h"

#include "CapacityBar.h"
#include "DeviceVerdictView.h"
#include "EventWait.h"

#include <QApplication>
#include <QTemporaryDir>

using namespace tinyscope;

namespace {

QString screenshot(QWidget& w, const char* name)
{
    QDir().mkpath(QStringLiteral("screenshots"));
    const QString path = QStringLiteral("screenshots/") + QLatin1String(name);
    QCoreApplication::processEvents();   // the layout follows the verdict's new height
    w.grab().save(path);
    return path;
}

}  // namespace

class SlowDeviceVerify : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void verifyShowsTheDeviceMatchingWithItsMemoryAgainstTheBoard()
    {
        REQUIRE_SHARED();
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        ui::ExportDialog d(test::request49kb());
        d.setBoard(QStringLiteral("stm32f746"));
        d.show();
        test::checkAndWrite(d, dir.path());
        if (QTest::currentTestFailed()) return;
        d.verify();
        QVERIFY(d.busy());   // off the GUI thread
        QStringList stages;
        QVERIFY(ui::processEventsUntil(
            [&] {
                const QString stage = d.progressText().section(QLatin1Char(':'), 0, 0);
                if (stages.isEmpty() || stages.back() != stage) stages << stage;
                return !d.busy();
            },
            840000));
        const ui::DeviceVerdictView& v = *d.verdictView();
        QVERIFY2(v.state() == ui::DeviceVerdictView::State::Matches, qPrintable(v.verdictText()));
        // The seam's stages as they came (the last, "compare", may pass between two looks).
        QVERIFY2(stages.indexOf(QStringLiteral("tools")) >= 0 && stages.indexOf(QStringLiteral("device")) > stages.indexOf(QStringLiteral("tools")),
                 qPrintable(stages.join(QLatin1Char(','))));
        QCOMPARE(d.progressText(), QStringLiteral("verified"));
        QVERIFY2(v.verdictText().startsWith(QStringLiteral("Device matches the workbench: logits of 2 images equal Int8Forward (TinyEngine arithmetic); training step ")),
                 qPrintable(v.verdictText()));
        QVERIFY2(v.verdictText().contains(QStringLiteral("training step equals the workbench's (GraphInterpreter + TinyEngine's update): 25 arrays, 8,258 elements changed")),
                 qPrintable(v.verdictText()));
        QVERIFY2(v.trainingText().contains(QStringLiteral("classifier bias v15_bias: the device's change (0 0 0 +7 0 -5 0 0 0 0) equals the predicted change")),
                 qPrintable(v.trainingText()));
        QVERIFY2(v.detailsText().contains(QStringLiteral("Instructions (QEMU icount), not cycles: 65,035,271 per inference, 106,370,604 per training step")),
                 qPrintable(v.detailsText()));
        // The real binary against the F746 (320 KB, 1 MB): fits.
        QCOMPARE(v.sramBar()->used(), 255104);
        QCOMPARE(v.sramBar()->capacity(), 327680);
        QCOMPARE(v.flashBar()->used(), 698504);
        QCOMPARE(v.flashBar()->capacity(), 1048576);
        QVERIFY(!v.sramBar()->over() && !v.flashBar()->over());
        QCOMPARE(v.sramBar()->text(), QStringLiteral("249.1 KB (255,104 B) of 320.0 KB (stm32f746)"));
        QVERIFY(d.canVerify());
        d.resize(d.width(), std::max(d.height(), d.sizeHint().height()));
        screenshot(d, "export-dialog-verify.png");

        // The F411 chosen afterwards: the same figures against 128 KB / 512 KB, both over (red).
        d.setBoard(QStringLiteral("stm32f411"));
        QCOMPARE(v.sramBar()->capacity(), 131072);
        QVERIFY(v.sramBar()->over() && v.flashBar()->over());
        QVERIFY2(v.flashBar()->text().endsWith(QStringLiteral("(stm32f411): 170.1 KB over")), qPrintable(v.flashBar()->text()));
        QVERIFY2(v.sramBar()->text().endsWith(QStringLiteral("(stm32f411): 121.1 KB over")), qPrintable(v.sramBar()->text()));
        d.resize(1280, 720);
        screenshot(d, "export-dialog-verify-f411-1280x720.png");
    }
};

QTEST_MAIN(SlowDeviceVerify)
#include "slow_device_verify.moc"
