// The GUI of issue 48 without running the device (default tier): the Deploy dialog's "Run on an
// emulated Cortex-M7" appears only after a TFLite deploy (not before one, not after ONNX), refuses a
// corrupt or missing file in one line before anything is compiled, and names the Debian package of a
// missing tool; the verdict view (TfliteDeviceView) shows TFLM + CMSIS-NN and TinyEngine from
// constructed results — the first difference, TinyEngine's refusal as a row, the bars' bytes against
// the board and redrawn for another; the Search panel's SRAM limit for TFLM reaches the search, its
// winner shows TFLM's arena, and a re-opened run brings the runtime back. The real device run is
// slow_deploy_device's. Skips the dialog cases without the shipped supernet or Fashion-MNIST.
#include "TestSupport.h"

#include "AppState.h"
#include "CapacityBar.h"
#include "DeployDialog.h"
#include "SearchLimitsForm.h"
#include "SearchPanel.h"
#include "TfliteDeviceView.h"

#include "data/ImageDataset.h"
#include "io/Text.h"
#include "nn/predictor/AccuracyPredictor.h"
#include "search/SramRuntime.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"
#include "workspace/Workspace.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>

#include <algorithm>

using namespace tinyscope;

namespace {

using test::EnvOverride;

ModelSource minFmnistSubnet()
{
    const DesignSpace s = presetSpace("mcunet-fmnist");
    return ModelSource::subnet(s, ArchSampler(s).minConfig(*std::min_element(s.resolutions.begin(), s.resolutions.end())), shippedSupernetPath());
}

// A deploy of the min subnet to `out` in `format` (small calibration: the file, not its accuracy, matters here).
void deployTo(ui::DeployDialog& d, DeployFormat format, const QString& out)
{
    d.setFormat(format);
    d.setOutputFile(out);
    d.setBnImages(20);
    d.setCalibrationImages(10);
    QSignalSpy done(&d, &ui::DeployDialog::deployed);
    d.deploy();
    QVERIFY(d.waitForIdle(240000));
    QCOMPARE(done.size(), 1);
    QVERIFY2(done.first().first().toBool(), qPrintable(d.statusText()));
}

void runAndWait(ui::DeployDialog& d)
{
    QSignalSpy ended(&d, &ui::DeployDialog::deviceRunFinished);
    d.runOnDevice();
    QVERIFY(d.busy());   // off the GUI thread
    QVERIFY(d.waitForIdle(120000));
    QCOMPARE(ended.size(), 1);
    QVERIFY(d.canRunOnDevice());   // usable again
}

TfliteDeviceRunResult constructed(DeviceEngine e, std::int64_t arena, std::int64_t sram, std::int64_t flash, std::int64_t instructions)
{
    TfliteDeviceRunResult r;
    r.engine = e;
    r.images = 10;
    r.inference_match = true;
    r.host_checked = e != DeviceEngine::TinyEngine;
    r.host_match = r.host_checked;
    r.arena_bytes = arena;
    r.sram_bytes = sram;
    r.static_sram_bytes = sram - arena - 1000;
    r.stack_bytes = 1000;
    r.flash_bytes = flash;
    r.instructions_per_inference.assign(10, instructions);
    r.runtime_reused = true;
    return r;
}

}  // namespace

class TestDeployDevice : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("XDG_STATE_HOME", (tmp.path() + QStringLiteral("/state")).toLocal8Bit());
    }

    // The button is there only for a written TFLite file; a corrupt or vanished file is one line,
    // a missing tool names its package; the dialog stays usable.
    void runOnDeviceFollowsTheDeployAndRefusesABadFile()
    {
        if (shippedSupernetPath().empty()) QSKIP("the shipped supernet models/supernets/mcunet-fmnist.pth is absent");
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed (the calibration images)");
        QTemporaryDir dir;
        ui::DeployDialog d(minFmnistSubnet());
        d.show();
        QVERIFY(!d.runOnDeviceShown());   // nothing written yet
        d.runOnDevice();                  // a no-op without a TFLite file
        QVERIFY(!d.busy() && !d.deviceViewShown());

        deployTo(d, DeployFormat::Onnx, dir.path() + QStringLiteral("/min.onnx"));
        if (QTest::currentTestFailed()) return;
        QVERIFY(!d.runOnDeviceShown());   // the device runs the int8 TFLite file

        const QString file = dir.path() + QStringLiteral("/min.tflite");
        deployTo(d, DeployFormat::TFLite, file);
        if (QTest::currentTestFailed()) return;
        QVERIFY(d.runOnDeviceShown() && d.canRunOnDevice());
        QCOMPARE(d.deviceInputs(), QStringLiteral("10 Fashion-MNIST test images"));   // the test split, not the calibration holdout

        // A file that is no longer a TFLite file: refused in one line before anything is compiled.
        {
            QFile f(file);
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write("not a flatbuffer, just some bytes written over the model");
        }
        runAndWait(d);
        if (QTest::currentTestFailed()) return;
        const ui::TfliteDeviceView* v = d.deviceView();
        QVERIFY(d.deviceViewShown());
        QCOMPARE(v->state(), ui::TfliteDeviceView::State::Refused);
        QVERIFY2(v->verdictText().startsWith(QStringLiteral("Not run: ")) && v->verdictText().contains(file) && !v->verdictText().contains(QLatin1Char('\n')),
                 qPrintable(v->verdictText()));
        QCOMPARE(v->engineText(DeviceEngine::Tflm), QString());   // no engine column: nothing ran
        QCOMPARE(d.progressText(), QStringLiteral("not run"));
        // Deleted: the same, naming the file.
        QVERIFY(QFile::remove(file));
        runAndWait(d);
        if (QTest::currentTestFailed()) return;
        QCOMPARE(v->state(), ui::TfliteDeviceView::State::Refused);
        QVERIFY2(v->verdictText().contains(file), qPrintable(v->verdictText()));

        // The file written again, a PATH without the emulator's tools: each engine's row names the package.
        deployTo(d, DeployFormat::TFLite, file);
        if (QTest::currentTestFailed()) return;
        QVERIFY(!d.deviceViewShown());   // a new deploy clears the last verdict
        QTemporaryDir empty;
        {
            EnvOverride path("PATH", empty.path());
            runAndWait(d);
        }
        if (QTest::currentTestFailed()) return;
        QCOMPARE(v->state(), ui::TfliteDeviceView::State::Failed);
        QCOMPARE(v->verdictText(), QStringLiteral("Cannot run: a tool the emulated device needs is missing: install the Debian package gcc-arm-none-eabi"));
        QCOMPARE(v->engineText(DeviceEngine::Tflm), QStringLiteral("not run: install the Debian package gcc-arm-none-eabi"));
        QCOMPARE(v->engineText(DeviceEngine::TinyEngine), QStringLiteral("not run: install the Debian package gcc-arm-none-eabi"));
        QVERIFY(!v->barsShown(DeviceEngine::Tflm));
    }

    // The verdict from constructed results: both engines' bars hold their bytes against the board,
    // TinyEngine's instructions as a ratio of TFLM's; another board redraws them; a difference is
    // the headline with image, output and both values; TinyEngine's refusal is its row.
    void verdictShowsBothEnginesAgainstTheBoard()
    {
        ui::TfliteDeviceView v;
        v.setBoard(presetBoard("stm32f746"));
        ui::TfliteEngineRun tflm{DeviceEngine::Tflm, constructed(DeviceEngine::Tflm, 327412, 332536, 879684, 87059485), {}, {}, false};
        ui::TfliteEngineRun te{DeviceEngine::TinyEngine, constructed(DeviceEngine::TinyEngine, 173416, 176768, 587572, 63025221), {}, {}, false};
        v.showRuns({tflm, te}, QStringLiteral("10 Fashion-MNIST test images"));
        QCOMPARE(v.state(), ui::TfliteDeviceView::State::Matches);
        QCOMPARE(v.verdictText(), QStringLiteral("The device matches the workbench: TFLM + CMSIS-NN and TinyEngine gave the workbench's int8 "
                                                 "outputs on all 10 Fashion-MNIST test images."));
        QCOMPARE(v.engineText(DeviceEngine::Tflm), QStringLiteral("✓ outputs equal the workbench's (Int8Forward, TFLite arithmetic) on 10 images; "
                                                                  "TFLM built for the host gives the same"));
        QCOMPARE(v.instructionsText(DeviceEngine::Tflm), QStringLiteral("87,059,485 instructions per inference (QEMU icount, not cycles)"));
        QCOMPARE(v.instructionsText(DeviceEngine::TinyEngine), QStringLiteral("63,025,221 instructions per inference (QEMU icount, not cycles): 0.72× TFLM's"));
        using F = ui::TfliteDeviceView::Figure;
        QCOMPARE(v.bar(DeviceEngine::Tflm, F::Arena)->used(), 327412);
        QCOMPARE(v.bar(DeviceEngine::Tflm, F::Sram)->used(), 332536);
        QCOMPARE(v.bar(DeviceEngine::Tflm, F::Flash)->used(), 879684);
        QCOMPARE(v.bar(DeviceEngine::TinyEngine, F::Sram)->used(), 176768);
        QCOMPARE(v.bar(DeviceEngine::Tflm, F::Sram)->capacity(), 327680);
        QCOMPARE(v.bar(DeviceEngine::Tflm, F::Flash)->capacity(), 1048576);
        QVERIFY(v.bar(DeviceEngine::Tflm, F::Sram)->over() && !v.bar(DeviceEngine::Tflm, F::Arena)->over());
        QVERIFY(!v.bar(DeviceEngine::TinyEngine, F::Sram)->over());
        QVERIFY2(v.captionText().startsWith(QStringLiteral("TFLM + CMSIS-NN does NOT fit the stm32f746; TinyEngine fits the stm32f746.")),
                 qPrintable(v.captionText()));
        // Another board: the same bytes against its SRAM and flash.
        v.setBoard(presetBoard("stm32f411"));
        QCOMPARE(v.bar(DeviceEngine::TinyEngine, F::Sram)->capacity(), 131072);
        QVERIFY(v.bar(DeviceEngine::TinyEngine, F::Sram)->over() && v.bar(DeviceEngine::TinyEngine, F::Flash)->over());
        QCOMPARE(v.bar(DeviceEngine::TinyEngine, F::Sram)->used(), 176768);

        // TFLM differs at image 3, output 7; TinyEngine refused the model: a row saying why, no bars.
        tflm.result->inference_match = false;
        tflm.result->first_difference = {3, 7, 12, 13};
        ui::TfliteEngineRun refused{DeviceEngine::TinyEngine, std::nullopt, {}, "TinyEngine's code generator refuses the model: Unsupported MUL", false};
        v.showRuns({tflm, refused}, QStringLiteral("10 Fashion-MNIST test images"));
        QCOMPARE(v.state(), ui::TfliteDeviceView::State::Differs);
        QCOMPARE(v.verdictText(), QStringLiteral("TFLM + CMSIS-NN on the device differs from the workbench: image 3, output 7: device 12, "
                                                 "workbench 13 (Int8Forward, TFLite arithmetic)"));
        QCOMPARE(v.engineText(DeviceEngine::TinyEngine), QStringLiteral("not run: TinyEngine's code generator refuses the model: Unsupported MUL"));
        QVERIFY(v.barsShown(DeviceEngine::Tflm) && !v.barsShown(DeviceEngine::TinyEngine));
        // The device equal to the workbench but not to host TFLM: named too.
        tflm.result->inference_match = true;
        tflm.result->host_match = false;
        tflm.result->host_first_difference = {0, 2, -5, -4};
        v.showRuns({tflm, refused}, QStringLiteral("10 Fashion-MNIST test images"));
        QCOMPARE(v.state(), ui::TfliteDeviceView::State::Differs);
        QCOMPARE(v.verdictText(), QStringLiteral("TFLM + CMSIS-NN on the device differs from TFLM on the host: image 0, output 2: device -5, host -4"));
    }

    // The SRAM limit for TFLM: the row says so, the search gets KBTflmArena at the same KB, the
    // winner's card shows TFLM's arena, a re-opened run brings the runtime back, and the workspace's
    // starting limit (KBPeakMemory) puts TinyEngine's back.
    void sramLimitForTflmReachesTheSearch()
    {
        const QString historyPath = tmp.path() + QStringLiteral("/runtime-history.json");
        ui::AppState state;
        state.setWorkspace(shippedWorkspace("lab3-vww"));
        ui::SearchPanel panel(&state, historyPath);
        panel.setOracle(std::make_shared<AccuracyPredictor>(AccuracyPredictor::load(shippedPredictorPath("mcunet-vww"), state.space())));
        SearchOptions o = panel.options();
        o.population = 20;
        o.generations = 2;
        panel.setOptions(o);
        auto* form = panel.findChild<ui::SearchLimitsForm*>();
        auto* runtime = panel.findChild<QComboBox*>(QStringLiteral("sramRuntime"));
        QVERIFY(form && runtime);
        QCOMPARE(form->sramRuntime(), SramRuntime::TinyEngine);
        QCOMPARE(panel.constraints().describe(), std::string("MACs ≤ 60 M, peak SRAM ≤ 250 KB"));
        QCheckBox* sramBox = nullptr;
        for (QCheckBox* b : panel.findChildren<QCheckBox*>())
            if (b->text().startsWith(QStringLiteral("peak SRAM"))) sramBox = b;
        QVERIFY(sramBox);
        QCOMPARE(sramBox->text(), QStringLiteral("peak SRAM (TinyEngine)"));

        for (QCheckBox* b : panel.findChildren<QCheckBox*>())
            if (b->text().startsWith(QStringLiteral("Live"))) b->setChecked(false);   // one recorded run, no live re-run
        runtime->setCurrentIndex(runtime->findData(int(SramRuntime::Tflm)));   // as a user picks it
        QCOMPARE(panel.statusText(), QStringLiteral("Limits changed: press Run."));   // an edit like any limit's
        QCOMPARE(form->sramRuntime(), SramRuntime::Tflm);
        QCOMPARE(sramBox->text(), QStringLiteral("TFLM arena"));
        QVERIFY2(sramBox->toolTip().contains(QStringLiteral("arena_used_bytes()")), qPrintable(sramBox->toolTip()));
        const Constraints c = panel.constraints();
        QVERIFY(c.find("KBPeakMemory") == nullptr);
        QVERIFY(c.find(kTflmArenaKey) != nullptr);
        QCOMPARE(c.find(kTflmArenaKey)->max, 250.0);
        QCOMPARE(c.describe(), std::string("MACs ≤ 60 M, TFLM arena ≤ 250 KB"));

        QSignalSpy finished(&panel, &ui::SearchPanel::searchFinished);
        panel.startSearch(true);
        QVERIFY(finished.wait(120000));
        QCOMPARE(finished.takeFirst().front().toBool(), true);
        const SearchResult* r = panel.lastResult();
        QVERIFY(r && r->found);
        QCOMPARE(sramRuntimeOf(r->constraints), SramRuntime::Tflm);
        const SramFigure fig = sramFigure(state.space(), r->best.config, SramRuntime::Tflm);
        QVERIFY(fig.bytes <= 250 * 1024);
        QVERIFY(r->best_reports.contains("sram_figure"));
        QCOMPARE(r->best_reports["sram_figure"]["bytes"].get<std::int64_t>(), fig.bytes);
        bool shown = false;
        for (QLabel* l : panel.findChildren<QLabel*>())
            shown = shown || (l->text().contains(QStringLiteral("<br>TFLM arena (32-bit Cortex-M7, CMSIS-NN kernels, predicted): ")) &&
                              l->text().contains(QStringLiteral("<b>%1 KB</b> (%2 B = head ")
                                                     .arg(static_cast<double>(fig.bytes) / 1024.0, 0, 'f', 1)
                                                     .arg(QString::fromStdString(groupThousands(fig.bytes)))) &&
                              l->text().contains(QStringLiteral("the figure the SRAM limit (250 KB) bounds")));
        QVERIFY(shown);

        // A restart re-opens the run with its runtime.
        ui::SearchPanel reopened(&state, historyPath);
        reopened.reopen(0);
        QVERIFY2(reopened.statusText().startsWith(QStringLiteral("Re-opened")), qPrintable(reopened.statusText() + QStringLiteral(" rows %1").arg(reopened.historyRows())));
        QCOMPARE(reopened.findChild<ui::SearchLimitsForm*>()->sramRuntime(), SramRuntime::Tflm);
        QCOMPARE(reopened.constraints().describe(), r->constraints.describe());
        // The workspace's starting limits are TinyEngine's figure.
        panel.setLimit("KBPeakMemory", 200, true);
        QCOMPARE(form->sramRuntime(), SramRuntime::TinyEngine);
        QCOMPARE(panel.constraints().describe(), std::string("MACs ≤ 60 M, peak SRAM ≤ 200 KB"));
    }
};

QTEST_MAIN(TestDeployDevice)
#include "test_deploy_device.moc"
