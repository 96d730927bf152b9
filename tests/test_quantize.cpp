// Int8 post-training quantization and the int8 forward: the C++ int8 forward equals the graph
// interpreter's integer semantics op for op on the real MCUNet-5fps weights; the recipe (per-channel
// symmetric weights, int32 biases, asymmetric activations, ReLU folded into the clamp) holds; a
// model trained here for a few steps goes through quantization and the float / int8 comparison
// (keeping its top-1 within a few points is the slow tier: slow_quantize_accuracy); a supernet
// subnet goes through the same pipeline.
#include "SmallNet.h"
#include "TestSupport.h"

#include "Error.h"
#include "tinyengine/BoardFit.h"
#include "data/BatchLoader.h"
#include "graph/ForwardLowering.h"
#include "graph/GraphInterpreter.h"
#include "nn/quantize/PostTrainingQuantizer.h"
#include "nn/quantize/QuantizationJob.h"
#include "nn/supernet/Supernet.h"
#include "nn/TorchRuntime.h"
#include "nn/quantize/ZooModule.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "tinyengine/Int8Forward.h"
#include "zoo/NetworkBuilder.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"

#include <QTemporaryDir>

#include <cmath>

using namespace tinyscope;

namespace {


bool haveFashionMnist() { return !fashionMnistDir().empty(); }

using test::batchTensor;
using test::crossEntropyOf;
using test::fitBatch;
using test::quantizedSmallNet;
using test::smallNet;
using test::trainSmallNet;

}  // namespace

class TestQuantize : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        configureAllocator();
        setTorchThreads(2);
    }

    void int8ForwardEqualsTheInterpreterOnTheRealModel()
    {
        REQUIRE_SHARED();
        QuantizedParams p = readParamsPickle(test::tinyengineRef("full-int8-params.pkl"));
        p.scales = readScaleJson(test::tinyengineRef("scale.json"));
        const Network net = zooModel("mcunet-5fps");
        const TrainingGraph g = lowerForward(net);
        const Int8Forward f(g, p);
        QCOMPARE(f.classes(), 10);
        QCOMPARE(f.inputZero(), 0);
        QVERIFY(std::fabs(f.inputScale() - 1.0 / 127.5) < 1e-9);
        // A deterministic image-like input over the whole int8 range.
        std::vector<float> img(3 * 128 * 128);
        for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<float>(std::sin(0.013 * static_cast<double>(i)) * std::cos(0.0007 * static_cast<double>(i)));
        const std::vector<std::int8_t> q = f.quantizeInput(img.data());
        const std::vector<std::vector<std::int32_t>> ours = f.runAll(q);
        GraphInterpreter it(g);
        ParameterStore store;
        for (const auto& [name, a] : p.arrays) store.set(name, p.floats(name));
        store.set("input", std::vector<float>(q.begin(), q.end()));
        it.bind(store);
        int compared = 0;
        for (int i = 0; i < g.forward_ops; ++i) {
            const Op& op = g.op(i);
            if (op.phase != Phase::Forward) break;
            it.execute(i);
            const std::vector<float>& want = it.value(op.output);
            const std::vector<std::int32_t>& got = ours[static_cast<std::size_t>(op.output)];
            QCOMPARE(got.size(), want.size());
            for (std::size_t k = 0; k < want.size(); ++k)
                if (static_cast<float>(got[k]) != want[k])
                    QFAIL(qPrintable(QStringLiteral("op %1 (%2) element %3: %4 vs interpreter %5").arg(i).arg(opTypeName(op.kind)).arg(k).arg(got[k]).arg(want[k])));
            ++compared;
        }
        QCOMPARE(compared, 101);   // 43 convs and 7 adds with their clamps, and the pool
        // The int8 logits are not constant (the real weights discriminate).
        const std::vector<std::int8_t> logits = f.run(q);
        QVERIFY(*std::max_element(logits.begin(), logits.end()) > *std::min_element(logits.begin(), logits.end()));
    }

    void tinyEngineArithmeticGivesTheDevicesLogits()
    {
        // MIT's 49kb model run by TinyEngine's generated code on the emulated Cortex-M7
        // (bench/device/run_tinyengine_export.sh, docs/DEVICE_RUNNER.md) gave these int8 logits for
        // two inputs the runner defines: the bytes of a 32-bit LCG (x = 1664525 x + 1013904223,
        // x0 = 1, byte = x >> 24) laid out HWC as the device reads them, and all zeros. The exact
        // arithmetic differs from the first conv on (TinyEngine truncates); the TinyEngine one
        // gives the device's bytes.
        REQUIRE_SHARED();
        QuantizedParams p = readParamsPickle(test::tinyengineRef("full-int8-params.pkl"));
        p.scales = readScaleJson(test::tinyengineRef("scale.json"));
        const TrainingGraph g = lowerForward(zooModel("mcunet-5fps"));
        const int H = 128, W = 128, C = 3;
        std::vector<std::int8_t> lcg(static_cast<std::size_t>(C * H * W));
        std::uint32_t x = 1;
        for (int i = 0; i < C * H * W; ++i) {   // device byte i is (h, w, c) of an HWC image
            x = 1664525u * x + 1013904223u;
            const int h = i / (W * C), w = (i / C) % W, c = i % C;
            lcg[static_cast<std::size_t>((c * H + h) * W + w)] = static_cast<std::int8_t>(x >> 24);
        }
        const std::vector<std::int8_t> zeros(lcg.size(), 0);
        const Int8Forward device(g, p, Int8Arithmetic::TinyEngine), exact(g, p);
        QCOMPARE(device.run(lcg), (std::vector<std::int8_t>{-26, -30, -28, -32, -18, -15, -26, -25, -29, -34}));
        QCOMPARE(device.run(zeros), (std::vector<std::int8_t>{-42, -35, -31, -35, -36, -39, -39, -39, -40, -23}));
        QCOMPARE(exact.run(lcg), (std::vector<std::int8_t>{-17, -26, -26, -32, -16, -4, -18, -19, -22, -36}));
        QCOMPARE(exact.run(zeros), (std::vector<std::int8_t>{-51, -34, -39, -43, -44, -44, -45, -41, -41, -20}));
    }

    void quantizationFollowsTheRecipe()
    {
        if (!haveFashionMnist()) QSKIP("dataset-fashion-mnist is not installed");
        const Network net = smallNet();
        ZooModule m(net, 3);
        m->eval();
        const FloatModel fm = floatModelFromZoo(*m);
        std::unique_ptr<ImageDataset> data = openDataset("fashion-mnist:holdout");
        std::vector<std::size_t> items(64);
        for (std::size_t i = 0; i < items.size(); ++i) items[i] = i;
        const at::Tensor calib = batchTensor(loadBatch(*data, items, 28));
        const QuantizedParams p = quantizeModel(fm, calib);
        QVERIFY(paramsMismatches(lowerForward(net), p).empty());
        for (int ci = 0; ci < net.numConvs(); ++ci) {
            const Layer& l = net.conv(ci);
            const std::string& pre = l.ir_prefix;
            const NdArray& w = p.array(pre + "_weight");
            QCOMPARE(w.dtype, ScalarType::Int8);
            // Symmetric per output channel: every channel reaches ±127, none goes to −128.
            const std::int64_t per = w.numel() / l.cout;
            for (int o = 0; o < l.cout; ++o) {
                double mx = 0;
                for (std::int64_t k = 0; k < per; ++k) {
                    const double v = ndValue(w, o * per + k);
                    QVERIFY(v >= -127);
                    mx = std::max(mx, std::fabs(v));
                }
                QCOMPARE(mx, 127.0);
            }
            QCOMPARE(p.array(pre + "_bias").dtype, ScalarType::Int32);
            QVERIFY(p.hasScale(pre + "_x_scale") && p.hasScale(pre + "_y_scale"));
            // ReLU/ReLU6 folded into the clamp: the output zero point is −128.
            if (l.act == Activation::ReLU6) QCOMPARE(p.value(pre + "_zero_y"), -128.0);
            // Effective scale = s_x·s_W/s_y and bias = round(b/(s_W·s_x)) for output channel 0.
            const at::Tensor W = fm.weight[static_cast<std::size_t>(net.convLayers()[static_cast<std::size_t>(ci)])];
            const double sw = W[0].abs().max().item<double>() / 127.0;
            const double sx = p.scales.at(pre + "_x_scale"), sy = p.scales.at(pre + "_y_scale");
            QVERIFY(std::fabs(p.value(pre + "_scale", 0) - sx * sw / sy) <= 1e-6 * sx * sw / sy);
            const double b = fm.bias[static_cast<std::size_t>(net.convLayers()[static_cast<std::size_t>(ci)])][0].item<double>();
            QVERIFY(std::fabs(p.value(pre + "_bias", 0) - std::nearbyint(b / (sw * sx))) <= 1.0);
        }
        // Inputs of a conv reuse the producer's output quantization.
        QCOMPARE(p.value("v1_conv_0_zero_x"), p.value("v0_zero_y"));
        QCOMPARE(p.scales.at("v1_conv_0_x_scale"), p.scales.at("v0_y_scale"));
        QCOMPARE(p.value("v1_qadd_zero_x1"), p.value("v0_zero_y"));
    }

    void aTrainedModelGoesThroughQuantizationAndTheComparison()
    {
        // The path of the slow tier's slow_quantize_accuracy (300 steps, then int8 within 3 points
        // on 1,000 images) in 40 steps: the loss of a fixed batch falls, and the quantized model and
        // its float original are compared on 200 test images, both far above chance (10 %).
        if (!haveFashionMnist()) QSKIP("dataset-fashion-mnist is not installed");
        const Network net = smallNet();
        ZooModule m(net, 1);
        std::unique_ptr<ImageDataset> fit = openDataset("fashion-mnist:fit");
        const int steps = 40;
        const Batch probe = fitBatch(*fit, steps);   // not trained on
        m->eval();
        const double before = crossEntropyOf(m, probe).item<double>();
        trainSmallNet(m, *fit, steps);
        const double after = crossEntropyOf(m, probe).item<double>();
        QVERIFY2(after < 0.8 * before, qPrintable(QStringLiteral("loss %1 -> %2").arg(before).arg(after)));
        const PreparedModel pm = quantizedSmallNet(net, m, 100);
        QVERIFY(paramsMismatches(lowerForward(net), pm.params).empty());
        const QuantizeReport r = compareTop1(pm, "fashion-mnist:test", 200, 2);
        qInfo("small net after %d steps: float top-1 %.2f %%, int8 top-1 %.2f %%, agreement %.2f %%", steps, r.float_top1, r.int8_top1, r.agreement);
        QCOMPARE(r.images, std::size_t(200));
        QVERIFY(r.has_float);
        QVERIFY2(r.float_top1 > 30.0 && r.int8_top1 > 30.0 && r.agreement > 80.0,
                 qPrintable(QStringLiteral("float %1 %, int8 %2 %, agreement %3 %").arg(r.float_top1).arg(r.int8_top1).arg(r.agreement)));
    }

    void supernetSubnetGoesThroughTheSamePipeline()
    {
        if (!haveFashionMnist()) QSKIP("dataset-fashion-mnist is not installed");
        QTemporaryDir dir;
        const DesignSpace space = loadSpace("mcunet-fmnist");
        const std::string ckpt = (dir.path() + QStringLiteral("/supernet.pth")).toStdString();
        Supernet::initialize(space, 7).save(ckpt);
        const ModelSource spec = ModelSource::subnetByName("mcunet-fmnist", "min", ckpt);
        QuantizeOptions o;
        o.calib_images = 32;
        o.bn_images = 64;
        const PreparedModel pm = prepareModel(spec, o);
        QCOMPARE(pm.calib_images, std::size_t(32));
        QVERIFY(paramsMismatches(lowerForward(pm.network), pm.params).empty());
        const QuantizeReport r = compareTop1(pm, "fashion-mnist:test", 50, 2);
        QCOMPARE(r.images, std::size_t(50));
        QVERIFY(r.float_top1 >= 0 && r.float_top1 <= 100 && r.int8_top1 >= 0 && r.int8_top1 <= 100);
        QVERIFY(r.agreement >= 0 && r.agreement <= 100);
        // The same model exports (checker findings are reported, not thrown).
        ExportRequest rq;
        rq.model = spec;
        rq.quantize = o;
        rq.scheme = SparseScheme::biasOnly(2);
        const ExportPlan plan = planModelExport(rq);
        QCOMPARE(plan.name, std::string("subnet"));
        QVERIFY(plan.graph.liveOps() > plan.graph.forward_ops);
        // The search's flash figure (no quantization) is the export's, to the byte (SE gates included).
        QCOMPARE(quantizedParameterBytes(plan.network), boardUse(plan).flash_bytes);
    }

    void zooModelWithAForeignPickleIsRefused()
    {
        REQUIRE_SHARED();
        try {
            ModelSource::zooWithParams("mbv2-w0.35", test::tinyengineRef("full-int8-params.pkl"));
            QFAIL("accepted mcunet-5fps weights for mbv2-w0.35");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("not the weights of mbv2-w0.35") != std::string::npos, e.what());
        }
    }

    // Issue 49: what a job runs on is a value made at the edge — the space, config and network
    // resolved once, the params pickle read and checked when the source is made.
    void aModelSourceIsResolvedWhenItIsMade()
    {
        const DesignSpace space = loadSpace("mcunet-fmnist");
        const ModelSource min = ModelSource::subnetByName("", "min", "ckpt.pth");
        QVERIFY(min.asSubnet() && !min.asZoo());
        QCOMPARE(min.asSubnet()->space.name, std::string("mcunet-fmnist"));   // the default space
        QVERIFY(min.asSubnet()->config == ArchSampler(space).minConfig(*std::min_element(space.resolutions.begin(), space.resolutions.end())));
        QCOMPARE(min.describe(), std::string("subnet min of ckpt.pth"));
        QCOMPARE(min.network().name, std::string("subnet"));
        QCOMPARE(min.network().macs(), networkFromSubnet(space, min.asSubnet()->config).macs());
        const ModelSource byValue = ModelSource::subnet(space, min.asSubnet()->config, "ckpt.pth");
        QCOMPARE(byValue.describe(), "subnet " + min.asSubnet()->config.toJson().dump() + " of ckpt.pth");
        const ModelSource seeded = ModelSource::zoo("mcunet-5fps", 3);
        QCOMPARE(seeded.describe(), std::string("mcunet-5fps (seeded initialisation, untrained)"));
        QCOMPARE(seeded.asZoo()->seed, std::uint64_t(3));
        QVERIFY(!seeded.asZoo()->params);
        // A config that is not the space's is refused when the source is made, naming it.
        SubnetConfig bad = min.asSubnet()->config;
        bad.image_size = 1000;
        const QString msg = test::inputErrorOf([&] { ModelSource::subnet(space, bad, "ckpt.pth", "", "the winner"); });
        QVERIFY2(msg.contains(QStringLiteral("the winner")), qPrintable(msg));
        QVERIFY2(test::inputErrorOf([] { ModelSource().network(); }).contains(QStringLiteral("give the model")), "an empty source has no network");
        if (!test::haveShared()) return;
        const ModelSource real = ModelSource::zooWithParams("mcunet-5fps", test::tinyengineRef("full-int8-params.pkl"));
        QVERIFY(real.asZoo()->params && !real.asZoo()->params->scales.empty());   // scale.json beside the pickle
        QCOMPARE(real.describe(), "mcunet-5fps with " + test::tinyengineRef("full-int8-params.pkl"));
    }
};

QTEST_GUILESS_MAIN(TestQuantize)
#include "test_quantize.moc"
