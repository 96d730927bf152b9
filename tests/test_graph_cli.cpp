// The zoo / train-graph / memory commands as a user runs them: every zoo model, published
// schemes by name, inline schemes with fractions, DOT output, and bad input as one line on
// stderr with exit code 2.
#include "TestSupport.h"

#include "io/AtomicFile.h"
#include "io/JsonFile.h"

#include <QProcess>
#include <QTemporaryDir>

using namespace tinyscope;

namespace {
using Run = test::CliRun;

QStringList args(std::initializer_list<const char*> a)
{
    QStringList l;
    for (const char* s : a) l << QString::fromUtf8(s);
    return l;
}


const char* kModels[] = {"mbv2-w0.35", "mcunet-5fps", "proxyless-w0.3", "ds-cnn-s",
                         "mobilenetv1-0.25", "autoencoder", "resnet-8", "cct-2/3x2"};
}  // namespace

class TestGraphCli : public QObject {
    Q_OBJECT
    QTemporaryDir tmp;
    std::string file(const char* name) { return (tmp.path() + QLatin1Char('/') + QLatin1String(name)).toStdString(); }

private Q_SLOTS:
    void zooListNamesEveryModel()
    {
        Run r = test::runTinyscope(args({"zoo", "list", "--json"}));
        QCOMPARE(r.code, 0);
        const Json j = Json::parse(r.out);
        QCOMPARE(j.size(), std::size(kModels));
        for (std::size_t i = 0; i < j.size(); ++i) QCOMPARE(j[i]["name"].get<std::string>(), std::string(kModels[i]));
        QCOMPARE(j[1]["published_schemes"].get<int>(), 6);
        Run human = test::runTinyscope(args({"zoo", "list"}));
        QCOMPARE(human.code, 0);
        QVERIFY(human.out.find("470,834") != std::string::npos);
    }

    void zooShowGivesCountsAndLayersForEveryModel()
    {
        const long long params[] = {245578, 470834, 327202, 23180, 213586, 267928, 78042, 283979};
        for (std::size_t i = 0; i < std::size(kModels); ++i) {
            Run r = test::runTinyscope(args({"zoo", "show", kModels[i], "--json"}));
            QCOMPARE(r.code, 0);
            const Json j = Json::parse(r.out);
            QCOMPARE(j["params"].get<long long>(), params[i]);
            QVERIFY(j["macs"].get<long long>() > 0);
            QVERIFY(j["peak_activation_bytes"].get<long long>() > 0);
            if (std::string(kModels[i]) == "mcunet-5fps") QCOMPARE(j["peak_activation_bytes"].get<long long>(), 163840LL);
            QVERIFY(j["layers"].size() >= 10);
            Run human = test::runTinyscope(args({"zoo", "show", kModels[i]}));
            QCOMPARE(human.code, 0);
            QVERIFY(test::lineCount(human.out) > 15);
        }
    }

    void trainGraphReproducesThe49kbGraphByName()
    {
        const std::string dot = file("g.dot");
        Run r = test::runTinyscope(args({"train-graph", "--model", "mcunet-5fps", "--scheme", "mcunet-5fps/49kb", "--mode", "reference",
                          "--json", "--dot", dot.c_str()}));
        QCOMPARE(r.code, 0);
        const Json j = Json::parse(r.out);
        QCOMPARE(j["ops"].get<int>(), 423);
        QCOMPARE(j["forward_ops"].get<int>(), 105);
        QCOMPARE(j["leaves"].size(), std::size_t(29));
        QCOMPARE(j["pruned_ops"].get<int>() + 423, j["built_ops"].get<int>());
        QCOMPARE(j["op_type_counts"]["nn.conv2d_transpose"].get<int>(), 20);
        QCOMPARE(j["leaves"][4]["output_info"].get<std::string>(), std::string("v15_bias"));
        QCOMPARE(j["leaves"][4]["position"].get<int>(), 124);
        const std::string text = readFileBytes(dot);
        QVERIFY(text.rfind("digraph", 0) == 0);
        QVERIFY(text.find("legend") != std::string::npos);
        QVERIFY(text.find("pruned by the scheme") != std::string::npos);
        QVERIFY(text.find("v9_conv_0_weight") != std::string::npos);
        // The same graph as SVG and PNG (capped at 6,000 px a side).
        const std::string svg = file("g.svg"), png = file("g.png");
        QCOMPARE(test::runTinyscope(args({"train-graph", "--model", "ds-cnn-s", "--n-bias-update", "2", "--svg", svg.c_str(), "--png", png.c_str()})).code, 0);
        QVERIFY(readFileBytes(svg).find("<svg") != std::string::npos);
        const std::string pngBytes = readFileBytes(png);
        QVERIFY(pngBytes.size() > 24 && pngBytes.rfind("\x89PNG\r\n", 0) == 0);
        auto be32 = [&pngBytes](std::size_t at) {   // IHDR width at byte 16, height at 20
            std::uint32_t v = 0;
            for (std::size_t k = 0; k < 4; ++k) v = v << 8 | static_cast<unsigned char>(pngBytes[at + k]);
            return v;
        };
        QVERIFY2(be32(16) <= 6000 && be32(20) <= 6000 && be32(20) > 500, qPrintable(QStringLiteral("%1 x %2").arg(be32(16)).arg(be32(20))));
        // Human output and the op list.
        Run h = test::runTinyscope(args({"train-graph", "--model", "mcunet-5fps", "--scheme", "49kb", "--mode", "reference", "--ops"}));
        QCOMPARE(h.code, 0);
        QVERIFY(h.out.find("423 kept") != std::string::npos);
        QVERIFY(h.out.find("3 zero (dummy)") != std::string::npos);
    }

    void trainGraphCheckComparesEveryGradientWithAutograd()
    {
        for (const char* mode : {"correct", "reference"}) {
            Run r = test::runTinyscope(args({"train-graph", "--model", "resnet-8", "--scheme", "full", "--mode", mode, "--check", "--json"}));
            QCOMPARE(r.code, 0);
            const Json c = Json::parse(r.out)["check"];
            QCOMPARE(c["gradients"].get<int>(), 20);
            QCOMPARE(c["all_zero_gradients"].get<int>(), 0);
            QVERIFY(c["max_relative_error"].get<double>() < 1e-4);
            QVERIFY(c["passed"].get<bool>());
        }
        Run h = test::runTinyscope(args({"train-graph", "--model", "mcunet-5fps", "--scheme", "49kb", "--mode", "reference", "--check", "--seed", "3"}));
        QCOMPARE(h.code, 0);
        QVERIFY2(h.out.find("25 gradients vs LibTorch autograd") != std::string::npos, h.out.c_str());
    }

    void trainGraphAndMemoryWorkOnEveryZooModel()
    {
        // One scheme per model, the two alternating (each run starts LibTorch: about 1 s of CPU);
        // test_memory_ledger and test_autodiff build every model's ledger and graph for several.
        for (std::size_t i = 0; i < std::size(kModels); ++i) {
            const char* m = kModels[i];
            const char* scheme = i % 2 == 0 ? "full" : "bias-only:2";
            Run g = test::runTinyscope(args({"train-graph", "--model", m, "--scheme", scheme, "--json"}));
            Run mem = test::runTinyscope(args({"memory", "--model", m, "--scheme", scheme, "--json"}));
            if (std::string(m) == "cct-2/3x2") {
                // No int8 op for LayerNorm / attention / max pooling: refused with the reason.
                QCOMPARE(g.code, 2);
                QVERIFY2(g.err.find("tokenizer.pool0") != std::string::npos, g.err.c_str());
                QCOMPARE(mem.code, 2);
                QCOMPARE(test::lineCount(mem.err), 1);
                continue;
            }
            QVERIFY2(g.code == 0, (std::string(m) + " " + g.err).c_str());
            const Json gj = Json::parse(g.out);
            QVERIFY(gj["ops"].get<int>() > gj["forward_ops"].get<int>());
            QVERIFY2(mem.code == 0, (std::string(m) + " " + mem.err).c_str());
            const Json mj = Json::parse(mem.out);
            for (const char* k : {"extra_bytes", "peak_bytes", "peak_bytes_no_reorder", "inference_peak_bytes"})
                QVERIFY(mj[k].get<long long>() > 0);
            for (const char* k : {"classifier_input", "masks", "biases", "saved_inputs", "weights"})
                QVERIFY(mj["breakdown"].contains(k));
        }
    }

    void memoryMatchesThePublishedFiguresAndAcceptsFractions()
    {
        Run r = test::runTinyscope(args({"memory", "--model", "mcunet-5fps", "--scheme", "mcunet-5fps/49kb", "--json"}));
        QCOMPARE(r.code, 0);
        const Json j = Json::parse(r.out);
        QCOMPARE(j["extra_bytes"].get<long long>(), 50944LL);
        QCOMPARE(j["breakdown"]["classifier_input"].get<long long>(), 160LL);
        QCOMPARE(j["breakdown"]["masks"].get<long long>(), 16480LL);
        QCOMPARE(j["breakdown"]["biases"].get<long long>(), 18368LL);
        QCOMPARE(j["breakdown"]["saved_inputs"].get<long long>(), 3840LL);
        QCOMPARE(j["breakdown"]["weights"].get<long long>(), 12096LL);
        QVERIFY(j["peak_bytes_no_reorder"].get<long long>() >= j["peak_bytes"].get<long long>());
        QVERIFY(j["peak_bytes"].get<long long>() > j["inference_peak_bytes"].get<long long>());
        // The same scheme inline, ratios as decimals or fractions.
        for (const char* ratios : {"0,0.25,0.5,0.5,0,0", "0,1/4,1/2,1/2,0,0"}) {
            Run i = test::runTinyscope(args({"memory", "--model", "mcunet-5fps", "--n-bias-update", "20", "--weight-idx", "23,24,27,30,33,39",
                              "--weight-ratio", ratios, "--json"}));
            QCOMPARE(i.code, 0);
            const Json ij = Json::parse(i.out);
            QCOMPARE(ij["extra_bytes"].get<long long>(), 50944LL);
            QCOMPARE(ij["peak_bytes"], j["peak_bytes"]);
        }
        Run h = test::runTinyscope(args({"memory", "--model", "mbv2-w0.35", "--scheme", "49kb"}));
        QCOMPARE(h.code, 0);
        QVERIFY(h.out.find("51,002") != std::string::npos);
    }

    void schemeFilesAndSubnetConfigs()
    {
        const std::string yaml = file("s.yaml");
        Run save = test::runTinyscope(args({"memory", "--model", "proxyless-w0.3", "--scheme", "98kb", "--save-scheme", yaml.c_str()}));
        QCOMPARE(save.code, 0);
        Run load = test::runTinyscope(args({"memory", "--model", "proxyless-w0.3", "--scheme", yaml.c_str(), "--json"}));
        QCOMPARE(load.code, 0);
        QCOMPARE(Json::parse(load.out)["extra_bytes"].get<long long>(), 100896LL);
        const std::string cfg = file("subnet.json");
        writeFileAtomic(cfg, R"({"wid": 0, "ks": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "e": [3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3], "d": [0,0,0,0,0,0], "image_size": 96})");
        Run z = test::runTinyscope(args({"zoo", "show", "--config", cfg.c_str(), "--space", "mcunet-vww", "--json"}));
        QCOMPARE(z.code, 0);
        QCOMPARE(Json::parse(z.out)["params"].get<long long>(), 304538LL);
        Run m = test::runTinyscope(args({"memory", "--config", cfg.c_str(), "--space", "mcunet-vww", "--scheme", "bias-only:6", "--json"}));
        QCOMPARE(m.code, 0);
        Run g = test::runTinyscope(args({"train-graph", "--config", cfg.c_str(), "--space", "mcunet-vww", "--scheme", "last:4", "--json"}));
        QCOMPARE(g.code, 0);
        QVERIFY(Json::parse(g.out)["op_type_counts"].contains("nn.mcumultiply"));   // squeeze-excite blocks
    }

    void badInputIsOneLineAndExitCode2()
    {
        const std::string bad = file("bad.yaml");
        writeFileAtomic(bad, "backward_config:\n  n_bias_update: 20\n  manual_weight_idx: 23-24\n  weight_update_ratio: 0-0.3\n");
        struct Case {
            QStringList argv;
            const char* expect;
        } cases[] = {
            {args({"zoo", "show", "resnet-9"}), "unknown zoo model 'resnet-9'"},
            {args({"memory", "--model", "mcunet-5fps", "--scheme", "mcunet-5fps/50kb"}), "unknown scheme 'mcunet-5fps/50kb'"},
            {args({"memory", "--model", "mcunet-5fps", "--n-bias-update", "20", "--weight-idx", "23,45", "--weight-ratio", "1,1"}),
             "manual_weight_idx[1] = 45 is out of range"},
            {args({"memory", "--model", "mcunet-5fps", "--n-bias-update", "20", "--weight-idx", "23,24", "--weight-ratio", "1,0.3"}),
             "weight_update_ratio[1] = 0.3 is not allowed"},
            {args({"memory", "--model", "mcunet-5fps", "--n-bias-update", "20", "--weight-idx", "23,24", "--weight-ratio", "1"}),
             "manual_weight_idx has 2 entries but weight_update_ratio has 1"},
            {args({"memory", "--model", "mcunet-5fps", "--n-bias-update", "20", "--weight-idx", "23,x"}), "--weight-idx: entry 1 'x'"},
            {args({"memory", "--model", "mcunet-5fps", "--n-bias-update", "20", "--weight-idx", "23", "--weight-ratio", "1/0"}),
             "--weight-ratio: entry 0"},
            {args({"memory", "--model", "mcunet-5fps", "--scheme", bad.c_str()}), "bad.yaml"},
            {args({"memory", "--model", "mcunet-5fps"}), "give the sparse-update scheme"},
            {args({"memory", "--scheme", "full"}), "give the model"},
            {args({"memory", "--model", "mcunet-5fps", "--scheme", "full", "--n-bias-update", "3"}), "not both"},
            {args({"train-graph", "--model", "mcunet-5fps", "--scheme", "full", "--mode", "fast"}), "autodiff mode 'fast'"},
            {args({"train-graph", "--config", "/no/such/subnet.json", "--scheme", "full"}), "/no/such/subnet.json"},
            {args({"train-graph", "--model", "mcunet-5fps", "--scheme", "full", "--dott", "x"}), "unknown option --dott"},
        };
        for (const Case& c : cases) {
            Run r = test::runTinyscope(c.argv);
            QVERIFY2(r.code == 2, qPrintable(c.argv.join(' ') + QStringLiteral(" -> ") + QString::number(r.code)));
            QVERIFY2(r.err.find(c.expect) != std::string::npos, r.err.c_str());
            QCOMPARE(test::lineCount(r.err), 1);
            QVERIFY(r.out.empty());
        }
        // The message for a file names it and the entry.
        Run r = test::runTinyscope(args({"memory", "--model", "mcunet-5fps", "--scheme", bad.c_str()}));
        QVERIFY2(r.err.find("weight_update_ratio[1] = 0.3") != std::string::npos, r.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestGraphCli)
#include "test_graph_cli.moc"
