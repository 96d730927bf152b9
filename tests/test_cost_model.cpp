// The cost model must equal the lab's numbers exactly: all 25 reference subnets (MACs, MACs
// without BN, params, peak bytes, peak layer, every peak term) and 5 per-module breakdowns.
#include "TestSupport.h"

#include "cost/CostModel.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "space/SubnetLayout.h"

using namespace tinyscope;

class TestCostModel : public QObject {
    Q_OBJECT
    DesignSpace space = presetSpace("mcunet-vww");
    Json ref;

private Q_SLOTS:
    void initTestCase()
    {
        REQUIRE_SHARED();
        ref = readJsonFile(test::sharedPath("reference/mcunet-vww/cost_reference.json"));
        QCOMPARE(ref["entries"].size(), std::size_t(25));
        QCOMPARE(ref["per_layer_breakdown"].size(), std::size_t(5));
    }

    void totalsEqualAll25ReferenceEntries()
    {
        CostModel model(space);
        for (const Json& e : ref["entries"]) {
            const std::string id = "entry " + std::to_string(e["id"].get<int>());
            SubnetConfig c = SubnetConfig::fromJson(e["config"], space, id);
            CostReport r = model.report(c);
            QVERIFY2(r.summary.macs == e["macs"].get<long long>(), id.c_str());
            QVERIFY2(r.summary.macs_without_bn == e["macs_breakdown"]["macs_without_bn"].get<long long>(), id.c_str());
            QVERIFY2(r.conv_macs == e["macs_breakdown"]["conv_macs"].get<long long>(), id.c_str());
            QVERIFY2(r.bn_elements == e["macs_breakdown"]["bn_elements"].get<long long>(), id.c_str());
            QVERIFY2(r.summary.params == e["params"].get<long long>(), id.c_str());
            QVERIFY2(r.summary.peak_activation_bytes == e["peak_activation_bytes"].get<long long>(), id.c_str());
            QCOMPARE(r.peak_layer, e["peak_layer"].get<std::string>());
            // Every peak term, by name.
            const Json& terms = e["peak_memory_terms"];
            QCOMPARE(r.peak_terms.size(), terms.size());
            for (const PeakTerm& t : r.peak_terms)
                QVERIFY2(t.elements == terms[t.name].get<long long>(), (id + " " + t.name).c_str());
            // The allocation-free summary agrees with the report.
            CostSummary s = model.summary(c);
            QCOMPARE(s.macs, r.summary.macs);
            QCOMPARE(s.params, r.summary.params);
            QCOMPARE(s.peak_activation_bytes, r.summary.peak_activation_bytes);
            QCOMPARE(s.flash_bytes, r.summary.flash_bytes);
        }
    }

    void perModuleBreakdownsMatch()
    {
        CostModel model(space);
        for (const Json& b : ref["per_layer_breakdown"]) {
            SubnetConfig c = SubnetConfig::fromJson(b["config"], space, "breakdown");
            CostReport r = model.report(c);
            const Json& layers = b["layers"];
            QCOMPARE(r.layers.size(), layers.size());
            for (std::size_t i = 0; i < layers.size(); ++i) {
                const Json& L = layers[i];
                const LayerCost& m = r.layers[i];
                const std::string where = "entry " + std::to_string(b["entry_id"].get<int>()) + " row " + std::to_string(i) + " " + m.name;
                QCOMPARE(m.name, L["name"].get<std::string>());
                QCOMPARE(m.type, L["type"].get<std::string>());
                QVERIFY2(m.input_shape == L["input_shape"].get<std::vector<int>>(), where.c_str());
                QVERIFY2(m.output_shape == L["output_shape"].get<std::vector<int>>(), where.c_str());
                QVERIFY2(m.macs == L["thop_0_1_1_ops"].get<long long>(), where.c_str());
                QVERIFY2(m.params == L.value("params", 0LL), where.c_str());
                if (m.type == "Conv2d") {
                    QCOMPARE(m.kernel, L["kernel"][0].get<int>());
                    QCOMPARE(m.stride, L["stride"][0].get<int>());
                    QCOMPARE(m.groups, L["groups"].get<int>());
                    QCOMPARE(m.bias, L["bias"].get<bool>());
                }
            }
            QVERIFY(r.summary.macs == b["total_macs"].get<long long>());
            QVERIFY(r.summary.peak_activation_bytes == b["peak_activation_bytes"].get<long long>());
            for (const Json& t : b["peak_memory_terms"]) {
                auto it = std::find_if(r.peak_terms.begin(), r.peak_terms.end(),
                                       [&](const PeakTerm& p) { return p.name == t["name"].get<std::string>(); });
                QVERIFY(it != r.peak_terms.end());
                QVERIFY(it->elements == t["elements"].get<long long>());
                if (t.contains("ib")) {
                    QVERIFY(it->ib == t["ib"].get<long long>());
                    QVERIFY(it->dw == t["dw"].get<long long>());
                    QVERIFY(it->pl == t["pl"].get<long long>());
                    QVERIFY(it->residual == t["residual"].get<long long>());
                }
            }
        }
    }

    void publishedChecks()
    {
        // MCUNET_SPACE.md §4: min @96 = 8.302128 M MACs, 72 KB, 304,538 params;
        // lab max @96 = 79.416432 M MACs, 270 KB, 2,478,862 params.
        ArchSampler sampler(space);
        CostModel model(space);
        CostSummary mn = model.summary(sampler.minConfig(96));
        QCOMPARE(mn.macs, std::int64_t(8302128));
        QCOMPARE(mn.peak_activation_bytes, std::int64_t(72 * 1024));
        QCOMPARE(mn.params, std::int64_t(304538));
        CostSummary mx = model.summary(sampler.labMaxConfig(96));
        QCOMPARE(mx.macs, std::int64_t(79416432));
        QCOMPARE(mx.peak_activation_bytes, std::int64_t(270 * 1024));
        QCOMPARE(mx.params, std::int64_t(2478862));
        QCOMPARE(sampler.labMaxConfig(96).wid, 1);
        QCOMPARE(sampler.fullMaxConfig(96).wid, 2);
    }

    void flashCountsInt8WeightsAndInt32Biases()
    {
        // Min subnet @96: weights = params - BN(γ,β) - SE biases - classifier bias; every conv output
        // channel gets one folded int32 bias, SE convs and the classifier keep theirs.
        CostModel model(space);
        CostReport r = model.report(ArchSampler(space).minConfig(96));
        std::int64_t weights = 0, biases = 0;
        for (const LayerCost& l : r.layers) {
            if (l.type == "Conv2d") {
                weights += l.params - (l.bias ? l.output_shape[1] : 0);
                biases += l.output_shape[1];
            } else if (l.type == "Linear") {
                weights += std::int64_t(l.input_shape[1]) * l.output_shape[1];
                biases += l.output_shape[1];
            }
        }
        QCOMPARE(r.summary.flash_bytes, weights + 4 * biases);
        // Computed independently from the reference breakdown of entry 0 (min @96).
        QCOMPARE(weights, std::int64_t(296216));
        QCOMPARE(biases, std::int64_t(4682));
        QCOMPARE(r.summary.flash_bytes, std::int64_t(314944));
    }

    void resolutionIsTheOnlyInputOfThePeakAtFixedArch()
    {
        // Odd feature maps: at 112 the last stage is 4×4 (not 3.5); at 144, 5×5.
        ArchSampler sampler(space);
        SubnetLayout L;
        layoutSubnet(space, sampler.minConfig(112), L);
        QCOMPARE(L.hf, 4);
        layoutSubnet(space, sampler.minConfig(144), L);
        QCOMPARE(L.hf, 5);
    }
};

QTEST_GUILESS_MAIN(TestCostModel)
#include "test_cost_model.moc"
