// The Deploy dialog's "Run on an emulated Cortex-M7" end to end (slow tier: TFLM + CMSIS-NN built for
// the M7 when its cache is cold, TinyEngine's code generator and kernels, QEMU; a few minutes of CPU on
// two cores). The shipped supernet's min subnet: TFLM's outputs equal the workbench's and host TFLM's
// on 10 Fashion-MNIST test images, TinyEngine's refusal of the squeeze-and-excite MUL is its row, the
// bars hold the run's bytes (screenshots/deploy-dialog-device-min-subnet-1280x720.png); Cancel while
// the pipeline builds stops it and leaves nothing. MIT's mcunet-5fps: both engines run and match, TinyEngine beside TFLM;
// the screenshot screenshots/deploy-dialog-device-1280x720.png (the dialog on a 1280×720 offscreen
// screen) goes to the test's working folder. Skips with a message without ../shared's runtimes, a
// device tool, the shipped supernet or Fashion-MNIST.
#include "DeviceTestSupport.h"

#include "CapacityBar.h"
#include "DeployDialog.h"
#include "EventWait.h"
#include "TfliteDeviceView.h"

#include "data/ImageDataset.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <QApplication>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdlib>

using namespace tinyscope;

namespace {

QString whyNot()
{
    if (!test::haveShared() || !QFileInfo::exists(test::sharedDir() + QStringLiteral("/reference/runtimes/tflite-micro")))
        return QStringLiteral("../shared/reference/runtimes not found: the device run needs TFLM and TinyEngine");
    for (DeviceEngine e : {DeviceEngine::Tflm, DeviceEngine::TinyEngine})
        if (const std::string pkg = missingTfliteDevicePackage(e); !pkg.empty())
            return QStringLiteral("a device tool is missing: install the Debian package %1").arg(QString::fromStdString(pkg));
    if (fashionMnistDir().empty()) return QStringLiteral("dataset-fashion-mnist is not installed (the calibration and test images)");
    return QString();
}

void deploy(ui::DeployDialog& d, const QString& out)
{
    d.setFormat(DeployFormat::TFLite);
    d.setOutputFile(out);
    QSignalSpy done(&d, &ui::DeployDialog::deployed);
    d.deploy();
    QVERIFY(d.waitForIdle(600000));
    QVERIFY2(done.size() == 1 && done.first().first().toBool(), qPrintable(d.statusText()));
    QVERIFY(d.canRunOnDevice());
}

void run(ui::DeployDialog& d)
{
    QSignalSpy ended(&d, &ui::DeployDialog::deviceRunFinished);
    d.runOnDevice();
    QVERIFY(d.busy());
    QStringList stages;
    while (d.busy()) {
        const QString stage = d.progressText().section(QLatin1Char(':'), 0, 0);
        if (stages.isEmpty() || stages.back() != stage) stages << stage;
        QTest::qWait(50);
    }
    QCOMPARE(ended.size(), 1);
    QVERIFY2(stages.contains(QStringLiteral("TFLM + CMSIS-NN")), qPrintable(stages.join(QLatin1Char(','))));
}

// Each engine's bars hold its run's bytes against the dialog's board.
void barsHoldTheRunsBytes(const ui::TfliteDeviceView& v, const BoardProfile& board)
{
    using F = ui::TfliteDeviceView::Figure;
    for (const ui::TfliteEngineRun& run : v.runs()) {
        if (!run.result) continue;
        QCOMPARE(v.bar(run.engine, F::Arena)->used(), run.result->arena_bytes);
        QCOMPARE(v.bar(run.engine, F::Sram)->used(), run.result->sram_bytes);
        QCOMPARE(v.bar(run.engine, F::Flash)->used(), run.result->flash_bytes);
        QCOMPARE(v.bar(run.engine, F::Sram)->capacity(), board.sram_bytes);
        QCOMPARE(v.bar(run.engine, F::Flash)->capacity(), board.flash_bytes);
        QVERIFY(run.result->arena_bytes > 0 && run.result->sram_bytes > run.result->arena_bytes && run.result->flash_bytes > 0);
        QVERIFY(!run.result->instructions_per_inference.empty() && run.result->instructions_per_inference.front() > 0);
    }
}

}  // namespace

class SlowDeployDevice : public QObject {
    Q_OBJECT
public:
    // The offscreen screen is 800×600 unless configured: here a 1280×720 one, so the dialog fits the
    // screen the screenshot is about (as tinyscope-screenshots --fit does). Qt Test calls this
    // before it makes the application.
    static void initMain()
    {
        const char* platform = std::getenv("QT_QPA_PLATFORM");
        static QTemporaryDir config;
        if (!platform || QByteArray(platform) == "offscreen") {
            const QString path = config.path() + QStringLiteral("/screen.json");
            QFile f(path);
            if (f.open(QIODevice::WriteOnly)) {
                f.write("{\"screens\": [{\"name\": \"s\", \"x\": 0, \"y\": 0, \"width\": 1280, \"height\": 720, "
                        "\"logicalDpi\": 96, \"logicalBaseDpi\": 96, \"dpr\": 1}]}\n");
                f.close();
                qputenv("QT_QPA_PLATFORM", ("offscreen:configfile=" + path).toLocal8Bit());
            }
        }
    }

private Q_SLOTS:
    // A design-space subnet: TFLM + CMSIS-NN runs it; TinyEngine's generator refuses the SE gate.
    void theMinSubnetRunsOnTflmAndTinyEngineSaysWhyNot()
    {
        if (const QString why = whyNot(); !why.isEmpty()) QSKIP(qPrintable(why));
        if (shippedSupernetPath().empty()) QSKIP("the shipped supernet models/supernets/mcunet-fmnist.pth is absent");
        const DesignSpace s = presetSpace("mcunet-fmnist");
        const ModelSource m = ModelSource::subnet(s, ArchSampler(s).minConfig(*std::min_element(s.resolutions.begin(), s.resolutions.end())),
                                                  shippedSupernetPath());
        QTemporaryDir dir;
        ui::DeployDialog d(m);
        d.setBnImages(50);
        d.setCalibrationImages(20);
        d.show();
        deploy(d, dir.path() + QStringLiteral("/min.tflite"));
        if (QTest::currentTestFailed()) return;
        // Cancel once the device pipeline runs: the verdict says so, nothing of the pipeline is left,
        // and the dialog can run again.
        QTemporaryDir tmp;
        const QByteArray oldTmp = qgetenv("TMPDIR");
        qputenv("TMPDIR", tmp.path().toLocal8Bit());   // the pipeline's build folder goes there
        d.runOnDevice();
        QVERIFY(ui::processEventsUntil([&] { return d.progressText().contains(QStringLiteral("compile and link")) || !d.busy(); }, 120000));
        QVERIFY2(d.busy(), qPrintable(d.progressText()));
        d.cancel();
        QVERIFY(d.waitForIdle(60000));
        QCOMPARE(d.deviceView()->state(), ui::TfliteDeviceView::State::Cancelled);
        QCOMPARE(d.progressText(), QStringLiteral("cancelled"));
        qputenv("TMPDIR", oldTmp);
        QVERIFY(test::noProcessMentions(tmp.path()));   // the pipeline's processes are gone
        QVERIFY2(QDir(tmp.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).isEmpty(),
                 qPrintable(QDir(tmp.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden).join(QLatin1Char(','))));
        QVERIFY(d.canRunOnDevice());
        run(d);
        if (QTest::currentTestFailed()) return;
        const ui::TfliteDeviceView& v = *d.deviceView();
        QVERIFY2(v.state() == ui::TfliteDeviceView::State::Matches, qPrintable(v.verdictText()));
        QCOMPARE(v.verdictText(), QStringLiteral("The device matches the workbench: TFLM + CMSIS-NN gave the workbench's int8 outputs on all 10 "
                                                 "Fashion-MNIST test images."));
        QCOMPARE(v.engineText(DeviceEngine::Tflm), QStringLiteral("✓ outputs equal the workbench's (Int8Forward, TFLite arithmetic) on 10 images; "
                                                                  "TFLM built for the host gives the same"));
        QVERIFY2(v.engineText(DeviceEngine::TinyEngine).startsWith(QStringLiteral("not run: ")) &&
                     v.engineText(DeviceEngine::TinyEngine).contains(QStringLiteral("MUL")),
                 qPrintable(v.engineText(DeviceEngine::TinyEngine)));
        QVERIFY(v.barsShown(DeviceEngine::Tflm) && !v.barsShown(DeviceEngine::TinyEngine));
        QCOMPARE(d.progressText(), QStringLiteral("run on the device"));
        barsHoldTheRunsBytes(v, presetBoard("stm32f746"));
        d.resize(1280, 720);
        QCoreApplication::processEvents();
        QDir().mkpath(QStringLiteral("screenshots"));
        QVERIFY(d.grab().save(QStringLiteral("screenshots/deploy-dialog-device-min-subnet-1280x720.png")));
    }

    // MIT's mcunet-5fps: TinyEngine accepts it, so both engines run; the screenshot of the verdict.
    void mcunet5fpsRunsOnBothEnginesBesideEachOther()
    {
        if (const QString why = whyNot(); !why.isEmpty()) QSKIP(qPrintable(why));
        const ModelSource m = ModelSource::zooWithParams("mcunet-5fps", test::sharedPath("reference/tinyengine/full-int8-params.pkl"));
        QTemporaryDir dir;
        ui::DeployDialog d(m);
        d.setCalibrationImages(20);
        d.show();
        deploy(d, dir.path() + QStringLiteral("/mcunet-5fps.tflite"));
        if (QTest::currentTestFailed()) return;
        run(d);
        if (QTest::currentTestFailed()) return;
        const ui::TfliteDeviceView& v = *d.deviceView();
        QVERIFY2(v.state() == ui::TfliteDeviceView::State::Matches, qPrintable(v.verdictText()));
        QCOMPARE(v.runs().size(), std::size_t{2});
        QVERIFY2(v.verdictText().contains(QStringLiteral("TFLM + CMSIS-NN and TinyEngine gave the workbench's int8 outputs")), qPrintable(v.verdictText()));
        QVERIFY(v.barsShown(DeviceEngine::Tflm) && v.barsShown(DeviceEngine::TinyEngine));
        QVERIFY2(v.instructionsText(DeviceEngine::TinyEngine).contains(QStringLiteral("× TFLM's")), qPrintable(v.instructionsText(DeviceEngine::TinyEngine)));
        barsHoldTheRunsBytes(v, presetBoard("stm32f746"));
        // The dialog as large as a 1280×720 screen lets it be (its title bar above), the verdict first.
        d.resize(1280, 720);
        QCoreApplication::processEvents();
        QDir().mkpath(QStringLiteral("screenshots"));
        QVERIFY(d.grab().save(QStringLiteral("screenshots/deploy-dialog-device-1280x720.png")));
        QVERIFY(d.width() <= 1280 && d.height() <= 720);
    }
};

QTEST_MAIN(SlowDeployDevice)
#include "slow_deploy_device.moc"
