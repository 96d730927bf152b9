// The training-memory ledger: the analytic extra memory equals tiny-training's numbers byte for
// byte for all 15 published schemes and the README's "last 12 layers"; the schedule estimate
// follows the documented rules on a network small enough to work out by hand; and the ledger
// charges exactly what the pruned training graph keeps.
#include "TestSupport.h"

#include "graph/Autodiff.h"
#include "graph/ForwardLowering.h"
#include "graph/MemoryLedger.h"
#include "graph/PublishedSchemes.h"
#include "zoo/NetworkBuilder.h"
#include "zoo/ZooCatalog.h"

#include <map>
#include <set>

using namespace tinyscope;

namespace {

const PublishedScheme& published(const std::string& model, const std::string& name)
{
    for (const PublishedScheme& p : publishedSchemes())
        if (p.model == model && p.name == name) return p;
    throw std::runtime_error("no published scheme " + model + "/" + name);
}

// input 1×4×4 → conv1 1×1 1→2 (ReLU) → conv2 1×1 2→2 → pool → fc 2→3.
Network handNet()
{
    NetworkBuilder b("hand", {1, 4, 4});
    int x = b.conv(-1, ConvSpec::of("conv1", "pw", "v0", -1, 2, 1, 1, 1, Activation::ReLU).withBias());
    x = b.conv(x, ConvSpec::of("conv2", "pw", "v1", -1, 2).withBias());
    x = b.globalAvgPool(x, "pool");
    b.conv(x, ConvSpec::of("fc", "classifier", "v2", -1, 3).asLinear());
    return b.finish(3, LossKind::CrossEntropy, "hand-computed", "tests");
}

}  // namespace

class TestMemoryLedger : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void allSixteenSchemesEqualTheReferenceByteForByte()
    {
        REQUIRE_SHARED();
        const Json ref = readJsonFile(test::sharedPath("reference/tiny-training/schemes.json"));
        QCOMPARE(ref["schemes"].size(), std::size_t(16));
        QCOMPARE(publishedSchemes().size(), std::size_t(16));
        for (const Json& e : ref["schemes"]) {
            const std::string model = e["model"], name = e["name"];
            const QByteArray where = QByteArray::fromStdString(model + "/" + name);
            const PublishedScheme& p = published(model, name);
            const Network net = zooModel(model);
            const ResolvedScheme r = p.scheme.resolve(net);
            // Our table holds the scheme as published.
            QCOMPARE(r.n_bias_update, e["n_bias_update"].get<int>());
            const Json& idx = e.contains("equivalent_manual_weight_idx") ? e["equivalent_manual_weight_idx"] : e["manual_weight_idx"];
            std::vector<int> weightIdx;
            for (int i = 0; i < net.numBackboneConvs(); ++i)
                if (r.conv(i).ratio > 0 || std::find(idx.begin(), idx.end(), i) != idx.end()) weightIdx.push_back(i);
            QVERIFY2(Json(weightIdx) == idx, where.constData());

            const MemoryLedger m = TrainingMemoryModel(net).ledger(r, AutodiffMode::Reference);
            const Json& b = e["breakdown"];
            QVERIFY2(m.extra.classifier_input == b["classifier_input_bytes"].get<long long>(), where.constData());
            QVERIFY2(m.extra.masks() == b["mask_bytes"].get<long long>(), where.constData());
            QVERIFY2(m.extra.biases == b["bias_bytes"].get<long long>(), where.constData());
            QVERIFY2(m.extra.saved_inputs == b["saved_input_bytes"].get<long long>(), where.constData());
            QVERIFY2(m.extra.weights == b["trainable_weight_bytes"].get<long long>(), where.constData());
            QVERIFY2(m.extra.total() == b["total_bytes"].get<long long>(), where.constData());
            QVERIFY2(m.extra.totalBits() == b["total_bits"].get<long long>(), where.constData());
            // Per layer: the tail and the weight-updated convs.
            for (const Json& t : e["tail_layers"]) {
                const LedgerRow& row = m.rows[t["index"].get<std::size_t>()];
                QVERIFY2(row.mask_bits == t["mask_bits"].get<long long>(), where.constData());
                QVERIFY2(row.bias_bytes == t["bias_bytes"].get<long long>(), where.constData());
                QVERIFY2(row.saved_input_bytes == t["saved_input_bytes"].get<long long>(), where.constData());
                QVERIFY2(row.weight_bytes == t["weight_bytes"].get<long long>(), where.constData());
                QVERIFY2(row.k == t["k"].get<int>(), where.constData());
            }
            for (const Json& w : e["weight_layers"]) {
                const ConvUpdate& u = r.conv(w["index"].get<int>());
                QVERIFY2(u.k == w["k"].get<int>() && u.k_compiler == w["k_compiler_round"].get<int>(), where.constData());
            }
            // Rows outside the tail cost nothing; the classifier row holds only its input.
            const int first = e["flags"]["first_updated_conv"].get<int>();
            QCOMPARE(r.first_updated, first);
            for (int i = 0; i < first; ++i) QCOMPARE(m.rows[std::size_t(i)].totalBytes(), 0.0);
            QCOMPARE(m.rows.back().classifier_input_bytes, m.extra.classifier_input);
            // The published names are floor(kB).
            if (e.contains("check_floor_equals_name"))
                QVERIFY2(std::to_string(m.extra.total() / 1024) + "kb" == name, where.constData());
        }
    }

    void scheduleFollowsTheRulesOnAHandComputedNetwork()
    {
        const Network net = handNet();
        SparseScheme s;
        s.n_bias_update = 1;
        s.manual_weight_idx = {1};
        s.weight_update_ratio = {1.0};
        const MemoryLedger m = TrainingMemoryModel(net).ledger(s.resolve(net));
        // Analytic: fc input 2 + mask 32 bits + bias 8 + saved input 4·4·2 + weight 2·2.
        QCOMPARE(m.extra.classifier_input, 2LL);
        QCOMPARE(m.extra.masks(), 4LL);
        QCOMPARE(m.extra.biases, 8LL);
        QCOMPARE(m.extra.saved_inputs, 32LL);
        QCOMPARE(m.extra.weights, 4LL);
        QCOMPARE(m.extra.total(), 50LL);
        // Trainable SRAM: conv2 bias 8 + weight 4; fc bias 12 + weight 6.
        QCOMPARE(m.trainable_bytes, 30LL);
        // Inference: max(16+32, 32+32, 32+2, 2+3).
        QCOMPARE(m.inference_peak_bytes, 64LL);
        // Forward steps: working + saved so far + trainable.
        QCOMPARE(m.schedule.size(), std::size_t(4 + 3));   // 4 forward, backward of fc, pool, conv2
        QCOMPARE(m.schedule[0].total, 48LL + 0 + 30);
        QCOMPARE(m.schedule[1].total, 64LL + 36 + 30);    // conv2: mask 4 + saved input 32
        QCOMPARE(m.schedule[3].total, 5LL + 39 + 30);     // fc: its mask 1 + its input 2
        // Backward: float32 gradients alive + saved not yet consumed + trainable.
        QCOMPARE(m.schedule[4].total, 4LL * (3 + 2) + 39 + 30);       // fc
        QCOMPARE(m.schedule[5].total, 4LL * (2 + 32) + 36 + 30);      // pool
        QCOMPARE(m.schedule[6].total, 4LL * 32 + 36 + 30);            // conv2: BP stops, no input gradient
        QCOMPARE(m.peak_bytes, 202LL);
        // Without reordering the parameter gradients pile up: fc 4·9, conv2 4·6.
        QCOMPARE(m.schedule[6].accumulated, 4LL * (9 + 6));
        QCOMPARE(m.peak_bytes_no_reorder, 194LL + 60);
        QCOMPARE(m.backward, (std::vector<char>{0, 1, 1, 1}));
    }

    void depthwiseConvsRunInPlace()
    {
        NetworkBuilder b("dw", {2, 4, 4});
        int x = b.conv(-1, ConvSpec::of("dw", "dw", "v0", -1, 2, 3, 1, 2).withBias());
        x = b.globalAvgPool(x, "pool");
        b.conv(x, ConvSpec::of("fc", "classifier", "v1", -1, 2).asLinear());
        const Network net = b.finish(2, LossKind::CrossEntropy, "", "");
        // The depthwise step holds one 32-byte buffer, not input + output.
        QCOMPARE(TrainingMemoryModel(net).inferencePeakBytes(), 34LL);   // the pool: 32 + 2
    }

    void ledgerChargesWhatThePrunedGraphKeeps()
    {
        // For every published scheme and both modes: the layers with backward work, the convs
        // whose clamp mask is kept and the saved (sliced) inputs are the same in both readers.
        for (const PublishedScheme& p : publishedSchemes()) {
            const Network net = zooModel(p.model);
            const ResolvedScheme r = p.scheme.resolve(net);
            TrainingMemoryModel model(net);
            for (AutodiffMode mode : {AutodiffMode::Reference, AutodiffMode::Correct}) {
                const QByteArray where = QByteArray::fromStdString(p.id() + " " + autodiffModeName(mode));
                const TrainingGraph g = buildTrainingGraph(net, r, mode);
                const MemoryLedger m = model.ledger(r, mode);
                std::vector<char> backward(net.layers.size(), 0);
                std::set<int> masked;
                std::map<int, long long> savedInput;
                for (int op : g.order) {
                    const Op& o = g.op(op);
                    if (o.phase != Phase::Backward || o.layer < 0) continue;
                    if (o.role != OpRole::Accumulate) backward[std::size_t(o.layer)] = 1;
                    const Tensor& in = g.tensor(o.inputs.empty() ? o.output : o.inputs[0]);
                    if (o.role == OpRole::Mask && o.kind == OpKind::Cast && in.producer >= 0 &&
                        g.op(in.producer).kind == OpKind::McuConv2d)
                        masked.insert(net.layer(g.op(in.producer).layer).conv_index);
                    if (o.role == OpRole::WeightGrad && o.kind == OpKind::Reshape &&
                        g.tensor(o.output).shape.size() == 4 && g.tensor(o.output).shape[0] == 1 &&
                        o.attrs["newshape"] == Json::array({1, -1, 0, 0}))
                        savedInput[net.layer(o.layer).conv_index] = in.elems();   // the (sliced) saved input
                }
                QVERIFY2(backward == m.backward, where.constData());
                for (const LedgerRow& row : m.rows) {
                    if (row.classifier) {
                        QVERIFY2(savedInput.at(row.index) == row.classifier_input_bytes, where.constData());
                        continue;
                    }
                    QVERIFY2(masked.count(row.index) == (row.mask_bits > 0 ? 1u : 0u), where.constData());
                    const long long kept = savedInput.count(row.index) ? savedInput.at(row.index) : 0;
                    QVERIFY2(kept == row.saved_input_bytes, where.constData());
                }
            }
        }
    }

    void peakEstimatesAreOrdered()
    {
        for (const std::string& name : zooModelNames()) {
            const Network net = zooModel(name);
            if (!loweringObstacle(net).empty()) continue;   // CCT: no int8 training graph
            TrainingMemoryModel model(net);
            for (const SparseScheme& s : {SparseScheme::biasOnly(0), SparseScheme::biasOnly(3), SparseScheme::full(net)}) {
                const MemoryLedger m = model.ledger(s.resolve(net));
                QVERIFY(m.peak_bytes >= m.inference_peak_bytes + m.trainable_bytes);
                QVERIFY(m.peak_bytes_no_reorder >= m.peak_bytes);
                QVERIFY(m.peak_bytes_no_reorder > m.peak_bytes || m.schedule[std::size_t(m.peak_step)].backward == false);
            }
            // Updating more never needs less memory.
            const MemoryLedger small = model.ledger(SparseScheme::biasOnly(2).resolve(net));
            const MemoryLedger big = model.ledger(SparseScheme::full(net).resolve(net));
            QVERIFY(big.extra.total() > small.extra.total());
            QVERIFY(big.peak_bytes > small.peak_bytes);
            QVERIFY(big.peak_bytes_no_reorder > big.peak_bytes);
        }
    }

    void ledgerJsonHasTheDocumentedFields()
    {
        const Network net = zooModel("mcunet-5fps");
        const MemoryLedger m =
            TrainingMemoryModel(net).ledger(schemeByName("49kb", &net).resolve(net), AutodiffMode::Reference);
        const Json j = m.toJson(net);
        QCOMPARE(j["extra_bytes"].get<long long>(), 50944LL);
        for (const char* k : {"classifier_input", "masks", "biases", "saved_inputs", "weights"})
            QVERIFY(j["breakdown"].contains(k));
        for (const char* k : {"peak_bytes", "peak_bytes_no_reorder", "inference_peak_bytes", "trainable_bytes", "layers", "schedule"})
            QVERIFY2(j.contains(k), k);
        QCOMPARE(j["inference_peak_bytes"].get<long long>(), m.inference_peak_bytes);
        QCOMPARE(j["layers"].size(), std::size_t(43));
    }
};

QTEST_GUILESS_MAIN(TestMemoryLedger)
#include "test_memory_ledger.moc"
