// The Deploy dialog (issue 18) driven offscreen on the shipped demo supernet's min subnet: an int8
// TFLite deploy off the GUI thread writes the file and shows the three-engine memory table as
// compareDeployMemory gives it (our peak SRAM = the cost model's figure, exactly; TFLM's
// arena_used_bytes above it; TinyEngine's generator refusing the squeeze-and-excite MUL) with each
// total against the board; an ONNX deploy shows the summary only; Cancel leaves no file and the
// dialog usable; an unwritable output folder is one line; the Design-space and Search panels open
// it on the subnet mapped onto the supernet's space. Screenshots go to screenshots/ in the test's
// working folder; calibration data that is not there is one line; a VWW subnet (../shared's checkpoint)
// starts without calibration data, is refused with the CLI's rule in the dialog's words, and deploys with
// BN images 0; the evaluator keeps the checkpoint's statistics in a workspace without calibration images
// (issue 47). Skips with a message without the shipped supernet or Debian's Fashion-MNIST
// (the calibration images), and the engine checks without ../shared's runtimes.
#include "TestSupport.h"

#include "AppState.h"
#include "CapacityBar.h"
#include "DeployDialog.h"
#include "DesignSpacePanel.h"
#include "EvaluationBox.h"
#include "EvaluationOptions.h"
#include "EventWait.h"
#include "SearchPanel.h"
#include "cost/CostModel.h"
#include "nn/predictor/AccuracyPredictor.h"
#include "data/ImageDataset.h"
#include "deploy/TinyEngineTfliteCodegen.h"
#include "io/Text.h"
#include "nn/accuracy/EvaluationJob.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"
#include "workspace/Workspace.h"
#include "space/SpaceTransfer.h"

#include <QApplication>
#include <QSignalSpy>
#include <QTimer>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextDocumentFragment>

#include <algorithm>

using namespace tinyscope;

namespace {

#define REQUIRE_SUPERNET_AND_DATA()                                                                                           \
    do {                                                                                                                      \
        if (shippedSupernetPath().empty()) QSKIP("the shipped supernet models/supernets/mcunet-fmnist.pth is absent");       \
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed (the calibration images)");             \
    } while (false)

SubnetConfig minConfig()
{
    const DesignSpace s = presetSpace("mcunet-fmnist");
    return ArchSampler(s).minConfig(*std::min_element(s.resolutions.begin(), s.resolutions.end()));
}

ModelSource minSubnet() { return ModelSource::subnet(presetSpace("mcunet-fmnist"), minConfig(), shippedSupernetPath()); }

void saveScreenshot(QWidget& w, const char* name)
{
    QDir().mkpath(QStringLiteral("screenshots"));
    QCoreApplication::processEvents();
    QVERIFY(w.grab().save(QStringLiteral("screenshots/") + QLatin1String(name)));
}

QString cell(const QTableWidget* t, int row, int column) { return t->item(row, column) ? t->item(row, column)->text() : QString(); }

int rowOf(const QTableWidget* t, const QString& engine, const QString& figureStart)
{
    for (int r = 0; r < t->rowCount(); ++r)
        if (cell(t, r, 0) == engine && cell(t, r, 1).startsWith(figureStart)) return r;
    return -1;
}

std::int64_t bytesIn(const QString& text) { return QString(text).remove(QLatin1Char(',')).toLongLong(); }

bool enginesHere()
{
    return test::haveShared() && tflmRunMissing().empty() && !tinyEngineRoot().empty() && missingTinyEngineTflitePackage().empty();
}

}  // namespace

class TestDeployDialog : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }   // the panels' settings stay out of the user's

    void tfliteDeployShowsTheThreeEngines()
    {
        REQUIRE_SUPERNET_AND_DATA();
        QTemporaryDir dir;
        ui::DeployDialog d(minSubnet());
        QCOMPARE(d.boardName(), QStringLiteral("stm32f746"));   // the default board
        QVERIFY(d.outputFile().endsWith(QStringLiteral("/tinyscope-deploy/mcunet-fmnist-subnet.tflite")));
        const QString out = dir.path() + QStringLiteral("/min.tflite");
        d.setOutputFile(out);
        d.setBnImages(50);
        d.setCalibrationImages(20);
        d.show();
        QSignalSpy done(&d, &ui::DeployDialog::deployed);
        d.deploy();
        QVERIFY(d.busy());   // off the GUI thread: the call returned while the job runs
        QVERIFY(d.waitForIdle(180000));
        QCOMPARE(done.size(), 1);
        QVERIFY2(done.first().first().toBool(), qPrintable(d.statusText()));
        QVERIFY(d.result().has_value());
        QVERIFY(QFileInfo::exists(out));
        QCOMPARE(static_cast<std::uint64_t>(QFileInfo(out).size()), d.result()->bytes);
        QCOMPARE(d.progressText(), QStringLiteral("written"));
        const QString summary = d.summaryText();
        QVERIFY2(summary.contains(out) && summary.contains(QStringLiteral("CONV_2D")) && summary.contains(QStringLiteral("scale")) &&
                     summary.contains(QStringLiteral("zero point %1").arg(*d.result()->input.zero_point)),
                 qPrintable(summary));

        // The table has the rows compareDeployMemory gave, in its order.
        QVERIFY(d.memory().has_value());
        QVERIFY(d.memoryShown());
        const auto rows = d.memory()->rows();
        const QTableWidget* t = d.memoryTable();
        QCOMPARE(t->rowCount(), static_cast<int>(rows.size()));
        QCOMPARE(t->horizontalHeaderItem(3)->text(), QStringLiteral("Fits stm32f746"));
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const int r = static_cast<int>(i);
            QCOMPARE(cell(t, r, 0), QString::fromStdString(rows[i].engine));
            QCOMPARE(cell(t, r, 1), QString::fromStdString(rows[i].figure));
            QCOMPARE(cell(t, r, 2), rows[i].bytes ? QString::fromStdString(groupThousands(*rows[i].bytes)) : QStringLiteral("—"));
            QCOMPARE(cell(t, r, 4), QString::fromStdString(rows[i].why));
            QVERIFY(t->item(r, 4)->toolTip().contains(QString::fromStdString(rows[i].why).toHtmlEscaped()));
        }

        // Ours: the cost model's peak SRAM of this subnet, exactly, and it fits the F746's 320 KB.
        const CostSummary cost = CostModel(presetSpace("mcunet-fmnist")).summary(minConfig());
        const int ours = rowOf(t, QStringLiteral("Tinyscope"), QStringLiteral("peak SRAM"));
        QVERIFY(ours >= 0);
        QCOMPARE(bytesIn(cell(t, ours, 2)), cost.peak_activation_bytes);
        QVERIFY2(cell(t, ours, 3).startsWith(QStringLiteral("fits (")), qPrintable(cell(t, ours, 3)));
        QCOMPARE(d.sramBar(QStringLiteral("Tinyscope"))->used(), cost.peak_activation_bytes);
        QCOMPARE(d.sramBar(QStringLiteral("Tinyscope"))->capacity(), std::int64_t(327680));
        QCOMPARE(d.flashBar()->used(), cost.flash_bytes);
        QCOMPARE(d.flashBar()->capacity(), std::int64_t(1048576));
        // Issue 47: the file's own size beside the weights' figure (it adds scales, zero points, the graph).
        QCOMPARE(d.fileFlashBar()->used(), static_cast<std::int64_t>(QFileInfo(out).size()));
        QCOMPARE(d.memory()->file_bytes, static_cast<std::int64_t>(QFileInfo(out).size()));
        QVERIFY(d.fileFlashBar()->used() > cost.flash_bytes);
        QCOMPARE(d.fileFlashBar()->capacity(), std::int64_t(1048576));
        saveScreenshot(d, "deploy-dialog-tflite.png");

        if (!enginesHere()) {
            // Without the runtimes each engine is a row saying why, not an error.
            QVERIFY(cell(t, rowOf(t, QStringLiteral("TFLM"), QStringLiteral("arena_used_bytes")), 4).startsWith(QStringLiteral("not run")) ||
                    cell(t, rowOf(t, QStringLiteral("TinyEngine"), QString()), 4).startsWith(QStringLiteral("not run")));
            QSKIP("TFLM (tflm_run) or TinyEngine's TFLite code generator is not here (../shared/reference/runtimes, python3-flatbuffers)");
        }
        // TFLM: arena_used_bytes above ours (PAD copies, persistent records), checked against the board.
        const int tflm = rowOf(t, QStringLiteral("TFLM"), QStringLiteral("arena_used_bytes"));
        QVERIFY(tflm >= 0);
        QVERIFY(bytesIn(cell(t, tflm, 2)) > cost.peak_activation_bytes);
        QCOMPARE(bytesIn(cell(t, tflm, 2)), d.memory()->tflm->arena_used_bytes);
        QVERIFY2(cell(t, tflm, 3).startsWith(QStringLiteral("fits (")), qPrintable(cell(t, tflm, 3)));
        QCOMPARE(d.sramBar(QStringLiteral("TFLM"))->used(), d.memory()->tflm->arena_used_bytes);
        QVERIFY(rowOf(t, QStringLiteral("TFLM"), QStringLiteral("head")) >= 0 && rowOf(t, QStringLiteral("TFLM"), QStringLiteral("tail")) >= 0);
        // TinyEngine's TFLite generator refuses the squeeze-and-excite blocks' MUL: a row without bytes, no bar.
        const int te = rowOf(t, QStringLiteral("TinyEngine"), QString());
        QVERIFY(te >= 0);
        QCOMPARE(cell(t, te, 2), QStringLiteral("—"));
        QVERIFY2(cell(t, te, 4).contains(QStringLiteral("refuses")) && cell(t, te, 4).contains(QStringLiteral("MUL")), qPrintable(cell(t, te, 4)));
        QVERIFY(d.sramBar(QStringLiteral("TinyEngine")) == nullptr);

        // Another board: the same figures against its SRAM, no new deploy.
        d.setBoard(QStringLiteral("stm32f411"));
        QVERIFY(!d.busy());
        QCOMPARE(t->horizontalHeaderItem(3)->text(), QStringLiteral("Fits stm32f411"));
        QCOMPARE(d.sramBar(QStringLiteral("TFLM"))->capacity(), std::int64_t(131072));
        QCOMPARE(d.flashBar()->capacity(), std::int64_t(524288));
    }

    void onnxDeployShowsNoMemoryTable()
    {
        REQUIRE_SUPERNET_AND_DATA();
        QTemporaryDir dir;
        ui::DeployDialog d(minSubnet());
        d.setOutputFile(dir.path() + QStringLiteral("/new/min.tflite"));   // a folder that does not exist yet is made
        d.setFormat(DeployFormat::Onnx);
        QCOMPARE(d.outputFile(), dir.path() + QStringLiteral("/new/min.onnx"));   // the extension follows the format
        d.setBnImages(50);
        QCOMPARE(d.calibrationData(), QStringLiteral("fashion-mnist:holdout"));   // the default: never the test split
        // Calibration data that is not there: one line naming it, no file.
        const QString missing = dir.path() + QStringLiteral("/no-such-images");
        d.setCalibrationData(missing);
        d.deploy();
        QVERIFY(d.waitForIdle(120000));
        QVERIFY(!d.result().has_value());
        QVERIFY2(d.statusText().contains(missing) && !d.statusText().contains(QLatin1Char('\n')), qPrintable(d.statusText()));
        QVERIFY(!QFileInfo::exists(dir.path() + QStringLiteral("/new/min.onnx")));
        d.setCalibrationData(QStringLiteral("fashion-mnist:holdout"));
        d.deploy();
        QVERIFY(d.waitForIdle(120000));
        QVERIFY2(d.result().has_value(), qPrintable(d.statusText()));
        QVERIFY(QFileInfo::exists(dir.path() + QStringLiteral("/new/min.onnx")));
        QCOMPARE(d.result()->format, DeployFormat::Onnx);
        QVERIFY(!d.memory().has_value());
        QVERIFY(!d.memoryShown());
        QVERIFY2(d.summaryText().contains(QStringLiteral("memory table is for the int8 TFLite file")), qPrintable(d.summaryText()));
        QVERIFY(d.summaryText().contains(QStringLiteral("float32")));
    }

    void cancelLeavesNoFileAndTheDialogUsable()
    {
        REQUIRE_SUPERNET_AND_DATA();
        QTemporaryDir dir;
        ui::DeployDialog d(minSubnet());
        const QString out = dir.path() + QStringLiteral("/min.tflite");
        d.setOutputFile(out);
        d.setBnImages(5000);   // long enough to be cancelled in the middle of BN re-calibration
        QSignalSpy done(&d, &ui::DeployDialog::deployed);
        d.deploy();
        QVERIFY(ui::processEventsUntil([&] { return d.progressText().startsWith(QStringLiteral("calibrating BN ")) || !d.busy(); }, 120000));
        QVERIFY2(d.busy(), "the job ended before it could be cancelled");
        d.cancel();
        QVERIFY(d.waitForIdle(120000));
        QCOMPARE(done.size(), 1);
        QCOMPARE(done.first().first().toBool(), false);
        QCOMPARE(d.progressText(), QStringLiteral("cancelled"));
        QVERIFY2(d.statusText().contains(QStringLiteral("nothing was written")), qPrintable(d.statusText()));
        QVERIFY(!d.result().has_value());
        QVERIFY(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot).isEmpty());   // no file, no temporary
        // Usable afterwards: the next deploy runs to the end.
        d.setFormat(DeployFormat::Onnx);
        d.setBnImages(20);
        d.deploy();
        QVERIFY(d.waitForIdle(120000));
        QVERIFY2(d.result().has_value(), qPrintable(d.statusText()));
        QVERIFY(QFileInfo::exists(dir.path() + QStringLiteral("/min.onnx")));
    }

    void unwritableOutputIsOneLine()
    {
        // The supernet is never read: the output is checked first.
        const ModelSource m = ModelSource::subnet(presetSpace("mcunet-fmnist"), minConfig(), "/nonexistent/supernet.pth");
        ui::DeployDialog d(m);
        for (const QString& out : {QStringLiteral("/proc/x.tflite"), QStringLiteral("/proc/no-such-folder/x.tflite")}) {
            d.setOutputFile(out);
            QSignalSpy done(&d, &ui::DeployDialog::deployed);
            d.deploy();
            QVERIFY(d.waitForIdle(10000));
            QCOMPARE(done.size(), 1);
            QCOMPARE(done.first().first().toBool(), false);
            const QString status = QTextDocumentFragment::fromHtml(d.statusText()).toPlainText();
            QVERIFY2(status.contains(out) && !status.contains(QLatin1Char('\n')), qPrintable(status));
            QVERIFY2(status.startsWith(QStringLiteral("Output file")), qPrintable(status));
            QVERIFY(!d.result().has_value());
            QVERIFY(!QFileInfo::exists(out));
        }
        // A missing supernet is the job's one-line error, not a crash.
        QTemporaryDir dir;
        d.setOutputFile(dir.path() + QStringLiteral("/x.tflite"));
        d.deploy();
        QVERIFY(d.waitForIdle(60000));
        QVERIFY(!d.result().has_value());
        QVERIFY2(d.statusText().contains(QStringLiteral("/nonexistent/supernet.pth")), qPrintable(d.statusText()));
        QCOMPARE(d.progressText(), QStringLiteral("failed"));
        QVERIFY(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot).isEmpty());
    }

    void vwwSubnetNeedsImagesOfItsTask()
    {
        // Issue 47: a subnet of a space without calibration images of its own (Lab 3's VWW) starts
        // with no calibration data, and deploying says why (the rule `tinyscope deploy` applies,
        // workspace/CalibrationData.h, in the dialog's words); BN images 0 deploys it with the
        // checkpoint's statistics.
        REQUIRE_SHARED();
        const ModelSource m = ModelSource::subnet(presetSpace("mcunet-vww"), ArchSampler(presetSpace("mcunet-vww")).minConfig(96),
                                                  test::sharedPath("reference/mcunet-vww/ofa_mcunet384_vww_seed0_perturbed.pth"));
        QTemporaryDir dir;
        ui::DeployDialog d(m);
        QCOMPARE(d.calibrationData(), QString());
        d.setFormat(DeployFormat::Onnx);
        const QString out = dir.path() + QStringLiteral("/vww.onnx");
        d.setOutputFile(out);
        d.deploy();
        QVERIFY(d.waitForIdle(60000));
        QVERIFY(!d.result().has_value());
        const QString status = QTextDocumentFragment::fromHtml(d.statusText()).toPlainText();
        QVERIFY2(status.contains(QStringLiteral("space mcunet-vww has no calibration images of its own")) &&
                     status.contains(QStringLiteral("with the Calibration data")) && status.contains(QStringLiteral("with BN images 0")) &&
                     !status.contains(QStringLiteral("--")),
                 qPrintable(status));
        QVERIFY(!QFileInfo::exists(out));
        d.show();
        saveScreenshot(d, "deploy-dialog-vww-refused.png");
        d.setBnImages(0);
        d.deploy();
        QVERIFY(d.waitForIdle(120000));
        QVERIFY2(d.result().has_value(), qPrintable(d.statusText()));
        QVERIFY(QFileInfo::exists(out));
        QCOMPARE(d.result()->batchnorm, std::string("the checkpoint's statistics"));
        QVERIFY2(d.summaryText().contains(QStringLiteral("BatchNorm: the checkpoint's statistics")), qPrintable(d.summaryText()));
    }

    void evaluatorKeepsTheStatisticsWithoutCalibrationImages()
    {
        // The evaluator re-calibrates on the workspace's own images; in Lab 3's VWW workspace there
        // are none, so its BN count is off and fixed, and comes back in the Fashion-MNIST one.
        ui::EvaluationOptions o;
        QCOMPARE(o.calibrationImages(), 1000);
        o.showWorkspace(shippedWorkspace("lab3-vww"));
        QCOMPARE(o.calibrationImages(), 0);
        o.setImageCounts(200, 300);   // kept for a workspace with images
        QCOMPARE(o.calibrationImages(), 0);
        o.showWorkspace(shippedWorkspace("fashion-mnist"));
        QCOMPARE(o.calibrationImages(), 300);
    }

    void designSpacePanelDeploysTheSubnetOnItsSupernet()
    {
        if (shippedSupernetPath().empty()) QSKIP("the shipped supernet models/supernets/mcunet-fmnist.pth is absent");
        ui::AppState state;   // the default workspace: the Fashion-MNIST space and its supernet
        ui::DesignSpacePanel panel(&state);
        panel.selectRandom();
        ui::DeployDialog* d = panel.evaluationBox()->openDeployDialog();
        QVERIFY(d);
        const SubnetSource* subnet = d->model().asSubnet();
        QVERIFY(subnet);
        QCOMPARE(subnet->checkpoint, shippedSupernetPath());
        QCOMPARE(subnet->space.name, std::string("mcunet-fmnist"));
        QVERIFY(subnet->config == state.subnet());   // the selected subnet itself: no transfer
        d->close();
        // Lab 3's VWW workspace has no supernet: Deploy is refused (with a message), not mapped silently.
        state.setWorkspace(shippedWorkspace("lab3-vww"));
        QTimer::singleShot(0, [] {
            if (QWidget* m = QApplication::activeModalWidget()) m->close();
        });
        QVERIFY(panel.evaluationBox()->openDeployDialog() == nullptr);
    }

    void searchPanelDeploysTheWinnerOnTheShippedSupernet()
    {
        // A search in Lab 3's VWW workspace (no supernet of its own): the winner's blocks on the
        // shipped Fashion-MNIST supernet, transferred as "Measure on the supernet" does and named so.
        if (shippedSupernetPath().empty()) QSKIP("the shipped supernet models/supernets/mcunet-fmnist.pth is absent");
        QTemporaryDir dir;
        ui::AppState state;
        state.setWorkspace(shippedWorkspace("lab3-vww"));
        ui::SearchPanel panel(&state, dir.path() + QStringLiteral("/history.json"));
        QVERIFY(panel.deployWinner() == nullptr);   // no winner yet
        panel.setOracle(std::make_shared<AccuracyPredictor>(AccuracyPredictor::load(shippedPredictorPath(state.space().name), state.space())));
        SearchOptions o = panel.options();
        o.seed = 1;
        panel.setOptions(o);
        QSignalSpy finished(&panel, &ui::SearchPanel::searchFinished);
        panel.startSearch(false);
        QVERIFY(finished.wait(60000));
        QVERIFY(panel.lastResult());
        ui::DeployDialog* d = panel.deployWinner();
        QVERIFY(d);
        const DesignSpace target = presetSpace("mcunet-fmnist");
        const SubnetSource* winner = d->model().asSubnet();
        QVERIFY(winner);
        QCOMPARE(winner->checkpoint, shippedSupernetPath());
        QCOMPARE(winner->space.name, std::string("mcunet-fmnist"));
        QVERIFY(winner->config == transferConfig(panel.lastResult()->best.config, state.space(), target));
        QVERIFY(winner->config.image_size != panel.lastResult()->best.config.image_size);   // VWW → Fashion-MNIST
        QVERIFY(d->outputFile().endsWith(QStringLiteral("/mcunet-fmnist-winner.tflite")));
        d->close();
    }
};

QTEST_MAIN(TestDeployDialog)
#include "test_deploy_dialog.moc"
