#include "graph/TrainingBudget.h"

#include "Error.h"
#include "graph/MemoryLedger.h"
#include "zoo/Network.h"
#include "zoo/SubnetNetwork.h"

#include <algorithm>
#include <cstdlib>

namespace tinyscope {

namespace {

const char* kSyntax = "terms joined by '+': bias-only[:N], last:K, full, pw1:K@R[,R...], classifier; "
                      "N, K an integer or 'all'; R one of 0, 1/8, 1/4, 1/2, 1";

std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::string tok;
    for (char c : s) {
        if (c == sep) {
            out.push_back(tok);
            tok.clear();
        } else if (c != ' ' && c != '\t') {
            tok += c;
        }
    }
    out.push_back(tok);
    return out;
}

}  // namespace

TrainingSchemePattern TrainingSchemePattern::parse(const std::string& text)
{
    TrainingSchemePattern p;
    p.text_ = text;
    const std::string where = "training scheme pattern '" + text + "'";
    const std::vector<std::string> terms = split(text, '+');
    for (std::size_t i = 0; i < terms.size(); ++i) {
        const std::string& t = terms[i];
        const std::string what = where + ", term " + std::to_string(i + 1) + " '" + t + "'";
        if (t.empty()) throw InputError(what + ": empty term (" + kSyntax + ")");
        auto count = [&](const std::string& s) {
            if (s == "all") return -1;
            char* end = nullptr;
            const long v = std::strtol(s.c_str(), &end, 10);
            if (s.empty() || *end != '\0' || v < 0 || v > 100000)
                throw InputError(what + ": '" + s + "' is not a layer count (an integer >= 0 or 'all')");
            return static_cast<int>(v);
        };
        Term term;
        if (t == "classifier") continue;
        if (t == "bias-only" || t == "full") {
            term.kind = t == "full" ? Term::Kind::Last : Term::Kind::BiasOnly;
            term.count = -1;
        } else if (t.rfind("bias-only:", 0) == 0) {
            term.count = count(t.substr(10));
        } else if (t.rfind("last:", 0) == 0) {
            term.kind = Term::Kind::Last;
            term.count = count(t.substr(5));
        } else if (t.rfind("pw1:", 0) == 0) {
            term.kind = Term::Kind::Pw1;
            const std::size_t at = t.find('@');
            if (at == std::string::npos)
                throw InputError(what + ": give the ratios after '@', e.g. pw1:3@1/4 or pw1:3@1/8,1/4,1/2");
            term.count = count(t.substr(4, at - 4));
            const std::vector<std::string> rs = split(t.substr(at + 1), ',');
            for (std::size_t j = 0; j < rs.size(); ++j) {
                const double r = parseRatio(rs[j], what + ": ratio " + std::to_string(j + 1));
                if (!isAllowedRatio(r))
                    throw InputError(what + ": ratio " + std::to_string(j + 1) + " '" + rs[j] +
                                     "' is not one of 0, 1/8, 1/4, 1/2, 1");
                term.ratios.push_back(r);
            }
            if (term.ratios.size() > 1 && (term.count < 0 || term.ratios.size() != static_cast<std::size_t>(term.count)))
                throw InputError(what + ": " + std::to_string(term.ratios.size()) + " ratios for " +
                                 (term.count < 0 ? std::string("'all'") : std::to_string(term.count)) +
                                 " pw1 convs (give one ratio for all, or one per conv)");
        } else {
            throw InputError(what + ": unknown term (" + kSyntax + ")");
        }
        p.terms_.push_back(std::move(term));
    }
    return p;
}

SparseScheme TrainingSchemePattern::schemeFor(const Network& net) const
{
    const int nb = net.numBackboneConvs();
    auto clamp = [&](int n, int available) { return n < 0 ? available : std::min(n, available); };
    int tail = nb;                              // first conv of the bias tail
    std::vector<double> ratio(static_cast<std::size_t>(nb), 0.0);
    std::vector<int> pw1;
    for (const Term& t : terms_) {
        switch (t.kind) {
        case Term::Kind::BiasOnly:
            tail = std::min(tail, nb - clamp(t.count, nb));
            break;
        case Term::Kind::Last: {
            const int from = nb - clamp(t.count, nb);
            tail = std::min(tail, from);
            for (int i = from; i < nb; ++i) ratio[static_cast<std::size_t>(i)] = 1.0;
            break;
        }
        case Term::Kind::Pw1: {
            if (pw1.empty())
                for (int i = 0; i < nb; ++i)
                    if (net.conv(i).role == "pw1") pw1.push_back(i);
            const int n = clamp(t.count, static_cast<int>(pw1.size()));
            // The last n pw1 convs; with one ratio per conv the list is aligned to the end.
            for (int j = 0; j < n; ++j) {
                const int conv = pw1[pw1.size() - static_cast<std::size_t>(n) + static_cast<std::size_t>(j)];
                const double r = t.ratios.size() == 1 ? t.ratios[0] : t.ratios[t.ratios.size() - static_cast<std::size_t>(n) + static_cast<std::size_t>(j)];
                ratio[static_cast<std::size_t>(conv)] = r;
            }
            break;
        }
        }
    }
    SparseScheme s;
    for (int i = 0; i < nb; ++i)
        if (ratio[static_cast<std::size_t>(i)] > 0) {
            tail = std::min(tail, i);
            s.manual_weight_idx.push_back(i);
            s.weight_update_ratio.push_back(ratio[static_cast<std::size_t>(i)]);
        }
    s.n_bias_update = nb - tail;
    return s;
}

ResolvedScheme TrainingSchemePattern::resolve(const Network& net) const
{
    return schemeFor(net).resolve(net, "training scheme pattern '" + text_ + "'");
}

namespace {

TrainingBudgetCost costOf(const TrainingMemoryModel& model, const TrainingSchemePattern& pattern)
{
    const MemoryLedger m = model.ledger(pattern.resolve(model.network()));
    TrainingBudgetCost c;
    c.inference_peak_bytes = m.inference_peak_bytes;
    c.extra_bytes = m.extra.total();
    c.training_peak_bytes = m.peak_bytes;
    return c;
}

}  // namespace

TrainingBudgetCost trainingBudgetCost(const Network& net, const TrainingSchemePattern& pattern)
{
    return costOf(TrainingMemoryModel(net), pattern);
}

TrainingBudgetCost trainingBudgetCost(const DesignSpace& space, const SubnetConfig& config, const TrainingSchemePattern& pattern)
{
    return costOf(TrainingMemoryModel(networkFromSubnet(space, config)), pattern);
}

TrainingBudgetCost trainingBudgetTotals(const DesignSpace& space, const SubnetConfig& config, const TrainingSchemePattern& pattern)
{
    const TrainingMemoryModel model(networkFromSubnet(space, config));
    TrainingBudgetCost c;
    c.inference_peak_bytes = model.inferencePeakBytes();
    c.extra_bytes = model.extraMemory(pattern.resolve(model.network())).total();
    return c;
}

}  // namespace tinyscope
