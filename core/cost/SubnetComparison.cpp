#include "cost/SubnetComparison.h"

#include <algorithm>

namespace tinyscope {

std::vector<ComparedCost> compareCosts(const CostSummary& a, const CostSummary& b)
{
    return {{"macs", "MACs", a.macs, b.macs},
            {"peak_sram", "peak SRAM", a.peak_activation_bytes, b.peak_activation_bytes},
            {"params", "params", a.params, b.params},
            {"flash", "flash", a.flash_bytes, b.flash_bytes}};
}

double largestRatio(const CostSummary& a, const CostSummary& reach)
{
    double r = 1.0;
    for (const ComparedCost& c : compareCosts(a, reach)) r = std::max(r, c.ratio());
    return r;
}

}  // namespace tinyscope
