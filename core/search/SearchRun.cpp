#include "search/SearchRun.h"

#include "Error.h"

namespace tinyscope {

namespace {
SearchResult initialResult(const AccuracyOracle& oracle, const Constraints& constraints, const SearchOptions& options)
{
    options.validate();
    SearchResult r;
    r.options = options;
    r.constraints = constraints;
    r.oracle = oracle.describe();
    r.accuracy_measured = oracle.measures();
    return r;
}
}  // namespace

SearchRun::SearchRun(const DesignSpace& space, AccuracyOracle& oracle, const Constraints& constraints,
                     const SearchOptions& options, const SearchCallbacks& callbacks)
    : oracle_(&oracle), callbacks_(callbacks), result_(initialResult(oracle, constraints, options)),
      feasibility_(requireFeasible(space, result_.constraints)),
      sampler_(space, result_.constraints, feasibility_, options.max_redraws, result_),
      start_(std::chrono::steady_clock::now())
{
    if (options.keep_evaluated) result_.evaluated.reserve(static_cast<std::size_t>(options.totalSubnets()));
}

double SearchRun::elapsed() const
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void SearchRun::evaluate(std::vector<SearchCandidate>& batch, int generation)
{
    std::vector<SubnetConfig> configs;
    configs.reserve(batch.size());
    for (const SearchCandidate& c : batch) configs.push_back(c.config);
    std::vector<double> acc = oracle_->predict(configs);
    if (acc.size() != batch.size())
        throw std::logic_error("accuracy oracle returned " + std::to_string(acc.size()) + " values for " +
                               std::to_string(batch.size()) + " subnets");
    ++result_.oracle_calls;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        batch[i].accuracy = acc[i];
        batch[i].generation = generation;
        batch[i].index = evaluatedCount_ + i;
        // Strictly greater: the earliest of equal subnets wins, as the lab's `acc > best`.
        if (!result_.found || acc[i] > result_.best.accuracy) {
            result_.best = batch[i];
            result_.found = true;
        }
        if (result_.options.keep_evaluated) result_.evaluated.push_back(batch[i]);
    }
    evaluatedCount_ += batch.size();
}

void SearchRun::closeGeneration(int generation, const std::vector<SearchCandidate>& population,
                                const std::vector<SearchCandidate>& children)
{
    GenerationStats g;
    g.generation = generation;
    double sum = 0;
    for (const SearchCandidate& c : population) sum += c.accuracy;
    g.best = result_.best.accuracy;
    g.mean = population.empty() ? 0 : sum / static_cast<double>(population.size());
    double cs = 0;
    for (const SearchCandidate& c : children) cs += c.accuracy;
    g.children_mean = children.empty() ? 0 : cs / static_cast<double>(children.size());
    g.evaluated = evaluatedCount_;
    g.seconds = elapsed();
    result_.history.push_back(g);
    if (result_.options.keep_evaluated) {
        std::vector<std::size_t> members;
        members.reserve(population.size());
        for (const SearchCandidate& c : population) members.push_back(c.index);
        result_.populations.push_back(std::move(members));
    }
    if (callbacks_.onGeneration) callbacks_.onGeneration(g, result_.best);
}

SearchResult SearchRun::finish(bool cancelled)
{
    result_.cancelled = cancelled;
    if (result_.found) {
        result_.warnings = oracle_->caveats(result_.best.config);
        for (const Limit& l : result_.constraints.limits())
            if (l.quantity->report) result_.best_reports[l.quantity->report_key] = l.quantity->report(result_.best.config, l.max);
    }
    result_.seconds = elapsed();
    return std::move(result_);
}

}  // namespace tinyscope
