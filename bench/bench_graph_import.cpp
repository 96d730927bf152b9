// Graph import at scale (issue 45): `inspect` and `device-run` read a TinyEngine graph JSON through
// importTinyEngineGraph; a hostile or generated graph of 150,000 ops took 104 s when the reader was
// quadratic. Two kinds of graph of N ops are written and their import timed at N, 2N, ...: a linear
// reader prints ratios near 2 (a quadratic one near 4).
//   * frozen chain: MIT's hand-made example (example/tiny-graph.json, 59 ops) with a chain of frozen
//     1×1 convs inserted after its stem (forward ops);
//   * bias chain: our exporter's graph of a chain of 1×1 convs whose biases are all updated (a
//     backward op chain and a gradient output per conv).
//
//   bench_graph_import [SHARED_DIR] [--ops 10000,20000,40000,80000]
#include "BenchTiming.h"
#include "graph/Autodiff.h"
#include "io/JsonFile.h"
#include "tinyengine/GraphImport.h"
#include "tinyengine/GraphJson.h"
#include "zoo/NetworkBuilder.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace tinyscope;
using Clock = std::chrono::steady_clock;

namespace {

// tiny-graph.json with `extra` frozen conv + truncate pairs between the stem's truncate (op 1) and
// v1's conv: every later reference to the stem's output now reads the chain's last output.
Json chainGraph(const Json& base, int extra)
{
    Json out = Json::array();
    out.push_back(base[0]);
    out.push_back(base[1]);
    const std::string stemOut = base[1]["outputs"][0]["name"].get<std::string>();
    const Json shape = base[1]["outputs"][0]["shape"];
    const int channels = shape[1].get<int>();
    std::string prev = stemOut;
    out[1]["outputs"][0]["meta"]["children"] = 1;
    for (int k = 0; k < extra; ++k) {
        const std::string v = "c" + std::to_string(k);
        Json conv = base[2];
        conv["name"] = "nn.mcuconv2d@x" + std::to_string(k);
        conv["inputs"][0]["name"] = prev;
        const char* suffix[] = {"", "_weight", "_bias", "_zero_x", "_zero_y", "_scale"};
        for (int i = 1; i < 6; ++i) conv["inputs"][static_cast<std::size_t>(i)]["name"] = "v" + v + suffix[i];
        conv["inputs"][1]["shape"] = Json::array({channels, channels, 1, 1});
        conv["outputs"][0]["name"] = "out_nn.mcuconv2d@x" + std::to_string(k);
        conv["outputs"][0]["meta"]["children"] = 1;
        Json trunc = base[1];
        trunc["name"] = "nn.mcutruncate@x" + std::to_string(k);
        trunc["inputs"][0] = base[1]["inputs"][0];
        trunc["inputs"][0]["name"] = conv["outputs"][0]["name"];
        trunc["inputs"][0]["shape"] = shape;
        trunc["outputs"][0]["name"] = "out_nn.mcutruncate@x" + std::to_string(k);
        trunc["outputs"][0]["meta"]["children"] = k + 1 == extra ? base[1]["outputs"][0]["meta"]["children"] : Json(1);
        prev = trunc["outputs"][0]["name"].get<std::string>();
        out.push_back(conv);
        out.push_back(trunc);
    }
    for (std::size_t i = 2; i < base.size(); ++i) {
        Json op = base[i];
        for (Json& t : op["inputs"])
            if (t["name"] == stemOut) t["name"] = prev;
        out.push_back(op);
    }
    return out;
}

// Stem, `convs` 1×1 convs of 8 channels on a 4×4 map (ReLU6, bias), pool, classifier: every bias updated.
std::string biasChainGraph(int convs)
{
    NetworkBuilder b("bias-chain", {3, 8, 8});
    int x = b.conv(-1, ConvSpec::of("first_conv", "stem", "v0", -1, 8, 3, 2, 1, Activation::ReLU6).withBias());
    for (int k = 0; k < convs; ++k)
        x = b.conv(x, ConvSpec::of("c" + std::to_string(k), "conv", "v" + std::to_string(k + 1), -1, 8, 1, 1, 1, Activation::ReLU6).withBias());
    x = b.globalAvgPool(x, "pool");
    b.conv(x, ConvSpec::of("classifier", "classifier", "v" + std::to_string(convs + 1), -1, 10).asLinear());
    const Network net = b.finish(10, LossKind::CrossEntropy, "bias chain", "bench");
    SparseScheme scheme;
    scheme.n_bias_update = -1;
    return graphJsonText(buildTrainingGraph(net, scheme.resolve(net, "bench")));
}

double timeImport(const std::string& text, int n, std::size_t* ops, int* forwardOps)
{
    const std::string path = "/tmp/bench_graph_import-" + std::to_string(n) + ".json";
    std::ofstream(path) << text;
    const auto t0 = Clock::now();
    const ImportedGraph im = importTinyEngineGraph(path);
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    std::remove(path.c_str());
    *ops = im.graph.ops.size();
    *forwardOps = im.forwardOps();
    return s;
}

}  // namespace

int main(int argc, char** argv)
{
    bench::printMachine();
    std::string shared = "../shared";
    std::vector<int> sizes{10000, 20000, 40000, 80000};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--ops" && i + 1 < argc) {
            sizes.clear();
            std::stringstream ss(argv[++i]);
            for (std::string item; std::getline(ss, item, ',');) sizes.push_back(std::atoi(item.c_str()));
        } else {
            shared = a;
        }
    }
    const Json base = readJsonFile(shared + "/reference/tinyengine/example/tiny-graph.json");
    for (int kind = 0; kind < 2; ++kind) {
        std::printf("graph import, %s (ops; seconds; ratio to the previous size)\n",
                    kind == 0 ? "frozen chain: tiny-graph.json with frozen 1x1 convs after the stem" : "bias chain: every bias of a chain of 1x1 convs updated");
        double previous = 0;
        std::size_t previousOps = 0;
        for (int n : sizes) {
            std::size_t ops = 0;
            int forwardOps = 0;
            // About 2 ops per frozen conv; the bias chain's ops per conv are measured on a small one.
            static const double biasOpsPerConv = [] {
                std::size_t o = 0;
                int f = 0;
                const double unused = timeImport(biasChainGraph(100), 0, &o, &f);
                (void)unused;
                return static_cast<double>(o) / 100;
            }();
            const std::string text = kind == 0 ? chainGraph(base, std::max(0, (n - static_cast<int>(base.size())) / 2)).dump()
                                               : biasChainGraph(std::max(1, static_cast<int>(n / biasOpsPerConv)));
            const double s = timeImport(text, n, &ops, &forwardOps);
            std::printf("%8zu ops  %8.3f s", ops, s);
            if (previous > 0) std::printf("   x%.2f for x%.2f ops", s / previous, static_cast<double>(ops) / static_cast<double>(previousOps));
            std::printf("   (%d forward ops)\n", forwardOps);
            previous = s;
            previousOps = ops;
        }
    }
    return 0;
}
