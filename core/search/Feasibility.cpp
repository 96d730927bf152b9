#include "search/Feasibility.h"

#include "Error.h"

#include <cmath>
#include <map>
#include <memory>
#include <mutex>

namespace tinyscope {

namespace {
constexpr std::size_t kMaxCombinations = 4'000'000;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string withUnit(const LimitBound& b, double v, const std::string& why = "")
{
    return formatQuantity(v) + (b.unit.empty() ? "" : " " + b.unit) + (why.empty() ? "" : " (" + why + ")");
}

struct BlockMinimal {
    SubnetConfig config;
    CostSummary cost;
};

// The block-minimal subnets of a space with their costs, computed once per space (3,645 cost
// summaries, ~1.5 ms for MCUNet-VWW) and kept for the next search; empty if there are too many.
std::shared_ptr<const std::vector<BlockMinimal>> blockMinimalSubnets(const DesignSpace& space)
{
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<const std::vector<BlockMinimal>>> cache;
    const std::string key = space.toJson().dump();
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    auto list = std::make_shared<std::vector<BlockMinimal>>();
    if (!forEachBlockExtremeSubnet(space, false, kMaxCombinations,
                                   [&](const SubnetConfig& c, const CostSummary& cost) { list->push_back({c, cost}); }))
        list->clear();
    if (cache.size() >= 8) cache.clear();
    cache.emplace(key, list);
    return list;
}

}  // namespace

bool FeasibilityReport::feasibleOverall() const
{
    if (!proven) return true;
    for (const LimitBound& b : bounds)
        if (!b.feasible) return false;
    return !feasible.empty() || bounds.empty();
}

FeasibilityReport analyseFeasibility(const DesignSpace& space, const Constraints& constraints)
{
    FeasibilityReport rep;
    const auto& limits = constraints.limits();
    for (const Limit& l : limits)
    {
        LimitBound b;
        b.key = l.key();
        b.describe = l.describe();
        b.label = l.quantity->label;
        b.unit = l.quantity->unit;
        b.max = l.max;
        b.least = b.least_alone = kInf;
        rep.bounds.push_back(std::move(b));
    }
    for (const Limit& l : limits)
        if (!l.quantity->monotone_in_blocks) return rep;   // unproven: the search samples with a bounded budget

    const std::size_t n = limits.size();
    std::vector<double> values(n);
    const auto subnets = blockMinimalSubnets(space);
    rep.proven = !subnets->empty();
    for (const BlockMinimal& bm : *subnets) {
        const SubnetConfig& c = bm.config;
        const CostSummary& cost = bm.cost;
        ++rep.candidates;
        std::size_t violated = 0, which = 0;
        for (std::size_t i = 0; i < n; ++i) {
            values[i] = limits[i].quantity->measure(c, cost);
            if (values[i] > limits[i].max) {
                ++violated;
                which = i;
            }
        }
        for (std::size_t i = 0; i < n; ++i) {
            LimitBound& b = rep.bounds[i];
            if (values[i] < b.least_alone) {
                b.least_alone = values[i];
                b.least_alone_config = c;
            }
            // Meets every other limit: candidate for the least value of quantity i under them.
            if ((violated == 0 || (violated == 1 && which == i)) && values[i] < b.least) {
                b.least = values[i];
                b.least_config = c;
            }
        }
        if (violated == 0) rep.feasible.push_back(c);
    }
    if (!rep.proven) {
        rep.feasible.clear();
        return rep;
    }
    for (std::size_t i = 0; i < n; ++i) {
        LimitBound& b = rep.bounds[i];
        b.feasible = b.least <= b.max;
        if (const auto& explain = limits[i].quantity->explain) {
            if (!std::isinf(b.least_alone)) b.least_alone_why = explain(b.least_alone_config);
            if (!std::isinf(b.least)) b.least_why = explain(b.least_config);
        }
    }
    if (n == 0) rep.feasible.clear();   // nothing to seed: every subnet is allowed
    return rep;
}

std::string FeasibilityReport::message() const
{
    if (feasibleOverall()) return "";
    auto join = [](std::string& msg, const std::string& part) { msg += (msg.empty() ? "" : "; ") + part; };
    std::string msg;
    // Limits no subnet meets even alone.
    for (const LimitBound& b : bounds)
        if (b.least_alone > b.max)
            join(msg, b.describe + " is impossible: the smallest subnet in this space needs " +
                          withUnit(b, b.least_alone, b.least_alone_why));
    if (!msg.empty()) return msg;
    // Limits out of reach once the others hold.
    for (std::size_t i = 0; i < bounds.size(); ++i) {
        const LimitBound& b = bounds[i];
        if (b.feasible || std::isinf(b.least)) continue;
        std::string others;
        for (std::size_t j = 0; j < bounds.size(); ++j)
            if (j != i) others += (others.empty() ? "" : ", ") + bounds[j].describe;
        join(msg, b.describe + " is impossible: with " + others + " the smallest subnet needs " + withUnit(b, b.least, b.least_why) +
                      " (without them " + withUnit(b, b.least_alone) + ")");
    }
    if (!msg.empty()) return msg;
    // Only the combination fails.
    std::string all, alone;
    for (const LimitBound& b : bounds) {
        all += (all.empty() ? "" : ", ") + b.describe;
        alone += (alone.empty() ? "" : ", ") + b.label + " " + withUnit(b, b.least_alone);
    }
    return "no subnet in this space meets " + all + " together (alone, the smallest needs " + alone + ")";
}

FeasibilityReport requireFeasible(const DesignSpace& space, const Constraints& constraints)
{
    FeasibilityReport rep = analyseFeasibility(space, constraints);
    if (!rep.feasibleOverall()) throw InfeasibleError(rep.message());
    for (const Limit& l : constraints.limits()) {
        if (!l.quantity->require_feasible) continue;
        Constraints others = constraints;
        others.remove(l.key());
        l.quantity->require_feasible(others, l.max);
    }
    return rep;
}

QuantityRange quantityRange(const DesignSpace& space, const ConstraintQuantity& quantity)
{
    QuantityRange r{kInf, -kInf};
    for (bool largest : {false, true}) {
        forEachBlockExtremeSubnet(space, largest, kMaxCombinations, [&](const SubnetConfig& c, const CostSummary& cost) {
            double v = quantity.measure(c, cost);
            if (largest) r.greatest = std::max(r.greatest, v);
            else r.least = std::min(r.least, v);
        });
    }
    return r;
}

}  // namespace tinyscope
