// Opening TinyEngine training graphs: the real 49kb-int8-graph.json gives the published facts
// (423 ops, 105 forward + loss, 29 outputs, the 49kb scheme, the mcunet-5fps network and its
// memory ledger); export -> import -> export is the identity; the hand-made example/ graphs pass
// or fail the §9 checker as TinyEngine's codegen did; malformed files name the op and the field.
#include "TestSupport.h"
#include "Findings.h"

#include "Error.h"
#include "graph/Autodiff.h"
#include "graph/MemoryLedger.h"
#include "graph/PublishedSchemes.h"
#include "io/AtomicFile.h"
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


using test::errorRules;

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
        const ImportedGraph im = importTinyEngineGraph(test::tinyengineRef("49kb-int8-graph.json"));
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
        const ImportedGraph im = importTinyEngineGraph(test::tinyengineRef("49kb-int8-graph.json"), test::tinyengineRef("full-int8-params.pkl"), test::tinyengineRef("scale.json"));
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
        const Json real = readJsonFile(test::tinyengineRef("49kb-int8-graph.json"));
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
            const std::string d = test::tinyengineRef(c.dir);
            const ImportedGraph im = importTinyEngineGraph(d + "/tiny-graph.json", d + "/tiny-params.pkl", d + "/tiny-scale.json");
            const std::vector<Finding> f = checkForTinyEngine(im.graph, im.network, &*im.params);
            QVERIFY2(errorRules(f) == c.errors, (std::string(c.dir) + ":\n" + describe(f)).c_str());
        }
        const ImportedGraph tiny = importTinyEngineGraph(test::tinyengineRef("example/tiny-graph.json"));
        QCOMPARE(int(tiny.graph.ops.size()), 59);
        QCOMPARE(tiny.graph.forward_ops, 11);
        QCOMPARE(tiny.scheme.n_bias_update, 1);
        QCOMPARE(tiny.scheme.manual_weight_idx, std::vector<int>{1});
        QCOMPARE(tiny.scheme.weight_update_ratio, std::vector<double>{0.5});
        // Without a scale.json the checker says the scales are missing.
        QuantizedParams noScales = readParamsPickle(test::tinyengineRef("example/tiny-params.pkl"));
        QVERIFY(errorRules(checkForTinyEngine(tiny.graph, tiny.network, &noScales)).count("missing-scales"));
    }

    // Issue 45: every name that TinyEngine's generator pastes into C fits its grammar on the way in,
    // or the file is refused naming the op and field (or the file and key), with the value escaped
    // and cut: a newline and code, an #include, a comment end, a quote, a long name.
    void namesOutsideTheGrammarAreRefusedWhereTheyComeIn()
    {
        REQUIRE_SHARED();
        const Json good = readJsonFile(test::tinyengineRef("example/tiny-graph.json"));
        QCOMPARE(importError(good, [](Json&) {}), std::string("no error"));
        const std::string code = "v1_bias;\n__attribute__((constructor)) static void p(void){}\nint x";
        const std::string safe = "not a name TinyEngine's code generator can emit safely";
        auto refused = [&](const std::string& m, std::initializer_list<std::string> parts) {
            bool ok = m.find(safe) != std::string::npos && m.find('\n') == std::string::npos;
            for (const std::string& p : parts) ok = ok && m.find(p) != std::string::npos;
            return ok;
        };
        // A parameter name (every use of v1_bias renamed).
        for (const std::string& bad : {code, std::string("v1_bias\n#include \"/etc/passwd\""), std::string("v1_bias*/ int y; /*"),
                                        std::string("v1_bias\"x"), std::string("v1.bias"), std::string(129, 'v')}) {
            const std::string m = importError(good, [&](Json& j) {
                for (Json& op : j)
                    for (Json& t : op["inputs"])
                        if (t["name"] == "v1_bias") t["name"] = bad;
            });
            QVERIFY2(refused(m, {"g.json: op 2", "inputs[2].name"}), m.c_str());
        }
        std::string m = importError(good, [&](Json& j) {
            for (Json& op : j)
                for (Json& t : op["inputs"])
                    if (t["name"] == "v1_bias") t["name"] = code;
        });
        QVERIFY2(m.find("'v1_bias;\\n__attribute__((constructor)) static void p(void){}... (65 bytes)'") != std::string::npos, m.c_str());
        QVERIFY2(m.find("(';' at byte 7; expected a C identifier") != std::string::npos, m.c_str());
        // An activation's name (the producer's and its consumers'), an op's name, output_info, a string attribute.
        m = importError(good, [](Json& j) {
            j[1]["outputs"][0]["name"] = "out\"; system(\"x";
            for (Json& op : j)
                for (Json& t : op["inputs"])
                    if (t["name"] == "out_nn.mcutruncate@1") t["name"] = "out\"; system(\"x";
        });
        QVERIFY2(refused(m, {"op 1", "outputs[0].name", "a double quote at byte 3"}), m.c_str());
        m = importError(good, [](Json& j) { j[3]["name"] = "x */ #include <y>"; });
        QVERIFY2(refused(m, {"op 3", ": name:"}), m.c_str());
        m = importError(good, [](Json& j) {
            for (Json& op : j)
                if (op["outputs"][0]["meta"].contains("output_info") && op["outputs"][0]["meta"]["output_info"] == "v1_bias")
                    op["outputs"][0]["meta"]["output_info"] = "v1_bias\n";
        });
        QVERIFY2(refused(m, {"outputs[0].meta.output_info"}), m.c_str());
        m = importError(good, [](Json& j) { j[0]["attrs"]["data_layout"] = "NCHW\n#define x"; });
        QVERIFY2(refused(m, {"op 0", "attrs.data_layout"}), m.c_str());
        // The names MIT's compiler writes are all accepted (the real 49kb file reads).
        importTinyEngineGraph(test::tinyengineRef("49kb-int8-graph.json"), test::tinyengineRef("full-int8-params.pkl"), test::tinyengineRef("scale.json"));

        // scale.json keys, and a zero scale (QAS divides by it) before anything compiles.
        QTemporaryDir dir;
        const std::string scalePath = (dir.path() + QStringLiteral("/scale.json")).toStdString();
        writeJsonFile(scalePath, Json{{"v0_x_scale", 0.5}, {"v1\n#include <z>", 0.5}});
        m = test::errorOf([&] { readScaleJson(scalePath); });
        QVERIFY2(m.find("scale.json: key 'v1\\n#include <z>': " + safe) != std::string::npos, m.c_str());
        writeJsonFile(scalePath, Json{{"v0_x_scale", 0.0}});
        m = test::errorOf([&] { readScaleJson(scalePath); });
        QVERIFY2(m.find("v0_x_scale: expected a positive scale, got 0.0") != std::string::npos, m.c_str());

        // A params pickle key: the example's v1_bias renamed in place (the same length) to hold a newline.
        std::string pickle = readFileBytes(test::tinyengineRef("example/tiny-params.pkl"));
        const std::size_t at = pickle.find("v1_bias");
        QVERIFY(at != std::string::npos);
        pickle.replace(at, 7, "v1\n/*x*");
        const std::string pklPath = (dir.path() + QStringLiteral("/p.pkl")).toStdString();
        writeFileAtomic(pklPath, pickle);
        m = test::errorOf([&] { readParamsPickle(pklPath); });
        QVERIFY2(m.find("p.pkl: key 'v1\\n/*x*': " + safe) != std::string::npos, m.c_str());

        // Our own exporter checks the names it writes: a layer name from a user's network cannot carry code.
        Network net = zooModel("mcunet-5fps");
        for (Layer& l : net.layers)
            if (l.ir_prefix == "v3_conv_1") l.ir_prefix = "v3\n#include";
        m = test::errorOf([&] { planExport(net, QuantizedParams{}, SparseScheme{}, ExportForm::Reference, "x"); });
        QVERIFY2(m.find(safe) != std::string::npos, m.c_str());
    }

    // Issue 45: a dilation is computed only where the graph's semantics use it (the weight-gradient
    // nn.conv2d, §5.4); on a forward or transposed conv it was range-checked and then ignored.
    void dilationIsRefusedWhereNothingComputesIt()
    {
        REQUIRE_SHARED();
        const Json good = readJsonFile(test::tinyengineRef("example/tiny-graph.json"));
        std::string m = importError(good, [](Json& j) { j[0]["attrs"]["dilation"] = Json::array({4096, 4096}); });
        QVERIFY2(m.find("op 0") != std::string::npos && m.find("attrs.dilation: dilation 4096 is not supported on 'nn.mcuconv2d'") != std::string::npos, m.c_str());
        bool transposed = false;
        for (std::size_t i = 0; i < good.size() && !transposed; ++i)
            if (good[i]["type"] == "nn.conv2d_transpose") {
                transposed = true;
                m = importError(good, [i](Json& j) { j[i]["attrs"]["dilation"] = Json::array({1, 2}); });
                QVERIFY2(m.find("is not supported on 'nn.conv2d_transpose'") != std::string::npos, m.c_str());
            }
        QVERIFY(transposed);
    }

    // Issue 45: a graph of more ops than any real one is refused before its ops are read.
    void aGraphOverTheOpBoundIsRefusedAtOnce()
    {
        Json ops = Json::array();
        for (std::size_t i = 0; i <= kMaxGraphOps; ++i) ops.push_back(nullptr);
        const std::string m = test::errorOf([&] { readGraphJson(ops, "big.json"); });
        QVERIFY2(m == "big.json: 100,001 ops, more than the 100,000 a training graph may have", m.c_str());
    }

    void malformedFilesNameTheOpAndTheField()
    {
        REQUIRE_SHARED();
        const Json good = readJsonFile(test::tinyengineRef("example/tiny-graph.json"));
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
            importTinyEngineGraph(test::tinyengineRef("49kb-int8-graph.json"), test::tinyengineRef("example/tiny-params.pkl"));
            QFAIL("accepted the params of another graph");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("tiny-params.pkl") != std::string::npos, e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestTinyEngineImport)
#include "test_tinyengine_import.moc"
