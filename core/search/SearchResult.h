#pragma once
// What a search returns: the best subnet with its accuracy and costs, per-generation best and
// mean, every evaluated (cost, accuracy) point for a Pareto front, timing and counters.
#include "cost/CostModel.h"
#include "search/Constraints.h"
#include "search/SearchOptions.h"
#include "space/SubnetConfig.h"

#include <string>
#include <vector>

namespace tinyscope {

// How a candidate was made (search playback): the initial random population of evolution, a
// mutated or a crossed-over child, a random-search draw; `unknown` in runs stored before it was kept.
enum class CandidateOrigin { unknown, initial, mutation, crossover, random };
const char* originName(CandidateOrigin o);           // "unknown", "initial", "mutation", "crossover", "random"
CandidateOrigin originFromName(const std::string& name);   // unknown for any other name

struct SearchCandidate {
    SubnetConfig config;     // empty (no ks) for a point of a stored run that kept no config
    CostSummary cost;
    double accuracy = 0;     // top-1 % from the oracle
    int generation = 0;      // 0 = initial population / first batch
    CandidateOrigin origin = CandidateOrigin::unknown;
    std::size_t index = 0;   // position among the subnets evaluated (set by SearchRun::evaluate)

    bool hasConfig() const { return !config.ks.empty(); }
};

struct GenerationStats {
    int generation = 0;
    double best = 0;         // best accuracy so far (evolution keeps it in the population)
    double mean = 0;         // mean accuracy of the population after this generation (random: of the batch)
    double children_mean = 0;   // mean accuracy of the subnets evaluated in this generation
    std::size_t evaluated = 0;  // subnets evaluated so far
    double seconds = 0;         // since the search started
};

struct SearchResult {
    SearchOptions options;
    Constraints constraints;
    std::string oracle;                    // AccuracyOracle::describe()
    bool accuracy_measured = false;        // AccuracyOracle::measures()
    SearchCandidate best;
    Json best_reports = Json::object();   // the limited quantities' reports on `best` (ConstraintQuantity::report)
    std::vector<GenerationStats> history;
    std::vector<SearchCandidate> evaluated;   // every subnet the oracle was asked about, in order
    // Per generation (as `history`): indices into `evaluated` of the population after it: evolution's
    // parents kept plus the generation's children, random search's batch. Empty when not recorded
    // (keep_evaluated off, or a run stored before playback or too large to keep its points).
    std::vector<std::vector<std::size_t>> populations;
    double seconds = 0;
    std::size_t oracle_calls = 0;          // batches sent to the oracle
    std::size_t cost_evaluations = 0;      // cost-model calls, including rejected draws
    std::size_t rejected = 0;              // draws that violated a limit and were redrawn
    std::size_t fallbacks = 0;             // children that hit max_redraws (see SEARCH.md)
    std::vector<std::string> warnings;     // the oracle's caveats about the winner
    bool cancelled = false;
    bool found = false;                    // false only if cancelled before the first batch

    // Indices into `evaluated` on the front of max accuracy vs min MACs, ascending MACs.
    std::vector<std::size_t> paretoFront() const;
};

// Indices of the candidates not dominated in (lower MACs, higher accuracy), ascending MACs.
std::vector<std::size_t> paretoFront(const std::vector<SearchCandidate>& points);

Json toJson(const SearchCandidate& c);
// `evaluated`: include every evaluated point (costs + accuracy + generation + origin, no configs)
// and the populations (indices into those points).
Json toJson(const SearchResult& r, bool evaluated = true);

}  // namespace tinyscope
