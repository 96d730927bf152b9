#pragma once
// A limit on the memory fine-tuning a subnet needs on the device: its inference peak plus the
// extra memory of a sparse-update scheme pattern (graph/TrainingBudget.h), in KB. It enters the
// search as one more ConstraintQuantity in the constraint list, so sampling, the feasibility proof
// and the winner's report treat it like MACs or SRAM (docs/SEARCH.md, "Training-memory budget").
//
// The quantity is block-monotone (a larger kernel or expand ratio never shrinks a tensor, a bias or
// a weight slice, and never changes which convs a pattern selects), so Feasibility finds the least
// total exactly among the block-minimal subnets. Costs are memoised per network (thread-safe): the
// 3,645 block-minimal subnets of MCUNet-VWW are priced once per pattern.
#include "graph/TrainingBudget.h"
#include "search/Constraints.h"
#include "space/DesignSpace.h"

#include <memory>
#include <optional>
#include <string>

namespace tinyscope {

struct SearchResult;

// The winner's fine-tuning memory as the limit reports it (SearchResult::best_reports).
struct TrainingMemoryReport {
    std::string pattern;
    std::int64_t budget_bytes = 0, inference_peak_bytes = 0, extra_bytes = 0, total_bytes = 0;
};

class TrainingMemoryLimit {
public:
    static constexpr const char* kKey = "KBTrainingMemory";
    static constexpr const char* kReportKey = "training_memory";

    // Parses the pattern once: InputError with the parser's message (it names the term).
    TrainingMemoryLimit(const DesignSpace& space, const std::string& pattern);

    std::shared_ptr<const ConstraintQuantity> quantity() const { return quantity_; }
    const TrainingSchemePattern& pattern() const;
    // Inference peak + extra memory of the pattern on `config` (training_peak_bytes not computed).
    TrainingBudgetCost cost(const SubnetConfig& config) const;
    // {pattern, budget_bytes, inference_peak_bytes, extra_bytes, total_bytes}: best.training_memory.
    Json report(const SubnetConfig& config, double budgetKB) const;
    std::size_t memoised() const;   // networks priced so far
    // The report a result's winner carries, when the search had this limit.
    static std::optional<TrainingMemoryReport> reportOf(const SearchResult& result);

    // The budget in whole bytes that `total ≤ budget KB` allows (totals are integers).
    static std::int64_t budgetBytes(double budgetKB);

    // The limits of a stored search result: its "constraints" object, where KBTrainingMemory needs
    // the pattern from "constraint_definitions" (toJson(SearchResult) writes both). InputError
    // names `source` and the key when the pattern is missing or does not parse.
    static Constraints restore(const DesignSpace& space, const Json& constraints, const Json& definitions, const std::string& source);

private:
    struct Memo;
    std::shared_ptr<Memo> memo_;
    std::shared_ptr<const ConstraintQuantity> quantity_;
};

}  // namespace tinyscope
