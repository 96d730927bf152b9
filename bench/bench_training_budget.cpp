// The training-memory budget the search will call per candidate: a scheme pattern applied to a
// design-space subnet (Network built from the config, memory model, resolved pattern, ledger).
// Random MCUNet-VWW subnets, one thread. Printed beside it, from the same run:
//  * its parts (Network, per-network memory model, the ledger for the pattern);
//  * the search's existing per-candidate cost (CostModel::summary), for scale;
//  * baseline: the same memory figures the long way, by building the subnet's training graph
//    (forward IR + autodiff + DCE) first, as a tool that walks the graph would.
#include "BenchTiming.h"
#include "cost/CostModel.h"
#include "graph/Autodiff.h"
#include "graph/MemoryLedger.h"
#include "graph/TrainingBudget.h"
#include "space/ArchSampler.h"
#include "space/PyRandom.h"
#include "space/SpacePresets.h"
#include "zoo/SubnetNetwork.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

using namespace tinyscope;
using bench::timeUs;


int main(int argc, char** argv)
{
    tinyscope::bench::printMachine();
    const int n = argc > 1 ? std::atoi(argv[1]) : 2000;
    const DesignSpace space = presetSpace("mcunet-vww");
    ArchSampler sampler(space);
    PyRandom rng(0);
    std::vector<SubnetConfig> configs;
    for (int i = 0; i < 500; ++i) configs.push_back(sampler.random(rng));
    const TrainingSchemePattern pattern = TrainingSchemePattern::parse("bias-only:12+pw1:3@1/4");
    auto cfg = [&](int i) -> const SubnetConfig& { return configs[static_cast<std::size_t>(i) % configs.size()]; };
    long long sink = 0;

    const double totalUs = timeUs(n, [&](int i) { sink += trainingBudgetCost(space, cfg(i), pattern).totalBytes(); });
    const double networkUs = timeUs(n, [&](int i) { sink += networkFromSubnet(space, cfg(i)).numConvs(); });
    std::vector<Network> nets;
    for (const SubnetConfig& c : configs) nets.push_back(networkFromSubnet(space, c));
    auto net = [&](int i) -> const Network& { return nets[static_cast<std::size_t>(i) % nets.size()]; };
    const double modelUs = timeUs(n, [&](int i) { sink += TrainingMemoryModel(net(i)).inferencePeakBytes(); });
    std::vector<TrainingMemoryModel> models;
    for (const Network& nw : nets) models.emplace_back(nw);
    const double ledgerUs = timeUs(n, [&](int i) {
        const TrainingMemoryModel& m = models[static_cast<std::size_t>(i) % models.size()];
        sink += m.ledger(pattern.resolve(m.network())).peak_bytes;
    });
    const CostModel cost(space);
    const double summaryUs = timeUs(n * 10, [&](int i) { sink += cost.summary(cfg(i)).peak_activation_bytes; });
    const int nGraph = std::max(20, n / 20);
    const double graphUs = timeUs(nGraph, [&](int i) {
        const Network nw = networkFromSubnet(space, cfg(i));
        const ResolvedScheme r = pattern.resolve(nw);
        const TrainingGraph g = buildTrainingGraph(nw, r);
        sink += g.liveOps() + TrainingMemoryModel(nw).ledger(r).peak_bytes;
    });

    std::printf("training budget of a scheme pattern ('%s'), random MCUNet-VWW subnets, %d calls\n", pattern.text().c_str(), n);
    std::printf("  trainingBudgetCost(space, config, pattern)      %8.1f us per subnet  (%.0f subnets/s)\n", totalUs, 1e6 / totalUs);
    std::printf("    of which: Network from the config             %8.1f us\n", networkUs);
    std::printf("              per-network memory model            %8.1f us\n", modelUs);
    std::printf("              pattern -> scheme -> ledger         %8.1f us\n", ledgerUs);
    std::printf("  for scale: CostModel::summary (search's cost)   %8.2f us\n", summaryUs);
    std::printf("  baseline: training graph built first (%d calls)  %8.1f us  (budget path %.0fx faster)\n", nGraph, graphUs,
                graphUs / totalUs);
    std::printf("(checksum %lld)\n", sink);
    return 0;
}
