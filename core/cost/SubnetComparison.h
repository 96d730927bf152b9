#pragma once
// Two subnets side by side (the Design-space panel's compare mode, issue 22): each cost of A and B
// with the difference, exact integers, and B relative to A. The axis a chart of B/A keeps while A
// is pinned is the space's reach: no subnet of the space costs more than its full-max subnet.
#include "cost/CostModel.h"

#include <string>
#include <vector>

namespace tinyscope {

struct ComparedCost {
    std::string key;      // "macs", "peak_sram", "params", "flash"
    std::string label;    // "MACs", "peak SRAM", "params", "flash"
    std::int64_t a = 0, b = 0;   // MACs and params as counts, peak SRAM and flash in bytes
    std::int64_t delta() const { return b - a; }
    double ratio() const { return a > 0 ? static_cast<double>(b) / static_cast<double>(a) : 0.0; }
};

std::vector<ComparedCost> compareCosts(const CostSummary& a, const CostSummary& b);

// max over the four costs of cost(reach) / cost(a): the largest B/A any subnet of the space can
// show against `a` when `reach` is the space's largest subnet (at least 1).
double largestRatio(const CostSummary& a, const CostSummary& reach);

}  // namespace tinyscope
