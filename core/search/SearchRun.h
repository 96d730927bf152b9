#pragma once
// Book-keeping shared by the search algorithms: feasibility proof, constrained sampler, batched
// oracle calls, the evaluated list, per-generation statistics, callbacks and cancellation.
#include "search/ArchitectureSearch.h"
#include "search/ConstrainedSampler.h"

#include <chrono>

namespace tinyscope {

class SearchRun {
public:
    SearchRun(const DesignSpace& space, AccuracyOracle& oracle, const Constraints& constraints,
              const SearchOptions& options, const SearchCallbacks& callbacks);

    ConstrainedSampler& sampler() { return sampler_; }
    // One oracle call for the whole batch; fills each candidate's accuracy and generation.
    void evaluate(std::vector<SearchCandidate>& batch, int generation);
    // Records the generation's statistics over `population` (the subnets alive after it) and
    // `children` (evaluated in it), and calls the progress callback.
    void closeGeneration(int generation, const std::vector<SearchCandidate>& population, const std::vector<SearchCandidate>& children);
    bool cancelRequested() const { return callbacks_.cancel && callbacks_.cancel->load(); }
    SearchResult finish(bool cancelled);

    SearchResult& result() { return result_; }

private:
    double elapsed() const;

    AccuracyOracle* oracle_;
    SearchCallbacks callbacks_;
    SearchResult result_;
    FeasibilityReport feasibility_;
    ConstrainedSampler sampler_;
    std::chrono::steady_clock::time_point start_;
    std::size_t evaluatedCount_ = 0;
};

}  // namespace tinyscope
