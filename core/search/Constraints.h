#pragma once
// Limits a subnet must meet during search: an extensible list of named quantities, each measured
// on a config (with its cost summary at hand) and compared as value <= limit. Built in: the lab's
// keys millionMACs and KBPeakMemory, plus params and KBFlash; other quantities (e.g. training
// memory of a sparse-update scheme) can be added with addQuantity(). Unknown keys are errors —
// the lab silently ignores them.
#include "cost/CostModel.h"
#include "io/JsonFile.h"
#include "space/SubnetConfig.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tinyscope {

class Constraints;

struct ConstraintQuantity {
    std::string key;      // "millionMACs"
    std::string label;    // "MACs", "peak SRAM"
    std::string unit;     // "M", "KB", "" (shown after the number)
    std::function<double(const SubnetConfig&, const CostSummary&)> measure;
    // Never decreases when one block's kernel size or expand ratio grows with everything else
    // fixed. Lets Feasibility prove the least reachable value exactly (docs/SEARCH.md).
    bool monotone_in_blocks = true;

    // Optional, for quantities with parameters (training memory of a scheme pattern):
    // what defines it beyond its key, written beside the limits in results ({"pattern": "last:4"});
    Json definition;
    // how one subnet reaches its value, appended to infeasibility messages ("inference peak … + extra …");
    std::function<std::string(const SubnetConfig&)> explain;
    // its details for the search's winner, written as best.<report_key> (the limit is given).
    std::string report_key;
    std::function<Json(const SubnetConfig&, double limit)> report;
    // For a quantity Feasibility cannot bound exactly (not block-monotone): its own check before a
    // search, given the other limits; throws InfeasibleError naming what binds (requireFeasible).
    std::function<void(const Constraints& others, double limit)> require_feasible;
};

struct Limit {
    std::shared_ptr<const ConstraintQuantity> quantity;
    double max = 0;

    const std::string& key() const { return quantity->key; }
    std::string describe() const;   // "peak SRAM ≤ 250 KB"
};

class Constraints {
public:
    // millionMACs, KBPeakMemory, params, KBFlash.
    static const std::vector<std::shared_ptr<const ConstraintQuantity>>& builtinQuantities();
    static std::shared_ptr<const ConstraintQuantity> builtinQuantity(const std::string& key);   // nullptr if unknown

    // {"millionMACs": 60, "KBPeakMemory": 250}; an unknown key or a non-positive / non-numeric
    // value is an InputError naming it.
    static Constraints fromJson(const Json& j, const std::string& source);
    Json toJson() const;
    // {key: definition} of the limited quantities that have one (empty object if none).
    Json definitions() const;

    // Sets (or replaces) the limit on a built-in quantity; unknown key -> InputError listing the known ones.
    void set(const std::string& key, double max);
    // Adds a limit on a quantity defined by the caller (replaces one with the same key).
    void set(std::shared_ptr<const ConstraintQuantity> quantity, double max);
    void remove(const std::string& key);

    const std::vector<Limit>& limits() const { return limits_; }
    const Limit* find(const std::string& key) const;
    bool empty() const { return limits_.empty(); }

    bool satisfiedBy(const SubnetConfig& config, const CostSummary& cost) const;
    std::string describe() const;   // "MACs ≤ 60 M, peak SRAM ≤ 250 KB" or "no limits"

private:
    std::vector<Limit> limits_;
};

// A number as a person writes a limit: up to 3 decimals, trailing zeros dropped ("72", "8.302").
std::string formatQuantity(double v);
// Bytes as a limit's KB figure in messages: formatQuantity(bytes / 1024) + " KB" ("11.859 KB").
std::string formatQuantityKB(std::int64_t bytes);

}  // namespace tinyscope
