// Export to TinyEngine: mcunet-5fps with the weights of full-int8-params.pkl and the published
// 49kb scheme gives the real 49kb-int8-graph.json (every op, tensor and leaf; differences are
// listed); the params pickle we write is read by Debian's numpy with every key, dtype, shape and
// checksum; scale.json carries every conv's x/y scales; reference mode keeps the identity slices
// ratio-1 inner weight updates need; a failed or refused export leaves no files.
#include "TestSupport.h"
#include "Findings.h"

#include "Error.h"
#include "graph/Autodiff.h"
#include "graph/PublishedSchemes.h"
#include "io/AtomicFile.h"
#include "io/JsonFile.h"
#include "space/SpacePresets.h"
#include "space/ArchSampler.h"
#include "tinyengine/BoardFit.h"
#include "tinyengine/GraphJson.h"
#include "tinyengine/TinyEngineExport.h"
#include "zoo/SubnetNetwork.h"
#include "zoo/ZooCatalog.h"

#include <QTemporaryDir>

#include <zlib.h>

#include <set>

using namespace tinyscope;

namespace {


QuantizedParams realParams()
{
    QuantizedParams p = readParamsPickle(test::tinyengineRef("full-int8-params.pkl"));
    p.scales = readScaleJson(test::tinyengineRef("scale.json"));
    return p;
}

// Every difference between two graph JSONs, one line each (empty when equal).
std::vector<std::string> differences(const Json& got, const Json& want)
{
    std::vector<std::string> d;
    if (got.size() != want.size()) d.push_back("op count " + std::to_string(got.size()) + " vs " + std::to_string(want.size()));
    for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
        const Json &a = got[i], &b = want[i];
        const std::string at = "op " + std::to_string(i) + " ";
        for (const char* k : {"name", "type", "attrs"})
            if (a[k] != b[k]) d.push_back(at + k + ": " + a[k].dump() + " vs " + b[k].dump());
        for (const char* side : {"inputs", "outputs"}) {
            if (a[side].size() != b[side].size()) {
                d.push_back(at + side + ": " + std::to_string(a[side].size()) + " vs " + std::to_string(b[side].size()));
                continue;
            }
            for (std::size_t k = 0; k < a[side].size(); ++k)
                for (const char* f : {"name", "var_type", "shape", "dtype", "meta"})
                    if (a[side][k][f] != b[side][k][f])
                        d.push_back(at + side + "[" + std::to_string(k) + "]." + f + ": " + a[side][k][f].dump() + " vs " + b[side][k][f].dump());
        }
        if (d.size() > 40) break;
    }
    return d;
}

std::string joined(const std::vector<std::string>& v)
{
    std::string s;
    for (const std::string& x : v) s += x + "\n";
    return s;
}

using test::errorRules;

QStringList entries(const QString& dir) { return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot); }

}  // namespace

class TestTinyEngineExport : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void exportOfMcunet49kbReproducesTheRealGraph()
    {
        REQUIRE_SHARED();
        const Network net = zooModel("mcunet-5fps");
        const ExportPlan plan = planExport(net, realParams(), schemeByName("mcunet-5fps/49kb", nullptr), ExportForm::Reference, "49kb-int8");
        QCOMPARE(plan.identity_slices, 0);   // 49kb has no ratio-1 inner weight update
        const Json ours = Json::parse(graphJsonText(plan.graph, childrenCountFor(plan.form)));
        const Json real = readJsonFile(test::tinyengineRef("49kb-int8-graph.json"));
        const std::vector<std::string> diff = differences(ours, real);
        QVERIFY2(diff.empty(), joined(diff).c_str());
        QCOMPARE(ours, real);
        // Key order and layout too: the text is the real file's (json.dumps, indent 2).
        std::string realText = readFileBytes(test::tinyengineRef("49kb-int8-graph.json"));
        while (!realText.empty() && realText.back() == '\n') realText.pop_back();
        QVERIFY(graphJsonText(plan.graph, ChildrenCount::Compiler) == realText);
        // The real int8 model passes the checker.
        QVERIFY2(plan.errors() == 0, plan.findings.empty() ? "" : plan.findings.front().text().c_str());
    }

    void paramsPickleIsReadByNumpyWithEveryKeyDtypeShapeAndChecksum()
    {
        REQUIRE_SHARED();
        if (!QFileInfo::exists(QStringLiteral("/usr/bin/python3"))) QSKIP("Debian's python3 is not installed");
        QTemporaryDir dir;
        const ExportPlan plan = planExport(zooModel("mcunet-5fps"), realParams(), schemeByName("mcunet-5fps/49kb", nullptr),
                                           ExportForm::Reference, "49kb-int8");
        const ExportedFiles files = writeExport(plan, dir.path().toStdString());
        QCOMPARE(int(plan.params.arrays.size()), 257);
        // Python: every key with dtype, shape, crc32 of the bytes; equality with the original pickle.
        const char* script =
            "import pickle, json, sys, zlib\n"
            "import numpy as np\n"
            "ours = pickle.load(open(sys.argv[1], 'rb'))\n"
            "real = pickle.load(open(sys.argv[2], 'rb'))\n"
            "out = {k: [str(v.dtype), list(v.shape), zlib.crc32(np.ascontiguousarray(v).tobytes()), type(v).__name__] for k, v in ours.items()}\n"
            "same = sorted(ours) == sorted(real) and all(ours[k].dtype == real[k].dtype and np.array_equal(ours[k], real[k]) for k in real)\n"
            "print(json.dumps({'arrays': out, 'keys': list(ours), 'same_as_real': same}))\n";
        QProcess py;
        py.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QString::fromUtf8(script), QString::fromStdString(files.params),
                                                     QString::fromStdString(test::tinyengineRef("full-int8-params.pkl"))});
        QVERIFY(py.waitForFinished(60000));
        const QByteArray err = py.readAllStandardError();
        if (py.exitCode() != 0 && err.contains("No module named 'numpy'")) QSKIP("python3-numpy is not installed (setup.sh installs it)");
        QVERIFY2(py.exitCode() == 0, err.constData());
        const Json r = Json::parse(py.readAllStandardOutput().toStdString());
        QVERIFY(r["same_as_real"].get<bool>());
        QCOMPARE(r["arrays"].size(), plan.params.arrays.size());
        std::vector<std::string> keys = r["keys"].get<std::vector<std::string>>();
        QCOMPARE(keys, plan.params.order);   // graph order: v0_weight, v0_bias, v0_zero_x, ...
        for (const auto& [name, a] : plan.params.arrays) {
            const Json& e = r["arrays"][name];
            QCOMPARE(e[0].get<std::string>(), std::string(scalarName(a.dtype)));
            QCOMPARE(e[1].get<std::vector<std::int64_t>>(), a.shape);
            const uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(a.data.data()), static_cast<uInt>(a.data.size()));
            QCOMPARE(e[2].get<std::uint64_t>(), static_cast<std::uint64_t>(crc));
            QCOMPARE(e[3].get<std::string>(), std::string("ndarray"));
        }
        // Dtypes by role (§7).
        QCOMPARE(plan.params.array("v9_conv_0_weight").dtype, ScalarType::Int8);
        QCOMPARE(plan.params.array("v9_conv_0_bias").dtype, ScalarType::Int32);
        QCOMPARE(plan.params.array("v9_conv_0_zero_x").shape, std::vector<std::int64_t>{1});
        QCOMPARE(plan.params.array("v9_conv_0_scale").dtype, ScalarType::Float32);
        QCOMPARE(plan.params.array("v3_qadd_scale_y").shape, std::vector<std::int64_t>{1});
        // scale.json: the 86 x/y scales of the real file, same values.
        const auto scales = readScaleJson(files.scales);
        const auto real = readScaleJson(test::tinyengineRef("scale.json"));
        QCOMPARE(scales, real);
        QCOMPARE(int(scales.size()), 86);
    }

    void referenceFormAddsIdentitySlicesForRatioOneInnerUpdates()
    {
        const Network net = zooModel("mcunet-5fps");
        const SparseScheme s = schemeByName("mcunet-5fps/74kb", nullptr);   // ratio 1 at convs 21, 24, 30
        const ExportPlan plan = planExport(net, QuantizedParams{}, s, ExportForm::Reference, "74kb");
        QCOMPARE(plan.identity_slices, 3);
        QVERIFY(!errorRules(plan.findings).count("full-channel-weight-link"));
        int identity = 0;
        for (int op : plan.graph.order) {
            const Op& o = plan.graph.op(op);
            if (o.kind == OpKind::StridedSlice && plan.graph.tensor(o.output).shape == plan.graph.tensor(o.inputs[0]).shape) ++identity;
        }
        QCOMPARE(identity, 3);
        // Without them (the compiler's own form) the checker says it does not link.
        const TrainingGraph raw = buildTrainingGraph(net, s.resolve(net), AutodiffMode::Reference);
        QVERIFY(errorRules(checkForTinyEngine(raw, net, nullptr)).count("full-channel-weight-link"));
        QCOMPARE(plan.graph.liveOps(), raw.liveOps() + 3);
    }

    void faithfulFormSumsResidualGradientsAndSaysSo()
    {
        const Network net = zooModel("mcunet-5fps");
        const ExportPlan plan = planExport(net, QuantizedParams{}, schemeByName("mcunet-5fps/49kb", nullptr), ExportForm::Faithful, "f");
        int adds = 0;
        for (int op : plan.graph.order) adds += plan.graph.op(op).kind == OpKind::Add;
        QCOMPARE(adds, 4);
        QCOMPARE(plan.graph.outputs.size(), std::size_t(26));   // no dummy zero gradients
        bool warned = false;
        for (const Finding& f : plan.findings) warned |= !f.error() && f.rule == "faithful-accumulation";
        QVERIFY(warned);
    }

    void checkerAppliesTheKernelCoverageRules()
    {
        // Full update of mcunet-5fps: stem trainable, depthwise weights, weight gradients of 1x1
        // convs on 16x16+ maps.
        const Network mcunet = zooModel("mcunet-5fps");
        const std::set<std::string> full = errorRules(planExport(mcunet, QuantizedParams{}, SparseScheme::full(mcunet), ExportForm::Reference, "x").findings);
        for (const char* r : {"stem-trainable", "depthwise-weight-update", "weight-gradient-kernel"}) QVERIFY2(full.count(r), r);
        // ResNet-8: dense 3x3 convs; the autoencoder: MSE loss and no image stem.
        QVERIFY(errorRules(planExport(zooModel("resnet-8"), QuantizedParams{}, SparseScheme::biasOnly(2), ExportForm::Reference, "r").findings).count("forward-kernel"));
        QVERIFY(errorRules(planExport(zooModel("autoencoder"), QuantizedParams{}, SparseScheme::biasOnly(2), ExportForm::Reference, "a").findings).count("unsupported-loss"));
        // A design-space subnet with squeeze-excite: nn.mcumultiply.
        const DesignSpace space = loadSpace("mcunet-vww");
        SubnetConfig c = ArchSampler(space).fullMaxConfig(space.resolutions.back());
        const Network sub = networkFromSubnet(space, c);
        bool se = false;
        for (const Layer& l : sub.layers) se |= l.kind == LayerKind::ChannelScale;
        if (se) QVERIFY(errorRules(planExport(sub, QuantizedParams{}, SparseScheme::biasOnly(2), ExportForm::Reference, "s").findings).count("unsupported-op"));
        // Classifier classes: a 2-class head cannot update its weight.
        if (sub.num_outputs != 10) QVERIFY(errorRules(planExport(sub, QuantizedParams{}, SparseScheme::biasOnly(2), ExportForm::Reference, "s").findings).count("classifier-classes"));
        // Missing params and scales are named.
        const ExportPlan none = planExport(mcunet, QuantizedParams{}, schemeByName("mcunet-5fps/49kb", nullptr), ExportForm::Reference, "x");
        QVERIFY(errorRules(none.findings).count("params"));
        QVERIFY(errorRules(none.findings).count("missing-scales"));
    }

    void checkerFindsWhatTinyEngineWouldComputeWrongly()
    {
        // Issue 17, found by compiling the generated code: element counts above 65,535 wrap in the
        // float kernels' uint16_t size (bias-only:41 on mcunet-5fps: where on 131,072 and 65,536
        // elements became where_zeros_inplace_bit(…, 0, …)), and sub() has no broadcasting (the
        // faithful form's x − zero_x).
        const Network net = zooModel("mcunet-5fps");
        std::vector<std::string> counts;
        for (const Finding& f : planExport(net, QuantizedParams{}, SparseScheme::biasOnly(41), ExportForm::Reference, "b").findings)
            if (f.rule == "element-count-uint16") {
                QVERIFY(f.error());
                counts.push_back(f.message.substr(0, f.message.find(':')));
            }
        QCOMPARE(counts, (std::vector<std::string>{"where on 131072 elements", "where on 65536 elements"}));

        const ExportPlan faithful = planExport(net, QuantizedParams{}, schemeByName("mcunet-5fps/49kb", nullptr), ExportForm::Faithful, "f");
        std::vector<std::string> broadcast;
        for (const Finding& f : faithful.findings)
            if (f.rule == "elementwise-broadcast") broadcast.push_back(f.message.substr(0, f.message.find(':')));
        QCOMPARE(broadcast, (std::vector<std::string>{"subtract of [1,160,1,1] and [1]", "subtract of [1,48,8,8] and [1]",
                                                      "subtract of [1,48,8,8] and [1]", "subtract of [1,48,8,8] and [1]"}));
        // These are the faithful form's weight-gradient x - zero_x: the advice is the reference form.
        for (const Finding& f : faithful.findings)
            if (f.rule == "elementwise-broadcast")
                QVERIFY2(f.message.find("export the reference form") != std::string::npos, f.message.c_str());
        // Issue 47: a squeeze-and-excite gate's x - zero_x is in the reference form too; the advice
        // must not send the user to the form they chose (it names the layer instead).
        const DesignSpace space = loadSpace("mcunet-fmnist");
        const Network se = networkFromSubnet(space, ArchSampler(space).minConfig(space.resolutions.front()));
        int seBroadcasts = 0;
        for (const Finding& f : planExport(se, QuantizedParams{}, SparseScheme::full(se), ExportForm::Reference, "se").findings)
            if (f.rule == "elementwise-broadcast") {
                ++seBroadcasts;
                QVERIFY2(f.message.find("export the reference form") == std::string::npos, f.message.c_str());
                QVERIFY2(f.message.find("in the reference and the faithful form alike") != std::string::npos, f.message.c_str());
                QVERIFY2(f.message.find("blocks.") != std::string::npos, f.message.c_str());
            }
        QVERIFY(seBroadcasts > 0);
        // The published schemes in the reference form have neither.
        for (const char* name : {"mcunet-5fps/49kb", "mcunet-5fps/148kb", "mbv2-w0.35/138kb", "proxyless-w0.3/148kb"}) {
            const std::string model = std::string(name).substr(0, std::string(name).find('/'));
            const std::set<std::string> rules =
                errorRules(planExport(zooModel(model), QuantizedParams{}, schemeByName(name, nullptr), ExportForm::Reference, "p").findings);
            QVERIFY2(!rules.count("element-count-uint16") && !rules.count("elementwise-broadcast"), name);
        }
    }

    void boardProfilesAreReadAndRefusedWithTheKey()
    {
        QCOMPARE(presetBoardNames(), (std::vector<std::string>{"nrf52840", "stm32f411", "stm32f746", "stm32h743"}));
        const BoardProfile f746 = presetBoard("stm32f746");
        QCOMPARE(f746.sram_bytes, std::int64_t(320 * 1024));
        QCOMPARE(f746.flash_bytes, std::int64_t(1024 * 1024));
        QCOMPARE(f746.core, std::string("cortex-m7"));
        QCOMPARE(presetBoard("stm32h743").sram_bytes, std::int64_t(512 * 1024));
        QCOMPARE(presetBoard("stm32f411").sram_bytes, std::int64_t(128 * 1024));
        QCOMPARE(presetBoard("nrf52840").flash_bytes, std::int64_t(1024 * 1024));
        // A user file with the same keys; errors name the file and the key.
        QTemporaryDir dir;
        const std::string path = (dir.path() + QStringLiteral("/mine.json")).toStdString();
        Json j = f746.toJson();
        j["name"] = "mine";
        j["sram_bytes"] = 200000;
        writeFileAtomic(path, j.dump());
        QCOMPARE(loadBoard(path).sram_bytes, std::int64_t(200000));
        j["fpu"] = "half";
        writeFileAtomic(path, j.dump());
        QVERIFY(test::inputErrorOf([&] { loadBoard(path); }).contains(QStringLiteral("mine.json: fpu: expected \"none\", \"single\" or \"double\"")));
        j.erase("fpu");
        writeFileAtomic(path, j.dump());
        QVERIFY(test::inputErrorOf([&] { loadBoard(path); }).contains(QStringLiteral("fpu")));
        QVERIFY(test::inputErrorOf([&] { loadBoard("stm32f999"); }).contains(QStringLiteral("unknown board 'stm32f999' (presets: [nrf52840")));
    }

    void boardFitFollowsTheLedgerWithTheDevicesMargin()
    {
        const BoardProfile f746 = presetBoard("stm32f746");
        auto rules = [&](const char* model, const SparseScheme& scheme, const BoardProfile& board, FindingSeverity sev) {
            const ExportPlan plan = planExport(zooModel(model), QuantizedParams{}, scheme, ExportForm::Reference, "b");
            std::set<std::string> out;
            for (const Finding& f : checkBoardFit(board, boardUse(plan)))
                if (f.severity == sev) out.insert(f.rule);
            return out;
        };
        const SparseScheme mcunet49 = schemeByName("mcunet-5fps/49kb", nullptr);
        // The ledger's training peak: 195,944 B for MIT's 49kb scheme (it runs on the F746).
        QCOMPARE(boardUse(planExport(zooModel("mcunet-5fps"), QuantizedParams{}, mcunet49, ExportForm::Reference, "b")).sram_bytes,
                 std::int64_t(195944));
        QVERIFY(rules("mcunet-5fps", mcunet49, f746, FindingSeverity::Error).empty());
        QVERIFY(rules("mcunet-5fps", mcunet49, f746, FindingSeverity::Warning).empty());
        // What overflowed the F746 once linked (issue 17: by 418.9 KB, 35.4 KB and 24.8 KB): an
        // error where the ledger alone exceeds 320 KB, a warning where only the margin does.
        QCOMPARE(rules("mcunet-5fps", SparseScheme::biasOnly(41), f746, FindingSeverity::Error), std::set<std::string>{"board-sram"});
        QCOMPARE(rules("mbv2-w0.35", schemeByName("mbv2-w0.35/138kb", nullptr), f746, FindingSeverity::Error), std::set<std::string>{"board-sram"});
        QCOMPARE(rules("mbv2-w0.35", schemeByName("mbv2-w0.35/123kb", nullptr), f746, FindingSeverity::Warning), std::set<std::string>{"board-sram"});
        // The smaller board, and cores without the DSP extension or an FPU.
        QCOMPARE(rules("mcunet-5fps", mcunet49, presetBoard("stm32f411"), FindingSeverity::Error), std::set<std::string>{"board-sram"});
        BoardProfile m0 = f746;
        m0.core = "cortex-m0plus";
        m0.dsp = false;
        m0.fpu = "none";
        QCOMPARE(rules("mcunet-5fps", mcunet49, m0, FindingSeverity::Error), (std::set<std::string>{"board-dsp", "board-fpu"}));
    }

    void failedOrRefusedExportLeavesNoFiles()
    {
        REQUIRE_SHARED();
        const Network net = zooModel("mcunet-5fps");
        QTemporaryDir dir;
        // A folder where the params file should go: the last rename fails, everything is rolled back.
        QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("49kb-params.pkl")));
        const ExportPlan plan = planExport(net, realParams(), schemeByName("mcunet-5fps/49kb", nullptr), ExportForm::Reference, "49kb");
        QVERIFY_THROWS_EXCEPTION(InputError, writeExport(plan, dir.path().toStdString()));
        QCOMPARE(entries(dir.path()), QStringList{QStringLiteral("49kb-params.pkl")});
        // --strict refuses a plan with errors before writing anything.
        QTemporaryDir dir2;
        const ExportPlan bad = planExport(net, realParams(), SparseScheme::full(net), ExportForm::Reference, "full");
        QVERIFY(bad.errors() > 0);
        try {
            writeExport(bad, dir2.path().toStdString(), true);
            QFAIL("strict export wrote a plan with errors");
        } catch (const InputError& e) {
            QVERIFY2(std::string(e.what()).find("--strict") != std::string::npos, e.what());
        }
        QVERIFY(entries(dir2.path()).isEmpty());
        // Without --strict it writes (the findings were shown).
        const ExportedFiles f = writeExport(bad, dir2.path().toStdString());
        QCOMPARE(entries(dir2.path()).size(), 3);
        QVERIFY(QFileInfo::exists(QString::fromStdString(f.graph)));
    }
};

QTEST_GUILESS_MAIN(TestTinyEngineExport)
#include "test_tinyengine_export.moc"
