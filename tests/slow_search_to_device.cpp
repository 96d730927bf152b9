// The loop for the project's own search results (issue 46), end to end through the CLI as a user
// runs it: search the TinyEngine-trainable space under a training budget (`--train-on tinyengine`,
// stm32f746, the scheme chosen per subnet) → `export --strict --board stm32f746` of the winner with
// its scheme and the shipped supernet's weights → `device-run --steps 3` on the emulated M7
// (inference and every trained parameter equal the workbench) → one fine-tuning epoch of the same
// subnet and scheme (the memory the search reported, to the byte; top-1 rises from the new head).
// Slow tier: TinyEngine's generator, ~100 C files for the M7, QEMU, a fine-tuning epoch.
#include "DeviceTestSupport.h"

#include "io/JsonFile.h"

#include <QFile>
#include <QTemporaryDir>

using namespace tinyscope;

class SlowSearchToDevice : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aSearchedSubnetExportsRunsOnTheM7AndFineTunes()
    {
        if (const QString why = test::deviceUnavailable(); !why.isEmpty()) QSKIP(qPrintable(why));
        const QString supernet = test::sourceDir() + QStringLiteral("/models/supernets/mcunet-fmnist-te.pth");
        const QString predictor = test::sourceDir() + QStringLiteral("/models/predictors/mcunet-fmnist-te.bin");
        QVERIFY2(QFile::exists(supernet) && QFile::exists(predictor), "the shipped mcunet-fmnist-te supernet and predictor");
        QTemporaryDir dir;
        const QString space = QStringLiteral("mcunet-fmnist-te");

        // 1. The search: every candidate trainable on the F746 within 64 KB.
        const test::CliRun s = test::runTinyscope({QStringLiteral("search"), QStringLiteral("--space"), space, QStringLiteral("--macs"),
                                                   QStringLiteral("30"), QStringLiteral("--train-on"), QStringLiteral("tinyengine"),
                                                   QStringLiteral("--train-budget"), QStringLiteral("64"), QStringLiteral("--board"),
                                                   QStringLiteral("stm32f746"), QStringLiteral("--json"), QStringLiteral("--no-evaluated")});
        QVERIFY2(s.code == 0, s.err.c_str());
        const Json result = Json::parse(s.out);
        const Json& plan = result["best"]["tinyengine_training"];
        QCOMPARE(plan["trainable"].get<bool>(), true);
        QVERIFY(plan["total_bytes"].get<long long>() <= 64LL * 1024);
        const std::string scheme = plan["scheme"].get<std::string>();
        const QString config = dir.path() + QStringLiteral("/winner.json");
        writeJsonFile(config.toStdString(), result["best"]["config"]);

        // 2. The export the search promised: --strict against the board passes.
        const QString exportDir = dir.path() + QStringLiteral("/export");
        const QStringList model = {QStringLiteral("--supernet"), supernet, QStringLiteral("--space"), space, QStringLiteral("--config"), config,
                                   QStringLiteral("--scheme"), QString::fromStdString(scheme)};
        const test::CliRun e = test::runTinyscope(QStringList{QStringLiteral("export")} + model +
                                                  QStringList{QStringLiteral("--board"), QStringLiteral("stm32f746"), QStringLiteral("--strict"),
                                                              QStringLiteral("--out"), exportDir, QStringLiteral("--json")});
        QVERIFY2(e.code == 0, e.err.c_str());
        const Json ex = Json::parse(e.out);
        QCOMPARE(ex["errors"].get<int>(), 0);
        QCOMPARE(ex["board_use"]["sram_bytes"].get<long long>(), plan["ledger_peak_bytes"].get<long long>());

        // 3. Three training steps on the emulated M7: inference and every parameter as the workbench computes them.
        const test::CliRun d = test::runTinyscope({QStringLiteral("device-run"), QStringLiteral("--export"), exportDir, QStringLiteral("--steps"),
                                                   QStringLiteral("3"), QStringLiteral("--board"), QStringLiteral("stm32f746"), QStringLiteral("--json")},
                                                  850000);
        QVERIFY2(d.code == 0, d.err.c_str());
        const Json dj = Json::parse(d.out);
        QCOMPARE(dj["inference_match"].get<bool>(), true);
        QCOMPARE(dj["training_match"].get<bool>(), true);
        QCOMPARE(dj["steps"].get<int>(), 3);
        QCOMPARE(dj["board_fits"].get<bool>(), true);
        QCOMPARE(dj["ledger_sram_bytes"].get<long long>(), plan["ledger_peak_bytes"].get<long long>());
        // The margin the search allowed for holds on the linked binary.
        QVERIFY(dj["sram_bytes"].get<long long>() <= plan["device_sram_estimate_bytes"].get<long long>());

        // 4. One fine-tuning epoch of the same subnet and scheme (2,000 training, 1,000 test images).
        const test::CliRun f = test::runTinyscope(QStringList{QStringLiteral("finetune")} + model +
                                                      QStringList{QStringLiteral("--data"), QStringLiteral("fashion-mnist"), QStringLiteral("--epochs"),
                                                                  QStringLiteral("1"), QStringLiteral("--train-images"), QStringLiteral("2000"),
                                                                  QStringLiteral("--test-images"), QStringLiteral("1000"), QStringLiteral("--json")},
                                                  850000);
        QVERIFY2(f.code == 0, f.err.c_str());
        const Json fj = Json::parse(f.out);
        QCOMPARE(fj["extra_bytes"].get<long long>(), plan["extra_bytes"].get<long long>());
        QCOMPARE(fj["inference_peak_bytes"].get<long long>(), plan["inference_peak_bytes"].get<long long>());
        QCOMPARE(fj["epochs"].size(), std::size_t(1));
        QVERIFY2(fj["final_top1"].get<double>() > fj["initial_top1"].get<double>() + 5,
                 qPrintable(QStringLiteral("%1 -> %2").arg(fj["initial_top1"].get<double>()).arg(fj["final_top1"].get<double>())));
    }
};

QTEST_GUILESS_MAIN(SlowSearchToDevice)
#include "slow_search_to_device.moc"
