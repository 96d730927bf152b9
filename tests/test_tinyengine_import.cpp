// Opening TinyEngine training graphs: the real 49kb-int8-graph.json gives the published facts
// (423 ops, 105 forward + loss, 29 outputs, the 49kb scheme, the mcunet-5fps network and its
// memory ledger); export -> import -> export is the identity; the hand-made example/ graphs pass
// or fail the §9 checker as TinyEngine's codegen did; malformed files name the op and the field.
#include "TestSupport.h"

#include "Error.h"
#include "graph/Autodiff.h"
#include "graph/MemoryLedger.h"
#include "graph/PublishedSchemes.h"
#include "io/JsonFile.h"
#include "tinyengine/ExportChecker.h"
#include "tinyengine/GraphImport.h"
#include "tinyengine/GraphJson.h"
#include "tinyengine/TinyEngineExport.h"
#include "zoo/ZooCatalog.h"

#include <QTemporaryDir>

#include <set>

using namespace tinyscope;

namespace {

std::string ref(const char* rel) { return test::sharedPath((std::string("reference/tinyengine/") + rel).c_str()); }

std::set<std::string> errorRules(const std::vector<Finding>& f)
{
    std::set<std::string> r;
    for (const Finding& x : f)
        if (x.error()) r.insert(x.rule);
    return r;
}

std::string describe(const std::vector<Finding>& f)
{
    std::string s;
    for (const Finding& x : f) s += x.text() + "\n";
    return s;
}

// Parses `text`, lets `mutate` break it, and returns the import error message.
template <class F>
std::string importError(const Json& good, F mutate)
{
    Json j = good;
    mutate(j);
    try {
        readGraphJson(j, "g.json");
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

class TestTinyEngineImport : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void realGraphGivesThePublishedFacts()
    {
        REQUIRE_SHARED();
        const ImportedGraph im = importTinyEngineGraph(ref("49kb-int8-graph.json"));
        const TrainingGraph& g = im.graph;
        QCOMPARE(int(g.ops.size()), 423);
        QCOMPARE(g.forward_ops, 105);
        QCOMPARE(int(g.outputs.size()), 29);
        int loss = 0, bias = 0, weight = 0, zero = 0;
        std::set<int> biasConvs, weightConvs;
        for (const GraphOutput& o : g.outputs) {
            const int p = g.findParameter(o.info);
            switch (o.kind) {
            case GradientKind::Loss: ++loss; QCOMPARE(o.info, std::string("fwd@output")); break;
            case GradientKind::Bias: ++bias; biasConvs.insert(im.network.layer(g.tensor(p).layer).conv_index); break;
            case GradientKind::Weight: ++weight; weightConvs.insert(im.network.layer(g.tensor(p).layer).conv_index); break;
            case GradientKind::Zero: ++zero; break;
            }
        }
        QCOMPARE(loss, 1);
        QCOMPARE(bias, 21);
        QCOMPARE(weight, 4);
        QCOMPARE(zero, 3);
        std::set<int> wantBias;
        for (int i = 22; i <= 42; ++i) wantBias.insert(i);   // convs 22..41 + classifier (42)
        QCOMPARE(biasConvs, wantBias);
        QCOMPARE(weightConvs, (std::set<int>{24, 27, 30, 42}));
        QCOMPARE(im.scheme.n_bias_update, 20);
        QCOMPARE(im.scheme.manual_weight_idx, (std::vector<int>{24, 27, 30}));
        QCOMPARE(im.scheme.weight_update_ratio, (std::vector<double>{0.25, 0.5, 0.5}));
        QVERIFY(im.notes.empty());
        QCOMPARE(g.mode, AutodiffMode::Reference);
        // The channel counts behind the ratios: 12/48, 24/48, 24/48.
        for (const GraphOutput& o : g.outputs) {
            if (o.kind == GradientKind::Weight && o.info != "v15_weight") {
                const Layer& l = im.network.layer(g.tensor(g.findParameter(o.info)).layer);
                QCOMPARE(l.cin, 48);
                QCOMPARE(g.tensor(o.tensor).shape[1], l.conv_index == 24 ? 12 : 24);
            }
        }
    }

    void recoveredNetworkIsMcunet5fpsAndFeedsTheLedger()
    {
        REQUIRE_SHARED();
        const ImportedGraph im = importTinyEngineGraph(ref("49kb-int8-graph.json"), ref("full-int8-params.pkl"), ref("scale.json"));
        const Network zoo = zooModel("mcunet-5fps");
        QCOMPARE(im.network.numConvs(), 43);
        QCOMPARE(im.network.params(), zoo.params());
        QCOMPARE(im.network.macs(), zoo.macs());
        QCOMPARE(im.network.peakActivationBytes(), zoo.peakActivationBytes());
        QCOMPARE(im.network.layers.size(), zoo.layers.size());
        for (std::size_t i = 0; i < zoo.layers.size(); ++i) {
            QCOMPARE(im.network.layers[i].kind, zoo.layers[i].kind);
            QVERIFY(im.network.layers[i].out == zoo.layers[i].out);
            QCOMPARE(im.network.layers[i].ir_prefix, zoo.layers[i].ir_prefix);
            QCOMPARE(im.network.layers[i].act, zoo.layers[i].act);   // ReLU6 read from zero_y = -128
        }
        // The ledger of the imported graph equals the one of the network and scheme it came from.
        const SparseScheme published = schemeByName("mcunet-5fps/49kb", nullptr);
        const MemoryLedger fromFile = TrainingMemoryModel(im.network).ledger(im.scheme.resolve(im.network), AutodiffMode::Reference);
        const MemoryLedger fromZoo = TrainingMemoryModel(zoo).ledger(published.resolve(zoo), AutodiffMode::Reference);
        QCOMPARE(fromFile.extra.total(), fromZoo.extra.total());
        QCOMPARE(fromFile.peak_bytes, fromZoo.peak_bytes);
        QCOMPARE(fromFile.peak_bytes, std::int64_t(195944));
        // The real file passes the checker with its params and scales.
        const std::vector<Finding> f = checkForTinyEngine(im.graph, im.network, &*im.params);
        QVERIFY2(errorCount(f) == 0, describe(f).c_str());
    }

    void exportThenImportGivesTheSameOpList()
    {
        REQUIRE_SHARED();
        // The real file read and written again is the same JSON.
        const Json real = readJsonFile(ref("49kb-int8-graph.json"));
        const TrainingGraph imported = readGraphJson(real, "49kb");
        QCOMPARE(Json::parse(graphJsonText(imported, ChildrenCount::Compiler)), real);
        // Our export (both forms) read back and written again is byte-identical.
        const Network net = zooModel("mcunet-5fps");
        for (ExportForm form : {ExportForm::Reference, ExportForm::Faithful})
            for (const char* scheme : {"mcunet-5fps/49kb", "mcunet-5fps/148kb"}) {
                ExportPlan plan = planExport(net, QuantizedParams{}, schemeByName(scheme, nullptr), form, "x");
                const std::string text = graphJsonText(plan.graph, childrenCountFor(form));
                const TrainingGraph back = readGraphJson(Json::parse(text), "x-graph.json");
                QCOMPARE(int(back.ops.size()), plan.graph.liveOps());
                QCOMPARE(back.forward_ops, plan.graph.forward_ops);
                QCOMPARE(back.outputs.size(), plan.graph.outputs.size());
                QCOMPARE(back.mode, form == ExportForm::Reference ? AutodiffMode::Reference : AutodiffMode::Correct);
                QVERIFY(graphJsonText(back, childrenCountFor(form)) == text);
                for (std::size_t i = 0; i < back.ops.size(); ++i) {
                    QCOMPARE(back.ops[i].kind, plan.graph.op(plan.graph.order[i]).kind);
                    QCOMPARE(back.ops[i].attrs, plan.graph.op(plan.graph.order[i]).attrs);
                }
            }
    }

    void exampleGraphsPassOrFailTheCheckerAsTheConsumerDid()
    {
        REQUIRE_SHARED();
        struct Case {
            const char* dir;
            std::set<std::string> errors;
        };
        const Case cases[] = {
            {"example", {}},
            {"example/full_channel_weight_with_identity_slice", {}},
            {"example/negative_full_channel_weight", {"full-channel-weight-link"}},
            {"example/negative_depthwise_weight", {"depthwise-weight-update"}},
        };
        for (const Case& c : cases) {
            const std::string d = ref(c.dir);
            const ImportedGraph im = importTinyEngineGraph(d + "/tiny-graph.json", d + "/tiny-params.pkl", d + "/tiny-scale.json");
            const std::vector<Finding> f = checkForTinyEngine(im.graph, im.network, &*im.params);
            QVERIFY2(errorRules(f) == c.errors, (std::string(c.dir) + ":\n" + describe(f)).c_str());
        }
        const ImportedGraph tiny = importTinyEngineGraph(ref("example/tiny-graph.json"));
        QCOMPARE(int(tiny.graph.ops.size()), 59);
        QCOMPARE(tiny.graph.forward_ops, 11);
        QCOMPARE(tiny.scheme.n_bias_update, 1);
        QCOMPARE(tiny.scheme.manual_weight_idx, std::vector<int>{1});
        QCOMPARE(tiny.scheme.weight_update_ratio, std::vector<double>{0.5});
        // Without a scale.json the checker says the scales are missing.
        QuantizedParams noScales = readParamsPickle(ref("example/tiny-params.pkl"));
        QVERIFY(errorRules(checkForTinyEngine(tiny.graph, tiny.network, &noScales)).count("missing-scales"));
    }

    void malformedFilesNameTheOpAndTheField()
    {
        REQUIRE_SHARED();
        const Json good = readJsonFile(ref("example/tiny-graph.json"));
        auto has = [](const std::string& msg, std::initializer_list<const char*> parts) {
            for (const char* p : parts)
                if (msg.find(p) == std::string::npos) return false;
            return true;
        };
        std::string m = importError(good, [](Json& j) { j[3].erase("type"); });
        QVERIFY2(has(m, {"g.json", "op 3", "type", "missing"}), m.c_str());
        m = importError(good, [](Json& j) { j[5]["type"] = "nn.dense"; });
        QVERIFY2(has(m, {"op 5", "type", "nn.dense"}), m.c_str());
        m = importError(good, [](Json& j) { j[12]["inputs"][0]["name"] = "out_nowhere@99"; });
        QVERIFY2(has(m, {"op 12", "inputs[0].name", "out_nowhere@99"}), m.c_str());
        m = importError(good, [](Json& j) { j[2]["inputs"][1]["dtype"] = "int4"; });
        QVERIFY2(has(m, {"op 2", "inputs[1].dtype", "int4"}), m.c_str());
        m = importError(good, [](Json& j) { j[1]["outputs"][0]["meta"]["children"] = 5; });
        QVERIFY2(has(m, {"op 1", "outputs[0].meta.children"}), m.c_str());
        m = importError(good, [](Json& j) { j[4]["outputs"][0]["shape"] = Json::array({1, 16, 2, 2}); j[5]["inputs"][0]["shape"] = Json::array({1, 16, 1, 1}); });
        QVERIFY2(has(m, {"op 5", "inputs[0].shape"}), m.c_str());
        m = importError(good, [](Json& j) { j[7]["outputs"] = Json::array(); });
        QVERIFY2(has(m, {"op 7", "outputs", "exactly one"}), m.c_str());
        m = importError(good, [](Json& j) { j = Json::object(); });
        QVERIFY2(has(m, {"g.json", "array"}), m.c_str());
        m = importError(good, [](Json& j) { j[10]["outputs"][0]["meta"].erase("output_info"); });
        QVERIFY2(has(m, {"op 10", "output_info"}), m.c_str());
        // A params pickle of another graph is refused with the key.
        try {
            importTinyEngineGraph(ref("49kb-int8-graph.json"), ref("example/tiny-params.pkl"));
            QFAIL("accepted the params of another graph");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("tiny-params.pkl") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestTinyEngineImport)
#include "test_tinyengine_import.moc"
