// Training-graph speed on mcunet-5fps (43 convs):
//  * the memory ledger after changing one layer (cycling every conv's update), against the
//    baseline of rebuilding the per-network model from scratch each time — target < 1 ms;
//  * building the forward IR + backward graph + dead-code elimination for the 49kb scheme,
//    against the fast path a bias toggle can take (re-selecting outputs and re-running DCE on
//    the built graph) — target < 50 ms;
//  * the DOT text of the graph (the layout itself is Graphviz's, timed once for scale).
#include "BenchTiming.h"
#include "graph/Autodiff.h"
#include "graph/MemoryLedger.h"
#include "graph/PublishedSchemes.h"
#include "viz/GraphvizRenderer.h"
#include "viz/TrainingGraphDot.h"
#include "zoo/ZooCatalog.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

using namespace tinyscope;
using bench::timeUs;
using Clock = std::chrono::steady_clock;


int main(int argc, char** argv)
{
    tinyscope::bench::printMachine();
    const int n = argc > 1 ? std::atoi(argv[1]) : 2000;
    const Network net = zooModel("mcunet-5fps");
    const SparseScheme base = schemeByName("mcunet-5fps/49kb", nullptr);
    long long sink = 0;

    // One layer changes per step: the bias tail grows/shrinks by one conv, or a weight ratio of
    // one tail conv flips between ½ and ¼.
    std::vector<SparseScheme> toggles;
    for (int i = 0; i < 20; ++i) {
        SparseScheme s = base;
        if (i % 2) s.n_bias_update = 20 + (i % 4 == 1 ? 1 : -1);
        else s.weight_update_ratio[static_cast<std::size_t>(1 + (i / 2) % 3)] = (i / 2) % 2 ? 0.5 : 0.25;
        toggles.push_back(s);
    }
    const TrainingMemoryModel model(net);
    const double ledgerUs = timeUs(n, [&](int i) {
        const SparseScheme& s = toggles[static_cast<std::size_t>(i) % toggles.size()];
        sink += model.ledger(s.resolve(net), AutodiffMode::Reference).peak_bytes;
    });
    const double analyticUs = timeUs(n, [&](int i) {
        sink += model.extraMemory(toggles[static_cast<std::size_t>(i) % toggles.size()].resolve(net)).total();
    });
    const double scratchUs = timeUs(n / 10, [&](int i) {
        const TrainingMemoryModel fresh(net);
        sink += fresh.ledger(toggles[static_cast<std::size_t>(i) % toggles.size()].resolve(net)).peak_bytes;
    });

    const ResolvedScheme r = base.resolve(net);
    const double buildRefUs = timeUs(20, [&](int) { sink += buildTrainingGraph(net, r, AutodiffMode::Reference).liveOps(); });
    const double buildCorUs = timeUs(20, [&](int) { sink += buildTrainingGraph(net, r, AutodiffMode::Correct).liveOps(); });
    TrainingGraph g = buildTrainingGraph(net, r, AutodiffMode::Reference);
    std::vector<ResolvedScheme> biasToggles;
    for (int nb : {19, 20, 21, 22}) {
        SparseScheme s = base;
        s.n_bias_update = nb;
        biasToggles.push_back(s.resolve(net));
    }
    const double reselectUs = timeUs(200, [&](int i) {
        selectOutputs(g, net, biasToggles[static_cast<std::size_t>(i) % biasToggles.size()]);
        sink += g.liveOps();
    });
    selectOutputs(g, net, r);
    std::string dot;
    const double dotUs = timeUs(20, [&](int) { dot = trainingGraphDot(g); });
    TrainingGraphDotOptions kept;
    kept.showPruned = false;
    const std::string keptDot = trainingGraphDot(g, kept);
    const auto l0 = Clock::now();
    sink += static_cast<long long>(renderDotToSvg(keptDot).size());
    const double layoutKeptMs = std::chrono::duration<double, std::milli>(Clock::now() - l0).count();
    const auto l1 = Clock::now();
    sink += static_cast<long long>(renderDotToSvg(dot).size());
    const double layoutAllMs = std::chrono::duration<double, std::milli>(Clock::now() - l1).count();

    std::printf("training graph, mcunet-5fps (43 convs), 49kb scheme, 1 thread\n");
    std::printf("memory ledger after changing one layer\n");
    std::printf("  ledger (analytic + schedule)      %9.2f us   (asked: < 1000 us)\n", ledgerUs);
    std::printf("  analytic extra memory only        %9.2f us\n", analyticUs);
    std::printf("  baseline: model rebuilt each time %9.2f us   (ledger %.1fx faster)\n", scratchUs, scratchUs / ledgerUs);
    std::printf("backward graph (%zu ops built, %d kept)\n", g.ops.size(), g.liveOps());
    std::printf("  build + prune, reference mode     %9.2f ms   (asked: < 50 ms)\n", buildRefUs / 1000);
    std::printf("  build + prune, correct mode       %9.2f ms\n", buildCorUs / 1000);
    std::printf("  re-prune after a bias toggle      %9.2f ms   (%.1fx faster than a rebuild)\n", reselectUs / 1000,
                buildRefUs / reselectUs);
    std::printf("  DOT text, all ops                 %9.2f ms\n", dotUs / 1000);
    std::printf("  Graphviz layout to SVG: %d kept ops %.0f ms, all %zu ops %.0f ms (once each)\n", g.liveOps(),
                layoutKeptMs, g.ops.size(), layoutAllMs);
    return sink == 42 ? 1 : 0;
}
