#include "search/ConstrainedSampler.h"

#include "Error.h"

namespace tinyscope {

ConstrainedSampler::ConstrainedSampler(const DesignSpace& space, const Constraints& constraints,
                                       const FeasibilityReport& feasibility, int maxRedraws, SearchResult& counters)
    : space_(&space), sampler_(space), model_(space), constraints_(&constraints), feasibility_(&feasibility),
      maxRedraws_(maxRedraws), counters_(&counters)
{
}

bool ConstrainedSampler::accept(const SubnetConfig& c, SearchCandidate& out)
{
    ++counters_->cost_evaluations;
    CostSummary cost = model_.summary(c);
    if (!constraints_->satisfiedBy(c, cost)) {
        ++counters_->rejected;
        return false;
    }
    out.config = c;
    out.cost = cost;
    return true;
}

SearchCandidate ConstrainedSampler::random(PyRandom& rng)
{
    SearchCandidate out;
    if (!randomExhausted_) {
        for (int i = 0; i < maxRedraws_; ++i)
            if (accept(sampler_.random(rng), out)) return out;
        randomExhausted_ = true;
    }
    ++counters_->fallbacks;
    const auto& seeds = feasibility_->feasible;
    if (seeds.empty())
        throw InfeasibleError("no subnet meeting " + constraints_->describe() + " was found in " +
                              std::to_string(maxRedraws_) + " random draws");
    const SubnetConfig& c = seeds[rng.randbelow(static_cast<std::uint32_t>(seeds.size()))];
    if (!accept(c, out)) throw InfeasibleError("internal: a proven-feasible subnet violates " + constraints_->describe());
    return out;
}

SearchCandidate ConstrainedSampler::mutate(const SearchCandidate& parent, const MutationRates& rates, PyRandom& rng)
{
    SearchCandidate out;
    for (int i = 0; i < maxRedraws_; ++i)
        if (accept(sampler_.mutate(parent.config, rates, rng), out)) return out;
    ++counters_->fallbacks;
    out.config = parent.config;
    out.cost = parent.cost;
    return out;
}

SearchCandidate ConstrainedSampler::crossover(const SearchCandidate& a, const SearchCandidate& b, PyRandom& rng)
{
    SearchCandidate out;
    for (int i = 0; i < maxRedraws_; ++i)
        if (accept(sampler_.crossover(a.config, b.config, rng), out)) return out;
    ++counters_->fallbacks;
    out.config = a.config;
    out.cost = a.cost;
    return out;
}

}  // namespace tinyscope
