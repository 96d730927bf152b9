// `tinyscope device-run --tflite` end to end (slow tier: the TFLM runtime is compiled for Cortex-M7 the
// first time, ~5 CPU-minutes, then cached; each model is linked and emulated in ~10 s). Issue 48's
// "done when": the shipped supernet's smallest and largest subnets, a subnet `tinyscope search` finds
// (also channel-pruned by `tinyscope prune --channels 0.3 --out`, issue 50), and mcunet-5fps with MIT's int8 params run on the emulated M7 under TFLM + CMSIS-NN with int8 outputs
// equal to Int8Forward (TFLite arithmetic) and to TFLM on the host on 20 Fashion-MNIST test images
// each; TinyEngine's generated inference code runs mcunet-5fps equal to Int8Forward in its arithmetic
// and refuses a squeeze-and-excite subnet in one line. Skips with a message when ../shared/reference/
// runtimes or a Debian tool is missing.
#include "DeviceTestSupport.h"

#include "io/JsonFile.h"

#include <QTemporaryDir>

using namespace tinyscope;

namespace {

QString supernet() { return test::sourceDir() + QStringLiteral("/models/supernets/mcunet-fmnist.pth"); }

// `tinyscope deploy … --format tflite --out DIR/NAME.tflite`; "" after a failure (recorded).
QString deployed(const QString& dir, const QString& name, const QStringList& source)
{
    const QString out = dir + QLatin1Char('/') + name + QStringLiteral(".tflite");
    const test::CliRun d = test::runTinyscope(QStringList{QStringLiteral("deploy")} + source +
                                              QStringList{QStringLiteral("--format"), QStringLiteral("tflite"), QStringLiteral("--out"), out});
    if (d.code != 0) {
        QTest::qFail((name.toStdString() + ": " + d.err).c_str(), __FILE__, __LINE__);
        return {};
    }
    return out;
}

QStringList subnet(const QString& config)
{
    return {QStringLiteral("--supernet"), supernet(), QStringLiteral("--config"), config, QStringLiteral("--bn-images"), QStringLiteral("200"),
            QStringLiteral("--calib-images"), QStringLiteral("50")};
}

Json deviceRun(const QString& model, const QStringList& extra)
{
    const test::CliRun r = test::runTinyscope(QStringList{QStringLiteral("device-run"), QStringLiteral("--tflite"), model, QStringLiteral("--json")} + extra, 1700000);
    if (r.code != 0) {
        QTest::qFail((model.toStdString() + ": exit " + std::to_string(r.code) + ": " + r.err).c_str(), __FILE__, __LINE__);
        return nullptr;
    }
    return Json::parse(r.out);
}

}  // namespace

class SlowDeviceTflite : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void foundSubnetsRunOnTheEmulatedM7UnderTflmAsTheWorkbenchComputes()
    {
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        // A subnet the search finds (issue 48's example: 10 M MACs, 150 KB).
        const QString winner = dir.path() + QStringLiteral("/winner.json");
        const test::CliRun s = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--macs"), QStringLiteral("10"), QStringLiteral("--sram"),
                                                   QStringLiteral("150"), QStringLiteral("--seed"), QStringLiteral("0"), QStringLiteral("--json")});
        QVERIFY2(s.code == 0, s.err.c_str());
        writeJsonFile(winner.toStdString(), Json::parse(s.out)["best"]["config"]);
        // The winner channel-pruned at 0.3 and saved (issue 50): a narrower network of its own.
        const QString pruned = dir.path() + QStringLiteral("/pruned");
        const test::CliRun p = test::runTinyscope({QStringLiteral("prune"), QStringLiteral("--config"), winner, QStringLiteral("--images"), QStringLiteral("100"),
                                                   QStringLiteral("--calib-images"), QStringLiteral("200"), QStringLiteral("--channels"), QStringLiteral("0.3"),
                                                   QStringLiteral("--sort"), QStringLiteral("--latency-runs"), QStringLiteral("3"), QStringLiteral("--out"), pruned});
        QVERIFY2(p.code == 0, p.err.c_str());
        const QList<std::pair<QString, QStringList>> models = {
            {QStringLiteral("min"), subnet(QStringLiteral("min"))},
            {QStringLiteral("max"), subnet(QStringLiteral("max"))},
            {QStringLiteral("searched"), subnet(winner)},
            {QStringLiteral("searched-pruned"), {QStringLiteral("--subnet"), pruned, QStringLiteral("--bn-images"), QStringLiteral("200"), QStringLiteral("--calib-images"), QStringLiteral("50")}},
            {QStringLiteral("mcunet-5fps"), {QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                             QString::fromStdString(test::sharedPath("reference/tinyengine/full-int8-params.pkl"))}},
        };
        for (const auto& [name, source] : models) {
            const QString model = deployed(dir.path(), name, source);
            if (model.isEmpty()) return;
            const Json j = deviceRun(model, {QStringLiteral("--images"), QStringLiteral("20")});
            if (j.is_null()) return;
            const std::string what = name.toStdString() + ": " + j.dump().substr(0, 400);
            QCOMPARE(j["engine"].get<std::string>(), std::string("tflm"));
            QVERIFY2(j["inference_match"].get<bool>(), what.c_str());
            QVERIFY(j["first_difference"].is_null());
            QCOMPARE(j["images"].get<int>(), 20);
            QCOMPARE(j["device_outputs"].size(), std::size_t(20));
            QCOMPARE(j["device_outputs"], j["workbench_outputs"]);
            QVERIFY2(j["host_checked"].get<bool>(), what.c_str());
            QVERIFY2(j["host_match"].get<bool>(), what.c_str());
            // The figures come from the binary and the run and add up as the docs say.
            const long long arena = j["arena_bytes"].get<long long>();
            QVERIFY(arena > 0);
            // The arena deploy/TflmArena predicts from the network alone (what search --runtime tflm bounds) is the device's.
            QCOMPARE(j["predicted_arena_bytes"].get<long long>(), arena);
            QCOMPARE(j["sram_bytes"].get<long long>(), j["static_sram_bytes"].get<long long>() + arena + j["stack_bytes"].get<long long>());
            QCOMPARE(j["sections"]["model"].get<long long>(), (QFileInfo(model).size() + 3) / 4 * 4 + 4);   // the file and its length word, counted as flash
            QVERIFY(j["flash_bytes"].get<long long>() > QFileInfo(model).size());
            QVERIFY(j["instructions_per_inference"].get<long long>() > 0);
            QCOMPARE(j["instructions_per_inference_each"].size(), std::size_t(20));
            QCOMPARE(j["board_fits"].get<bool>(),
                     j["sram_bytes"].get<long long>() <= j["board_sram_bytes"].get<long long>() && j["flash_bytes"].get<long long>() <= j["board_flash_bytes"].get<long long>());
            if (name == QStringLiteral("mcunet-5fps")) {
                // 32-bit records and CMSIS-NN's scratch: smaller than the host's 331,888 B, still over the F746's 320 KB with the stack.
                QCOMPARE(arena, 327412LL);
                QCOMPARE(j["host_arena_bytes"].get<long long>(), 331888LL);
                QCOMPARE(j["board_fits"].get<bool>(), false);
            }
        }
    }

    // search --runtime tflm: the SRAM limit bounds TFLM's arena on the M7, predicted from the network
    // alone; each winner's predicted arena is the one the device measures, and a winner searched under
    // the board's limit fits the board on the device (device-run --board exits 0 only then).
    void tflmRuntimeWinnersFitTheBoardOnTheDevice()
    {
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        // 300 KB of arena leaves the F746's 320 KB room for the program's static data and stack; 600 KB of
        // weights (--flash) leaves its 1 MB of flash room for TFLM's code (~200 KB) and the file's tables.
        const QList<std::pair<QString, QString>> limits = {{QStringLiteral("10"), QStringLiteral("120")}, {QStringLiteral("30"), QStringLiteral("300")}};
        int k = 0;
        for (const auto& [macs, sram] : limits) {
            const test::CliRun s = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--macs"), macs, QStringLiteral("--sram"), sram,
                                                       QStringLiteral("--runtime"), QStringLiteral("tflm"), QStringLiteral("--flash"), QStringLiteral("600"),
                                                       QStringLiteral("--seed"), QStringLiteral("1"),
                                                       QStringLiteral("--json")});
            QVERIFY2(s.code == 0, s.err.c_str());
            const Json result = Json::parse(s.out);
            QCOMPARE(result["sram_runtime"].get<std::string>(), std::string("tflm"));
            const long long predicted = result["best"]["sram_figure"]["bytes"].get<long long>();
            QVERIFY(predicted <= sram.toLongLong() * 1024);   // KB of 1,024 B, as KBPeakMemory
            const QString config = dir.path() + QStringLiteral("/winner%1.json").arg(k++);
            writeJsonFile(config.toStdString(), result["best"]["config"]);
            const QString model = deployed(dir.path(), QFileInfo(config).baseName(), subnet(config));
            if (model.isEmpty()) return;
            const Json j = deviceRun(model, {QStringLiteral("--images"), QStringLiteral("5"), QStringLiteral("--board"), QStringLiteral("stm32f746")});
            if (j.is_null()) return;
            QVERIFY(j["inference_match"].get<bool>());
            QCOMPARE(j["arena_bytes"].get<long long>(), predicted);
            QCOMPARE(j["board_fits"].get<bool>(), true);
        }
    }

    void tinyEngineRunsMcunetAndRefusesSqueezeExcite()
    {
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        const QString mcunet = deployed(dir.path(), QStringLiteral("mcunet-5fps"),
                                        {QStringLiteral("--model"), QStringLiteral("mcunet-5fps"), QStringLiteral("--params"),
                                         QString::fromStdString(test::sharedPath("reference/tinyengine/full-int8-params.pkl"))});
        if (mcunet.isEmpty()) return;
        const Json j = deviceRun(mcunet, {QStringLiteral("--engine"), QStringLiteral("tinyengine"), QStringLiteral("--images"), QStringLiteral("20")});
        if (j.is_null()) return;
        QCOMPARE(j["engine"].get<std::string>(), std::string("tinyengine"));
        QCOMPARE(j["arithmetic"].get<std::string>(), std::string("tinyengine"));
        QVERIFY2(j["inference_match"].get<bool>(), j.dump().substr(0, 400).c_str());
        QCOMPARE(j["device_outputs"], j["workbench_outputs"]);
        QCOMPARE(j["host_checked"].get<bool>(), false);
        // TinyEngine's buffer is genModel.h's PEAK_MEM: the scheduled 163,840 B arena + im2col + kernel buffer.
        QCOMPARE(j["arena_bytes"].get<long long>(), 173416LL);
        QCOMPARE(j["board_fits"].get<bool>(), true);

        const QString se = deployed(dir.path(), QStringLiteral("min"), subnet(QStringLiteral("min")));
        if (se.isEmpty()) return;
        const test::CliRun r = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--tflite"), se, QStringLiteral("--engine"),
                                                   QStringLiteral("tinyengine"), QStringLiteral("--images"), QStringLiteral("2")}, 600000);
        QCOMPARE(r.code, 2);
        QCOMPARE(test::lineCount(r.err), 1);
        QVERIFY2(r.err.find("TinyEngine's code generator refuses the model: Unsupported MUL") != std::string::npos, r.err.c_str());
    }
};

QTEST_MAIN(SlowDeviceTflite)
#include "slow_device_tflite.moc"
