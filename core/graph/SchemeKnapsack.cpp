#include "graph/SchemeKnapsack.h"

#include "Error.h"
#include "graph/MemoryLedger.h"
#include "graph/SchemeEdit.h"
#include "io/Text.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tinyscope {

namespace {

std::string kbText(std::int64_t bytes) { return kilobytesText(bytes) + " (" + std::to_string(bytes) + " B)"; }

struct Item {
    int conv = 0;
    double ratio = 0;
    double gain = 0;
    std::int64_t bytes = 0;   // saved input channels + weight slice
};

}  // namespace

KnapsackChoice bestSchemeUnderBudget(const Network& net, const SchemeContributions& c, std::int64_t budgetBytes)
{
    const TrainingMemoryModel mm(net);
    const int nb = net.numBackboneConvs();
    const ResolvedScheme none = classifierOnlyScheme(net);
    const std::int64_t least = mm.extraMemory(none).total();
    if (budgetBytes < least)
        throw InfeasibleError("no scheme fits an extra-memory budget of " + kbText(budgetBytes) + ": the least any scheme needs is " +
                              kbText(least) + " (the classifier only: its saved input features)");

    // Weight candidates grouped by conv, each costed alone (additive: see the header).
    std::map<int, std::vector<Item>> groups;
    for (const auto& [key, gain] : c.weight) {
        const auto [conv, ratio] = key;
        if (conv < 0 || conv >= nb)
            throw InputError("contribution of conv " + std::to_string(conv) + ": not a backbone conv of " + net.name + " (0.." +
                             std::to_string(nb - 1) + ")");
        ResolvedScheme s = none;
        setConvUpdate(s, net, conv, false, ratio);   // InputError for a ratio tiny-training does not take
        Item it{conv, ratio, gain, (mm.extraMemory(s).totalBits() - mm.extraMemory(none).totalBits()) / 8};
        groups[conv].push_back(it);
    }

    KnapsackChoice best;
    bool found = false;
    std::vector<int> ks{0};
    for (const auto& [k, g] : c.bias_tail)
        if (k > 0 && k <= nb) ks.push_back(k);
    std::sort(ks.begin(), ks.end());
    ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
    for (int k : ks) {
        const ResolvedScheme base = SparseScheme::biasOnly(k).resolve(net);
        const ExtraMemory e = mm.extraMemory(base);
        const std::int64_t spareBits = 8 * budgetBytes - e.totalBits();
        if (spareBits < 0) continue;
        const double baseGain = k == 0 ? 0.0 : c.bias_tail.at(k);
        // Group knapsack over the convs inside the tail: at most one ratio per conv.
        std::vector<const std::vector<Item>*> gs;
        for (const auto& [conv, items] : groups)
            if (conv >= nb - k) gs.push_back(&items);
        const std::int64_t cap = spareBits / 8;
        const std::size_t W = static_cast<std::size_t>(cap) + 1;
        std::vector<double> dp(W, 0.0), next(W);
        std::vector<std::vector<std::int8_t>> pick(gs.size(), std::vector<std::int8_t>(W, -1));
        for (std::size_t g = 0; g < gs.size(); ++g) {
            next = dp;
            for (std::size_t j = 0; j < gs[g]->size(); ++j) {
                const Item& it = (*gs[g])[j];
                if (it.gain <= 0 || it.bytes > cap) continue;
                const std::size_t b = static_cast<std::size_t>(it.bytes);
                for (std::size_t w = b; w < W; ++w)
                    if (dp[w - b] + it.gain > next[w]) {
                        next[w] = dp[w - b] + it.gain;
                        pick[g][w] = static_cast<std::int8_t>(j);
                    }
            }
            dp.swap(next);
        }
        const double gain = baseGain + dp[W - 1];
        if (found && gain <= best.gain) continue;   // ties: the smaller tail (fewer updates) wins
        SparseScheme s = SparseScheme::biasOnly(k);
        std::size_t w = W - 1;
        std::vector<std::pair<int, double>> chosen;
        for (std::size_t g = gs.size(); g-- > 0;) {
            const int j = pick[g][w];
            if (j < 0) continue;
            const Item& it = (*gs[g])[static_cast<std::size_t>(j)];
            chosen.emplace_back(it.conv, it.ratio);
            w -= static_cast<std::size_t>(it.bytes);
        }
        std::sort(chosen.begin(), chosen.end());
        for (const auto& [conv, ratio] : chosen) {
            s.manual_weight_idx.push_back(conv);
            s.weight_update_ratio.push_back(ratio);
        }
        best.scheme = s;
        best.resolved = s.resolve(net, "knapsack");
        best.gain = gain;
        best.extra_bytes = mm.extraMemory(best.resolved).total();
        found = true;
    }
    if (best.extra_bytes > budgetBytes)   // additivity broken: never expected, never hidden
        throw std::logic_error("knapsack: the chosen scheme needs " + kbText(best.extra_bytes) + " over the budget " + kbText(budgetBytes));
    return best;
}

}  // namespace tinyscope
