#include "search/RandomSearch.h"

#include "search/EvolutionSearch.h"
#include "search/SearchRun.h"

namespace tinyscope {

SearchResult RandomSearch::run(const Constraints& constraints, const SearchOptions& options,
                               const SearchCallbacks& callbacks)
{
    SearchRun run(*space_, *oracle_, constraints, options, callbacks);
    PyRandom rng(options.seed);
    std::vector<SearchCandidate> batch;
    for (int g = 0; g <= options.generations; ++g) {
        if (g > 0 && run.cancelRequested()) return run.finish(true);
        batch.clear();
        for (int i = 0; i < options.population; ++i) {
            batch.push_back(run.sampler().random(rng));
            batch.back().origin = CandidateOrigin::random;
        }
        run.evaluate(batch, g);
        run.closeGeneration(g, batch, batch);
    }
    return run.finish(false);
}

SearchResult runSearch(const DesignSpace& space, AccuracyOracle& oracle, const Constraints& constraints,
                       const SearchOptions& options, const SearchCallbacks& callbacks)
{
    options.validate();
    if (options.algorithm == "random") return RandomSearch(space, oracle).run(constraints, options, callbacks);
    return EvolutionSearch(space, oracle).run(constraints, options, callbacks);
}

}  // namespace tinyscope
