#include "compress/SparsityChoice.h"

#include <algorithm>
#include <cmath>

namespace tinyscope {

namespace {

std::int64_t zerosAt(std::int64_t params, double s) { return static_cast<std::int64_t>(std::nearbyint(static_cast<double>(params) * s)); }

// Each layer's largest scanned sparsity within `drop` of the dense top-1, and the non-zeros left.
SparsityChoice atDrop(const std::vector<LayerScan>& scan, double denseTop1, std::int64_t others, double drop)
{
    SparsityChoice c;
    c.drop = drop;
    c.nonzero = others;
    for (const LayerScan& l : scan) {
        double best = 0;
        for (std::size_t i = 0; i < l.sparsity.size() && i < l.top1.size(); ++i)
            if (denseTop1 - l.top1[i] <= drop) best = std::max(best, l.sparsity[i]);
        c.sparsity.push_back(best);
        c.nonzero += l.params - zerosAt(l.params, best);
    }
    return c;
}

}  // namespace

SparsityChoice chooseSparsities(const std::vector<LayerScan>& scan, double denseTop1, std::int64_t others, std::int64_t target)
{
    // The candidate budgets: every drop a scan point shows (a layer's choice changes only there).
    std::vector<double> drops{0};
    for (const LayerScan& l : scan)
        for (double t : l.top1) drops.push_back(std::max(0.0, denseTop1 - t));
    std::sort(drops.begin(), drops.end());
    drops.erase(std::unique(drops.begin(), drops.end()), drops.end());
    const SparsityChoice most = atDrop(scan, denseTop1, others, drops.back());
    // Non-zeros fall as the budget grows: the first budget that reaches the target.
    for (double d : drops) {
        SparsityChoice c = atDrop(scan, denseTop1, others, d);
        if (c.nonzero <= target) {
            c.reached = true;
            c.smallest = most.nonzero;
            return c;
        }
    }
    SparsityChoice c = most;
    c.smallest = most.nonzero;
    return c;
}

}  // namespace tinyscope
