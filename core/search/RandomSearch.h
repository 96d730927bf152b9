#pragma once
// The lab's random search (RandomSearcher): draw subnets meeting the limits, keep the most
// accurate. Draws population · (generations + 1) subnets in batches of `population`, so its
// budget equals evolution's with the same options and its progress reads the same way.
#include "search/ArchitectureSearch.h"

namespace tinyscope {

class RandomSearch {
public:
    RandomSearch(const DesignSpace& space, AccuracyOracle& oracle) : space_(&space), oracle_(&oracle) {}
    SearchResult run(const Constraints& constraints, const SearchOptions& options, const SearchCallbacks& callbacks = {});

private:
    const DesignSpace* space_;
    AccuracyOracle* oracle_;
};

}  // namespace tinyscope
