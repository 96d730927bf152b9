#pragma once
// The scheme that buys the most accuracy under a memory budget, from measured contributions
// (tiny-training's contribution analysis, paper §2.2): Δacc_b[k] for updating the biases of the
// last k backbone convs (against the classifier only), Δacc_W[i, r] for adding the weight of conv
// i at input-channel ratio r; maximise Δacc_b[k] + Σ Δacc_W[i, r] subject to the scheme's extra
// memory (MemoryLedger's analytic ExtraMemory) ≤ budget, with every updated weight inside the bias
// tail (tiny-training's rule).
//
// Exact, not evolutionary: for a fixed tail k the extra memory is additive over the chosen weights
// (classifier input, masks and biases depend on k only; each weight adds its saved input channels
// and its int8 weight slice), so a group knapsack over bits (masks are bits, the total rounds them
// up once) finds the optimum; k is enumerated. Deterministic, and a few milliseconds for MCUNet.
// Contributions are assumed additive, as the paper assumes. Torch-free.
#include "graph/SparseScheme.h"
#include "zoo/Network.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tinyscope {

struct SchemeContributions {
    std::map<int, double> bias_tail;                       // k -> Δacc_b[k] (k = 0 is 0 by definition)
    std::map<std::pair<int, double>, double> weight;       // (conv index, ratio) -> Δacc_W
};

struct KnapsackChoice {
    SparseScheme scheme;
    ResolvedScheme resolved;
    double gain = 0;                 // Δacc_b[k] + Σ Δacc_W of the choice
    std::int64_t extra_bytes = 0;    // its ExtraMemory total
};

// Throws InfeasibleError naming the least extra memory any scheme needs (the classifier only)
// when `budgetBytes` is below it; InputError for a contribution on a conv that is not a backbone
// conv or a ratio tiny-training does not accept.
KnapsackChoice bestSchemeUnderBudget(const Network& net, const SchemeContributions& c, std::int64_t budgetBytes);

}  // namespace tinyscope
