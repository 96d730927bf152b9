// `tinyscope device-run` end to end (slow tier: TinyEngine's code generator, ~100 C files compiled for
// Cortex-M7, QEMU): the workbench's own export of MIT's 49kb MCUNet-5fps case runs on the emulated
// board, its int8 logits equal Int8Forward in TinyEngine's arithmetic, and the instruction counts and
// sizes are the figures of docs/DEVICE_RUNNER.md. Skips with a message when ../shared/reference/runtimes
// or a Debian tool is missing.
#include "DeviceTestSupport.h"

#include "data/ImageDataset.h"
#include "device/DeviceRunner.h"
#include "io/JsonFile.h"

#include <QTemporaryDir>

#include <set>

using namespace tinyscope;

// Skips (with the reason) without ../shared, its runtimes or a device tool.
#define REQUIRE_DEVICE()                                                           \
    do {                                                                           \
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) QSKIP(qPrintable(why)); \
    } while (false)

class SlowDeviceRun : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void the49kbExportRunsOnTheEmulatedM7AsTheWorkbenchComputes()
    {
        REQUIRE_DEVICE();
        QTemporaryDir dir;
        const QString exportDir = dir.path() + QStringLiteral("/export"), keep = dir.path() + QStringLiteral("/build");
        const test::CliRun e = test::runTinyscope({QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                                   QString::fromStdString(test::sharedPath("reference/tinyengine/full-int8-params.pkl")),
                                                   QStringLiteral("--scheme"), QStringLiteral("mcunet-5fps/49kb"), QStringLiteral("--out"), exportDir});
        QVERIFY2(e.code == 0, e.err.c_str());
        const test::CliRun r = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--images"),
                                                   QStringLiteral("2"), QStringLiteral("--keep"), keep, QStringLiteral("--board"),
                                                   QStringLiteral("stm32f746"), QStringLiteral("--json")},
                                                  850000);
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        QCOMPARE(j["inference_match"].get<bool>(), true);
        QVERIFY(j["first_difference"].is_null());
        QCOMPARE(j["images"].get<int>(), 2);
        QCOMPARE(j["steps"].get<int>(), 1);
        // The LCG image's logits as the device gave them when the pipeline was a script (docs/DEVICE_RUNNER.md).
        QCOMPARE(j["device_logits"][0], Json::parse("[-26, -30, -28, -32, -18, -15, -26, -25, -29, -34]"));
        QCOMPARE(j["device_logits"], j["workbench_logits"]);
        // Deterministic under -icount: the docs' figures for the LCG image and one step on it with class 3.
        QCOMPARE(j["instructions_per_inference"].get<long long>(), 65035271LL);
        QCOMPARE(j["instructions_per_step"].get<long long>(), 106370604LL);
        QCOMPARE(j["sections"]["text"].get<long long>(), 116276LL);
        QCOMPARE(j["sections"]["rodata"].get<long long>(), 545940LL);
        QCOMPARE(j["sections"]["data"].get<long long>(), 36288LL);
        QCOMPARE(j["sections"]["bss"].get<long long>(), 196880LL);
        QCOMPARE(j["stack_high_water"]["training"].get<long long>(), 21936LL);
        QCOMPARE(j["sram_bytes"].get<long long>(), 255104LL);
        QCOMPARE(j["flash_bytes"].get<long long>(), 698504LL);
        // The workbench's figures beside them: the memory ledger's peak and the params pickle's bytes
        // (`tinyscope export --board` reports the same two).
        QCOMPARE(j["ledger_sram_bytes"].get<long long>(), 195944LL);
        QCOMPARE(j["params_flash_bytes"].get<long long>(), 513151LL);
        QCOMPARE(j["board"].get<std::string>(), std::string("stm32f746"));
        QCOMPARE(j["board_fits"].get<bool>(), true);   // 320 KB SRAM, 1 MB flash
        for (const char* k : {"codegen_s", "compile_s", "emulate_s"}) QVERIFY(j[k].get<double>() > 0);
        // The training step (LCG image, class 3): every parameter the device updated equals the
        // workbench's step (GraphInterpreter on the graph + TinyEngine's QAS update), integers exactly,
        // the int8 weights' wrap-around included.
        QCOMPARE(j["training_match"].get<bool>(), true);
        QCOMPARE(j["max_param_rel_error"].get<double>(), 0.0);
        QVERIFY(j["training_difference"].is_null());
        QCOMPARE(j["trained_params"].size(), std::size_t(25));
        long long changed = 0, wrapped = 0;
        for (const Json& p : j["trained_params"]) {
            QCOMPARE(p["mismatches"].get<long long>(), 0LL);
            QCOMPARE(p["at_boundary"].get<long long>(), 0LL);
            changed += p["changed_device"].get<long long>();
            wrapped += p.value("wrapped", 0LL);
        }
        QCOMPARE(changed, 8258LL);
        QCOMPARE(wrapped, 24LL);   // v9/v10/v11 conv_0 weights: 1 + 12 + 11
        QCOMPARE(j["classifier_bias"]["name"].get<std::string>(), std::string("v15_bias"));
        QCOMPARE(j["classifier_bias"]["delta_device"], Json::parse("[0, 0, 0, 7, 0, -5, 0, 0, 0, 0]"));
        QCOMPARE(j["classifier_bias"]["delta_predicted"], j["classifier_bias"]["delta_device"]);
        QCOMPARE(j["classifier_bias"]["match"].get<bool>(), true);
        // --keep leaves the build and the pipeline's own summary.
        QVERIFY(QFileInfo::exists(keep + QStringLiteral("/build/tinyengine_export.elf")));
        QVERIFY(QFileInfo::exists(keep + QStringLiteral("/summary.json")));

        // Against the graph's exact arithmetic the device differs from the first logit on (TinyEngine
        // truncates its requantisation; docs/DEVICE_RUNNER.md): exit 4, the place and both values.
        const test::CliRun x = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--images"),
                                                   QStringLiteral("1"), QStringLiteral("--arithmetic"), QStringLiteral("exact"), QStringLiteral("--json")},
                                                  850000);
        QCOMPARE(x.code, 4);
        QCOMPARE(test::lineCount(x.err), 1);
        QVERIFY2(x.err.find("image 0, logit 0: device -26, Int8Forward (exact) -17") != std::string::npos, x.err.c_str());
        const Json jx = Json::parse(x.out);
        QCOMPARE(jx["inference_match"].get<bool>(), false);
        QCOMPARE(jx["first_difference"], Json::parse(R"({"image": 0, "logit": 0, "device": -26, "workbench": -17})"));
        QCOMPARE(jx["workbench_logits"][0], Json::parse("[-17, -26, -26, -32, -16, -4, -18, -19, -22, -36]"));
    }

    // Twenty real Fashion-MNIST test images (resized to 128×128, quantized with the export's input
    // scale): the device's logits equal the workbench's on every one; three training steps on images
    // 0, 1, 2 with their labels, each equal to the workbench's step.
    void twentyFashionMnistImagesGiveTheWorkbenchsLogits()
    {
        REQUIRE_DEVICE();
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        QTemporaryDir dir;
        const QString exportDir = dir.path() + QStringLiteral("/export");
        const test::CliRun e = test::runTinyscope({QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                                   QString::fromStdString(test::sharedPath("reference/tinyengine/full-int8-params.pkl")),
                                                   QStringLiteral("--scheme"), QStringLiteral("mcunet-5fps/49kb"), QStringLiteral("--out"), exportDir});
        QVERIFY2(e.code == 0, e.err.c_str());
        const test::CliRun r = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--images"),
                                                   QStringLiteral("20"), QStringLiteral("--steps"), QStringLiteral("3"), QStringLiteral("--data"),
                                                   QStringLiteral("fashion-mnist:test"), QStringLiteral("--board"),
                                                   QStringLiteral("stm32f411"), QStringLiteral("--json")},
                                                  850000);
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        QCOMPARE(j["images"].get<int>(), 20);
        QCOMPARE(j["steps"].get<int>(), 3);
        QCOMPARE(j["instructions_per_step_each"].size(), std::size_t(3));
        QVERIFY2(j["training_match"].get<bool>(), j["training_difference"].dump().c_str());
        QCOMPARE(j["inference_match"].get<bool>(), true);
        QCOMPARE(j["device_logits"].size(), std::size_t(20));
        QCOMPARE(j["device_logits"], j["workbench_logits"]);
        // Not twenty copies of one image: the inputs reached the device.
        std::set<std::string> distinct;
        for (const Json& l : j["device_logits"]) distinct.insert(l.dump());
        QVERIFY(distinct.size() > 1);
        QCOMPARE(j["instructions_per_inference_each"].size(), std::size_t(20));
        // 255,104 B of SRAM measured do not fit the F411's 128 KB; the verdict is reported, the exit stays 0.
        QCOMPARE(j["board_fits"].get<bool>(), false);
        QCOMPARE(j["board_sram_bytes"].get<long long>(), 131072LL);
        // The first step trained on image 0 (an ankle boot, class 9).
        QCOMPARE(j["classifier_bias"]["delta_device"], Json::parse("[0, 0, 0, -6, 0, 0, 0, 0, 0, 5]"));
        QCOMPARE(j["classifier_bias"]["match"].get<bool>(), true);
    }

    void aLogitAtTheClampBoundKeepsItsGradient()
    {
        // proxyless-w0.3 with the 49kb scheme: the LCG image's logit 0 is exactly 127 before the
        // clamp, so the forward's mask keeps its gradient and the device moves that bias
        // (-850,881); a check that took every logit of 127 for a clamped one called this a
        // disagreement (exit 4).
        REQUIRE_DEVICE();
        QTemporaryDir dir;
        const QString exportDir = dir.path() + QStringLiteral("/export");
        const test::CliRun e = test::runTinyscope({QStringLiteral("export"), QStringLiteral("--model"), QStringLiteral("proxyless-w0.3"),
                                                   QStringLiteral("--scheme"), QStringLiteral("proxyless-w0.3/49kb"), QStringLiteral("--out"), exportDir});
        QVERIFY2(e.code == 0, e.err.c_str());
        const test::CliRun r = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--images"),
                                                   QStringLiteral("1"), QStringLiteral("--json")},
                                                  850000);
        QVERIFY2(r.code == 0, (r.err + r.out).c_str());
        const Json j = Json::parse(r.out);
        QCOMPARE(j["inference_match"].get<bool>(), true);
        QCOMPARE(j["device_logits"][0][0].get<int>(), 127);
        QCOMPARE(j["classifier_bias"]["match"].get<bool>(), true);
        QCOMPARE(j["classifier_bias"]["delta_device"][0].get<long long>(), -850881LL);
        QVERIFY2(j["training_match"].get<bool>(), j["training_difference"].dump().c_str());
        // No --board: against the STM32F746, TinyEngine's target (222,624 B of SRAM fit its 320 KB).
        QCOMPARE(j["board"].get<std::string>(), std::string("stm32f746"));
        QCOMPARE(j["board_fits"].get<bool>(), true);
    }
};

QTEST_GUILESS_MAIN(SlowDeviceRun)
#include "slow_device_run.moc"
