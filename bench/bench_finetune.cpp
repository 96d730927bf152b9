// The fine-tuning simulator's speed (issue 20, "Speed"): steps per second of FineTuneModel::step
// (one SGD step with QAS on a batch of the fake-quantized int8 graph: forward, backward, sparse
// update) for mcunet-5fps at 128 px with its real int8 params and the fine-tuning job's new
// 10-class head, scheme mcunet-5fps/49kb, batch 64, 2 threads — against the same step in PyTorch
// eager (Debian's python3-torch, bench/torch_finetune_baseline.py), which interprets the forward
// ops of the faithful export of the same model, params and scheme (written here with writeExport,
// the files `tinyscope export --mode faithful` writes) and applies the same QAS-scaled SGD update.
// Both start from the same values and run the same batch of seeded int8 images: the losses of
// their first two steps (before and after one update) must agree within 1e-3 relative, else the
// program fails (exit 1). Ours and PyTorch take turns, ROUNDS times; medians over rounds. Also one
// evaluation batch (logits only, batch 200 as evaluateTop1) each way, and the projected minutes
// per Fashion-MNIST epoch (60,000 images; the step only: no image decoding or augmentation).
//
// usage: bench_finetune [ROUNDS] [BATCH] [THREADS] [SCHEME] [PARAMS_DIR]
#include "BenchTiming.h"
#include "PythonBaseline.h"
#include "graph/PublishedSchemes.h"
#include "io/JsonFile.h"
#include "nn/TorchRuntime.h"
#include "nn/finetune/FineTuneModel.h"
#include "tinyengine/TinyEngineExport.h"
#include "zoo/ZooCatalog.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

using namespace tinyscope;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kEvalBatch = 200;   // evaluateTop1's batch
constexpr int kClasses = 10;      // Fashion-MNIST
constexpr int kResolution = 128;
constexpr double kEpochImages = 60000;

bool agree(double a, double b) { return std::fabs(a - b) <= 1e-3 * std::max(std::fabs(a), std::fabs(b)); }

double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

int main(int argc, char** argv)
{
    configureAllocator();
    const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
    const int batch = argc > 2 ? std::max(1, std::min(kEvalBatch, std::atoi(argv[2]))) : 64;
    const int threads = setTorchThreads(argc > 3 ? std::atoi(argv[3]) : 2);
    const std::string schemeName = argc > 4 ? argv[4] : "mcunet-5fps/49kb";
    const std::string ref = argc > 5 ? argv[5] : TINYSCOPE_SOURCE_DIR "/../shared/reference/tinyengine";
    bench::printMachine();
    bench::printKernels();
    if (!std::filesystem::exists(ref + "/full-int8-params.pkl")) {
        std::printf("skipped: %s/full-int8-params.pkl not found (the real mcunet-5fps int8 params, ../shared/reference)\n", ref.c_str());
        return 0;
    }

    // The model fineTune trains: the real int8 params, a new seeded 10-class head (output scale 1).
    Network net = zooModel("mcunet-5fps");
    QuantizedParams params = readParamsPickle(ref + "/full-int8-params.pkl");
    params.scales = readScaleJson(ref + "/scale.json");
    replaceClassifier(net, params, kClasses, 1);
    const SparseScheme scheme = schemeByName(schemeName, &net);
    const ExportPlan plan = planExport(net, params, scheme, ExportForm::Faithful, "finetune");
    FineTuneModel model(net, plan.params, plan.scheme);

    // Seeded int8 images and labels.
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> px(-128, 127), cls(0, kClasses - 1);
    std::vector<float> pixels(static_cast<std::size_t>(kEvalBatch) * 3 * kResolution * kResolution);
    for (float& v : pixels) v = static_cast<float>(px(rng));
    std::vector<std::int64_t> labels(kEvalBatch);
    for (auto& l : labels) l = cls(rng);
    const torch::Tensor evalX = torch::from_blob(pixels.data(), {kEvalBatch, 3, kResolution, kResolution}, torch::kFloat).clone();
    const torch::Tensor x = evalX.narrow(0, 0, batch).contiguous();
    const std::vector<int> y(labels.begin(), labels.begin() + batch);
    const double lr = 0.075 * 64 / 256;   // the recipe's base lr at batch 64

    // The files the PyTorch baseline reads.
    char tmpl[] = "/tmp/tinyscope-bench-finetune-XXXXXX";
    const std::string dir = mkdtemp(tmpl) ? tmpl : "/tmp/tinyscope-bench-finetune";
    writeExport(plan, dir);
    Json trainable = Json::array();
    for (const FineTuneParameter& p : model.parameters()) {
        const Layer& L = net.conv(p.conv);
        const bool dw = L.depthwise();
        trainable.push_back(Json{{"name", p.name}, {"bias", p.bias}, {"k", p.k}, {"full", dw ? L.cout : L.cin / L.groups}, {"dim", dw ? 0 : 1}});
    }
    {
        std::ofstream(dir + "/trainable.json")
            << Json{{"trainable", trainable}, {"classes", kClasses}, {"resolution", kResolution}, {"eval_batch", kEvalBatch}}.dump();
        std::ofstream(dir + "/input.f32", std::ios::binary)
            .write(reinterpret_cast<const char*>(pixels.data()), static_cast<std::streamsize>(pixels.size() * sizeof(float)));
        std::ofstream(dir + "/labels.i64", std::ios::binary)
            .write(reinterpret_cast<const char*>(labels.data()), static_cast<std::streamsize>(labels.size() * sizeof(std::int64_t)));
    }
    std::printf("mcunet-5fps %dx%d, real int8 params + new %d-class head, scheme %s (%zu tensors updated), batch %d, %d threads, "
                "lr %.5g, QAS on; %d rounds; medians over rounds\n",
                kResolution, kResolution, kClasses, schemeName.c_str(), model.parameters().size(), batch, threads, lr, rounds);

    // Ours: the logits before any step, the first two steps' losses, then the step's cost.
    const double ourLogit = model.logits(evalX).mean().item<double>();
    const double l0 = model.step(x, y, lr, true);
    auto t0 = Clock::now();
    const double l1 = model.step(x, y, lr, true);
    const double once = seconds(t0);
    const int reps = std::max(1, static_cast<int>(std::lround(3.0 / once)));

    const std::string script = TINYSCOPE_SOURCE_DIR "/bench/torch_finetune_baseline.py";
    auto args = [&](const char* mode) {
        return std::vector<std::string>{script, mode, dir, "finetune", std::to_string(batch), std::to_string(threads), std::to_string(lr)};
    };
    bench::PythonBaseline pyTrain(args("train")), pyEval(args("eval"));
    double p0 = 0, p1 = 0;
    bool haveTorch = pyTrain.ok() && pyEval.ok();
    if (haveTorch) {
        std::ifstream f(dir + "/python-losses.txt");
        haveTorch = static_cast<bool>(f >> p0 >> p1);
    }
    std::printf("losses of steps 1 and 2: ours %.6f %.6f", l0, l1);
    if (haveTorch) std::printf(" | PyTorch %.6f %.6f; mean logit of the eval batch before training: ours %.6f | PyTorch %.6f\n", p0, p1, ourLogit, pyEval.checksum());
    else std::printf("\n%s\n", bench::missingPythonTorch());
    if (haveTorch && (!agree(l0, p0) || !agree(l1, p1) || !agree(ourLogit, pyEval.checksum()))) {
        std::printf("FAIL: the PyTorch step does not compute the simulator's loss (tolerance 1e-3 relative): not the same step\n");
        std::filesystem::remove_all(dir);
        return 1;
    }

    // Interleaved rounds.
    std::vector<double> ours, theirs, ratio, oursEval, theirsEval;
    const int evalReps = 2;
    auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(50)); };
    for (int r = 0; r < rounds; ++r) {
        t0 = Clock::now();
        for (int i = 0; i < reps; ++i) model.step(x, y, lr, true);
        ours.push_back(seconds(t0) / reps);
        pause();
        t0 = Clock::now();
        for (int i = 0; i < evalReps; ++i) model.logits(evalX);
        oursEval.push_back(seconds(t0) / evalReps);
        pause();
        if (haveTorch) {
            const double t = pyTrain.secondsPerCall(reps);
            pause();
            const double e = pyEval.secondsPerCall(evalReps);
            pause();
            if (t > 0) theirs.push_back(t), ratio.push_back(t / ours.back());
            if (e > 0) theirsEval.push_back(e);
        }
        std::printf("  round %d: ours %.3f s/step, %.3f s/eval batch", r + 1, ours.back(), oursEval.back());
        if (!theirs.empty() && !theirsEval.empty()) std::printf(" | PyTorch %.3f s/step, %.3f s/eval batch", theirs.back(), theirsEval.back());
        std::printf("\n");
        std::fflush(stdout);
    }
    auto line = [&](const char* who, double sps, double evalS) {
        std::printf("%-8s %8.3f steps/s %8.1f images/s %9.1f min/epoch (60,000 images, step only) %8.3f s/eval batch of %d (%.0f images/s)\n", who,
                    1.0 / sps, batch / sps, kEpochImages / batch * sps / 60.0, evalS, kEvalBatch, kEvalBatch / evalS);
    };
    std::printf("\n");
    line("ours", bench::median(ours), bench::median(oursEval));
    if (!theirs.empty() && !theirsEval.empty()) {
        line("PyTorch", bench::median(theirs), bench::median(theirsEval));
        std::printf("ratio (PyTorch time / ours, >1 = ours faster): step %.2fx, eval batch %.2fx\n", bench::median(ratio),
                    bench::median(theirsEval) / bench::median(oursEval));
    }
    std::printf("\n%s (at the end)\n", bench::loadAverage().c_str());
    std::filesystem::remove_all(dir);
    return 0;
}
