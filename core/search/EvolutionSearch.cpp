#include "search/EvolutionSearch.h"

#include "search/NumpyRandom.h"
#include "search/SearchRun.h"

#include <algorithm>

namespace tinyscope {

SearchResult EvolutionSearch::run(const Constraints& constraints, const SearchOptions& options,
                                  const SearchCallbacks& callbacks)
{
    SearchRun run(*space_, *oracle_, constraints, options, callbacks);
    const int P = options.population;
    const int parentsSize = options.parentsSize();
    const int mutations = std::min(options.mutationCount(), P);
    const MutationRates rates{options.resolution_mutate_prob, options.arch_mutate_prob, options.arch_mutate_prob};
    PyRandom rng(options.seed);
    NumpyRandom parentRng(static_cast<std::uint32_t>(options.seed));
    ConstrainedSampler& sampler = run.sampler();

    std::vector<SearchCandidate> population;
    population.reserve(static_cast<std::size_t>(parentsSize + P));
    for (int i = 0; i < P; ++i) {
        population.push_back(sampler.random(rng));
        population.back().origin = CandidateOrigin::initial;
    }
    run.evaluate(population, 0);
    run.closeGeneration(0, population, population);

    std::vector<SearchCandidate> children;
    children.reserve(static_cast<std::size_t>(P));
    for (int g = 1; g <= options.generations; ++g) {
        if (run.cancelRequested()) return run.finish(true);
        // sorted(population, key=acc, reverse=True)[:parents_size]: stable, so ties keep their order.
        std::stable_sort(population.begin(), population.end(),
                         [](const SearchCandidate& a, const SearchCandidate& b) { return a.accuracy > b.accuracy; });
        population.resize(static_cast<std::size_t>(std::min<int>(parentsSize, static_cast<int>(population.size()))));
        const auto parents = static_cast<std::uint32_t>(population.size());

        children.clear();
        for (int j = 0; j < mutations; ++j) {
            const SearchCandidate& parent = population[parentRng.randint(parents)];
            children.push_back(sampler.mutate(parent, rates, rng));
            children.back().origin = CandidateOrigin::mutation;
        }
        for (int j = mutations; j < P; ++j) {
            const SearchCandidate& a = population[parentRng.randint(parents)];
            const SearchCandidate& b = population[parentRng.randint(parents)];
            children.push_back(sampler.crossover(a, b, rng));
            children.back().origin = CandidateOrigin::crossover;
        }
        run.evaluate(children, g);
        population.insert(population.end(), children.begin(), children.end());
        run.closeGeneration(g, population, children);
    }
    return run.finish(false);
}

}  // namespace tinyscope
