#pragma once
// Search entry points. Both algorithms take the accuracy from an AccuracyOracle (MLP predictor or
// a real measurement; they cannot tell) and the costs from the cost model, check the limits,
// prove infeasible requests at once (InfeasibleError), and report progress after every
// generation. Cancellation is a flag checked between generations; the result so far is returned
// with cancelled = true.
#include "predict/AccuracyOracle.h"
#include "search/Constraints.h"
#include "search/SearchOptions.h"
#include "search/SearchResult.h"
#include "space/DesignSpace.h"

#include <atomic>
#include <functional>

namespace tinyscope {

struct SearchCallbacks {
    // After each generation (0 = initial population), with the best subnet so far.
    std::function<void(const GenerationStats&, const SearchCandidate& best)> onGeneration;
    const std::atomic<bool>* cancel = nullptr;
};

// Runs options.algorithm ("evolution" or "random").
SearchResult runSearch(const DesignSpace& space, AccuracyOracle& oracle, const Constraints& constraints,
                       const SearchOptions& options, const SearchCallbacks& callbacks = {});

}  // namespace tinyscope
