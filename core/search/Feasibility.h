#pragma once
// Before searching: the least value each limited quantity can reach in the space while the other
// limits hold, so an impossible request fails at once ("peak SRAM ≤ 64 KB is impossible: the
// smallest subnet in this space needs 72 KB") instead of sampling forever as the lab does.
//
// Exact, not sampled: for a fixed width, resolution and depth per stage, the subnet with the
// smallest kernel and expand ratio in every block is no larger in any block-monotone quantity
// (MACs, peak SRAM, params, flash) than any other subnet with those settings. So the minimum of
// one quantity under limits on the others is reached among these "block-minimal" subnets, of
// which there are only widths × resolutions × depths^stages (3,645 for MCUNet-VWW).
#include "cost/CostModel.h"
#include "search/Constraints.h"
#include "space/DesignSpace.h"

#include <limits>
#include <vector>

namespace tinyscope {

struct LimitBound {
    std::string key;
    std::string describe;    // "peak SRAM ≤ 64 KB"
    std::string label, unit;
    double max = 0;          // the limit
    double least = 0;        // least value reachable while the other limits hold (+inf if none does)
    double least_alone = 0;  // least value over the whole space
    bool feasible = true;
    SubnetConfig least_config, least_alone_config;   // block-minimal subnets reaching them (when proven)
    std::string least_why, least_alone_why;          // the quantity's explain() of those, if it has one
};

struct FeasibilityReport {
    bool proven = false;                 // false if a quantity is not block-monotone or the space is too large
    std::size_t candidates = 0;          // block-minimal subnets examined
    std::vector<LimitBound> bounds;      // one per limit, in order
    std::vector<SubnetConfig> feasible;  // block-minimal subnets meeting every limit
    bool feasibleOverall() const;
    std::string message() const;         // why not, "" if feasible or unproven
};

FeasibilityReport analyseFeasibility(const DesignSpace& space, const Constraints& constraints);
// Throws InfeasibleError with report.message() when a limit is proven impossible, or with the
// message of a quantity's own require_feasible check (TinyEngineTrainingLimit).
FeasibilityReport requireFeasible(const DesignSpace& space, const Constraints& constraints);

// Smallest and largest value of a quantity over the whole space (slider ranges in the GUI).
struct QuantityRange {
    double least = 0, greatest = 0;
};
QuantityRange quantityRange(const DesignSpace& space, const ConstraintQuantity& quantity);

// Every (width, resolution, depths) combination with all blocks at the smallest (or largest)
// kernel and expand ratio; calls visit(config, cost) for each. Returns false without visiting if
// there are more than `cap` combinations.
template <class Visit>
bool forEachBlockExtremeSubnet(const DesignSpace& space, bool largest, std::size_t cap, Visit visit);

}  // namespace tinyscope

#include "search/Feasibility.inl"
