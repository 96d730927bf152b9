#pragma once
// The lab's "draw until the limits hold" steps (random_valid_sample, mutate_sample,
// crossover_sample) over ArchSampler and the cost model, with a bound on redraws so that a
// request the lab would loop on forever still ends (docs/SEARCH.md, "Redraw bound").
#include "cost/CostModel.h"
#include "search/Constraints.h"
#include "search/Feasibility.h"
#include "search/SearchResult.h"
#include "space/ArchSampler.h"

namespace tinyscope {

class ConstrainedSampler {
public:
    ConstrainedSampler(const DesignSpace& space, const Constraints& constraints, const FeasibilityReport& feasibility,
                       int maxRedraws, SearchResult& counters);

    // random_valid_sample. After max_redraws rejected draws it switches to drawing a random
    // block-minimal subnet that meets the limits (for this and every later call); InfeasibleError
    // if there is none to fall back on.
    SearchCandidate random(PyRandom& rng);
    // mutate_sample: redraws mutations of the same parent; after max_redraws the parent itself.
    SearchCandidate mutate(const SearchCandidate& parent, const MutationRates& rates, PyRandom& rng);
    // crossover_sample: redraws crossovers of the same parents; after max_redraws parent a.
    SearchCandidate crossover(const SearchCandidate& a, const SearchCandidate& b, PyRandom& rng);

private:
    bool accept(const SubnetConfig& c, SearchCandidate& out);

    const DesignSpace* space_;
    ArchSampler sampler_;
    CostModel model_;
    const Constraints* constraints_;
    const FeasibilityReport* feasibility_;
    int maxRedraws_;
    SearchResult* counters_;
    bool randomExhausted_ = false;
};

}  // namespace tinyscope
