#include "search/TinyEngineTrainingLimit.h"

#include "Error.h"
#include "graph/Autodiff.h"
#include "graph/KernelCoverage.h"
#include "graph/MemoryLedger.h"
#include "graph/SchemeEdit.h"
#include "graph/TrainingBudget.h"
#include "io/Text.h"
#include "search/NetworkMemo.h"
#include "search/TrainingMemoryLimit.h"
#include "search/Feasibility.h"
#include "search/SearchResult.h"
#include "tinyengine/BoardFit.h"
#include "tinyengine/ExportChecker.h"
#include "tinyengine/TinyEngineExport.h"
#include "zoo/SubnetNetwork.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>

namespace tinyscope {

namespace {

std::int64_t budgetBytesOf(double budgetKB) { return TrainingMemoryLimit::budgetBytes(budgetKB); }

// The scheme as a pattern every command takes (--train-scheme, export / finetune --scheme).
std::string schemePattern(int tail, int pw1Weights, double ratio)
{
    if (tail == 0 && pw1Weights == 0) return "classifier";
    std::string s = "bias-only:" + std::to_string(tail);
    if (pw1Weights > 0) s += "+pw1:" + std::to_string(pw1Weights) + "@" + formatRatio(ratio);
    return s;
}

// Biases and weight elements a resolved scheme updates, the classifier's included.
std::int64_t updatedParameters(const Network& net, const ResolvedScheme& s)
{
    std::int64_t n = 0;
    for (int ci = 0; ci < net.numConvs(); ++ci) {
        const Layer& c = net.conv(ci);
        const ConvUpdate& u = s.conv(ci);
        if (u.bias) n += c.cout;
        if (u.weight()) n += static_cast<std::int64_t>(c.cout) * (c.depthwise() ? 1 : u.k) * c.kh * c.kw;
    }
    return n;
}

// Whether the export checker on the graph could refuse what kernelCoverageFindings accepted. Its
// other rules hold by construction for a network our lowering builds (batch 1, the §5.4 idioms,
// parameter naming, identity slices for ratio-1 weights in the reference form) or are the
// coverage's own (vocabulary, stem, weight and input gradients), except two: depthwise forward
// kernels (3/5/7, stride 1/2) and the uint16 element count of the backward graph's element-wise
// kernels, whose operands are activation gradients of the layers back-propagation reaches. When
// both hold geometrically, building the graph (about 2.5 ms) cannot find anything more; otherwise
// it decides. test_training_budget_search checks every evaluated subnet against the full checker.
bool needsGraphCheck(const Network& net, const ResolvedScheme& s)
{
    for (const Layer& l : net.layers)
        if (l.isConv() && l.depthwise() && !depthwiseKernelExists(l)) return true;
    if (s.first_updated < 0) return false;
    const int from = net.convLayers()[static_cast<std::size_t>(s.first_updated)];
    for (std::size_t l = static_cast<std::size_t>(from); l < net.layers.size(); ++l)
        if (net.layers[l].out.elems() > 65535 || net.layers[l].in.elems() > 65535) return true;
    return false;
}

}  // namespace

struct TinyEngineTrainingLimit::Memo {
    DesignSpace space;
    BoardProfile board;
    std::string patternText;
    std::optional<TrainingSchemePattern> pattern;
    double budgetKB = 0;
    std::int64_t budgetBytes = 0;
    NetworkMemo<TinyEngineTrainingPlan> plans{200000};
    // The last pre-search check (the CLI asks before loading the predictor, the search again):
    // the other limits it ran for and its refusal ("" = feasible).
    mutable std::mutex feasibilityMutex;
    mutable std::optional<std::pair<std::string, std::string>> feasibility;

    // Everything but the budget, exactly as export --strict --board checks it: "" when it passes.
    // The cheap geometric coverage first (most refusals end there), then the checker on the graph.
    std::pair<std::string, std::string> refusal(const TrainingMemoryModel& model, const ResolvedScheme& s, std::int64_t* ledgerPeak) const
    {
        const Network& net = model.network();
        BoardUse use;
        use.flash_bytes = quantizedParameterBytes(net);
        if (use.flash_bytes + kBoardFlashMargin > board.flash_bytes)
            return {"board-flash", "the int8 parameters take " + formatQuantityKB(use.flash_bytes) + " + " + formatQuantityKB(kBoardFlashMargin) +
                                       " for TinyEngine's code and tables (measured on the emulated M7) exceeds the " + board.name + "'s " +
                                       formatQuantityKB(board.flash_bytes) + " of flash"};
        for (const CoverageFinding& f : kernelCoverageFindings(net, s))
            return {"kernel-coverage", (f.conv_index < 0 ? std::string() : "conv " + std::to_string(f.conv_index) + " (" + net.conv(f.conv_index).name + "): ") + f.message};
        if (needsGraphCheck(net, s)) {
            TrainingGraph g = buildTrainingGraph(net, s, AutodiffMode::Reference);
            insertIdentitySlices(g, net);
            for (const Finding& f : checkForTinyEngine(g, net, nullptr))
                if (f.error()) return {f.rule, f.where + ": " + f.message};
        }
        use.sram_bytes = model.ledger(s, AutodiffMode::Reference).peak_bytes;
        if (ledgerPeak) *ledgerPeak = use.sram_bytes;
        for (const Finding& f : checkBoardFit(board, use))
            if (f.error()) return {f.rule, f.message};
        if (use.sram_bytes + kBoardSramMargin > board.sram_bytes)
            return {"board-sram", "the memory ledger's training peak " + formatQuantityKB(use.sram_bytes) + " + " + formatQuantityKB(kBoardSramMargin) +
                                      " the linked binary needs beyond it (measured on the emulated M7) exceeds the " + board.name + "'s " +
                                      formatQuantityKB(board.sram_bytes) + " of SRAM"};
        return {};
    }

    // Checks `s` completely; fills the plan's figures.
    TinyEngineTrainingPlan check(const TrainingMemoryModel& model, const ResolvedScheme& s, std::string scheme, bool withBudget) const
    {
        TinyEngineTrainingPlan p;
        p.scheme = std::move(scheme);
        p.inference_peak_bytes = model.inferencePeakBytes();
        p.extra_bytes = model.extraMemory(s).total();
        p.updated_parameters = updatedParameters(model.network(), s);
        auto [rule, why] = refusal(model, s, &p.ledger_peak_bytes);
        if (rule.empty() && withBudget && p.totalBytes() > budgetBytes) {
            rule = "budget";
            why = "inference working set " + formatQuantityKB(p.inference_peak_bytes) + " + extra " + formatQuantityKB(p.extra_bytes) + " of '" + p.scheme + "' exceeds " +
                  formatQuantityKB(budgetBytes);
        }
        p.refusal_rule = rule;
        p.refusal = why;
        p.trainable = rule.empty();
        return p;
    }

    // The pattern given, or the best bias-only:T+pw1:W@1 within the budget (see the header).
    TinyEngineTrainingPlan compute(const Network& netIn) const
    {
        const TrainingMemoryModel model(netIn);
        const Network& net = model.network();
        if (pattern) {
            TinyEngineTrainingPlan refused;
            const std::optional<ResolvedScheme> s = leastScheme(net, &refused);
            return s ? check(model, *s, patternText, true) : refused;
        }
        const int nb = net.numBackboneConvs();
        std::vector<int> pw1;
        for (int i = 0; i < nb; ++i)
            if (net.conv(i).role == "pw1") pw1.push_back(i);
        // The deepest bias tail the kernels cover (coverage only grows with the tail; the stem never).
        int maxTail = 0;
        for (int t = 1; t < nb; ++t) {
            if (!kernelCoverageFindings(net, SparseScheme::biasOnly(t).resolve(net)).empty()) break;
            maxTail = t;
        }
        // The last W pw1 convs, all with a weight-gradient kernel and inside that tail.
        int maxW = 0;
        for (std::size_t j = pw1.size(); j-- > 0;) {
            const int conv = pw1[j];
            if (conv < nb - maxTail || !weightGradientKernelExists(net.conv(conv))) break;
            ++maxW;
        }
        struct Option {
            int tail, w;
            double ratio;
            std::int64_t value, total;
        };
        auto resolvedOf = [&](int tail, int w, double ratio) {
            SparseScheme sch = SparseScheme::biasOnly(tail);
            for (int j = 0; j < w; ++j) {
                sch.manual_weight_idx.push_back(pw1[pw1.size() - static_cast<std::size_t>(w) + static_cast<std::size_t>(j)]);
                sch.weight_update_ratio.push_back(ratio);
            }
            return sch.resolve(net, "search scheme");
        };
        // A ratio whose channel count TinyEngine's partial kernels take on every one of the W convs
        // (k % 4 == 0 unless the whole weight); one ratio for all W.
        auto ratioFits = [&](int w, double ratio) {
            for (int j = 0; j < w; ++j) {
                const Layer& c = net.conv(pw1[pw1.size() - 1 - static_cast<std::size_t>(j)]);
                for (bool compiler : {false, true}) {   // tiny-training's count and the reference compiler's slice
                    const int k = updatedChannels(c, ratio, compiler);
                    if (k == 0 || (k < c.cin && k % 4 != 0)) return false;
                }
            }
            return true;
        };
        std::vector<Option> options;
        const std::int64_t peak = model.inferencePeakBytes();
        for (int w = 0; w <= maxW; ++w) {
            const int minTail = w == 0 ? 0 : nb - pw1[pw1.size() - static_cast<std::size_t>(w)];
            if (minTail > maxTail) break;
            for (double ratio : {0.125, 0.25, 0.5, 1.0}) {
                if (w == 0 && ratio != 1.0) continue;
                if (!ratioFits(w, ratio)) continue;
                // Extra memory grows with the tail: the deepest one within the budget, by bisection.
                auto fits = [&](int tail) { return peak + model.extraMemory(resolvedOf(tail, w, ratio)).total() <= budgetBytes; };
                if (!fits(minTail)) continue;
                int lo = minTail, hi = maxTail;
                while (lo < hi) {
                    const int mid = lo + (hi - lo + 1) / 2;
                    if (fits(mid)) lo = mid;
                    else hi = mid - 1;
                }
                const ResolvedScheme s = resolvedOf(lo, w, ratio);
                options.push_back({lo, w, ratio, updatedParameters(net, s), peak + model.extraMemory(s).total()});
            }
        }
        if (options.empty()) {
            // Not even the classifier alone fits: report that plan and why.
            return check(model, classifierOnlyScheme(net), "classifier", true);
        }
        std::stable_sort(options.begin(), options.end(), [](const Option& a, const Option& b) {
            return a.value != b.value ? a.value > b.value : a.total < b.total;
        });
        TinyEngineTrainingPlan first;
        for (std::size_t i = 0; i < options.size(); ++i) {
            const Option& o = options[i];
            TinyEngineTrainingPlan p = check(model, resolvedOf(o.tail, o.w, o.ratio), schemePattern(o.tail, o.w, o.ratio), true);
            if (p.trainable) return p;
            if (i == 0) first = p;
        }
        return first;
    }

    // The scheme that needs the least with this limit (the pattern, or the classifier alone), or
    // nullopt when the pattern does not apply to the network (the plan then says why).
    std::optional<ResolvedScheme> leastScheme(const Network& net, TinyEngineTrainingPlan* refused) const
    {
        if (!pattern) return classifierOnlyScheme(net);
        try {
            return pattern->resolve(net);
        } catch (const InputError& e) {
            refused->scheme = patternText;
            refused->refusal_rule = "scheme";
            refused->refusal = e.what();
            return std::nullopt;
        }
    }

    void requireFeasible(const Constraints& others) const;   // remembered for the same other limits
    void checkFeasible(const Constraints& others) const;

    TinyEngineTrainingPlan plan(const SubnetConfig& c) const
    {
        return plans.get(space, c, [&] { return compute(networkFromSubnet(space, c)); });
    }
};

void TinyEngineTrainingLimit::Memo::requireFeasible(const Constraints& others) const
{
    const std::string key = others.toJson().dump();
    std::optional<std::string> refusal;
    {
        std::lock_guard<std::mutex> lock(feasibilityMutex);
        if (feasibility && feasibility->first == key) refusal = feasibility->second;
    }
    if (!refusal) {
        refusal.emplace();
        try {
            checkFeasible(others);
        } catch (const InfeasibleError& e) {
            *refusal = e.what();
        }
        std::lock_guard<std::mutex> lock(feasibilityMutex);
        feasibility = std::make_pair(key, *refusal);
    }
    if (!refusal->empty()) throw InfeasibleError(*refusal);
}

void TinyEngineTrainingLimit::Memo::checkFeasible(const Constraints& others) const
{
    const Memo& m = *this;
    // Block-minimal subnets meeting the other limits, by what their least scheme needs (cheap:
    // the analytic model only), then checked completely in that order: the first trainable one
    // needs the least.
    struct Candidate {
        std::int64_t total;
        SubnetConfig config;
    };
    std::vector<Candidate> candidates;
    TinyEngineTrainingPlan refused;
    SubnetConfig refusedConfig;
    const bool enumerated = forEachBlockExtremeSubnet(m.space, false, 100000, [&](const SubnetConfig& c, const CostSummary& cost) {
        if (!others.satisfiedBy(c, cost)) return;
        const TrainingMemoryModel model(networkFromSubnet(m.space, c));
        TinyEngineTrainingPlan why;
        const std::optional<ResolvedScheme> s = m.leastScheme(model.network(), &why);
        if (!s) {
            if (refused.refusal.empty()) refused = why, refusedConfig = c;
            return;
        }
        candidates.push_back({model.inferencePeakBytes() + model.extraMemory(*s).total(), c});
    });
    if (!enumerated || (candidates.empty() && refused.refusal.empty())) return;   // the search's own feasibility check speaks
    std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) { return a.total < b.total; });
    const std::string what = "no subnet of " + m.space.name + (others.empty() ? std::string() : " meeting " + others.describe()) +
                             " can be trained on TinyEngine (" + m.board.name + ", scheme " +
                             (m.patternText.empty() ? std::string("chosen per subnet") : "'" + m.patternText + "'") + ")";
    for (const Candidate& cand : candidates) {
        const TrainingMemoryModel model(networkFromSubnet(m.space, cand.config));
        TinyEngineTrainingPlan unused;
        const TinyEngineTrainingPlan p = m.check(model, *m.leastScheme(model.network(), &unused), m.patternText.empty() ? "classifier" : m.patternText, false);
        if (!p.trainable) {
            if (refused.refusal.empty()) refused = p, refusedConfig = cand.config;
            continue;
        }
        if (p.totalBytes() <= m.budgetBytes) return;
        throw InfeasibleError(what + " within " + formatQuantityKB(m.budgetBytes) + ": the least any needs is " + formatQuantityKB(p.totalBytes()) +
                              " (inference working set " + formatQuantityKB(p.inference_peak_bytes) + " + extra " + formatQuantityKB(p.extra_bytes) + " of '" +
                              p.scheme + "'; the rule that binds: the budget; subnet " + cand.config.toJson().dump() + ")");
    }
    throw InfeasibleError(what + " at any budget: " + refused.refusal + " (rule " + refused.refusal_rule +
                          "; e.g. the subnet with the smallest working set: " + refusedConfig.toJson().dump() + ")");
}

namespace {

Json planJson(const TinyEngineTrainingPlan& p, const BoardProfile& board, std::int64_t budgetBytes)
{
    return Json{{"scheme", p.scheme},
                {"board", board.name},
                {"board_sram_bytes", board.sram_bytes},
                {"budget_bytes", budgetBytes},
                {"inference_peak_bytes", p.inference_peak_bytes},
                {"extra_bytes", p.extra_bytes},
                {"total_bytes", p.totalBytes()},
                {"ledger_peak_bytes", p.ledger_peak_bytes},
                {"device_sram_estimate_bytes", p.ledger_peak_bytes + kBoardSramMargin},
                {"updated_parameters", p.updated_parameters},
                {"trainable", p.trainable},
                {"refusal", p.refusal}};
}

}  // namespace

TinyEngineTrainingLimit::TinyEngineTrainingLimit(const DesignSpace& space, const BoardProfile& board, const std::string& pattern,
                                                 double budgetKB)
    : memo_(std::make_shared<Memo>())
{
    if (!(budgetKB > 0)) throw InputError("the training budget must be a positive number of KB");
    memo_->space = space;
    memo_->board = board;
    memo_->patternText = pattern;
    if (!pattern.empty()) memo_->pattern = TrainingSchemePattern::parse(pattern);
    memo_->budgetKB = budgetKB;
    memo_->budgetBytes = budgetBytesOf(budgetKB);
    auto q = std::make_shared<ConstraintQuantity>();
    q->key = kKey;
    q->label = "training on TinyEngine (" + (pattern.empty() ? std::string("best scheme") : pattern) + ", " + board.name + ")";
    q->unit = "KB";
    std::shared_ptr<const Memo> memo = memo_;
    q->measure = [memo](const SubnetConfig& c, const CostSummary&) {
        const TinyEngineTrainingPlan p = memo->plan(c);
        return p.trainable ? static_cast<double>(p.totalBytes()) / 1024.0 : std::numeric_limits<double>::infinity();
    };
    // Channel counts that move with the expand ratio decide kernel rules (C_out % 8): not block-monotone.
    q->monotone_in_blocks = false;
    q->definition = Json{{"pattern", pattern.empty() ? Json("best") : Json(pattern)}, {"board", board.toJson()}};
    q->explain = [memo](const SubnetConfig& c) {
        const TinyEngineTrainingPlan p = memo->plan(c);
        if (!p.trainable) return "not trainable: " + p.refusal;
        return "'" + p.scheme + "': inference working set " + formatQuantityKB(p.inference_peak_bytes) + " + extra " + formatQuantityKB(p.extra_bytes);
    };
    q->report_key = kReportKey;
    q->report = [memo](const SubnetConfig& c, double limit) { return planJson(memo->plan(c), memo->board, budgetBytesOf(limit)); };
    q->require_feasible = [memo](const Constraints& others, double) { memo->requireFeasible(others); };
    quantity_ = std::move(q);
}

double TinyEngineTrainingLimit::budgetKB() const { return memo_->budgetKB; }
const BoardProfile& TinyEngineTrainingLimit::board() const { return memo_->board; }
const std::string& TinyEngineTrainingLimit::pattern() const { return memo_->patternText; }

TinyEngineTrainingPlan TinyEngineTrainingLimit::plan(const SubnetConfig& config) const { return memo_->plan(config); }

std::size_t TinyEngineTrainingLimit::memoised() const
{
    return memo_->plans.size();
}

void TinyEngineTrainingLimit::requireFeasible(const Constraints& others) const { memo_->requireFeasible(others); }

std::optional<TinyEngineTrainingPlan> TinyEngineTrainingLimit::reportOf(const SearchResult& result)
{
    if (!result.best_reports.is_object() || !result.best_reports.contains(kReportKey)) return std::nullopt;
    const Json& t = result.best_reports[kReportKey];
    TinyEngineTrainingPlan p;
    p.scheme = t.value("scheme", "");
    p.inference_peak_bytes = t.value("inference_peak_bytes", std::int64_t{0});
    p.extra_bytes = t.value("extra_bytes", std::int64_t{0});
    p.ledger_peak_bytes = t.value("ledger_peak_bytes", std::int64_t{0});
    p.updated_parameters = t.value("updated_parameters", std::int64_t{0});
    p.trainable = t.value("trainable", false);
    p.refusal = t.value("refusal", "");
    p.board = t.value("board", "");
    p.board_sram_bytes = t.value("board_sram_bytes", std::int64_t{0});
    p.budget_bytes = t.value("budget_bytes", std::int64_t{0});
    return p;
}

std::shared_ptr<const ConstraintQuantity> TinyEngineTrainingLimit::restore(const DesignSpace& space, const Json& definition, double limitKB,
                                                                           const std::string& source)
{
    if (!definition.is_object() || !definition.contains("pattern") || !definition["pattern"].is_string() || !definition.contains("board"))
        throw InputError(source + ": " + kKey + " needs constraint_definitions." + kKey + " with \"pattern\" and \"board\"");
    const std::string pattern = definition["pattern"].get<std::string>();
    const BoardProfile board = BoardProfile::fromJson(definition["board"], source + ": constraint_definitions." + kKey + ".board");
    return TinyEngineTrainingLimit(space, board, pattern == "best" ? std::string() : pattern, limitKB).quantity();
}

}  // namespace tinyscope
