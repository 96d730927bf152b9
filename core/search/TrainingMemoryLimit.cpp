#include "search/TrainingMemoryLimit.h"

#include "Error.h"
#include "search/NetworkMemo.h"
#include "search/SearchResult.h"
#include "search/SramRuntime.h"
#include "search/TinyEngineTrainingLimit.h"

#include <cmath>

namespace tinyscope {

struct TrainingMemoryLimit::Memo {
    DesignSpace space;
    TrainingSchemePattern pattern;
    NetworkMemo<TrainingBudgetCost> costs{500000};   // ~60 MB; a tutorial-size run prices ~50,000

    TrainingBudgetCost cost(const SubnetConfig& c) const
    {
        return costs.get(space, c, [&] { return trainingBudgetTotals(space, c, pattern); });
    }
};

TrainingMemoryLimit::TrainingMemoryLimit(const DesignSpace& space, const std::string& pattern)
    : memo_(std::make_shared<Memo>())
{
    memo_->space = space;
    memo_->pattern = TrainingSchemePattern::parse(pattern);
    auto q = std::make_shared<ConstraintQuantity>();
    q->key = kKey;
    q->label = "training memory (" + pattern + ")";
    q->unit = "KB";
    std::shared_ptr<const Memo> memo = memo_;
    q->measure = [memo](const SubnetConfig& c, const CostSummary&) { return static_cast<double>(memo->cost(c).totalBytes()) / 1024.0; };
    q->monotone_in_blocks = true;   // see the header and docs/SEARCH.md
    q->definition = Json{{"pattern", pattern}};
    q->explain = [memo](const SubnetConfig& c) {
        const TrainingBudgetCost t = memo->cost(c);
        return "inference working set " + formatQuantityKB(t.inference_peak_bytes) + " + extra " + formatQuantityKB(t.extra_bytes);
    };
    q->report_key = kReportKey;
    q->report = [this_memo = memo](const SubnetConfig& c, double limit) {
        const TrainingBudgetCost t = this_memo->cost(c);
        return Json{{"pattern", this_memo->pattern.text()},
                    {"budget_bytes", budgetBytes(limit)},
                    {"inference_peak_bytes", t.inference_peak_bytes},
                    {"extra_bytes", t.extra_bytes},
                    {"total_bytes", t.totalBytes()}};
    };
    quantity_ = std::move(q);
}

const TrainingSchemePattern& TrainingMemoryLimit::pattern() const { return memo_->pattern; }

TrainingBudgetCost TrainingMemoryLimit::cost(const SubnetConfig& config) const { return memo_->cost(config); }

Json TrainingMemoryLimit::report(const SubnetConfig& config, double budgetKB) const { return quantity_->report(config, budgetKB); }

std::size_t TrainingMemoryLimit::memoised() const
{
    return memo_->costs.size();
}

std::optional<TrainingMemoryReport> TrainingMemoryLimit::reportOf(const SearchResult& result)
{
    if (!result.best_reports.is_object() || !result.best_reports.contains(kReportKey)) return std::nullopt;
    const Json& t = result.best_reports[kReportKey];
    TrainingMemoryReport r;
    r.pattern = t["pattern"].get<std::string>();
    r.budget_bytes = t["budget_bytes"].get<std::int64_t>();
    r.inference_peak_bytes = t["inference_peak_bytes"].get<std::int64_t>();
    r.extra_bytes = t["extra_bytes"].get<std::int64_t>();
    r.total_bytes = t["total_bytes"].get<std::int64_t>();
    return r;
}

std::int64_t TrainingMemoryLimit::budgetBytes(double budgetKB) { return static_cast<std::int64_t>(std::floor(budgetKB * 1024.0)); }

Constraints TrainingMemoryLimit::restore(const DesignSpace& space, const Json& constraints, const Json& definitions,
                                         const std::string& source)
{
    const char* engineKey = TinyEngineTrainingLimit::kKey;
    if (!constraints.is_object() || (!constraints.contains(kKey) && !constraints.contains(engineKey) && !constraints.contains(kTflmArenaKey)))
        return Constraints::fromJson(constraints, source);
    Json builtin = constraints;
    builtin.erase(kKey);
    builtin.erase(engineKey);
    builtin.erase(kTflmArenaKey);
    Constraints c = Constraints::fromJson(builtin, source);
    if (constraints.contains(kTflmArenaKey)) {   // an SRAM limit under TFLM (search/SramRuntime.h)
        const Json& v = constraints[kTflmArenaKey];
        if (!v.is_number()) throw InputError(source + ": " + kTflmArenaKey + ": expected a number of KB, got " + jsonBrief(v));
        c.set(sramQuantity(space, SramRuntime::Tflm), v.get<double>());
    }
    for (const char* key : {kKey, engineKey}) {
        if (!constraints.contains(key)) continue;
        const Json& v = constraints[key];
        if (!v.is_number()) throw InputError(source + ": " + key + ": expected a number of KB, got " + jsonBrief(v));
        const bool engine = key == engineKey;
        if (!definitions.is_object() || !definitions.contains(key) || !definitions[key].is_object() ||
            !definitions[key].contains("pattern") || !definitions[key]["pattern"].is_string())
            throw InputError(source + ": " + key + " needs constraint_definitions." + key + ".pattern (the scheme pattern)");
        if (engine)
            c.set(TinyEngineTrainingLimit::restore(space, definitions[key], v.get<double>(), source), v.get<double>());
        else
            c.set(TrainingMemoryLimit(space, definitions[key]["pattern"].get<std::string>()).quantity(), v.get<double>());
    }
    return c;
}

}  // namespace tinyscope
