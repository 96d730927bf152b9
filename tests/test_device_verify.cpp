// The Export dialog's "Verify on an emulated Cortex-M7" (default tier): the verdict view's wording and
// bars for a device that differs and a board it does not fit; a missing tool names its Debian package
// instead of running; Cancel stops the pipeline's processes, says "cancelled", leaves no build folder
// and the dialog usable. The full verification of the 49kb export is slow_device_verify.
#include "graph/PublishedSchemes.h"
#include "DeviceVerifySupport.h"

#include "CapacityBar.h"
#include "DeviceVerdictView.h"
#include "EventWait.h"
#include "io/JsonFile.h"

#include <QApplication>
#include <QPushButton>
#include <QStandardPaths>
#include <QTemporaryDir>

using namespace tinyscope;

namespace {

// Sets an environment variable for the scope of a test, restoring it after.
using test::EnvOverride;

QPushButton* button(QWidget& w, const QString& text)
{
    for (QPushButton* b : w.findChildren<QPushButton*>())
        if (b->text() == text) return b;
    return nullptr;
}

// An export written by the dialog without reference data: MCUNet-5fps's 49kb scheme on the zoo
// model's default initialisation.
void writeSmallExport(ui::ExportDialog& d, const QString& dir) { test::checkAndWrite(d, dir); }

ExportRequest smallRequest()
{
    ExportRequest rq;
    rq.model = ModelSource::zoo("mcunet-5fps");
    rq.scheme = schemeByName("mcunet-5fps/49kb", nullptr);
    rq.scheme_label = "mcunet-5fps/49kb";
    rq.name = "m5";
    return rq;
}

}  // namespace

class TestDeviceVerify : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void verdictNamesTheFirstDifferenceAndAnOverfullBoard()
    {
        ui::DeviceVerdictView v;
        DeviceRunResult r;
        r.images = 2;
        r.steps = 1;
        r.classes = 10;
        r.inference_match = false;
        r.first_difference = {1, 4, -26, -17};
        r.sram_bytes = 400000;
        r.flash_bytes = 600000;
        r.instructions_per_inference = {65035271, 65036312};
        r.instructions_per_step = {106370604};
        v.setBoard(presetBoard("stm32f411"));
        v.showResult(r, QStringLiteral("2 synthetic LCG images"));
        QCOMPARE(v.state(), ui::DeviceVerdictView::State::Differs);
        QVERIFY2(v.verdictText().startsWith(QStringLiteral("Device differs: image 1, logit 4: device -26, workbench -17")), qPrintable(v.verdictText()));
        QVERIFY2(v.trainingText().contains(QStringLiteral("training step not compared")), qPrintable(v.trainingText()));
        QVERIFY2(v.detailsText().contains(QStringLiteral("Instructions (QEMU icount), not cycles: 65,035,271 per inference, 106,370,604 per training step")),
                 qPrintable(v.detailsText()));
        // F411: 128 KB SRAM, 512 KB flash: both over, drawn red, the excess named.
        QCOMPARE(v.sramBar()->used(), 400000);
        QCOMPARE(v.sramBar()->capacity(), 131072);
        QVERIFY(v.sramBar()->over() && v.flashBar()->over());
        QCOMPARE(v.sramBar()->text(), QStringLiteral("390.6 KB (400,000 B) of 128.0 KB (stm32f411): 262.6 KB over"));
        // No board chosen: against the F746, labelled so; 400,000 B > 320 KB, 600,000 B < 1 MB.
        v.setBoard(std::nullopt);
        QCOMPARE(v.sramBar()->capacity(), 327680);
        QVERIFY(v.sramBar()->over() && !v.flashBar()->over());
        QVERIFY2(v.flashBar()->text().contains(QStringLiteral("of 1024.0 KB (stm32f746: no board chosen)")), qPrintable(v.flashBar()->text()));

        // Logits equal, the training step compared and different, the bias rule held.
        r.inference_match = true;
        r.training_checked = true;
        r.training_match = false;
        r.max_param_rel_error = 0.5;
        r.training_difference = "v9_conv_0_weight[12]: device 5, GraphInterpreter 6";
        r.classifier_bias = "v15_bias";
        r.classifier_bias_delta_device = {0, 0, 0, 7, 0, -5, 0, 0, 0, 0};
        r.classifier_bias_delta_predicted = r.classifier_bias_delta_device;
        v.showResult(r, QStringLiteral("2 synthetic LCG images"));
        QCOMPARE(v.state(), ui::DeviceVerdictView::State::Differs);
        QCOMPARE(v.verdictText(), QStringLiteral("Device differs in the training step: v9_conv_0_weight[12]: device 5, GraphInterpreter 6 (max relative error 0.5)"));
        QVERIFY2(v.trainingText().contains(QStringLiteral("classifier bias v15_bias: the device's change (0 0 0 +7 0 -5 0 0 0 0) equals the predicted change")),
                 qPrintable(v.trainingText()));
        // Everything equal: the arrays and elements the step changed, and those equal only within the
        // gradient tolerance, counted.
        r.training_match = true;
        r.max_param_rel_error = 0;
        DeviceParamCheck w, b;
        w.changed_device = 2097;
        b.changed_device = 1161;
        b.at_boundary = 2;
        r.params = {w, b};
        v.showResult(r, QStringLiteral("2 synthetic LCG images"));
        QCOMPARE(v.state(), ui::DeviceVerdictView::State::Matches);
        QVERIFY2(v.verdictText().startsWith(QStringLiteral("Device matches the workbench: logits of 2 images equal Int8Forward (TinyEngine arithmetic); "
                                                           "training step equals the workbench's (GraphInterpreter + TinyEngine's update): 2 arrays, "
                                                           "3,258 elements changed, 2 within the gradient tolerance")),
                 qPrintable(v.verdictText()));
        // The bias rule broken: named at its first element.
        r.classifier_bias_delta_predicted[5] = -4;
        v.showResult(r, QStringLiteral("2 synthetic LCG images"));
        QCOMPARE(v.state(), ui::DeviceVerdictView::State::Differs);
        QVERIFY2(v.verdictText().contains(QStringLiteral("v15_bias[5]: changed by -5 on the device, the predicted change is -4")), qPrintable(v.verdictText()));
    }

    // PATH without the cross compiler, then without QEMU: the verdict is one line naming the package,
    // nothing runs, and the dialog stays usable.
    void aMissingToolNamesItsDebianPackage()
    {
        QTemporaryDir dir, empty;
        ui::ExportDialog d(smallRequest());
        d.show();
        writeSmallExport(d, dir.path());
        if (QTest::currentTestFailed()) return;
        {
            EnvOverride path("PATH", empty.path());
            d.verify();
            QVERIFY(d.busy());   // off the GUI thread
            QVERIFY(d.waitForIdle(60000));
        }
        QCOMPARE(d.verdictView()->state(), ui::DeviceVerdictView::State::MissingPackage);
        QCOMPARE(d.verdictView()->verdictText(),
                 QStringLiteral("Cannot verify: a tool the emulated device needs is missing: install the Debian package gcc-arm-none-eabi"));
        QVERIFY(d.verdictView()->isVisible());
        QVERIFY(d.canVerify());

        QTemporaryDir bin;
        if (!test::linkDeviceToolsButQemu(bin.path())) QSKIP("gcc-arm-none-eabi is not installed: the second case needs the cross compiler without QEMU");
        {
            EnvOverride path("PATH", bin.path());
            d.verify();
            QVERIFY(d.waitForIdle(60000));
        }
        QVERIFY2(d.verdictView()->verdictText().endsWith(QStringLiteral("install the Debian package qemu-system-arm")), qPrintable(d.verdictView()->verdictText()));
    }

    // Cancel while TinyEngine's code generator runs: every process of the pipeline is killed (it runs
    // in its own process group), the verdict says cancelled, the temporary build folder is gone, and
    // the dialog can verify again.
    void cancelStopsThePipelineAndLeavesNothing()
    {
        REQUIRE_SHARED();
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        const QString exportDir = dir.path() + QStringLiteral("/export"), tmp = dir.path() + QStringLiteral("/tmp");
        QVERIFY(QDir().mkpath(exportDir) && QDir().mkpath(tmp));
        ui::ExportDialog d(test::request49kb());
        d.show();
        test::checkAndWrite(d, exportDir);
        if (QTest::currentTestFailed()) return;
        EnvOverride tmpdir("TMPDIR", tmp);   // the runner's temporary build folder goes here
        d.verify();
        QVERIFY(d.busy());
        QVERIFY(!d.canVerify());
        QCOMPARE(d.verdictView()->state(), ui::DeviceVerdictView::State::Running);
        QStringList stages;
        const bool generating = ui::processEventsUntil(
            [&] {
                const QString stage = d.progressText().section(QLatin1Char(':'), 0, 0);
                if (stages.isEmpty() || stages.back() != stage) stages << stage;
                return !d.busy() || test::processesMentioning(QStringLiteral("tiny_training.py -f ") + exportDir) > 0;
            },
            120000);
        QVERIFY2(generating && d.busy(), qPrintable(d.verdictView()->verdictText()));
        QVERIFY2(stages.contains(QStringLiteral("device")), qPrintable(stages.join(QLatin1Char(','))));
        QPushButton* cancel = button(d, QStringLiteral("Cancel"));
        QVERIFY(cancel && cancel->isEnabled());
        cancel->click();
        QVERIFY(d.waitForIdle(30000));
        QCOMPARE(d.verdictView()->state(), ui::DeviceVerdictView::State::Cancelled);
        QVERIFY2(d.verdictView()->verdictText().startsWith(QStringLiteral("cancelled")), qPrintable(d.verdictView()->verdictText()));
        QCOMPARE(d.progressText(), QStringLiteral("cancelled"));
        QVERIFY(test::noProcessMentions(exportDir));
        QCOMPARE(QDir(tmp).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden), QStringList());
        // Usable again: the buttons are back and the written files untouched.
        QVERIFY(d.canVerify());
        QVERIFY(button(d, QStringLiteral("Check"))->isEnabled());
        QVERIFY(!cancel->isEnabled());
        QCOMPARE(QDir(exportDir).entryList(QDir::Files).size(), 3);
    }

    // An error of the pipeline (TinyEngine's generator refusing a scale.json without the classifier's
    // scales) is the verdict, in one line naming the graph and the generator's error; not a crash.
    void aPipelineErrorIsTheVerdict()
    {
        REQUIRE_SHARED();
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        ui::ExportDialog d(test::request49kb());
        d.show();
        test::checkAndWrite(d, dir.path());
        if (QTest::currentTestFailed()) return;
        const QString scalePath = dir.path() + QStringLiteral("/scale.json");
        Json scales = readJsonFile(scalePath.toStdString());
        QVERIFY(scales.erase("v15_x_scale") == 1 && scales.erase("v15_y_scale") == 1);
        QFile f(scalePath);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(QByteArray::fromStdString(scales.dump()));
        f.close();
        d.verify();
        QVERIFY(d.waitForIdle(300000));
        QCOMPARE(d.verdictView()->state(), ui::DeviceVerdictView::State::Failed);
        QCOMPARE(d.progressText(), QStringLiteral("failed"));
        const QString v = d.verdictView()->verdictText();
        QVERIFY2(v.startsWith(QStringLiteral("Device run failed: TinyEngine's code generator failed on '")) &&
                     v.contains(QStringLiteral("49kb-int8-graph.json': KeyError: 'v15_x_scale'")) && !v.contains(QLatin1Char('\n')),
                 qPrintable(v));
        QVERIFY(!d.verdictView()->sramBar()->isVisible());
        QVERIFY(d.canVerify());
    }
};

QTEST_MAIN(TestDeviceVerify)
#include "test_device_verify.moc"
