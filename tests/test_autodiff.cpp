// The compile-time autodiff: the interpreter's parameter gradients from the compiled, pruned
// backward graph equal LibTorch autograd on the fake-quantized model (correct mode), or on the
// model with the reference compiler's quirks (reference mode); the reference mode reproduces
// MIT's real exported 49kb graph op for op; dead-code elimination keeps what sparse update
// needs and nothing more.
#include "TestSupport.h"
#include "TinyNets.h"

#include "Error.h"
#include "graph/Autodiff.h"
#include "graph/DeadCodeElimination.h"
#include "graph/ForwardLowering.h"
#include "graph/GraphInterpreter.h"
#include "graph/PublishedSchemes.h"
#include "nn/quantize/FakeQuantAutograd.h"
#include "nn/quantize/GradientCheck.h"
#include "zoo/NetworkBuilder.h"
#include "zoo/ZooCatalog.h"

#include <algorithm>
#include <cmath>
#include <set>

using namespace tinyscope;
using test::tinyResidualNet;

namespace {


SparseScheme scheme(int nBias, std::vector<int> idx, std::vector<double> ratio)
{
    SparseScheme s;
    s.n_bias_update = nBias;
    s.manual_weight_idx = std::move(idx);
    s.weight_update_ratio = std::move(ratio);
    return s;
}

struct Check {
    int outputs = 0;
    double worst = 0;
};

// Interpreter on the pruned graph vs autograd, for every gradient output of the graph; a
// gradient that is zero everywhere (saturated clamps) would make the check vacuous and fails.
Check compareWithAutograd(const Network& net, const SparseScheme& s, AutodiffMode mode, unsigned seed)
{
    const ResolvedScheme r = s.resolve(net);
    const TrainingGraph g = buildTrainingGraph(net, r, mode);
    const GradientCheckResult res = checkGradients(g, net, r, syntheticQuantParameters(g, net, seed));
    Check c;
    c.outputs = static_cast<int>(res.gradients.size());
    c.worst = res.maxRelativeError();
    if (std::fabs(res.loss - res.reference_loss) > 1e-4 * std::max(1.0, std::fabs(res.reference_loss))) c.worst = 1;
    for (const GradientComparison& e : res.gradients) {
        if (e.scale == 0) c.worst = 1;
        if (e.relative_error > 1e-4 || e.scale == 0) qWarning("%s: relative error %g of %g", e.name.c_str(), e.relative_error, e.scale);
    }
    return c;
}

// Largest difference relative to the largest reference value.
double relativeError(const std::vector<float>& got, const std::vector<float>& want)
{
    double diff = 0, scale = 1e-30;
    for (std::size_t i = 0; i < want.size(); ++i) {
        diff = std::max(diff, std::fabs(static_cast<double>(got[i]) - want[i]));
        scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
    }
    return diff / scale;
}

bool hasOp(const TrainingGraph& g, OpKind kind, int layer)
{
    for (int op : g.order)
        if (g.op(op).kind == kind && g.op(op).layer == layer) return true;
    return false;
}

}  // namespace

class TestAutodiff : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void correctModeGradientsEqualAutogradForBiasOnlyUpdate()
    {
        const Network net = tinyResidualNet();
        const Check c = compareWithAutograd(net, SparseScheme::biasOnly(7), AutodiffMode::Correct, 1);
        QCOMPARE(c.outputs, 8 + 1);   // 8 biases + the classifier weight
        QVERIFY2(c.worst < 1e-4, qPrintable(QString::number(c.worst)));
    }

    void correctModeGradientsEqualAutogradForPartialChannelUpdate()
    {
        const Network net = tinyResidualNet();
        // pw1 ½, depthwise ½, second pw1 ¼, second depthwise full.
        const Check c = compareWithAutograd(net, scheme(6, {1, 2, 4, 5}, {0.5, 0.5, 0.25, 1}), AutodiffMode::Correct, 2);
        QCOMPARE(c.outputs, 7 + 5);
        QVERIFY2(c.worst < 1e-4, qPrintable(QString::number(c.worst)));
    }

    void correctModeGradientsEqualAutogradForFullUpdate()
    {
        const Network net = tinyResidualNet();
        const Check c = compareWithAutograd(net, SparseScheme::full(net), AutodiffMode::Correct, 3);
        QCOMPARE(c.outputs, 16);
        QVERIFY2(c.worst < 1e-4, qPrintable(QString::number(c.worst)));
    }

    void referenceModeGradientsEqualAutogradWithTheCompilersQuirks()
    {
        const Network net = tinyResidualNet();
        for (const SparseScheme& s : {SparseScheme::biasOnly(7), scheme(6, {1, 2, 4, 5}, {0.5, 0.5, 0.25, 1}),
                                      SparseScheme::full(net)}) {
            const Check c = compareWithAutograd(net, s, AutodiffMode::Reference, 4);
            QVERIFY(c.outputs > 8);
            QVERIFY2(c.worst < 1e-4, qPrintable(QString::number(c.worst)));
        }
    }

    void referenceQuirksLoseTheSkipGradientAndTheZeroPoint()
    {
        // The quirks are real: the reference graph's gradients differ from the true ones.
        const Network net = tinyResidualNet();
        const ResolvedScheme r = SparseScheme::full(net).resolve(net);
        const TrainingGraph ref = buildTrainingGraph(net, r, AutodiffMode::Reference);
        const TrainingGraph cor = buildTrainingGraph(net, r, AutodiffMode::Correct);
        // The add's skip input is the only contribution the reference walk drops.
        QCOMPARE(int(ref.dropped_contributions.size()), 1);
        const Op& dropped = ref.op(ref.dropped_contributions[0].first);
        QCOMPARE(dropped.kind, OpKind::McuAdd);
        QCOMPARE(ref.dropped_contributions[0].second, 0);
        QVERIFY(cor.dropped_contributions.empty());
        int adds = 0;
        for (int op : cor.order) adds += cor.op(op).kind == OpKind::Add;
        QCOMPARE(adds, 1);   // the gradient accumulation at the residual
        for (int op : ref.order) QVERIFY(ref.op(op).kind != OpKind::Add);

        const ParameterStore p = syntheticQuantParameters(cor, net, 5);
        GraphInterpreter a(ref), b(cor);
        a.bind(p);
        b.bind(p);
        a.run();
        b.run();
        // The stem's bias gradient misses the skip path; a post-ReLU layer's weight gradient
        // misses the zero point (−128).
        QVERIFY(relativeError(a.output("v0_bias"), b.output("v0_bias")) > 1e-3);
        QVERIFY(relativeError(a.output("v1_conv_0_weight"), b.output("v1_conv_0_weight")) > 1e-3);
        // Above the residual nothing differs but the zero point: biases agree.
        QVERIFY(relativeError(a.output("v2_conv_2_bias"), b.output("v2_conv_2_bias")) < 1e-5);
    }

    void squeezeExciteGateGradientsEqualAutograd()
    {
        const Network net = tinyResidualNet(true);
        const Check c = compareWithAutograd(net, SparseScheme::full(net), AutodiffMode::Correct, 6);
        QCOMPARE(c.outputs, 20);
        QVERIFY2(c.worst < 1e-4, qPrintable(QString::number(c.worst)));
    }

    void resnet8WithShortcutConvsGradientsEqualAutograd()
    {
        const Network net = zooModel("resnet-8");
        // Last stage fully (conv1, conv2, shortcut) plus a ¼ pointwise shortcut in stage 2.
        const Check c = compareWithAutograd(net, scheme(6, {3, 4, 5, 6, 7, 8}, {0, 0, 0.25, 1, 1, 1}),
                                            AutodiffMode::Correct, 7);
        QCOMPARE(c.outputs, 7 + 5);
        QVERIFY2(c.worst < 1e-4, qPrintable(QString::number(c.worst)));
    }

    void interpreterForwardEqualsTheFakeQuantizedModelExactly()
    {
        const Network net = tinyResidualNet(true);
        const TrainingGraph g = buildTrainingGraph(net, SparseScheme::biasOnly(2).resolve(net));
        const ParameterStore p = syntheticQuantParameters(g, net, 8);
        GraphInterpreter run(g);
        run.bind(p);
        run.runForward();
        const AutogradResult ref = fakeQuantAutograd(g, p);
        int clampedLow = 0, clampedHigh = 0;
        for (int i = 0; i < g.forward_ops; ++i) {
            const std::vector<float>& v = run.value(g.op(i).output);
            QCOMPARE(v.size(), ref.forward[static_cast<std::size_t>(i)].size());
            if (g.op(i).phase == Phase::Forward) QCOMPARE(v, ref.forward[static_cast<std::size_t>(i)]);   // integers, exactly
            if (g.op(i).kind == OpKind::McuTruncate)
                for (float x : v) {
                    clampedLow += x == -128.f;
                    clampedHigh += x == 127.f;
                }
        }
        // The synthetic quantization exercises both sides of the clamp mask.
        QVERIFY(clampedLow > 0);
        QVERIFY(clampedHigh > 0);
    }

    void referenceModeReproducesTheReal49kbGraphOpForOp()
    {
        REQUIRE_SHARED();
        const Json ref = readJsonFile(test::sharedPath("reference/tinyengine/49kb-int8-graph.json"));
        const Network net = zooModel("mcunet-5fps");
        const TrainingGraph g = buildTrainingGraph(net, schemeByName("mcunet-5fps/49kb", nullptr).resolve(net),
                                                   AutodiffMode::Reference);
        QCOMPARE(g.liveOps(), 423);
        QCOMPARE(int(ref.size()), 423);
        QCOMPARE(g.forward_ops, 105);
        QCOMPARE(int(g.outputs.size()), 29);
        std::vector<int> position(g.ops.size(), -1);
        for (std::size_t i = 0; i < g.order.size(); ++i) position[static_cast<std::size_t>(g.order[i])] = static_cast<int>(i);
        for (std::size_t i = 0; i < ref.size(); ++i) {
            const Op& op = g.op(g.order[i]);
            const Json& r = ref[i];
            const QByteArray where = QByteArray("op ") + QByteArray::number(int(i));
            QVERIFY2(r["type"] == opTypeName(op.kind), where.constData());
            OpKind parsed;
            QVERIFY(opKindFromName(r["type"].get<std::string>(), parsed) && parsed == op.kind);
            QVERIFY2(r["attrs"] == op.attrs, (where + " attrs " + QByteArray::fromStdString(op.attrs.dump())).constData());
            const Tensor& out = g.tensor(op.output);
            QVERIFY2(r["outputs"][0]["shape"] == Json(out.shape.empty() ? TensorShape{1} : out.shape), where.constData());
            QVERIFY2(r["outputs"][0]["dtype"] == dtypeName(out.dtype), where.constData());
            QCOMPARE(r["inputs"].size(), op.inputs.size());
            for (std::size_t k = 0; k < op.inputs.size(); ++k) {
                const Tensor& t = g.tensor(op.inputs[k]);
                const Json& ri = r["inputs"][k];
                if (t.kind == TensorKind::Parameter) {
                    QVERIFY2(ri["name"] == t.name, where.constData());
                } else if (t.kind == TensorKind::Constant) {
                    QCOMPARE(ri["var_type"].get<std::string>(), std::string("constant"));
                    QCOMPARE(ri["meta"]["data"].get<double>(), t.value);
                } else {
                    const std::string name = ri["name"];
                    QCOMPARE(std::stoi(name.substr(name.find('@') + 1)), position[static_cast<std::size_t>(t.producer)]);
                }
            }
            const Json& meta = r["outputs"][0]["meta"];
            if (meta.contains("output_info")) {
                bool found = false;
                for (const GraphOutput& o : g.outputs) found |= o.tensor == op.output && o.info == meta["output_info"];
                QVERIFY2(found, where.constData());
            }
        }
    }

    void deadCodeEliminationStopsAtTheEarliestUpdatedLayer()
    {
        const Network net = zooModel("mcunet-5fps");
        const TrainingGraph g = buildTrainingGraph(net, schemeByName("mcunet-5fps/49kb", nullptr).resolve(net),
                                                   AutodiffMode::Correct);
        const int first = net.convLayers()[22], second = net.convLayers()[23];
        // Conv 22 is the earliest updated layer: its bias gradient, but no input gradient.
        QVERIFY(!hasOp(g, OpKind::Conv2dTranspose, first));
        QVERIFY(hasOp(g, OpKind::Conv2dTranspose, second));
        // Bias-only conv 23: its mask and bias sum, no weight chain.
        QVERIFY(hasOp(g, OpKind::GreaterEqual, second));
        QVERIFY(!hasOp(g, OpKind::Tile, second));
        // Weight-updated conv 24 (¼ of 48 channels): its saved input, sliced to 12 channels.
        const int w24 = net.convLayers()[24];
        bool slice = false;
        for (int op : g.order) {
            const Op& o = g.op(op);
            if (o.layer == w24 && o.kind == OpKind::StridedSlice) slice = g.tensor(o.output).shape == TensorShape{1, 12, 8, 8};
        }
        QVERIFY(slice);
        // Nothing in front of the tail runs backward.
        for (int op : g.order) {
            const Op& o = g.op(op);
            if (o.phase == Phase::Backward && o.layer >= 0) QVERIFY(o.layer >= first);
        }
        // Correct mode adds the skip gradients (7 residual blocks, 4 of them in the tail).
        int adds = 0;
        for (int op : g.order) adds += g.op(op).kind == OpKind::Add;
        QCOMPARE(adds, 4);
    }

    void biasToggleReselectsOutputsLikeARebuild()
    {
        const Network net = zooModel("mcunet-5fps");
        SparseScheme s = schemeByName("mcunet-5fps/49kb", nullptr);
        TrainingGraph g = buildTrainingGraph(net, s.resolve(net), AutodiffMode::Reference);
        s.n_bias_update = 18;
        s.manual_weight_idx = {24, 27, 30};
        s.weight_update_ratio = {0.25, 0.5, 0.5};
        QVERIFY(selectOutputs(g, net, s.resolve(net)));
        const TrainingGraph fresh = buildTrainingGraph(net, s.resolve(net), AutodiffMode::Reference);
        QCOMPARE(g.liveOps(), fresh.liveOps());
        QCOMPARE(g.outputs.size(), fresh.outputs.size());
        for (std::size_t i = 0; i < g.order.size(); ++i) {
            QCOMPARE(g.op(g.order[i]).kind, fresh.op(fresh.order[i]).kind);
            QCOMPARE(g.tensor(g.op(g.order[i]).output).shape, fresh.tensor(fresh.op(fresh.order[i]).output).shape);
        }
        // A different channel count needs a rebuild.
        s.weight_update_ratio = {0.5, 0.5, 0.5};
        QVERIFY(!selectOutputs(g, net, s.resolve(net)));
    }

    void everyLowerableZooModelGetsATrainingGraph()
    {
        for (const std::string& name : zooModelNames()) {
            const Network net = zooModel(name);
            if (name == "cct-2/3x2") {
                QVERIFY_THROWS_EXCEPTION(InputError, lowerForward(net));
                continue;
            }
            const TrainingGraph g = buildTrainingGraph(net, SparseScheme::full(net).resolve(net));
            QCOMPARE(int(g.outputs.size()), 1 + 2 * net.numConvs());
            QVERIFY(g.liveOps() > g.forward_ops);
        }
    }
};

QTEST_GUILESS_MAIN(TestAutodiff)
#include "test_autodiff.moc"
