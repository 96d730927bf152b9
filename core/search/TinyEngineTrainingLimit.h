#pragma once
// A search limit that only lets through subnets TinyEngine can fine-tune on a board: for each
// candidate, the sparse-update scheme it would be trained with (a given pattern, or the best one
// the budget allows), checked exactly as `tinyscope export --strict --board B` checks it:
//  * the export checker on the reference-form training graph (TINYENGINE_JSON_SPEC.md §9: forward
//    and gradient kernel coverage, the stem, uint16 element counts, the classifier's 10 classes,
//    squeeze-excite and the other ops outside the vocabulary);
//  * the board: the memory ledger's training peak plus kBoardSramMargin (what the linked binary
//    needed beyond the ledger on the emulated M7) within the board's SRAM, the int8 parameters
//    plus kBoardFlashMargin (code, kernels, tables) within its flash, DSP and FPU present;
//  * the budget: inference peak + the scheme's extra memory ≤ KB, as --train-budget means without
//    TinyEngine (TrainingMemoryLimit).
// Its value is that total in KB for a trainable subnet and +inf for one that is not, so the
// search's constraint list, winner report and messages treat it like any other limit.
//
// "Best scheme the budget allows" (no pattern given) is a proxy for tiny-training's contribution
// analysis, which trains the subnet and cannot run per candidate: among the schemes
// `bias-only:T+pw1:W@R` (biases of the last T backbone convs, weights of the last W pw1 convs at
// input-channel ratio R of 1/8, 1/4, 1/2 or 1 — later layers first, as the paper's analysis finds;
// one R for all W, each conv's channel count a multiple of 4 unless whole, as TinyEngine's partial
// kernels need), the one that updates the most parameters within the budget and the kernels
// TinyEngine has; ties go to the smaller memory.
// docs/SEARCH.md, "Searching for subnets TinyEngine can train", says why and what it costs.
//
// Costs are memoised per network (thread-safe). Torch- and Qt-free.
#include "search/Constraints.h"
#include "space/DesignSpace.h"
#include "tinyengine/BoardProfile.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace tinyscope {

struct SearchResult;

// How one subnet would be trained on TinyEngine (the winner's report: best.tinyengine_training).
struct TinyEngineTrainingPlan {
    bool trainable = false;
    std::string scheme;                          // a pattern export / finetune accept: "bias-only:9+pw1:2@1/4"
    std::int64_t inference_peak_bytes = 0;
    std::int64_t extra_bytes = 0;
    std::int64_t totalBytes() const { return inference_peak_bytes + extra_bytes; }
    std::int64_t ledger_peak_bytes = 0;          // the memory ledger's training peak, reference form
    std::int64_t updated_parameters = 0;         // biases and weight elements the scheme updates (classifier included)
    std::string refusal;                         // when !trainable: the rule that binds, in words
    std::string refusal_rule;                    // its checker id ("weight-gradient-kernel", "board-sram", "budget", …)
    // Set in a report read back (reportOf): the board and budget it was checked against.
    std::string board;
    std::int64_t board_sram_bytes = 0, budget_bytes = 0;
};

class TinyEngineTrainingLimit {
public:
    static constexpr const char* kKey = "KBTinyEngineTraining";
    static constexpr const char* kReportKey = "tinyengine_training";

    // `pattern` empty: the best scheme per candidate. Throws InputError for a pattern that does not
    // parse or a budget that is not positive.
    TinyEngineTrainingLimit(const DesignSpace& space, const BoardProfile& board, const std::string& pattern, double budgetKB);

    std::shared_ptr<const ConstraintQuantity> quantity() const { return quantity_; }
    double budgetKB() const;
    const BoardProfile& board() const;
    const std::string& pattern() const;   // "" = best per candidate

    TinyEngineTrainingPlan plan(const SubnetConfig& config) const;   // memoised
    std::size_t memoised() const;

    // Before searching: among the block-minimal subnets meeting `others` (smallest kernel and
    // expand ratio per block: no larger inference peak or tensor than any subnet they stand for),
    // is one trainable within the budget? If not, InfeasibleError naming the least budget any of
    // them needs and the rule that binds (or, when none is trainable at any budget, that rule).
    // A block-minimal subnet is a witness, not a proof of the least over the whole space: channel
    // counts that move with the expand ratio decide some kernel rules. The search still samples.
    void requireFeasible(const Constraints& others) const;

    static std::optional<TinyEngineTrainingPlan> reportOf(const SearchResult& result);
    // A stored search's KBTinyEngineTraining limit back from its constraint_definitions entry.
    static std::shared_ptr<const ConstraintQuantity> restore(const DesignSpace& space, const Json& definition, double limitKB,
                                                             const std::string& source);

private:
    struct Memo;
    std::shared_ptr<Memo> memo_;
    std::shared_ptr<const ConstraintQuantity> quantity_;
};

}  // namespace tinyscope
