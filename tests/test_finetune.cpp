// The fine-tuning simulator (issue 20): QAS scales each channel's step by the hand-computed factor;
// one batch-1 step equals the step the exported training graph takes (GraphInterpreter on the
// export of the same model and scheme, faithful and reference forms); training lowers the loss;
// a cancelled run resumes to the same parameters as an uninterrupted one; bad input is named.
#include "TestSupport.h"
#include "TinyNets.h"

#include "Error.h"
#include "graph/ForwardLowering.h"
#include "graph/GraphInterpreter.h"
#include "data/BatchLoader.h"
#include "data/ImageDataset.h"
#include "graph/PublishedSchemes.h"
#include "io/AtomicFile.h"
#include "nn/finetune/FineTuneJob.h"
#include "nn/finetune/FineTuneModel.h"
#include "nn/quantize/FakeQuantAutograd.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "tinyengine/QasFactors.h"
#include "tinyengine/TinyEngineExport.h"
#include "zoo/ZooCatalog.h"

#include <QTemporaryDir>

#include <cmath>
#include <filesystem>
#include <random>

using namespace tinyscope;

namespace {

// The synthetic int8 parameters of `g` as a params pickle would hold them (dtypes of the graph).
QuantizedParams quantizedFrom(const TrainingGraph& g, const ParameterStore& store)
{
    QuantizedParams q;
    q.source = "synthetic";
    for (const Tensor& t : g.tensors) {
        if (t.kind != TensorKind::Parameter || t.name == "input" || t.name == "label") continue;
        const std::vector<float>& v = store.get(t.name);
        std::vector<std::int64_t> shape(t.shape.begin(), t.shape.end());
        if (shape.empty()) shape = {1};
        if (t.dtype == DType::Int8) {
            std::vector<std::int8_t> x(v.begin(), v.end());
            q.set(t.name, int8Array(x, shape));
        } else if (t.dtype == DType::Int32) {
            std::vector<std::int32_t> x(v.begin(), v.end());
            q.set(t.name, int32Array(x, shape));
        } else {
            q.set(t.name, float32Array(v, shape));
        }
    }
    return q;
}

// x/y scales for every conv of a synthetic network (what scale.json gives a real one).
void addScales(QuantizedParams& q, const Network& net)
{
    for (int c = 0; c < net.numConvs(); ++c) {
        q.scales[net.conv(c).ir_prefix + "_x_scale"] = 0.05 + 0.01 * c;
        q.scales[net.conv(c).ir_prefix + "_y_scale"] = 0.04 + 0.01 * c;
    }
}

torch::Tensor inputOf(const ParameterStore& store, const Network& net)
{
    const std::vector<float>& v = store.get("input");
    return torch::tensor(v).reshape({1, net.input.c, net.input.h, net.input.w});
}

int labelOf(const ParameterStore& store)
{
    const std::vector<float>& v = store.get("label");
    return static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin());
}

// The subnet `config` (a file, "max", "min") of the shipped Fashion-MNIST supernet.
ModelSource shippedSubnet(const std::string& config)
{
    return ModelSource::subnetByName("mcunet-fmnist", config, (test::sourceDir() + QStringLiteral("/models/supernets/mcunet-fmnist.pth")).toStdString());
}

// A run of seconds: a subnet of the shipped Fashion-MNIST supernet (28 px; no ../shared files),
// quantized on few images, 16 training images in batches of 8, top-1 on 8.
FineTuneRequest tinySubnetRun(const std::string& config, const std::string& out)
{
    FineTuneRequest rq;
    rq.model = shippedSubnet(config);
    rq.quantize.bn_images = 32;
    rq.quantize.calib_images = 16;
    rq.quantize.threads = 1;
    rq.scheme = SparseScheme::biasOnly(2);
    rq.scheme_name = "bias-only:2";
    rq.recipe.epochs = 2;
    rq.recipe.batch = 8;
    rq.recipe.train_images = 16;
    rq.recipe.test_images = 8;
    rq.recipe.threads = 1;
    rq.recipe.evaluate_initial = false;
    rq.out = out;
    return rq;
}

std::string subnetJson(int kernel)
{
    const DesignSpace space = loadSpace("mcunet-fmnist");
    SubnetConfig c = ArchSampler(space).minConfig(28);
    std::fill(c.ks.begin(), c.ks.end(), kernel);
    return c.toJson().dump();
}

std::map<std::string, std::vector<float>> valuesOf(const FineTuneModel& m)
{
    std::map<std::string, std::vector<float>> out;
    for (auto& [k, v] : m.values()) out[k] = v;
    return out;
}

}  // namespace

class TestFineTune : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void qasScalesEachChannelByTheHandComputedFactor()
    {
        // s_eff 0.5, s_y 0.25, s_x 0.1: QAS_b = 1/(0.5·0.25)² = 64, QAS_w = 1/(0.5·0.25/0.1)² = 0.64.
        QCOMPARE(qasBiasFactor(0.5f, 0.25f), 64.0f);
        QVERIFY(std::fabs(qasWeightFactor(0.5f, 0.25f, 0.1f) - 0.64f) < 1e-6f);

        const Network net = test::tinyResidualNet();
        const TrainingGraph g = lowerForward(net);
        const ParameterStore store = syntheticQuantParameters(g, net, 3);
        QuantizedParams q = quantizedFrom(g, store);
        addScales(q, net);
        const std::string head = net.head().ir_prefix;
        // The head as a new classifier with zero weights and biases: its logits sit at z_y (no class
        // clamped), so every channel gets a gradient; its effective scale 0.5 makes the factors round.
        const int K = net.head().cout, C = net.head().cin;
        q.set(head + "_scale", float32Array(std::vector<float>(static_cast<std::size_t>(K), 0.5f), {K}));
        q.set(head + "_weight", int8Array(std::vector<std::int8_t>(static_cast<std::size_t>(K * C), 0), {K, C, 1, 1}));
        q.set(head + "_bias", int32Array(std::vector<std::int32_t>(static_cast<std::size_t>(K), 0), {K}));
        q.scales[head + "_x_scale"] = 0.1;
        q.scales[head + "_y_scale"] = 0.25;

        const ResolvedScheme scheme = SparseScheme::biasOnly(0).resolve(net);   // the classifier only
        FineTuneModel withQas(net, q, scheme), plain(net, q, scheme);
        const auto before = valuesOf(plain);
        const torch::Tensor x = inputOf(store, net);
        const double lr = 1.0;
        withQas.step(x, {labelOf(store)}, lr, true);
        plain.step(x, {labelOf(store)}, lr, false);
        const auto a = valuesOf(withQas), b = valuesOf(plain);
        int moved = 0;
        for (const std::string& name : {head + "_bias", head + "_weight"}) {
            const float factor = name == head + "_bias" ? 64.0f : 0.64f;
            const std::vector<float>& v0 = before.at(name);
            for (std::size_t i = 0; i < v0.size(); ++i) {
                const double dq = a.at(name)[i] - v0[i], dp = b.at(name)[i] - v0[i];
                if (dp != 0) ++moved;
                QVERIFY2(std::fabs(dq - factor * dp) <= 1e-4 * std::fabs(factor * dp) + 1e-9,
                         qPrintable(QStringLiteral("%1[%2]: %3 vs %4·%5").arg(QString::fromStdString(name)).arg(i).arg(dq).arg(factor).arg(dp)));
            }
        }
        QVERIFY(moved > 10);   // a real step, not a vacuous comparison
        // Plain SGD is lr · gradient, the gradient autograd gives on the same fake-quantized model.
        ParameterStore p = store;
        for (const std::string& name : q.order) p.set(name, q.floats(name));
        const AutogradResult ref = fakeQuantAutograd(g, p);
        const std::vector<float>& gb = ref.gradients.at(head + "_bias");
        for (std::size_t i = 0; i < gb.size(); ++i)
            QVERIFY(std::fabs((before.at(head + "_bias")[i] - b.at(head + "_bias")[i]) - lr * gb[i]) <= 1e-5 * (std::fabs(lr * gb[i]) + 1e-6));
    }

    void oneStepEqualsTheExportedGraphsStep_data()
    {
        QTest::addColumn<int>("form");
        QTest::newRow("faithful") << int(ExportForm::Faithful);
        QTest::newRow("reference") << int(ExportForm::Reference);
    }

    void oneStepEqualsTheExportedGraphsStep()
    {
        if (!test::haveShared()) QSKIP("../shared is absent: the real MCUNet-5fps params are needed");
        QFETCH(int, form);
        const ExportForm f = static_cast<ExportForm>(form);
        const Network net = zooModel("mcunet-5fps");
        QuantizedParams params = readParamsPickle(test::sharedPath("reference/tinyengine/full-int8-params.pkl"));
        params.scales = readScaleJson(test::sharedPath("reference/tinyengine/scale.json"));
        const SparseScheme scheme = schemeByName("mcunet-5fps/49kb", &net);
        const ExportPlan plan = planExport(net, params, scheme, f, "step");
        const TrainingGraph& g = plan.graph;

        // One image (seeded int8 values) and a label, on both.
        std::mt19937 rng(11);
        std::uniform_int_distribution<int> px(-128, 127);
        std::vector<float> image(static_cast<std::size_t>(3 * 128 * 128));
        for (float& v : image) v = static_cast<float>(px(rng));
        const int label = 7;
        ParameterStore store;
        for (const std::string& name : plan.params.order) store.set(name, plan.params.floats(name));
        store.set("input", image);
        std::vector<float> onehot(10, 0.f);
        onehot[label] = 1.f;
        store.set("label", onehot);
        GraphInterpreter run(g);
        run.bind(store);
        run.run();

        const AutodiffMode mode = f == ExportForm::Reference ? AutodiffMode::Reference : AutodiffMode::Correct;
        FineTuneModel sim(net, plan.params, plan.scheme, mode);
        const auto before = valuesOf(sim);
        const double lr = 0.01;
        sim.step(torch::tensor(image).reshape({1, 3, 128, 128}), {label}, lr, true);
        const auto after = valuesOf(sim);

        // The graph's step: w − lr · QAS · g on the channels its gradient covers.
        int compared = 0;
        double worst = 0;
        for (const GraphOutput& out : g.outputs) {
            if (out.kind != GradientKind::Bias && out.kind != GradientKind::Weight) continue;
            const std::string& name = out.info;
            QVERIFY2(after.count(name), qPrintable(QString::fromStdString(name + " is not updated by the simulator")));
            const std::vector<float>& grad = run.output(name);
            const std::string prefix = name.substr(0, name.rfind('_'));
            const std::vector<float> eff = plan.params.floats(prefix + "_scale");
            const float sy = static_cast<float>(plan.params.scales.at(prefix + "_y_scale"));
            const TensorShape& ws = g.tensor(out.tensor).shape;   // the gradient: [O, k, KH, KW] (depthwise [k, 1, KH, KW])
            const std::vector<float>& v0 = before.at(name);
            const std::vector<float>& v1 = after.at(name);
            std::vector<float> expected = v0;
            double scale = 0;
            if (out.kind == GradientKind::Bias) {
                for (std::size_t o = 0; o < grad.size(); ++o) expected[o] -= static_cast<float>(lr * grad[o] * qasBiasFactor(eff[o], sy));
            } else {
                const float sx = static_cast<float>(plan.params.scales.at(prefix + "_x_scale"));
                const NdArray& w = plan.params.array(name);
                const std::int64_t O = w.shape[0], I = w.shape[1], KH = w.shape[2], KW = w.shape[3];
                const std::int64_t k = static_cast<std::int64_t>(ws[1]);   // the gradient's input channels
                const bool dw = ws[0] != O;                                  // depthwise: [k, 1, KH, KW]
                for (std::int64_t o = 0; o < (dw ? ws[0] : O); ++o)
                    for (std::int64_t i = 0; i < (dw ? 1 : k); ++i)
                        for (std::int64_t kk = 0; kk < KH * KW; ++kk) {
                            const std::size_t gi = static_cast<std::size_t>((o * (dw ? 1 : k) + i) * KH * KW + kk);
                            const std::size_t wi = static_cast<std::size_t>((o * I + i) * KH * KW + kk);
                            expected[wi] -= static_cast<float>(lr * grad[gi] * qasWeightFactor(eff[static_cast<std::size_t>(o)], sy, sx));
                        }
            }
            for (std::size_t i = 0; i < v0.size(); ++i) scale = std::max(scale, std::fabs(static_cast<double>(expected[i]) - v0[i]));
            double err = 0;
            for (std::size_t i = 0; i < v0.size(); ++i) err = std::max(err, std::fabs(static_cast<double>(expected[i]) - v1[i]));
            QVERIFY2(scale > 0, qPrintable(QString::fromStdString(name + ": a zero step (vacuous)")));
            worst = std::max(worst, err / scale);
            QVERIFY2(err <= 1e-3 * scale, qPrintable(QStringLiteral("%1: first difference %2 of a step of %3")
                                                         .arg(QString::fromStdString(name)).arg(err).arg(scale)));
            ++compared;
        }
        QCOMPARE(compared, static_cast<int>(after.size()));   // every parameter the graph updates, and no other
        QCOMPARE(compared, 25);   // the 49kb graph's 25 gradient outputs of weights and biases
        qInfo("worst relative difference of a step: %.2e", worst);
    }

    void stepsOnOneBatchLowerItsLoss()
    {
        if (!test::haveShared()) QSKIP("../shared is absent: the real MCUNet-5fps params are needed");
        Network net = zooModel("mcunet-5fps");
        QuantizedParams q = readParamsPickle(test::sharedPath("reference/tinyengine/full-int8-params.pkl"));
        q.scales = readScaleJson(test::sharedPath("reference/tinyengine/scale.json"));
        replaceClassifier(net, q, 4, 9);
        QCOMPARE(net.num_outputs, 4);
        FineTuneModel m(net, q, SparseScheme::biasOnly(4).resolve(net));
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        // Eight Fashion-MNIST test images, labelled by their class modulo 4.
        const std::unique_ptr<ImageDataset> data = openDataset("fashion-mnist:test");
        const Batch b = loadBatch(*data, {0, 1, 2, 3, 4, 5, 6, 7}, 128);
        const torch::Tensor x = m.quantizeInput(torch::from_blob(const_cast<float*>(b.pixels.data()), {8, 3, 128, 128}).clone());
        std::vector<int> labels;
        for (int l : b.labels) labels.push_back(l % 4);
        // lr 0.05 with QAS: a float-equivalent step on the float cross-entropy (head scale 1).
        const double first = m.step(x, labels, 0.05, true);
        double last = first;
        for (int i = 0; i < 25; ++i) last = m.step(x, labels, 0.05, true);
        QVERIFY2(last < 0.5 * first, qPrintable(QStringLiteral("loss %1 -> %2").arg(first).arg(last)));
    }

    void aCancelledRunResumesToTheSameParameters()
    {
        if (!test::haveShared()) QSKIP("../shared is absent: the real MCUNet-5fps params are needed");
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        QTemporaryDir tmp;
        FineTuneRequest rq;
        rq.model = ModelSource::zooWithParams("mcunet-5fps", test::sharedPath("reference/tinyengine/full-int8-params.pkl"));
        rq.scheme = SparseScheme::biasOnly(6);
        rq.scheme_name = "bias-only:6";
        rq.recipe.epochs = 2;
        rq.recipe.batch = 16;
        rq.recipe.train_images = 64;
        rq.recipe.test_images = 20;
        rq.recipe.threads = 1;   // one thread: the same sums in the same order, bit for bit
        rq.out = (tmp.path() + QStringLiteral("/whole")).toStdString();
        const FineTuneResult whole = fineTune(rq);
        QCOMPARE(int(whole.epochs.size()), 2);
        QVERIFY(!whole.resumed);

        rq.out = (tmp.path() + QStringLiteral("/cut")).toStdString();
        std::atomic<bool> stop{false};
        JobControl job;
        job.cancel = &stop;
        int steps = 0;
        job.progress = [&](std::size_t, std::size_t, const std::string& stage) {
            if (stage.rfind("epoch", 0) == 0 && ++steps == 5) stop = true;   // mid-way through epoch 2
        };
        bool cancelled = false;
        try {
            fineTune(rq, job);
        } catch (const CancelledError&) {
            cancelled = true;
        }
        QVERIFY(cancelled);
        const FineTuneResult resumed = fineTune(rq);
        QVERIFY(resumed.resumed);
        QCOMPARE(int(resumed.epochs.size()), 2);
        for (int e = 0; e < 2; ++e) QCOMPARE(resumed.epochs[static_cast<std::size_t>(e)].top1, whole.epochs[static_cast<std::size_t>(e)].top1);
        QCOMPARE(readFileBytes(rq.out + "/finetuned-params.pkl"), readFileBytes(tmp.path().toStdString() + "/whole/finetuned-params.pkl"));

        // Another run's checkpoint is refused, naming both.
        rq.scheme = SparseScheme::biasOnly(4);
        rq.scheme_name = "bias-only:4";
        const std::string msg = test::errorOf([&] { fineTune(rq); });
        QVERIFY2(msg.find("a checkpoint of another run") != std::string::npos, msg.c_str());
    }

    // Issue 45: the checkpoint's fingerprint held the config's path, so a config edited in place
    // resumed the old subnet's trained biases as the new subnet's result. It holds contents now: the
    // same subnet from another path resumes, an edited config at the same path is refused.
    void aCheckpointIsResumedByContentNotByPath()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        QTemporaryDir tmp;
        const std::string dir = tmp.path().toStdString(), config = dir + "/subnet.json", moved = dir + "/copy/subnet.json";
        writeFileAtomic(config, subnetJson(3));
        FineTuneRequest rq = tinySubnetRun(config, dir + "/run");
        const FineTuneResult first = fineTune(rq);
        QVERIFY(!first.resumed);
        QCOMPARE(int(first.epochs.size()), 2);

        std::filesystem::create_directories(dir + "/copy");
        writeFileAtomic(moved, subnetJson(3));
        rq.model = shippedSubnet(moved);
        const FineTuneResult again = fineTune(rq);   // the same run: read back
        QVERIFY(again.resumed);
        QCOMPARE(again.final_top1, first.final_top1);

        writeFileAtomic(config, subnetJson(5));   // edited in place: another subnet (same bias shapes)
        rq.model = shippedSubnet(config);
        const std::string msg = test::errorOf([&] { fineTune(rq); });
        QVERIFY2(msg.find(dir + "/run/finetune-state.json: a checkpoint of another run: the model differs") == 0, msg.c_str());
        QVERIFY2(msg.find("same name, other contents") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("recipe") == std::string::npos, msg.c_str());   // only what differs is named

        // Another recipe is named with both values.
        writeFileAtomic(config, subnetJson(3));
        rq.model = shippedSubnet(config);   // the config is read when the source is made
        rq.recipe.epochs = 3;
        const std::string recipeMsg = test::errorOf([&] { fineTune(rq); });
        QVERIFY2(recipeMsg.find("a checkpoint of another run: recipe epochs 2 in the checkpoint, 3 now") != std::string::npos, recipeMsg.c_str());
    }

    // Issue 45: a state file saying epochs_done 99 made a 2-epoch run report "finished" after fewer
    // epochs. Every figure is checked against the run's own bounds, naming the file and the key.
    void aDamagedCheckpointIsRefusedNamingTheKey()
    {
        if (fashionMnistDir().empty()) QSKIP("dataset-fashion-mnist is not installed");
        QTemporaryDir tmp;
        const std::string dir = tmp.path().toStdString();
        writeFileAtomic(dir + "/subnet.json", subnetJson(3));
        FineTuneRequest rq = tinySubnetRun(dir + "/subnet.json", dir + "/run");
        rq.prepared = std::make_shared<const PreparedModel>(prepareModel(rq.model, rq.quantize));
        QCOMPARE(int(fineTune(rq).epochs.size()), 2);
        const std::string statePath = dir + "/run/finetune-state.json";
        const Json good = readJsonFile(statePath);
        QCOMPARE(good["epochs_done"].get<int>(), 2);
        struct Case {
            Json patch;
            const char* expect;
        } cases[] = {
            {{{"epochs_done", 99}, {"next_batch", 1000000}}, "epochs_done: must be in 0..2, got 99"},
            {{{"epochs_done", 1}, {"next_batch", 1000000}}, "next_batch: must be in 0..1, got 1000000"},   // 16 images / 8 = 2 batches
            {{{"next_batch", 1}}, "next_batch: must be in 0..0, got 1"},                                   // a finished run is at batch 0
            {{{"epochs_done", 1}}, "history: holds 2 epochs, epochs_done says 1"},
            {{{"step", 7}}, "step: is not the step of epochs_done and next_batch (2000000)"},
            {{{"loss_sum", -1}}, "loss_sum: must be in 0"},
            {{{"initial_top1", 250}}, "initial_top1: must be in -1"},
        };
        for (const Case& c : cases) {
            Json state = good;
            state.merge_patch(c.patch);
            writeJsonFile(statePath, state);
            const std::string msg = test::errorOf([&] { fineTune(rq); });
            QVERIFY2(msg.rfind(statePath + ": " + c.expect, 0) == 0, msg.c_str());
        }
        Json state = good;
        state["history"][1]["top1"] = 250;
        writeJsonFile(statePath, state);
        const std::string msg = test::errorOf([&] { fineTune(rq); });
        QVERIFY2(msg.rfind(statePath + ": history[1].top1: must be in 0", 0) == 0, msg.c_str());
        writeJsonFile(statePath, good);
        QVERIFY(fineTune(rq).resumed);
    }

    // Issue 45: an --out that is a file (or under one) ended as "internal error" after the model was
    // prepared; it is refused first, naming the path.
    void aCheckpointFolderThatIsAFileIsRefusedFirst()
    {
        QTemporaryDir tmp;
        const std::string file = tmp.path().toStdString() + "/file";
        writeFileAtomic(file, "x");
        FineTuneRequest rq = tinySubnetRun("min", file);
        rq.model = ModelSource::subnetByName("mcunet-fmnist", "min", "/no/such/supernet.pth");   // the model would fail later
        QCOMPARE(test::errorOf([&] { fineTune(rq); }), "the checkpoint folder " + file + ": exists and is not a folder");
        rq.out = file + "/run";
        QCOMPARE(test::errorOf([&] { fineTune(rq); }), "the checkpoint folder " + file + "/run: cannot create it: " + file + " is not a folder");
    }

    void paramsOfAnotherModelAreNamedWithBothShapes()
    {
        if (!test::haveShared()) QSKIP("../shared is absent");
        const std::string msg = test::errorOf([] {
            QuantizedParams p = readParamsPickle(test::sharedPath("reference/tinyengine/full-int8-params.pkl"));
            p.scales = readScaleJson(test::sharedPath("reference/tinyengine/scale.json"));
            const Network other = zooModel("mbv2-w0.35");
            FineTuneModel m(other, p, SparseScheme::biasOnly(4).resolve(other));
        });
        QVERIFY2(msg.find("does not fit mbv2-w0.35") != std::string::npos, msg.c_str());
        QVERIFY2(msg.find("shape") != std::string::npos, msg.c_str());
    }
};

QTEST_GUILESS_MAIN(TestFineTune)
#include "test_finetune.moc"
