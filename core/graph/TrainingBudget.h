#pragma once
// The training-memory side of a search: a sparse-update scheme *pattern* that applies to a
// subnet of any depth (unlike a published scheme, which names conv indices of one model), and
// what the pattern needs on the device: the inference peak plus the analytic extra memory
// (tiny-training's nelem_saved_for_backward), both from the memory ledger of the subnet's
// Network. The search's constraint is `inference peak + extra ≤ budget`.
//
// Pattern syntax (docs/TRAINING_INSPECTOR.md):
//     PATTERN := TERM ('+' TERM)*
//     TERM    := bias-only[:N]            biases of the last N backbone convs (no N: all)
//              | last:K                   the last K backbone convs: bias + full weight
//              | full                     every backbone conv: bias + full weight
//              | pw1:K@R[,R...]           weights of the last K pw1 convs with ratio R (one R for all,
//                                         or K of them, earliest conv first)
//              | classifier               the classifier only (always updated anyway)
//     N, K    := an integer >= 0 or "all";  R := 0, 1/8, 1/4, 1/2, 1 (or 0.125, 0.25, 0.5)
// Rules: the classifier is always updated (bias and full weight); updated weights pull the bias
// tail down to them (tiny-training needs them inside it), so every pattern is a valid
// tiny-training config; counts larger than a subnet has are clamped to what it has; when two
// terms set a conv's weight ratio, the later term wins.
#include "graph/SparseScheme.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tinyscope {

class DesignSpace;
struct Network;
struct SubnetConfig;

class TrainingSchemePattern {
public:
    struct Term {
        enum class Kind { BiasOnly, Last, Pw1 } kind = Kind::BiasOnly;
        int count = 0;                  // -1: all
        std::vector<double> ratios;     // Pw1: one, or `count` of them
    };

    // Throws InputError naming the term and what is wrong.
    static TrainingSchemePattern parse(const std::string& text);

    // The scheme the pattern gives on `net` (a tiny-training config; see the rules above).
    SparseScheme schemeFor(const Network& net) const;
    ResolvedScheme resolve(const Network& net) const;

    const std::string& text() const { return text_; }
    const std::vector<Term>& terms() const { return terms_; }

private:
    std::string text_;
    std::vector<Term> terms_;
};

struct TrainingBudgetCost {
    std::int64_t inference_peak_bytes = 0;   // the ledger's largest forward working set (int8)
    std::int64_t extra_bytes = 0;            // analytic extra memory of the pattern
    std::int64_t training_peak_bytes = 0;    // the ledger's peak over the training schedule (with reordering)
    std::int64_t totalBytes() const { return inference_peak_bytes + extra_bytes; }   // what the budget limits
    bool fits(std::int64_t budgetBytes) const { return totalBytes() <= budgetBytes; }
};

TrainingBudgetCost trainingBudgetCost(const Network& net, const TrainingSchemePattern& pattern);
// The subnet's Network is built and priced in one go (tens of microseconds: docs/BENCHMARKS.md).
TrainingBudgetCost trainingBudgetCost(const DesignSpace& space, const SubnetConfig& config, const TrainingSchemePattern& pattern);
// What a limit needs and no more: inference peak and extra memory without the ledger's training
// schedule (training_peak_bytes stays 0), about a quarter cheaper. Same two numbers as above.
TrainingBudgetCost trainingBudgetTotals(const DesignSpace& space, const SubnetConfig& config, const TrainingSchemePattern& pattern);

}  // namespace tinyscope
