// TinyEngine's training step on the workbench (tinyEngineTrainingStep) and the comparison of
// `tinyscope device-run` (compareTrainingSteps), without the device (default tier). MIT's real 49kb
// MCUNet-5fps graph and params from ../shared; the expected figures are what the emulated Cortex-M7
// computed for the same step (docs/DEVICE_RUNNER.md; slow_device_run.cpp runs the device itself).
#include "TestSupport.h"

#include "device/DeviceRunner.h"
#include "tinyengine/GraphImport.h"
#include "tinyengine/TinyEngineTrainingStep.h"

#include <cstring>

using namespace tinyscope;

namespace {

ImportedGraph mit49kb()
{
    return importTinyEngineGraph(test::sharedPath("reference/tinyengine/49kb-int8-graph.json"), test::sharedPath("reference/tinyengine/full-int8-params.pkl"),
                                 test::sharedPath("reference/tinyengine/scale.json"));
}

const ParameterStep* find(const TrainingStepResult& r, const std::string& name)
{
    for (const ParameterStep& p : r.params)
        if (p.name == name) return &p;
    return nullptr;
}

// The device's side of a run, built from the workbench's own steps: the parameter table (int8 weights,
// int32 biases; depthwise biases as offsetRBias accumulators that start at the fold residual) and the
// dumps before training and after each step, as the harness writes them.
struct FakeDevice {
    Json table = Json::array();
    std::string before, dumps;
};

void append(std::string& out, const ParameterStep& p, const std::vector<std::int64_t>& values, const std::vector<std::int64_t>* accumulatorBase)
{
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (p.dtype == DType::Int8) {
            out.push_back(static_cast<char>(static_cast<std::int8_t>(values[i])));
        } else {
            const std::int64_t v = accumulatorBase ? (*accumulatorBase)[i] + values[i] - p.before[i] : values[i];
            const std::int32_t w = static_cast<std::int32_t>(v);
            out.append(reinterpret_cast<const char*>(&w), 4);
        }
    }
}

FakeDevice deviceOf(const ImportedGraph& im, const std::vector<std::vector<std::int8_t>>& images, const std::vector<int>& labels)
{
    FakeDevice d;
    QuantizedParams p = *im.params;
    std::vector<std::vector<std::int64_t>> residual;
    std::vector<std::vector<std::int64_t>> firstBefore;
    for (std::size_t k = 0; k < labels.size(); ++k) {
        const TrainingStepResult t = tinyEngineTrainingStep(im.graph, p, images[k % images.size()], labels[k]);
        for (std::size_t i = 0; i < t.params.size(); ++i) {
            const ParameterStep& s = t.params[i];
            // Depthwise convs (groups > 1 … here: a bias whose weight has one input channel per group) keep
            // their bias in an accumulator on the device; the 49kb graph's depthwise biases are "_conv_1_bias".
            const bool acc = s.name.find("_conv_1_bias") != std::string::npos;
            if (k == 0) {
                d.table.push_back({{"name", s.name}, {"array", (acc ? "offsetRBias" : "arr") + std::to_string(i)}, {"dtype", dtypeName(s.dtype)},
                                   {"bytes", static_cast<long long>(s.before.size()) * (s.dtype == DType::Int8 ? 1 : 4)}});
                residual.push_back(acc ? tinyEngineBiasFoldResidual(im.graph, *im.params, s.name) : std::vector<std::int64_t>{});
                firstBefore.push_back(s.before);
                append(d.before, s, s.before, acc ? &residual[i] : nullptr);
            }
            // An accumulator holds residual + (value − the export's value).
            std::vector<std::int64_t> base;
            if (acc) {
                base = residual[i];
                for (std::size_t e = 0; e < base.size(); ++e) base[e] += s.before[e] - firstBefore[i][e];
            }
            append(d.dumps, s, s.after, acc ? &base : nullptr);
        }
    }
    return d;
}

}  // namespace

class TestTinyEngineStep : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void oneStepIsWhatTheDeviceComputed()
    {
        REQUIRE_SHARED();
        ImportedGraph im = mit49kb();
        QuantizedParams p = *im.params;
        const TrainingStepResult r = tinyEngineTrainingStep(im.graph, p, lcgImages(1, 3, 128, 128).front(), 3);
        QCOMPARE(r.logits, (std::vector<std::int8_t>{-26, -30, -28, -32, -18, -15, -26, -25, -29, -34}));
        QCOMPARE(r.params.size(), std::size_t(25));   // 21 biases, 4 weights
        // The classifier's bias: the change the device made (docs/DEVICE_RUNNER.md).
        const ParameterStep* b = find(r, "v15_bias");
        QVERIFY(b);
        std::vector<std::int64_t> delta;
        for (std::size_t o = 0; o < b->after.size(); ++o) delta.push_back(b->after[o] - b->before[o]);
        QCOMPARE(delta, (std::vector<std::int64_t>{0, 0, 0, 7, 0, -5, 0, 0, 0, 0}));
        // The int8 weights: elements changed and updates that left [-128, 127] and wrapped, as on the device.
        struct Expect {
            const char* name;
            int channels;
            std::size_t elements;
            std::int64_t changed, wrapped;
        };
        for (const Expect& e : {Expect{"v9_conv_0_weight", 12, 1728, 717, 1}, Expect{"v10_conv_0_weight", 24, 4608, 2097, 12},
                                Expect{"v11_conv_0_weight", 24, 5760, 2485, 11}, Expect{"v15_weight", 160, 1600, 653, 0}}) {
            const ParameterStep* w = find(r, e.name);
            QVERIFY2(w, e.name);
            QCOMPARE(w->dtype, DType::Int8);
            QCOMPARE(w->channels, e.channels);
            QCOMPARE(w->after.size(), e.elements);
            std::int64_t changed = 0;
            for (std::size_t i = 0; i < w->after.size(); ++i) changed += w->after[i] != w->before[i];
            QCOMPARE(changed, e.changed);
            QCOMPARE(w->wrapped, e.wrapped);
        }
        // Every array the device updates, element counts as its table lists them: 8,258 elements changed in all.
        std::int64_t changed = 0;
        for (const ParameterStep& s : r.params)
            for (std::size_t i = 0; i < s.after.size(); ++i) changed += s.after[i] != s.before[i];
        QCOMPARE(changed, std::int64_t(8258));
        // No update of this step truncates within the gradient tolerance of an integer: the device's values
        // must be these, exactly.
        for (const ParameterStep& s : r.params)
            for (std::size_t i = 0; i < s.after.size(); ++i) QVERIFY(s.low[i] == s.high[i]);
        // The step updated `p`: the classifier's bias there is the new value.
        QCOMPARE(static_cast<std::int64_t>(p.value("v15_bias", 3)), b->after[3]);
        QCOMPARE(static_cast<std::int64_t>(im.params->value("v15_bias", 3)), b->before[3]);
    }

    void theToleranceAllowsOnlyTheOutcomesOfNearbyGradients()
    {
        ParameterStep w;
        w.dtype = DType::Int8;
        w.after = {127, 5};
        w.low = {126, 5};
        w.high = {128, 5};   // an update that stored 127 could, within the tolerance, store 126 or wrap 128 to -128
        QVERIFY(w.allows(0, 127));
        QVERIFY(w.allows(0, 126));
        QVERIFY(w.allows(0, -128));
        QVERIFY(!w.allows(0, 125));
        QVERIFY(!w.allows(0, -127));
        QVERIFY(w.allows(1, 5));
        QVERIFY(!w.allows(1, 4));
        QVERIFY(!w.allows(2, 5));   // no such element
        ParameterStep b;
        b.dtype = DType::Int32;
        b.after = {46923};
        b.low = {46923};
        b.high = {46924};
        QVERIFY(b.allows(0, 46924));
        QVERIFY(!b.allows(0, 46922));
        QVERIFY(!b.allows(0, 46923 + 256));
    }

    void theFoldResidualIsWhatTheCodeGeneratorWrites()
    {
        // TinyEngine's generated genModel.h for this export: offsetRBias37 (v13_conv_1) is 0 except
        // 3456, 128 and 384 at channels 101, 292 and 338 (the fold of dead channels leaves int32).
        REQUIRE_SHARED();
        const ImportedGraph im = mit49kb();
        const std::vector<std::int64_t> r = tinyEngineBiasFoldResidual(im.graph, *im.params, "v13_conv_1_bias");
        QCOMPARE(r.size(), std::size_t(384));
        for (std::size_t i = 0; i < r.size(); ++i) {
            const std::int64_t expected = i == 101 ? 3456 : i == 292 ? 128 : i == 338 ? 384 : 0;
            QVERIFY2(r[i] == expected, qPrintable(QStringLiteral("channel %1: %2").arg(i).arg(r[i])));
        }
        QVERIFY_THROWS_EXCEPTION(InputError, tinyEngineBiasFoldResidual(im.graph, *im.params, "v13_conv_1_weight"));
    }

    void theComparisonAgreesWithItselfAndNamesAFlippedElement()
    {
        REQUIRE_SHARED();
        const ImportedGraph im = mit49kb();
        const std::vector<std::vector<std::int8_t>> images = lcgImages(2, 3, 128, 128);
        const std::vector<int> labels{3, 4};
        const FakeDevice d = deviceOf(im, images, labels);

        DeviceRunResult ok;
        compareTrainingSteps(im, images, labels, d.table, d.before, d.dumps, ok);
        QVERIFY(ok.training_checked);
        QVERIFY2(ok.training_match, ok.training_difference.c_str());
        QCOMPARE(ok.max_param_rel_error, 0.0);
        QCOMPARE(ok.params.size(), std::size_t(25));
        QCOMPARE(ok.classifier_bias, std::string("v15_bias"));
        QCOMPARE(ok.classifier_bias_delta_device, (std::vector<std::int64_t>{0, 0, 0, 7, 0, -5, 0, 0, 0, 0}));
        QCOMPARE(ok.classifier_bias_delta_device, ok.classifier_bias_delta_predicted);

        // One weight byte of the second step's dump off by 3: named with its element, step and values.
        std::size_t tableBytes = 0, offset = 0;
        for (const Json& q : d.table) {
            if (q["name"] == "v10_conv_0_weight") offset = tableBytes;
            tableBytes += q["bytes"].get<std::size_t>();
        }
        QCOMPARE(d.dumps.size(), 2 * tableBytes);
        std::string dumps = d.dumps;
        const std::size_t at = tableBytes + offset + 100;
        const int was = static_cast<std::int8_t>(dumps[at]);
        dumps[at] = static_cast<char>(static_cast<std::int8_t>(was + 3));
        DeviceRunResult bad;
        compareTrainingSteps(im, images, labels, d.table, d.before, dumps, bad);
        QVERIFY(!bad.training_match);
        const std::string expected = "v10_conv_0_weight[100] after step 2: device " + std::to_string(static_cast<std::int8_t>(was + 3)) + ", workbench " + std::to_string(was);
        QVERIFY2(bad.training_difference.rfind(expected, 0) == 0, bad.training_difference.c_str());
        for (const DeviceParamCheck& c : bad.params) QCOMPARE(c.mismatches, std::int64_t(c.name == "v10_conv_0_weight" ? 1 : 0));

        // A depthwise bias's accumulator that did not start at the fold residual is named too.
        std::string before = d.before;
        std::size_t accOffset = 0;
        for (const Json& q : d.table) {
            if (q["name"] == "v13_conv_1_bias") break;
            accOffset += q["bytes"].get<std::size_t>();
        }
        std::int32_t acc;
        std::memcpy(&acc, before.data() + accOffset + 4 * 101, 4);
        QCOMPARE(acc, 3456);
        acc = 0;
        std::memcpy(before.data() + accOffset + 4 * 101, &acc, 4);
        DeviceRunResult accBad;
        compareTrainingSteps(im, images, labels, d.table, before, d.dumps, accBad);
        QVERIFY(!accBad.training_match);
        QVERIFY2(accBad.training_difference.find("v13_conv_1_bias[101]: before training") == 0, accBad.training_difference.c_str());
    }

    void aTableOrDumpThatDoesNotFitIsRefused()
    {
        REQUIRE_SHARED();
        const ImportedGraph im = mit49kb();
        const std::vector<std::vector<std::int8_t>> images = lcgImages(1, 3, 128, 128);
        const FakeDevice d = deviceOf(im, images, {3});
        DeviceRunResult r;
        // A dump one byte short.
        QVERIFY_THROWS_EXCEPTION(InputError, compareTrainingSteps(im, images, {3}, d.table, d.before, d.dumps.substr(1), r));
        // Two labels for one step's dump.
        QVERIFY_THROWS_EXCEPTION(InputError, compareTrainingSteps(im, images, {3, 3}, d.table, d.before, d.dumps, r));
        // A table entry without "bytes".
        Json table = d.table;
        table[0].erase("bytes");
        QVERIFY_THROWS_EXCEPTION(InputError, compareTrainingSteps(im, images, {3}, table, d.before, d.dumps, r));
        // A parameter the graph does not train: named, not a crash.
        table = d.table;
        table[0]["name"] = "v3_conv_1_bias";
        DeviceRunResult named;
        compareTrainingSteps(im, images, {3}, table, d.before, d.dumps, named);
        QVERIFY(!named.training_match);
        QVERIFY2(named.training_difference.find("v3_conv_1_bias: the device updates it") == 0, named.training_difference.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTinyEngineStep)
#include "test_tinyengine_step.moc"
