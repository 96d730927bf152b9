#pragma once
// The lab's evolutionary search (EvolutionSearcher.run_search, MCUNET_SPACE.md §6): a random
// population of P subnets meeting the limits; each generation keeps the best parent_ratio·P,
// makes mutation_ratio·P children by mutating random parents and the rest of P by crossing two
// random parents (children that break a limit are redrawn), and asks the oracle for the children's
// accuracy in one batch. Seed s draws as the lab after random.seed(s); np.random.seed(s).
#include "search/ArchitectureSearch.h"

namespace tinyscope {

class EvolutionSearch {
public:
    EvolutionSearch(const DesignSpace& space, AccuracyOracle& oracle) : space_(&space), oracle_(&oracle) {}
    SearchResult run(const Constraints& constraints, const SearchOptions& options, const SearchCallbacks& callbacks = {});

private:
    const DesignSpace* space_;
    AccuracyOracle* oracle_;
};

}  // namespace tinyscope
