// Accuracy-predictor speed on the lab's 50,000-pair dataset (40,000 train / 10,000 held out), with
// baselines from the same run:
//  1. the matrix products of one lab-recipe training step (128 rows per shard): our fixed-order
//     GEMM (predict/FixedOrderGemm.h, the same bits on every CPU) against LibTorch's at::mm /
//     at::addmm (OpenBLAS, whose kernels and rounding differ per CPU), one thread, interleaved;
//  2. training 10 epochs with the lab's recipe against the same recipe in PyTorch eager (Debian's
//     python3-torch, bench/lab_predictor_baseline.py: same split, no per-epoch validation), on
//     THREADS and on 1 thread, ROUNDS rounds taking turns; medians, with held-out MAE and tau;
//  3. Tinyscope's default recipe once; 4. batched prediction with the shipped predictor.
//
// usage: bench_predictor [DATASET_DIR] [THREADS] [ROUNDS]
#include "BenchTiming.h"
#include "PythonBaseline.h"
#include "nn/predictor/AccuracyPredictor.h"
#include "nn/TorchRuntime.h"
#include "predict/FixedOrderGemm.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>

using namespace tinyscope;
using Clock = std::chrono::steady_clock;

namespace {

double cpuSeconds()
{
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// 1. One shard's matrix products in a lab-recipe step (batch 256 in two shards of 128 rows).
void compareGemms(int rounds)
{
    setTorchThreads(1);
    const std::int64_t R = 128;
    struct Shape {
        const char* what;
        std::int64_t M, N, K;
        bool transposedA, bias;
    };
    const Shape shapes[] = {{"forward 128 -> 400", R, 400, 128, false, true},  {"forward 400 -> 400 (x2)", R, 400, 400, false, true},
                            {"forward 400 -> 1", R, 1, 400, false, false},     {"weight gradient 400x400 (x2)", 400, 400, R, true, false},
                            {"weight gradient 400x128", 400, 128, R, true, false}, {"input gradient 400 <- 400 (x2)", R, 400, 400, false, false}};
    const int counts[] = {1, 2, 1, 2, 1, 2};
    std::printf("1. matrix products of one 128-row shard step, 1 thread, median of %d rounds (us per call)\n", rounds);
    std::printf("   %-32s %10s %10s %8s\n", "", "fixed", "at::mm", "ratio");
    double sumOurs = 0, sumTorch = 0;
    int i = 0;
    for (const Shape& s : shapes) {
        at::Tensor a = s.transposedA ? at::randn({s.K, s.M}) : at::randn({s.M, s.K});
        at::Tensor b = at::randn({s.K, s.N}), bias = at::randn({s.N}), c = at::empty({s.M, s.N});
        GemmOperands g;
        g.M = s.M;
        g.N = s.N;
        g.K = s.K;
        g.a = a.data_ptr<float>();
        g.aRow = s.transposedA ? 1 : s.K;
        g.aCol = s.transposedA ? s.M : 1;
        g.b = b.data_ptr<float>();
        g.ldb = s.N;
        g.c = c.data_ptr<float>();
        g.ldc = s.N;
        g.bias = s.bias ? bias.data_ptr<float>() : nullptr;
        const at::Tensor A = s.transposedA ? a.t() : a;
        const int reps = static_cast<int>(std::max<std::int64_t>(20, 200000000 / (s.M * s.N * s.K)));
        std::vector<double> ours, torch;
        for (int r = 0; r < rounds; ++r) {
            ours.push_back(bench::timeUs(reps, [&](int) { fixedOrderGemm(g); }, 1));
            torch.push_back(bench::timeUs(reps, [&](int) { s.bias ? at::addmm_out(c, bias, A, b) : at::mm_out(c, A, b); }, 1));
        }
        const double o = bench::median(ours), t = bench::median(torch);
        std::printf("   %-32s %10.1f %10.1f %7.2fx\n", s.what, o, t, t / o);
        sumOurs += o * counts[i];
        sumTorch += t * counts[i];
        ++i;
    }
    std::printf("   %-32s %10.1f %10.1f %7.2fx   (OpenBLAS core %s, our lanes %s)\n\n", "all of one shard step", sumOurs, sumTorch,
                sumTorch / sumOurs, hostCpuAndKernels().kernels["openblas"].c_str(), gemmIsaName(bestGemmIsa()));
}

struct Trained {
    double wall = 0, steps = 0, cpu = 0, mae = 0, tau = 0, rmse = 0;
};

Trained trainOurs(const AccuracyDataset& data, const DesignSpace& space, PredictorRecipe r, int threads)
{
    r.threads = threads;
    AccuracyPredictor p(space);
    const double cpu0 = cpuSeconds();
    p.train(data, r);
    const PredictorCard& c = p.card();
    return {c.training_seconds, c.training_seconds - c.validation_seconds, cpuSeconds() - cpu0, c.validation.mae,
            c.validation.kendall_tau, c.validation.rmse};
}

// The lab recipe in PyTorch; wall = -1 when python3-torch is missing.
Trained trainPyTorch(const std::string& dir, int threads)
{
    Trained t;
    t.wall = -1;
    const std::string cmd = bench::pythonExecutable() + " " TINYSCOPE_SOURCE_DIR "/bench/lab_predictor_baseline.py " + dir + " " +
                            std::to_string(threads) + " 2>/dev/null";
    std::string out;
    if (!bench::captureOutput(cmd, out)) return t;
    try {
        Json j = Json::parse(out);
        t.wall = t.steps = j["seconds"].get<double>();
        t.mae = j["mae"].get<double>();
        t.tau = j["kendall_tau"].get<double>();
        t.rmse = j["rmse"].get<double>();
    } catch (const std::exception&) {
    }
    return t;
}

}  // namespace

int main(int argc, char** argv)
{
    configureAllocator();
    const std::string dir = argc > 1 ? argv[1] : TINYSCOPE_SOURCE_DIR "/../shared/reference/mcunet-vww/acc_datasets";
    const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
    const int rounds = argc > 3 ? std::max(1, std::atoi(argv[3])) : 3;
    bench::printMachine();
    bench::printKernels();
    std::printf("\n");
    compareGemms(5);

    DesignSpace space = presetSpace("mcunet-vww");
    auto t0 = Clock::now();
    AccuracyDataset data = AccuracyDataset::load(dir, space);
    std::printf("2. training, lab recipe, 10 epochs on 40,000 pairs (%s: %zu pairs read in %.2f s); %d rounds, ours and\n"
                "   PyTorch taking turns; ratio = PyTorch's time / ours on training steps (ours also validates every epoch)\n",
                dir.c_str(), data.size(), seconds(t0), rounds);
    bool missing = false;
    for (int t : {threads, 1}) {
        std::vector<double> ourWall, ourSteps, ourCpu, theirs, ratio;
        Trained o, py;
        for (int r = 0; r < rounds; ++r) {
            o = trainOurs(data, space, PredictorRecipe::lab(), t);
            ourWall.push_back(o.wall);
            ourSteps.push_back(o.steps);
            ourCpu.push_back(o.cpu);
            py = trainPyTorch(dir, t);
            if (py.wall > 0) {
                theirs.push_back(py.wall);
                ratio.push_back(py.steps / o.steps);
            }
        }
        std::printf("   ours     %d thread%s  %6.2f s wall (%.2f s training steps), %6.2f s CPU   held-out MAE %.4f RMSE %.4f tau %.4f\n", t,
                    t > 1 ? "s" : " ", bench::median(ourWall), bench::median(ourSteps), bench::median(ourCpu), o.mae, o.rmse, o.tau);
        if (theirs.empty()) {
            missing = true;
        } else {
            std::printf("   PyTorch  %d thread%s  %6.2f s wall                                  held-out MAE %.4f RMSE %.4f tau %.4f\n", t,
                        t > 1 ? "s" : " ", bench::median(theirs), py.mae, py.rmse, py.tau);
            std::printf("   -> ours %.2fx PyTorch's speed (median of per-round ratios; rounds:", bench::median(ratio));
            for (double x : ratio) std::printf(" %.2f", x);
            std::printf(")\n");
        }
        std::fflush(stdout);
        if (threads == 1) break;
    }
    if (missing) std::printf("   %s\n", bench::missingPythonTorch());

    const Trained d = trainOurs(data, space, PredictorRecipe::standard(), threads);
    std::printf("\n3. default recipe (cosine, batch 128), %d threads: %.2f s wall (%.2f s training steps)   held-out MAE %.4f RMSE %.4f tau %.4f\n",
                threads, d.wall, d.steps, d.mae, d.rmse, d.tau);

    const std::string shipped = shippedPredictorPath("mcunet-vww");
    if (!shipped.empty()) {
        AccuracyPredictor p = AccuracyPredictor::load(shipped, space);
        p.setCaching(false);
        p.setThreads(threads);
        ArchSampler s(space);
        PyRandom rng(1);
        std::vector<SubnetConfig> configs;
        for (int i = 0; i < 50000; ++i) configs.push_back(s.random(rng));
        std::printf("\n4. prediction with the shipped predictor, 50,000 random subnets, %d threads, best of 3:", threads);
        for (int batch : {100, 50000}) {
            double best = 1e30;
            for (int rep = 0; rep < 3; ++rep) {
                auto t = Clock::now();
                for (std::size_t i = 0; i < configs.size(); i += static_cast<std::size_t>(batch)) {
                    std::vector<SubnetConfig> b(configs.begin() + static_cast<std::ptrdiff_t>(i),
                                                configs.begin() + static_cast<std::ptrdiff_t>(std::min(configs.size(), i + static_cast<std::size_t>(batch))));
                    p.predict(b);
                }
                best = std::min(best, seconds(t));
            }
            std::printf("\n   batches of %5d: %.3f s (%.1f us per subnet)", batch, best, best / 50000 * 1e6);
        }
        std::printf("\n");
    }
    std::printf("\n%s (at the end; other work on the machine slows both sides)\n", bench::loadAverage().c_str());
    return 0;
}
