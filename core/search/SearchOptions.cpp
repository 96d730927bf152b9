#include "search/SearchOptions.h"

#include "Error.h"
#include "space/PyRandom.h"

#include <algorithm>
#include <cmath>

namespace tinyscope {

// Python's round(): halves go to the even neighbour (round(12.5) == 12).
int SearchOptions::parentsSize() const { return std::max(1, pyRound(parent_ratio * population)); }
int SearchOptions::mutationCount() const { return pyRound(mutation_ratio * population); }
int SearchOptions::totalSubnets() const { return population * (generations + 1); }

void SearchOptions::validate() const
{
    auto bad = [](const std::string& what) { throw InputError("search options: " + what); };
    if (algorithm != "evolution" && algorithm != "random")
        bad("algorithm must be evolution or random, got '" + algorithm + "'");
    if (population < 1 || population > 100000) bad("population must be in 1..100000, got " + std::to_string(population));
    if (generations < 0 || generations > 1000000) bad("generations must be in 0..1000000, got " + std::to_string(generations));
    auto prob = [&](const char* name, double v) {
        if (!(v >= 0 && v <= 1)) bad(std::string(name) + " must be in [0, 1], got " + std::to_string(v));
    };
    prob("parent_ratio", parent_ratio);
    prob("mutation_ratio", mutation_ratio);
    prob("resolution_mutate_prob", resolution_mutate_prob);
    prob("arch_mutate_prob", arch_mutate_prob);
    if (algorithm == "evolution" && parentsSize() > population)
        bad("parent_ratio × population exceeds the population");
    if (seed > 0xFFFFFFFFull) bad("seed must be in 0..4294967295 (numpy's range), got " + std::to_string(seed));
    if (max_redraws < 1) bad("max_redraws must be positive, got " + std::to_string(max_redraws));
    if (static_cast<double>(population) * (generations + 1.0) > 1e8)
        bad("population × (generations + 1) exceeds 100,000,000 subnets");
}

Json toJson(const SearchOptions& o)
{
    return Json{{"algorithm", o.algorithm},
                {"population_size", o.population},
                {"max_time_budget", o.generations},
                {"parent_ratio", o.parent_ratio},
                {"mutation_ratio", o.mutation_ratio},
                {"resolution_mutate_prob", o.resolution_mutate_prob},
                {"arch_mutate_prob", o.arch_mutate_prob},
                {"seed", o.seed}};
}

SearchOptions searchOptionsFromJson(const JsonPath& p)
{
    SearchOptions o;
    o.algorithm = p["algorithm"].asString();
    o.population = p["population_size"].asInt();
    o.generations = p["max_time_budget"].asInt();
    o.parent_ratio = p["parent_ratio"].asDouble();
    o.mutation_ratio = p["mutation_ratio"].asDouble();
    o.resolution_mutate_prob = p["resolution_mutate_prob"].asDouble();
    o.arch_mutate_prob = p["arch_mutate_prob"].asDouble();
    o.seed = static_cast<std::uint64_t>(p["seed"].asInt64());
    o.validate();
    return o;
}

}  // namespace tinyscope
