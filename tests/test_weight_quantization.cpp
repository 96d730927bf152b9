// tinyscope quantize --bits (issue 50, Lab 2's n-bit weights on a subnet): every k-means tensor
// holds at most 2^n values and every linear output channel at most 2^n, before and after
// quantization-aware training; sizes are the lab's (parameters × bits) and ours; the int8 path
// without --bits is untouched; bad input is one line with exit 2.
#include "TestSupport.h"

#include "cost/CostModel.h"
#include "io/DataPaths.h"
#include "io/JsonFile.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <algorithm>

using namespace tinyscope;

class TestWeightQuantization : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        if (shippedSupernetPath().empty()) QSKIP("the shipped supernet models/supernets/mcunet-fmnist.pth is absent");
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
    }

    void everyTensorHoldsAtMostTwoToTheBitsValues()
    {
        const test::CliRun r = test::runTinyscope(test::smallSubnetArgs(QStringLiteral("quantize"), {QStringLiteral("--bits"), QStringLiteral("4,2"), QStringLiteral("--method"), QStringLiteral("linear,kmeans")}));
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        const DesignSpace space = presetSpace("mcunet-fmnist");
        const SubnetConfig min = ArchSampler(space).minConfig(*std::min_element(space.resolutions.begin(), space.resolutions.end()));
        const std::int64_t params = CostModel(space).summary(min).params;
        QCOMPARE(j["params"].get<std::int64_t>(), params);
        QCOMPARE(j["float_bits"].get<std::int64_t>(), params * 32);
        QCOMPARE(j["runs"].size(), std::size_t{4});
        for (const Json& run : j["runs"]) {
            const int bits = run["bits"].get<int>();
            const bool kmeans = run["method"] == "kmeans";
            QCOMPARE(run["lab_size_bits"].get<std::int64_t>(), params * bits);
            std::int64_t weights = 0, outputs = 0;
            for (const Json& t : run["tensors"]) {
                weights += t["params"].get<std::int64_t>();
                outputs += t["shape"][0].get<std::int64_t>();
                if (kmeans) QVERIFY(t["distinct_values"].get<std::int64_t>() <= (1 << bits));
                QVERIFY(t["max_channel_values"].get<std::int64_t>() <= (1 << bits));
            }
            QCOMPARE(run["weight_bits"].get<std::int64_t>(), weights * bits);
            QCOMPARE(run["other_bits"].get<std::int64_t>(), (params - weights) * 32);
            // k-means: a float32 codebook of at most 2^n centroids per tensor; linear: a scale per output channel.
            if (kmeans) QVERIFY(run["overhead_bits"].get<std::int64_t>() <= static_cast<std::int64_t>(run["tensors"].size()) * (32 << bits));
            else QCOMPARE(run["overhead_bits"].get<std::int64_t>(), outputs * 32);
            QVERIFY(run["top1"].get<double>() >= 0 && run["qat"].empty() && run["qat_top1"].is_null());
        }
        // Fewer bits hurt at least as much in the method that keeps a scale per channel (2-bit linear
        // has three levels per channel).
        QVERIFY(j["runs"][1]["top1"].get<double>() <= j["float_top1"].get<double>());
    }

    void quantizationAwareTrainingKeepsTheCodebook()
    {
        const test::CliRun r = test::runTinyscope(test::smallSubnetArgs(QStringLiteral("quantize"), {QStringLiteral("--bits"), QStringLiteral("2"), QStringLiteral("--qat-epochs"), QStringLiteral("1"),
                                                            QStringLiteral("--qat-images"), QStringLiteral("64"), QStringLiteral("--qat-batch"), QStringLiteral("32")}));
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        QCOMPARE(j["qat_data"].get<std::string>(), std::string("fashion-mnist:fit"));
        for (const Json& run : j["runs"]) {
            QCOMPARE(run["qat"].size(), std::size_t{1});
            QCOMPARE(run["qat_top1"].get<double>(), run["qat"][0]["top1"].get<double>());
            for (const Json& t : run["tensors"]) {   // after the steps
                if (run["method"] == "kmeans") QVERIFY(t["distinct_values"].get<std::int64_t>() <= 4);
                QVERIFY(t["max_channel_values"].get<std::int64_t>() <= 4);
            }
        }
    }

    void badInputIsOneLine()
    {
        struct Case {
            QStringList args;
            const char* expect;
        } cases[] = {
            {{QStringLiteral("--bits"), QStringLiteral("9")}, "--bits 9: a bit width is a whole number in 1–8"},
            {{QStringLiteral("--bits"), QStringLiteral("2.5")}, "--bits 2.5: a bit width is a whole number in 1–8"},
            {{QStringLiteral("--bits"), QStringLiteral("4"), QStringLiteral("--method"), QStringLiteral("log")}, "--method 'log': give linear or kmeans"},
            {{QStringLiteral("--bits"), QStringLiteral("4"), QStringLiteral("--qat-epochs"), QStringLiteral("1"), QStringLiteral("--qat-schedule"),
              QStringLiteral("step")},
             "--qat-schedule 'step': give cosine or lab"},
        };
        for (const Case& c : cases) {
            const test::CliRun r = test::runTinyscope(test::smallSubnetArgs(QStringLiteral("quantize"), c.args));
            QVERIFY2(r.code == 2, qPrintable(c.args.join(QLatin1Char(' ')) + QStringLiteral(": ") + QString::fromStdString(r.err)));
            QVERIFY2(r.err.find(c.expect) != std::string::npos, r.err.c_str());
            QCOMPARE(test::lineCount(r.err), 1);
        }
        // Its help is checked against its options as every command's is (Cli.cpp).
        const test::CliRun help = test::runTinyscope({QStringLiteral("quantize"), QStringLiteral("--bits"), QStringLiteral("4"), QStringLiteral("--help")});
        QVERIFY2(help.code == 0, help.err.c_str());
        QVERIFY(help.out.find("--qat-epochs E") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestWeightQuantization)
#include "test_weight_quantization.moc"
