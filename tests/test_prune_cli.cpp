// tinyscope prune (issue 50, Lab 1 on a subnet): per-layer non-zeros and sizes are the lab's counts,
// the sensitivity scan restores each layer (sparsity 0 measures the dense top-1), --out writes the
// pruned subnet with the subnet's own keys and shapes, bad input is one line with exit 2.
#include "TestSupport.h"

#include "cost/CostModel.h"
#include "io/DataPaths.h"
#include "io/JsonFile.h"
#include "nn/supernet/Checkpoint.h"
#include "nn/supernet/Supernet.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <QTemporaryDir>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>

using namespace tinyscope;

namespace {

// The min subnet of the shipped supernet on a few images: seconds.
QStringList pruneArgs(const QStringList& more)
{
    return QStringList{QStringLiteral("prune"), QStringLiteral("--config"), QStringLiteral("min"), QStringLiteral("--images"), QStringLiteral("40"),
                       QStringLiteral("--calib-images"), QStringLiteral("100"), QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--json")} +
           more;
}

}  // namespace

class TestPruneCli : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        if (shippedSupernetPath().empty()) QSKIP("the shipped supernet models/supernets/mcunet-fmnist.pth is absent");
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
    }

    void uniformPruningCountsAsTheLab()
    {
        QTemporaryDir tmp;
        const QString out = tmp.path() + QStringLiteral("/pruned");
        const test::CliRun r = test::runTinyscope(pruneArgs({QStringLiteral("--uniform"), QStringLiteral("0.5"), QStringLiteral("--out"), out}));
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        const DesignSpace space = presetSpace("mcunet-fmnist");
        const SubnetConfig min = ArchSampler(space).minConfig(*std::min_element(space.resolutions.begin(), space.resolutions.end()));
        // get_model_size(data_width=32): every parameter (the cost model's count) × 32.
        QCOMPARE(j["dense_bits"].get<std::int64_t>(), 32 * CostModel(space).summary(min).params);
        // Each layer as the lab prunes it, computed here by sorting: round(n × 0.5) zeros (half to
        // even), the threshold the num_zeros-th smallest |w|, kept what is above it (ties pruned).
        const Subnet dense = Supernet::load(space, shippedSupernetPath()).extract(min);
        const StateDict own = dense.stateDict();
        std::int64_t prunable = 0, kept = 0;
        for (const Json& l : j["layers"]) {
            const std::int64_t n = l["params"].get<std::int64_t>();
            const at::Tensor* w = findTensor(own, l["name"].get<std::string>());
            QVERIFY(w && w->numel() == n);
            const at::Tensor flat = w->abs().reshape({-1}).contiguous();
            std::vector<float> mags(flat.data_ptr<float>(), flat.data_ptr<float>() + n);
            std::vector<float> sorted = mags;
            std::sort(sorted.begin(), sorted.end());
            const auto zeros = static_cast<std::size_t>(std::nearbyint(static_cast<double>(n) * 0.5));
            const float threshold = sorted[zeros - 1];
            const auto expect = std::count_if(mags.begin(), mags.end(), [&](float m) { return m > threshold; });
            QCOMPARE(l["nonzero"].get<std::int64_t>(), static_cast<std::int64_t>(expect));
            prunable += n;
            kept += l["nonzero"].get<std::int64_t>();
        }
        // The written subnet: the subnet's own keys and shapes, the pruned weights zero.
        const StateDict written = loadStateDict((out + QStringLiteral("/subnet.pth")).toStdString());
        QCOMPARE(written.size(), own.size());
        for (std::size_t i = 0; i < own.size(); ++i) {
            QCOMPARE(written[i].first, own[i].first);
            QCOMPARE(shapeString(written[i].second), shapeString(own[i].second));
        }
        QCOMPARE(SubnetConfig::loadFile((out + QStringLiteral("/subnet.json")).toStdString(), space), min);
    }

    void theScanRestoresEveryLayer()
    {
        const test::CliRun r = test::runTinyscope(pruneArgs({QStringLiteral("--sensitivity"), QStringLiteral("--scan"), QStringLiteral("0,1")}));
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        const double dense = j["dense_top1"].get<double>();
        QCOMPARE(j["sensitivity"].size(), j["layers"].size());
        int hurt = 0;
        for (const Json& c : j["sensitivity"]) {
            QCOMPARE(c["sparsity"], Json::array({0.0, 1.0}));
            QCOMPARE(c["top1"][0].get<double>(), dense);   // nothing pruned: the dense subnet, restored
            hurt += c["top1"][1].get<double>() < dense;
        }
        QVERIFY(hurt > 0);   // zeroing a layer changes the measurement somewhere
        QVERIFY(j["pruned_top1"].is_null());
    }

    void badInputIsOneLine()
    {
        struct Case {
            QStringList args;
            const char* expect;
        } cases[] = {
            {{QStringLiteral("--uniform"), QStringLiteral("1.5")}, "--uniform"},
            {{QStringLiteral("--sparsity"), QStringLiteral("nosuch.weight=0.5")}, "no prunable layer 'nosuch.weight' in the subnet; its layers: first_conv.conv.weight"},
            {{QStringLiteral("--sparsity"), QStringLiteral("classifier.linear.weight=2")}, "classifier.linear.weight: sparsity 2.00 is outside [0, 1]"},
            {{QStringLiteral("--sparsity"), QStringLiteral("x")}, "give LAYER=S"},
            {{}, "give the pruning"},
        };
        for (const Case& c : cases) {
            const test::CliRun r = test::runTinyscope(pruneArgs(c.args));
            QVERIFY2(r.code == 2, qPrintable(c.args.join(QLatin1Char(' ')) + QStringLiteral(": ") + QString::fromStdString(r.err)));
            QVERIFY2(r.err.find(c.expect) != std::string::npos, r.err.c_str());
            QCOMPARE(test::lineCount(r.err), 1);
        }
    }
};

QTEST_GUILESS_MAIN(TestPruneCli)
#include "test_prune_cli.moc"
