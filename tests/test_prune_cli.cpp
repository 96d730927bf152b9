// tinyscope prune (issue 50, Lab 1 on a subnet): per-layer non-zeros and sizes are the lab's counts,
// the sensitivity scan restores each layer (sparsity 0 measures the dense top-1), --out writes the
// pruned subnet with the subnet's own keys and shapes, fine-tuning keeps the pruned weights zero,
// channel pruning writes the narrower subnet and its costs and deploy takes the folder (--subnet),
// bad input is one line with exit 2.
#include "TestSupport.h"

#include "cost/CostModel.h"
#include "io/DataPaths.h"
#include "io/JsonFile.h"
#include "nn/compress/PruningJob.h"
#include "nn/compress/SubnetFineTune.h"
#include "nn/supernet/Checkpoint.h"
#include "nn/supernet/Supernet.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <QTemporaryDir>

#include <ATen/ATen.h>

#include <algorithm>
#include <atomic>
#include <cmath>

using namespace tinyscope;

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
        const test::CliRun r = test::runTinyscope(test::smallSubnetArgs(QStringLiteral("prune"), {QStringLiteral("--uniform"), QStringLiteral("0.5"), QStringLiteral("--out"), out}));
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
        const test::CliRun r = test::runTinyscope(test::smallSubnetArgs(QStringLiteral("prune"), {QStringLiteral("--sensitivity"), QStringLiteral("--scan"), QStringLiteral("0,1")}));
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

    // --target-size: the layers' sparsities come from the scan's points and the non-zeros stay
    // within the target; a target the scan cannot reach is exit 3 with the smallest reachable size.
    void targetSizeChoosesFromTheScan()
    {
        const test::CliRun r = test::runTinyscope(test::smallSubnetArgs(QStringLiteral("prune"), {QStringLiteral("--sensitivity"), QStringLiteral("--scan"), QStringLiteral("0.5,0.9"),
                                                             QStringLiteral("--target-size"), QStringLiteral("0.3")}));
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        QCOMPARE(j["target_size"].get<double>(), 0.3);
        QVERIFY(j["choice_drop"].get<double>() >= 0);
        for (const Json& l : j["layers"]) {
            const double s = l["sparsity"].get<double>();
            QVERIFY(s == 0 || s == 0.5 || s == 0.9);
        }
        const std::int64_t all = j["dense_bits"].get<std::int64_t>() / 32;
        QVERIFY(j["sparse_bits"].get<std::int64_t>() <= static_cast<std::int64_t>(std::floor(0.3 * static_cast<double>(all))) * 32);
        QVERIFY(j["pruned_top1"].is_number());
        const test::CliRun none = test::runTinyscope(test::smallSubnetArgs(QStringLiteral("prune"), {QStringLiteral("--sensitivity"), QStringLiteral("--scan"), QStringLiteral("0.4"),
                                                                QStringLiteral("--target-size"), QStringLiteral("0.1")}));
        QCOMPARE(none.code, 3);
        QVERIFY2(none.err.find("--target-size 0.100: the scan's sparsities reach at least") != std::string::npos, none.err.c_str());
        QCOMPARE(test::lineCount(none.err), 1);
    }

    void fineTuningKeepsTheMasks()
    {
        QTemporaryDir tmp;
        const QString out = tmp.path() + QStringLiteral("/tuned");
        const test::CliRun r = test::runTinyscope(test::smallSubnetArgs(QStringLiteral("prune"), {QStringLiteral("--uniform"), QStringLiteral("0.5"), QStringLiteral("--finetune-epochs"),
                                                             QStringLiteral("2"), QStringLiteral("--finetune-images"), QStringLiteral("96"),
                                                             QStringLiteral("--finetune-batch"), QStringLiteral("32"), QStringLiteral("--out"), out}));
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        QCOMPARE(j["finetune_data"].get<std::string>(), std::string("fashion-mnist:fit"));
        QCOMPARE(j["finetune"].size(), std::size_t{2});
        for (const Json& e : j["finetune"]) QVERIFY(std::isfinite(e["loss"].get<double>()) && e["loss"].get<double>() > 0);
        QCOMPARE(j["finetuned_top1"].get<double>(), j["finetune"][1]["top1"].get<double>());
        // Every weight the pruning zeroed (|w| at or below its layer's threshold) is still zero after
        // the steps; the kept ones trained (some differ from the dense subnet's).
        const DesignSpace space = presetSpace("mcunet-fmnist");
        const SubnetConfig min = ArchSampler(space).minConfig(*std::min_element(space.resolutions.begin(), space.resolutions.end()));
        const StateDict own = Supernet::load(space, shippedSupernetPath()).extract(min).stateDict();
        const StateDict written = loadStateDict((out + QStringLiteral("/subnet.pth")).toStdString());
        std::int64_t moved = 0;
        for (const Json& l : j["layers"]) {
            const at::Tensor* dense = findTensor(own, l["name"].get<std::string>());
            const at::Tensor* tuned = findTensor(written, l["name"].get<std::string>());
            QVERIFY(dense && tuned);
            const at::Tensor mags = dense->abs().reshape({-1});
            const std::int64_t zeros = static_cast<std::int64_t>(std::nearbyint(static_cast<double>(mags.numel()) * 0.5));
            const float threshold = std::get<0>(mags.kthvalue(zeros)).item<float>();
            const at::Tensor pruned = mags.le(threshold);
            QCOMPARE(tuned->reshape({-1}).masked_select(pruned).ne(0).sum().item<std::int64_t>(), std::int64_t{0});
            QCOMPARE(tuned->ne(0).sum().item<std::int64_t>(), l["nonzero"].get<std::int64_t>());
            moved += tuned->reshape({-1}).masked_select(pruned.logical_not()).ne(dense->reshape({-1}).masked_select(pruned.logical_not())).sum().item<std::int64_t>();
        }
        QVERIFY(moved > 0);
    }

    // --channels: the groups' widths as the lab counts them, both orders measured, the costs before
    // and after from the cost model, and --out the narrower subnet under the subnet's own keys.
    void channelPruningWritesTheNarrowerSubnet()
    {
        QTemporaryDir tmp;
        const QString out = tmp.path() + QStringLiteral("/narrow");
        const test::CliRun r = test::runTinyscope(test::smallSubnetArgs(QStringLiteral("prune"), {QStringLiteral("--channels"), QStringLiteral("0.3"), QStringLiteral("--sort"),
                                                             QStringLiteral("--latency-runs"), QStringLiteral("3"), QStringLiteral("--out"), out}));
        QVERIFY2(r.code == 0, r.err.c_str());
        const Json j = Json::parse(r.out);
        const Json& c = j["channels"];
        QVERIFY(c["sorted"].get<bool>());
        QCOMPARE(j["pruned_top1"].get<double>(), c["sorted_top1"].get<double>());
        for (const Json& g : c["groups"])
            QCOMPARE(g["kept"].get<int>(), static_cast<int>(std::nearbyint(g["channels"].get<int>() * 0.7)));
        const DesignSpace space = presetSpace("mcunet-fmnist");
        const SubnetConfig min = ArchSampler(space).minConfig(*std::min_element(space.resolutions.begin(), space.resolutions.end()));
        QCOMPARE(c["original"]["macs"].get<std::int64_t>(), CostModel(space).summary(min).macs);
        QCOMPARE(c["original"]["params"].get<std::int64_t>(), CostModel(space).summary(min).params);
        QVERIFY(c["pruned"]["macs"].get<std::int64_t>() < c["original"]["macs"].get<std::int64_t>());
        QVERIFY(c["pruned"]["latency_ms"].get<double>() > 0);
        // The file: the subnet's keys in its order, the parameters the pruned network's count.
        const StateDict own = Supernet::load(space, shippedSupernetPath()).extract(min).stateDict();
        const StateDict written = loadStateDict((out + QStringLiteral("/subnet.pth")).toStdString());
        QCOMPARE(written.size(), own.size());
        std::int64_t params = 0;
        for (std::size_t i = 0; i < own.size(); ++i) {
            QCOMPARE(written[i].first, own[i].first);
            if (own[i].first.find("running_") == std::string::npos && own[i].first.find("num_batches") == std::string::npos)
                params += written[i].second.numel();
        }
        QCOMPARE(params, c["pruned"]["params"].get<std::int64_t>());
        const at::Tensor* fc = findTensor(written, "classifier.linear.weight");
        QVERIFY(fc);
        QCOMPARE(fc->size(1), static_cast<std::int64_t>(c["groups"].back()["kept"].get<int>()));

        // Re-calibrating the pruned network's BatchNorm is measured, not kept: the file has the statistics
        // the lab's pruned network has (quantize --subnet --bn-images 0 measures pruned_top1 on the same
        // images; one image of 40 is 2.5 points, LibTorch's float forward against oneDNN's).
        const double recal = c["recalibrated_top1"].get<double>(), pruned = j["pruned_top1"].get<double>();
        QVERIFY2(recal >= 0 && recal <= 100, c.dump().c_str());
        // With quantize's own re-calibration on the same 100 holdout images, it measures recalibrated_top1.
        for (const auto& [bnImages, want] : {std::pair{QStringLiteral("0"), pruned}, std::pair{QStringLiteral("100"), recal}}) {
            const test::CliRun q = test::runTinyscope({QStringLiteral("quantize"), QStringLiteral("--subnet"), out, QStringLiteral("--bn-images"), bnImages,
                                                       QStringLiteral("--images"), QStringLiteral("40"), QStringLiteral("--calib-images"), QStringLiteral("16"),
                                                       QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--json")});
            QVERIFY2(q.code == 0, q.err.c_str());
            const double got = Json::parse(q.out)["float_top1"].get<double>();
            QVERIFY2(std::abs(got - want) <= 2.5, (q.out + " against pruned " + std::to_string(pruned) + ", re-calibrated " + std::to_string(recal)).c_str());
        }

        // The folder is a model for deploy (--subnet DIR): the narrowed network's costs, its widths in the metadata.
        const QString tflite = tmp.path() + QStringLiteral("/narrow.tflite");
        const test::CliRun d = test::runTinyscope({QStringLiteral("deploy"), QStringLiteral("--subnet"), out, QStringLiteral("--format"), QStringLiteral("tflite"),
                                                   QStringLiteral("--out"), tflite, QStringLiteral("--calib-images"), QStringLiteral("16"),
                                                   QStringLiteral("--bn-images"), QStringLiteral("0"), QStringLiteral("--threads"), QStringLiteral("1"),
                                                   QStringLiteral("--json")});
        QVERIFY2(d.code == 0, d.err.c_str());
        const Json dj = Json::parse(d.out);
        QCOMPARE(dj["cost"]["macs"].get<std::int64_t>(), c["pruned"]["macs"].get<std::int64_t>());
        QCOMPARE(dj["cost"]["peak_sram_bytes"].get<std::int64_t>(), c["pruned"]["peak_bytes"].get<std::int64_t>());
        Json widths = Json::object();
        for (const Json& g : c["groups"])
            if (g["kept"].get<int>() < g["channels"].get<int>()) widths[g["name"].get<std::string>()] = g["kept"];
        QCOMPARE(Json::parse(dj["metadata"]["channel_widths"].get<std::string>()), widths);
        QVERIFY2(dj["description"].get<std::string>().find("(channels pruned)") != std::string::npos, d.out.c_str());
        const test::CliRun both = test::runTinyscope({QStringLiteral("deploy"), QStringLiteral("--subnet"), out, QStringLiteral("--config"), QStringLiteral("min"),
                                                      QStringLiteral("--format"), QStringLiteral("onnx"), QStringLiteral("--out"), tflite});
        QCOMPARE(both.code, 2);
        QVERIFY2(both.err.find("--subnet DIR is the whole model") != std::string::npos, both.err.c_str());
    }

    // Cancelled during the scan (Ctrl-C, the panel's Cancel): the layers finished before come back,
    // nothing is pruned and --out is not written.
    void aCancelledScanKeepsTheFinishedLayers()
    {
        QTemporaryDir tmp;
        PruneRequest rq;
        rq.evaluation = supernetRequest(shippedSupernetPath());
        const DesignSpace& space = rq.evaluation.space;
        rq.evaluation.config = ArchSampler(space).minConfig(*std::min_element(space.resolutions.begin(), space.resolutions.end()));
        rq.evaluation.images = 40;
        rq.evaluation.calibration.images = 100;
        rq.evaluation.threads = 1;
        rq.sensitivity = true;
        rq.scan = {0.5, 0.9};
        rq.out = (tmp.path() + QStringLiteral("/never")).toStdString();
        std::atomic<bool> stop{false};
        JobControl job;
        job.cancel = &stop;
        // The scan reports each point ("LAYER at sparsity S"): at the fourth layer's first, stop.
        int points = 0;
        job.progress = [&stop, &points](std::size_t, std::size_t, const std::string& stage) {
            if (stage.find(" at sparsity ") != std::string::npos && ++points == 7) stop = true;
        };
        const PruneResult r = runPruning(rq, job);
        QVERIFY(r.scan_cancelled);
        QCOMPARE(r.sensitivity.size(), std::size_t{3});
        QVERIFY(r.scan_layers > 3);
        for (const SensitivityCurve& c : r.sensitivity) QCOMPARE(c.top1.size(), std::size_t{2});
        QVERIFY(!r.pruned && r.layers.empty());
        QVERIFY(!QFileInfo::exists(QString::fromStdString(rq.out)));
    }

    void theLabScheduleIsPeriodic()
    {
        SubnetFineTuneOptions o;
        o.epochs = 5;
        o.schedule = LrSchedule::Lab;   // CosineAnnealingLR(T_max=5) stepped per batch
        QCOMPARE(o.lrAt(0, 100), 0.01);
        QVERIFY(std::abs(o.lrAt(1, 100) - 0.005 * (1 + std::cos(M_PI / 5))) < 1e-15);
        QVERIFY(std::abs(o.lrAt(5, 100)) < 1e-15);
        QVERIFY(std::abs(o.lrAt(10, 100) - 0.01) < 1e-15);
        o.schedule = LrSchedule::Cosine;   // one half-period over the run
        QVERIFY(std::abs(o.lrAt(50, 100) - 0.005) < 1e-15);
        QCOMPARE(o.steps(100), std::size_t{10});   // 2 batches of 64 per epoch, 5 epochs
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
            {{QStringLiteral("--uniform"), QStringLiteral("0.5"), QStringLiteral("--target-size"), QStringLiteral("0.3")},
             "--target-size chooses from the sensitivity scan: give --sensitivity"},
            {{QStringLiteral("--uniform"), QStringLiteral("0.5"), QStringLiteral("--finetune-epochs"), QStringLiteral("1"), QStringLiteral("--finetune-schedule"),
              QStringLiteral("step")},
             "--finetune-schedule 'step': give cosine or lab"},
            {{QStringLiteral("--uniform"), QStringLiteral("0.5"), QStringLiteral("--finetune-epochs"), QStringLiteral("-1")}, "--finetune-epochs"},
            {{QStringLiteral("--channels"), QStringLiteral("0.3"), QStringLiteral("--uniform"), QStringLiteral("0.5")}, "give one kind"},
            {{QStringLiteral("--uniform"), QStringLiteral("0.5"), QStringLiteral("--sort")}, "--sort belongs to channel pruning"},
            {{QStringLiteral("--channels"), QStringLiteral("1")}, "first_conv: channel ratio 1.00 leaves none of its 16 channels"},
            {{QStringLiteral("--channels"), QStringLiteral("0.2"), QStringLiteral("--channel-ratio"), QStringLiteral("blocks.99=0.5")},
             "no channel group 'blocks.99' in the subnet; its groups: first_conv, blocks.1"},
        };
        for (const Case& c : cases) {
            const test::CliRun r = test::runTinyscope(test::smallSubnetArgs(QStringLiteral("prune"), c.args));
            QVERIFY2(r.code == 2, qPrintable(c.args.join(QLatin1Char(' ')) + QStringLiteral(": ") + QString::fromStdString(r.err)));
            QVERIFY2(r.err.find(c.expect) != std::string::npos, r.err.c_str());
            QCOMPARE(test::lineCount(r.err), 1);
        }
    }
};

QTEST_GUILESS_MAIN(TestPruneCli)
#include "test_prune_cli.moc"
