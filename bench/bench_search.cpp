// Search speed with the shipped predictor: the lab-size evolutionary search (population 50,
// 20 generations, 60 M MACs / 250 KB) and the once-for-all tutorial size (population 100, 500
// generations). Baselines from the same run, taking turns with ours round after round (medians
// over ROUNDS rounds): the same searches with the prediction cache off, and the lab's search
// semantics in Python (bench/lab_search_reference.py: closed-form cost model, the same MLP weights
// in PyTorch), which also checks that both find the same subnet.
//
// usage: bench_search [PREDICTOR] [ROUNDS]
#include "BenchTiming.h"
#include "PythonBaseline.h"
#include "nn/predictor/AccuracyPredictor.h"
#include "nn/TorchRuntime.h"
#include "search/ArchitectureSearch.h"
#include "search/Feasibility.h"
#include "search/TinyEngineTrainingLimit.h"
#include "search/TrainingMemoryLimit.h"
#include "tinyengine/BoardProfile.h"
#include "space/SpacePresets.h"
#include "workspace/ShippedModels.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tinyscope;
using Clock = std::chrono::steady_clock;

namespace {

struct Timed {
    double best = 1e30, median = 0;
    SearchResult result;
};

Timed timeSearch(const DesignSpace& space, AccuracyPredictor& pred, const Constraints& c, const SearchOptions& o,
                 bool cache, int reps)
{
    Timed t;
    std::vector<double> all;
    pred.setCaching(cache);
    for (int i = 0; i < reps; ++i) {
        pred.clearCache();   // every repetition starts cold
        auto t0 = Clock::now();
        t.result = runSearch(space, pred, c, o);
        all.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    std::sort(all.begin(), all.end());
    t.best = all.front();
    t.median = all[all.size() / 2];
    return t;
}

// Runs the Python reference; returns its seconds (or -1) and fills its best accuracy.
double pythonSearch(const std::string& predictor, const SearchOptions& o, const Constraints& c, double& bestAcc)
{
    const std::string python = bench::pythonExecutable();
    std::string req = "{\"algorithm\":\"" + o.algorithm + "\",\"population_size\":" + std::to_string(o.population) +
                      ",\"max_time_budget\":" + std::to_string(o.generations) + ",\"parent_ratio\":0.25,\"mutation_ratio\":0.5," +
                      "\"arch_mutate_prob\":0.1,\"resolution_mutate_prob\":0.5,\"seed\":" + std::to_string(o.seed) +
                      ",\"constraints\":" + c.toJson().dump() + ",\"oracle\":\"" + predictor + "\"}";
    std::string cmd = python + " " TINYSCOPE_SOURCE_DIR "/bench/lab_search_reference.py '" + req + "' 2>/dev/null";
    std::string out;
    if (!bench::captureOutput(cmd, out)) return -1;
    try {
        Json j = Json::parse(out);
        bestAcc = j["best_accuracy"].get<double>();
        return j["seconds"].get<double>();
    } catch (...) {
        return -1;
    }
}

void report(const char* name, const DesignSpace& space, AccuracyPredictor& pred, const Constraints& c, const SearchOptions& o,
            int rounds, int repsPerRound)
{
    std::vector<double> cachedT, uncachedT, pythonT, vsPython, cacheGain;
    SearchResult r;
    double pyAcc = 0;
    std::size_t distinct = 0;
    for (int round = 0; round < rounds; ++round) {
        Timed cached = timeSearch(space, pred, c, o, true, repsPerRound);
        distinct = pred.cache().misses();
        Timed uncached = timeSearch(space, pred, c, o, false, 1);
        pred.setCaching(true);
        r = cached.result;
        cachedT.push_back(cached.best);
        uncachedT.push_back(uncached.best);
        cacheGain.push_back(uncached.best / cached.best);
        const double py = pythonSearch(pred.path(), o, c, pyAcc);
        if (py > 0) {
            pythonT.push_back(py);
            vsPython.push_back(py / cached.best);
        }
    }
    std::printf("%s: population %d, %d generations, %s; %d rounds (ours: best of %d per round), medians\n", name, o.population,
                o.generations, c.describe().c_str(), rounds, repsPerRound);
    std::printf("  ours, cache on      %9.2f ms  (rounds %.2f-%.2f ms)\n", bench::median(cachedT) * 1e3,
                *std::min_element(cachedT.begin(), cachedT.end()) * 1e3, *std::max_element(cachedT.begin(), cachedT.end()) * 1e3);
    std::printf("  ours, cache off     %9.2f ms  -> the cache gives %.2fx\n", bench::median(uncachedT) * 1e3, bench::median(cacheGain));
    std::printf("  best %.3f %% at %.2f M MACs, %.1f KB; %zu subnets, %zu distinct predicted\n", r.best.accuracy,
                r.best.cost.millionMacs(), r.best.cost.peakKB(), r.evaluated.size(), distinct);
    if (!pythonT.empty())
        std::printf("  baseline: lab semantics in Python (closed-form cost, same MLP) %9.2f ms -> ours %.1fx its speed; "
                    "Python's best %.3f %% (%s)\n",
                    bench::median(pythonT) * 1e3, bench::median(vsPython), pyAcc,
                    std::abs(pyAcc - r.best.accuracy) < 1e-3 ? "same subnet" : "differs");
    else
        std::printf("  baseline: %s\n", bench::missingPythonTorch());
}

// The lab-size search with a fine-tuning memory budget on top of the lab's limits: cold (a new
// limit, so every network is priced) and warm (the limit's memo kept, as live re-runs keep it),
// against the same search without it.
void reportTrainingBudget(const DesignSpace& space, AccuracyPredictor& pred, const Constraints& base, const SearchOptions& o, int reps)
{
    const char* pattern = "bias-only:12+pw1:3@1/4";
    Timed without = timeSearch(space, pred, base, o, true, reps);
    std::vector<double> cold, warm;
    SearchResult r;
    for (int i = 0; i < reps; ++i) {
        Constraints c = base;
        TrainingMemoryLimit limit(space, pattern);
        c.set(limit.quantity(), 200);
        for (std::vector<double>* into : {&cold, &warm}) {
            pred.clearCache();
            auto t0 = Clock::now();
            r = runSearch(space, pred, c, o);
            into->push_back(std::chrono::duration<double>(Clock::now() - t0).count());
        }
    }
    std::sort(cold.begin(), cold.end());
    std::sort(warm.begin(), warm.end());
    std::printf("lab size + fine-tuning memory (%s) <= 200 KB\n", pattern);
    std::printf("  cold limit          %9.2f ms best   warm limit %9.2f ms best   (without the limit %.2f ms: %.1fx / %.1fx)\n",
                cold.front() * 1e3, warm.front() * 1e3, without.best * 1e3, cold.front() / without.best, warm.front() / without.best);
    std::printf("  best %.3f %% at %.2f M MACs, %.1f KB peak SRAM\n", r.best.accuracy, r.best.cost.millionMacs(), r.best.cost.peakKB());
}

// The lab-size search in the TinyEngine-trainable space with and without --train-on tinyengine
// (stm32f746, the best scheme per candidate), same run, turns taken: candidates per second and the
// whole search's wall time, cold (a new limit: every network planned) and warm (its memo kept).
void reportTinyEngine(int reps)
{
    const std::string path = shippedPredictorPath("mcunet-fmnist-te");
    if (path.empty()) {
        std::printf("lab size, mcunet-fmnist-te + --train-on tinyengine: skipped (no models/predictors/mcunet-fmnist-te.bin)\n");
        return;
    }
    const DesignSpace te = presetSpace("mcunet-fmnist-te");
    AccuracyPredictor pred = AccuracyPredictor::load(path, te);
    Constraints base;
    base.set("millionMACs", 30);
    SearchOptions o;
    o.population = 50;
    o.generations = 20;
    o.seed = 1;
    const BoardProfile board = presetBoard("stm32f746");
    std::printf("lab size in mcunet-fmnist-te (population 50, 20 generations, MACs <= 30 M), stm32f746, best scheme per subnet\n");
    for (double budget : {32.0, 64.0, 128.0}) {
        std::vector<double> without, cold, warm;
        SearchResult r, plain;
        for (int i = 0; i < reps; ++i) {
            pred.clearCache();
            auto t0 = Clock::now();
            plain = runSearch(te, pred, base, o);
            without.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
            Constraints c = base;
            TinyEngineTrainingLimit limit(te, board, "", budget);
            c.set(limit.quantity(), budget);
            for (std::vector<double>* into : {&cold, &warm}) {
                pred.clearCache();
                t0 = Clock::now();
                r = runSearch(te, pred, c, o);
                into->push_back(std::chrono::duration<double>(Clock::now() - t0).count());
            }
        }
        for (auto* v : {&without, &cold, &warm}) std::sort(v->begin(), v->end());
        auto perSecond = [](const SearchResult& x, double s) { return static_cast<double>(x.cost_evaluations) / s; };
        const auto plan = TinyEngineTrainingLimit::reportOf(r);
        std::printf("  budget %5.0f KB: without %7.2f ms (%6.0f candidates/s), cold %7.2f ms (%6.0f/s, %.1fx), warm %7.2f ms (%.1fx); "
                    "winner %.3f %% with %s\n",
                    budget, without.front() * 1e3, perSecond(plain, without.front()), cold.front() * 1e3, perSecond(r, cold.front()),
                    cold.front() / without.front(), warm.front() * 1e3, warm.front() / without.front(), r.best.accuracy,
                    plan ? plan->scheme.c_str() : "?");
    }
}

}  // namespace

int main(int argc, char** argv)
{
    configureAllocator();
    const std::string path = argc > 1 ? argv[1] : shippedPredictorPath("mcunet-vww");
    const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
    if (path.empty()) {
        std::fprintf(stderr, "no predictor: pass one or build models/predictors/mcunet-vww.bin\n");
        return 1;
    }
    DesignSpace space = presetSpace("mcunet-vww");
    AccuracyPredictor pred = AccuracyPredictor::load(path, space);
    bench::printMachine();
    bench::printKernels();
    std::printf("predictor %s, %d threads\n\n", path.c_str(), pred.threads());
    Constraints c;
    c.set("millionMACs", 60);
    c.set("KBPeakMemory", 250);

    auto t0 = Clock::now();
    FeasibilityReport f = analyseFeasibility(space, c);
    std::printf("feasibility proof: %zu block-minimal subnets in %.2f ms\n\n", f.candidates,
                std::chrono::duration<double, std::milli>(Clock::now() - t0).count());

    SearchOptions lab;
    lab.population = 50;
    lab.generations = 20;
    lab.seed = 1;
    report("lab size", space, pred, c, lab, rounds, 3);
    std::printf("\n");
    reportTrainingBudget(space, pred, c, lab, 7);
    std::printf("\n");
    SearchOptions ofa = lab;
    ofa.population = 100;
    ofa.generations = 500;
    report("once-for-all tutorial size", space, pred, c, ofa, rounds, 1);
    std::printf("\n");
    reportTinyEngine(3);
    std::printf("\n%s (at the end)\n", bench::loadAverage().c_str());
    return 0;
}
