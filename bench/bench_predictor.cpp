// Accuracy-predictor speed on the lab's 50,000-pair dataset (40,000 train / 10,000 held out):
// training 10 epochs with the lab's recipe (target <= 7 s on 2 threads) and with Tinyscope's
// default recipe, batched prediction throughput, and the baseline from the same run: the lab's
// recipe in PyTorch eager (Debian's python3-torch, bench/lab_predictor_baseline.py) on the same
// threads and split, with its metrics and a linear least-squares fit.
//
// usage: bench_predictor [DATASET_DIR] [THREADS]
#include "nn/AccuracyPredictor.h"
#include "nn/TorchRuntime.h"
#include "space/ArchSampler.h"
#include "space/SpacePresets.h"

#include <chrono>
#include <sys/resource.h>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace tinyscope;
using Clock = std::chrono::steady_clock;

namespace {

// CPU seconds (user + system) this process has used, all threads.
double cpuSeconds()
{
    rusage u {};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

double train(const char* name, const AccuracyDataset& data, const DesignSpace& space, PredictorRecipe r, int threads,
           double target)
{
    r.threads = threads;
    AccuracyPredictor p(space);
    const double cpu0 = cpuSeconds();
    p.train(data, r);
    const double cpu = cpuSeconds() - cpu0;
    const PredictorCard& c = p.card();
    // Workers wait passively, so CPU time is the work done: on an idle machine the wall time
    // approaches CPU time / threads.
    std::printf("  %-22s %2d threads  %6.2f s wall (%5.2f s of it per-epoch validation), %6.2f s CPU%s\n"
                "  %-22s             held-out MAE %.4f  RMSE %.4f  tau %.4f\n",
                name, threads, c.training_seconds, c.validation_seconds, cpu,
                target > 0 ? (c.training_seconds <= target ? "  (target met)" : "  (target NOT met)") : "", "",
                c.validation.mae, c.validation.rmse, c.validation.kendall_tau);
    return c.training_seconds - c.validation_seconds;   // the baseline does not validate per epoch
}

std::string python()
{
    if (const char* p = std::getenv("TINYSCOPE_PYTHON")) return p;
    return std::system("test -x /usr/bin/python3") == 0 ? "/usr/bin/python3" : "python3";
}

}  // namespace

int main(int argc, char** argv)
{
    configureAllocator();
    const std::string dir = argc > 1 ? argv[1] : TINYSCOPE_SOURCE_DIR "/../shared/reference/mcunet-vww/acc_datasets";
    const int threads = argc > 2 ? std::atoi(argv[2]) : 2;
    DesignSpace space = presetSpace("mcunet-vww");
    auto t0 = Clock::now();
    AccuracyDataset data = AccuracyDataset::load(dir, space);
    std::printf("dataset %s: %zu pairs read in %.2f s\n\ntraining, 10 epochs on 40,000 pairs:\n", dir.c_str(), data.size(),
                std::chrono::duration<double>(Clock::now() - t0).count());
    const double oursN = train("lab recipe", data, space, PredictorRecipe::lab(), threads, 7.0);
    const double ours1 = threads == 1 ? oursN : train("lab recipe", data, space, PredictorRecipe::lab(), 1, 0);
    train("default recipe", data, space, PredictorRecipe::standard(), threads, 0);

    // Batched prediction with the shipped predictor: 50,000 random subnets, cache off.
    const std::string shipped = shippedPredictorPath("mcunet-vww");
    if (!shipped.empty()) {
        AccuracyPredictor p = AccuracyPredictor::load(shipped, space);
        p.setCaching(false);
        p.setThreads(threads);
        ArchSampler s(space);
        PyRandom rng(1);
        std::vector<SubnetConfig> configs;
        for (int i = 0; i < 50000; ++i) configs.push_back(s.random(rng));
        for (int batch : {100, 50000}) {
            double best = 1e30;
            for (int rep = 0; rep < 3; ++rep) {
                auto t = Clock::now();
                for (std::size_t i = 0; i < configs.size(); i += static_cast<std::size_t>(batch)) {
                    std::vector<SubnetConfig> b(configs.begin() + static_cast<std::ptrdiff_t>(i),
                                                configs.begin() + static_cast<std::ptrdiff_t>(std::min(configs.size(), i + static_cast<std::size_t>(batch))));
                    p.predict(b);
                }
                best = std::min(best, std::chrono::duration<double>(Clock::now() - t).count());
            }
            std::printf("\nprediction, 50,000 subnets in batches of %d: %.3f s (%.1f us per subnet)", batch, best, best / 50000 * 1e6);
        }
        std::printf("\n");
    }

    // The baseline on the same thread counts: PyTorch's OpenMP team spin-waits, so on a busy
    // machine its 2-thread run can be far slower than its 1-thread run; both are printed.
    std::printf("\nbaseline: the lab's recipe in PyTorch eager (%s), same split:\n", python().c_str());
    for (int t : {threads, 1}) {
        if (t == 1 && threads == 1) break;
        const std::string cmd = python() + " " TINYSCOPE_SOURCE_DIR "/bench/lab_predictor_baseline.py " + dir + " " +
                                std::to_string(t) + " 2>/dev/null";
        FILE* f = popen(cmd.c_str(), "r");
        if (!f) continue;
        char buf[4096] = {0};
        std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
        pclose(f);
        try {
            Json j = Json::parse(std::string(buf, n));
            const double py = j["seconds"].get<double>();
            std::printf("  PyTorch lab recipe     %2d threads  %6.2f s   held-out MAE %.4f  RMSE %.4f  tau %.4f"
                        "  -> ours (training steps only) is %.2fx its speed\n",
                        t, py, j["mae"].get<double>(), j["rmse"].get<double>(), j["kendall_tau"].get<double>(),
                        py / (t == threads ? oursN : ours1));
            if (t == threads) std::printf("  linear least squares (same split)   held-out MAE %.4f\n", j["linear_mae"].get<double>());
        } catch (const std::exception&) {
            std::printf("  python3 with torch and numpy not available, no ratio\n");
            break;
        }
    }
    double load[3] = {0, 0, 0};
    if (FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
        std::fclose(f);
    }
    std::printf("\nload average at the end: %.2f %.2f %.2f (2 cores; other work on the machine slows both sides)\n", load[0],
                load[1], load[2]);
    return 0;
}
