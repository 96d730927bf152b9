#pragma once
// Hyper-parameters of a search, with the lab's names (EvolutionSearcher's kwargs). The defaults
// are the lab-size run of Lab 3: population 50, 20 generations; the once-for-all tutorial uses
// population 100, 500 generations.
#include "io/JsonFile.h"

#include <cstdint>
#include <string>

namespace tinyscope {

struct SearchOptions {
    std::string algorithm = "evolution";   // "evolution" | "random"
    int population = 50;                   // population_size; random search: subnets per batch
    int generations = 20;                  // max_time_budget; random search draws population × (generations + 1)
    double parent_ratio = 0.25;
    double mutation_ratio = 0.5;
    double resolution_mutate_prob = 0.5;
    double arch_mutate_prob = 0.1;         // also the width mutation probability, as in the lab
    std::uint64_t seed = 0;                // random.seed(seed) and np.random.seed(seed) in the lab's terms
    int max_redraws = 20000;               // constraint redraws per child before falling back (see SEARCH.md)
    bool keep_evaluated = true;            // record every evaluated subnet (Pareto front)

    int parentsSize() const;               // int(round(parent_ratio · population)), at least 1
    int mutationCount() const;             // int(round(mutation_ratio · population))
    int totalSubnets() const;              // subnets the oracle is asked about: population · (generations + 1)
    void validate() const;                 // InputError naming the bad option
};

Json toJson(const SearchOptions& o);
SearchOptions searchOptionsFromJson(const JsonPath& p);

}  // namespace tinyscope
